"""Pasted upstream errors are understood (rule, the run's own numbers, fix); a log is never a config."""
from __future__ import annotations

from tests.assistant.compose.answers.conftest import lead


def test_a_pasted_assertion_is_the_rule_that_raises_it_not_an_unknown_option(ask):
    # issue 11: this was parsed as a YAML mapping and reported as an unknown FSDP2 option
    a = ask("Why?\n```\nAssertionError: pp_batch_size 4 // pp_microbatch_size 1 must be >= pp_size 8\n```")
    first = lead(a.text)
    assert "MW-E-PP-MICROBATCH-COUNT" in first and "4 // 1" in first and "8" in first
    assert "AssertionError" not in (a.judged or {}).get("distributed", {})
    assert "MW-E-STRATEGY-OPTION" not in a.text
    assert a.judged["distributed"]["pp_size"] == 8 and a.judged["step_scheduler"]["local_batch_size"] == 4


def test_the_fix_of_a_value_is_said_in_the_lead(ask):
    a = ask("ValueError: Unknown schedule name 'interleaved_1f1b'. The valid options are ['1F1B', 'Interleaved1F1B']\n"
            "copied from the docs")
    first = lead(a.text)
    assert "MW-E-PP-SCHEDULE" in first and "`pipeline.pp_schedule: interleaved1f1b` instead of" in first


def test_a_quoted_upstream_message_is_a_location_question_not_nonsense(ask):
    a = ask("Where does 'Unknown options for strategy' come from?")
    assert a.intent != "nonsense" and "location" in a.asks and "nemo_automodel/" in lead(a.text)


def test_a_launch_log_is_read_for_the_layout_it_prints_and_never_as_a_config(ask):
    log = ("2 nodes, 8 gpus each\n```\n[rank0]: INFO root: distributed: {'strategy': 'fsdp2', 'tp_size': 2, "
           "'cp_size': 1, 'pp_size': 1, 'ep_size': 32, 'dp_size': None}\n"
           "[rank5]: ValueError: non_pp_size=16 must be a multiple of ep_size=32\n```\nwhy?")
    a = ask(log)
    assert a.judged["distributed"]["tp_size"] == 2 and a.judged["distributed"]["ep_size"] == 32
    assert "dp_size" not in a.judged["distributed"]  # None in the log: inferred, as upstream does
    assert lead(a.text).startswith("This error is upstream's `MW-E-EP-DIVIDES`") and "16" in lead(a.text)


def test_the_world_an_error_states_is_the_world_judged(ask):
    a = ask("I have dp_size: 4 and tp_size: 4 on one 8-GPU box and torch says\n"
            "RuntimeError: Mesh should not be bigger than default world size 8, but found 16 ranks!")
    assert a.judged["distributed"]["dp_size"] == 4 and a.validation.world_size == 8 and not a.validation.ok
    assert "MW-E-DP-MISMATCH" in lead(a.text)


def test_a_runtime_error_no_rule_raises_is_explained_by_its_kb_section(ask):
    # a pasted "No tensor-parallel plan is registered" error got only the verdict on the stated
    # tp_size ("Yes: tp_size 1 is valid"); the fix (a TP plan) must lead
    a = ask("我用 trust_remote_code 加载的模型，tp_size 设成 2 就报错：\n"
            "ValueError: No tensor-parallel plan is registered for the custom-code architecture 'FooModel' "
            "(loaded via trust_remote_code=True)\n怎么办？")
    first = lead(a.text)
    assert "parallelizer.py" in first and "tp_plan" in first and not first.startswith("可以")


def test_a_model_rule_error_is_explained_with_its_numbers_and_the_sizes_that_pass(ask):
    a = ask("AssertionError: n_routed_experts 60 must be divisible by expert_parallel_degree 8\n"
            "(Qwen1.5-MoE-A2.7B, one node of 8 GPUs, ep_size 8)", world_size=8)
    first = lead(a.text)
    assert "60 % 8 = 4" in first and "`ep_size` 4 or 2" in first


def test_a_runtime_error_no_rule_raises_is_found_in_the_kb_by_its_text(ask):
    a = ask("tp_size 2 on a trust_remote_code model crashes:\n```\n"
            "  File \".../torch/distributed/tensor/_redistribute.py\", line 752, in _gen_transform_infos_non_cached\n"
            "    assert src_shard_order is not None and dst_shard_order is not None\nAssertionError\n```\nwhy?")
    first = lead(a.text)
    assert "_tp_plan" in first and "gets past start-up" not in first


def test_an_attribute_error_in_model_code_is_not_a_layout_verdict(ask):
    a = ask("16 GPUs, global_batch_size 32, local_batch_size 1, parallelization fails with\n"
            "AttributeError: 'NemotronHForCausalLM' object has no attribute 'model'\nIs my distributed config wrong?")
    first = lead(a.text)
    assert "not a layout or sizing error" in first and "backbone" in first


def test_a_python_api_error_is_explained_without_an_api_config(ask):
    a = ask("```\nDistributedSetup.build(strategy=\"fsdp2\", parallelism_sizes=ParallelismSizes(tp_size=2), "
            "moe_parallel_config=MoEParallelizerConfig())\nValueError: moe_parallel_config requires ep_size > 1\n```\n"
            "the YAML never complained, why?")
    assert "drops" in lead(a.text) and "```python" not in a.text


def test_a_claim_around_a_pasted_error_is_corrected_after_the_error(ask):
    a = ask("[rank0]: ValueError: Unknown options for strategy 'megatron_fsdp': ['sequence_parallel']\n"
            "我写的是 sequence_parallel: false，关掉也不行？")
    first = lead(a.text)
    assert first.index("MW-E-STRATEGY-OPTION") < first.index("写 `false` 也一样")


def test_an_english_log_asked_about_in_chinese_is_explained_in_chinese_from_the_error_doc(ask):
    a = ask("[rank0]: KeyError: \"Mesh dim 'ep' not found in mesh_dim_names ('pp', 'dp_replicate', 'dp_shard', "
            "'cp', 'tp') or root _flatten_mapping {'dp', 'dp_shard_cp', 'dp_cp'}\"\ntp 2 跑不起来，这是什么错")
    assert a.language == "zh" and "get_flat_mesh" in lead(a.text) and "moe_mesh" in lead(a.text)


def test_a_described_crash_beside_a_flag_how_to_answers_with_the_field_line(ask):
    # a DDPConfig flag's how-to is the field's fact (case t2-facts2-en-ddp-unused-params: no YAML shown)
    a = ask("Multi-GPU DDP training crashes with the \"unused parameters\" error. With strategy ddp in AutoModel, "
            "how do I turn on find_unused_parameters, and is it off by default?")
    assert "```yaml" not in a.text and "Set `find_unused_parameters: true` under `distributed:`" in lead(a.text)
    assert "default `false`" in lead(a.text)


def test_a_quoted_error_whose_numbers_pass_says_so_and_what_differs(ask):
    # ep 16, dp 4, tp 4: dp*cp*tp = 16, 16 % 16 = 0; the run that raised it had other sizes
    a = ask('I get "ep_size must divide dp_size * cp_size * tp_size" but my numbers are ep 16, dp 4, tp 4. '
            "What's wrong?")
    first = lead(a.text)
    assert first.startswith("Those numbers pass that check") and "dp_size × cp_size × tp_size = 16" in first
    assert "world size the job really started with" in first and "Yes:" not in first
    z = ask("报错说 ep_size 必须整除 dp_size * cp_size * tp_size，可我是 ep 8、dp 2、tp 4，哪里不对？", lang="zh")
    assert lead(z.text).startswith("你写的这组数字能通过这项检查")


def test_a_problem_told_in_words_only_gets_the_kb_facts_not_a_layout_of_ours(ask):
    # "咋办" with no layout stated: the hang's causes lead, no recommended config
    a = ask("卡住不动了 多机训练 nccl 一直没反应 咋办")
    first = lead(a.text)
    assert "diagnosis" in a.asks and "mesh" in first and "strategy: fsdp2" not in a.text


def test_a_cuda_oom_is_pytorchs_error_never_an_upstream_check(ask):
    # the memory rule is Meshwise's own estimate (upstream "meshwise"): no AutoModel check raises an OOM
    a = ask("Llama 3.3 70B, pp_size 8, 4 nodes of 8 H100, local_batch_size 8.\n```\ntorch.OutOfMemoryError: CUDA out "
            "of memory. Tried to allocate 1.96 GiB.\n```\nwhat now?")
    assert "upstream's `MW-E-MEMORY`" not in a.text and "上游的 `MW-E-MEMORY`" not in a.text
    assert "PyTorch" in a.text and "MW-E-MEMORY" in a.text


def test_the_older_custom_moe_tp_assertion_is_explained_by_its_current_section(ask):
    # moe/parallelizer.py _resolve_moe_tp_plan: TP on a custom MoE model needs a registered plan or tp_plan
    a = ask("tp_size 2 + ep_size 8 on 16 GPUs dies at model setup:\n\n```\nAssertionError: Tensor parallelism not "
            "supported for custom MoE models\n```\n\nIs TP impossible for this model?")
    first = lead(a.text)
    assert "PARALLELIZE_FUNCTIONS" in first and "tp_plan" in first


def test_an_error_quoted_in_the_prose_is_explained_by_its_section_too(ask):
    a = ask('Our Qwen3-Next job (2x8 GPUs, tp_size 2, ep_size 8) crashes with "AssertionError: Tensor parallelism '
            'not supported for custom MoE models". Is there any way to keep TP?')
    assert "PARALLELIZE_FUNCTIONS" in lead(a.text)
