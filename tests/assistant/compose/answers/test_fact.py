"""Fact questions are answered by the fact, not a topic summary with a YAML."""
from __future__ import annotations

import re

import pytest
from answer_checks import shown_configs
from tests.assistant.compose.answers.conftest import body, lead


def test_a_field_default_is_the_first_sentence_and_no_config_is_shown(ask):
    # issue 11: "What does reshard_after_forward default to in moe:?" got an fsdp2 topic summary with a YAML
    a = ask("What does `reshard_after_forward` default to in `moe:`?")
    assert "reshard_after_forward" in lead(a.text) and "false" in lead(a.text).lower()
    assert shown_configs(a.text) == [] and a.judged is None and "fact" in a.asks


def test_aliases_are_answered_as_the_same_strategy(ask):
    a = ask("Are megatron-fsdp and mfsdp different strategies?")
    assert "same strategy" in lead(a.text) and shown_configs(a.text) == []


def test_a_recommendation_keeps_the_rest_data_parallel(ask):
    # issue 11: "pp_size 2 and the rest as data parallel" got a tp_size 4 added
    a = ask("13B model on 16 GPUs: pp_size 2 and the rest as data parallel. Give me the YAML.")
    configs = shown_configs(a.text)
    assert configs
    for cfg in configs:
        d = cfg.get("distributed", cfg)
        assert d.get("pp_size") == 2 and d.get("tp_size", 1) == 1 and d.get("cp_size", 1) == 1


def test_a_value_named_for_a_size_field_gets_the_verdict_not_the_topic(ask):
    # "`pp_size: none`, won't it break?" got the PP topic summary; the field reference judges the value
    a = ask("Our recipe has `cp_size: none` written in it. Won't that fail at start-up?")
    assert lead(a.text).startswith("Yes: `distributed.cp_size` accepts `none`")


def test_a_field_named_outside_the_clause_that_names_the_strategy_is_answered(ask):
    # the clause with "默认" names only FSDP2; the precision asked about is in the next clause
    a = ask("AutoModel 里 FSDP2 默认是这样吗？梯度同步用什么精度")
    assert "reduce_dtype: float32" in lead(a.text)


def test_packing_with_cp_says_which_attention_path_it_needs(ask):
    # "CP + packing: does the attention backend matter?" got only the padding rule and the CP summary
    a = ask("用 context parallel 的时候再开 sequence packing，对 attention 后端有什么限制？")
    assert "THD" in a.text.split("**来源**")[0] and "Transformer Engine" in a.text


def test_two_fact_asks_each_get_their_answer(ask):
    # h-zh-fact-megatron-zero-selective: the first ask (the default) was dropped for the topic summary,
    # and facts counted by the first ask but not shown were missing from the second
    a = ask("两个问题：megatron_fsdp 的 zero_dp_strategy 默认是几？它能用 activation_checkpointing: selective 吗？")
    first = lead(a.text).splitlines()
    assert "zero_dp_strategy" in first[0] and "`3`" in first[0] and len(first) >= 2  # each ask its direct line
    assert "activation_checkpointing" in first[1]
    assert any("selective" in line and "fsdp2" in line for line in body(a.text).splitlines())


def test_a_pronoun_follow_up_is_answered_for_the_field_it_refers_to(ask):
    a = ask("zero_dp_strategy 默认多少？fsdp2 下面能不能写它？")
    first = lead(a.text).splitlines()
    assert "`3`" in first[0] and first[1].startswith("不行") and "fsdp2" in first[1]
    bullets = [line for line in a.text.splitlines() if line.startswith("- ")]
    assert len(bullets) == len(set(bullets))  # the second ask repeats none of the first one's facts


def test_do_i_need_a_block_is_answered_by_the_rule_even_with_a_typo(ask):
    a = ask("with pp_size 2, do i need a pipline block in the yaml?")
    assert lead(a.text).startswith("With `pp_size > 1` the `pipeline:` block is required")


@pytest.mark.parametrize("q, yes", [
    ("Is it possible to combine context parallel with pipeline parallel in fsdp2?", r"^Yes: `fsdp2`.*\(PP\).*\(CP\)"),
    ("cp 和 pp 能一起开吗?", r"^可以：`fsdp2`"),
    ("Does megatron_fsdp let me combine TP with CP?", r"^Yes: `megatron_fsdp`"),
])
def test_features_asked_together_get_a_yes_when_the_strategy_has_them_all(ask, q, yes):
    a = ask(q)
    assert re.search(yes, lead(a.text)), a.text
    assert shown_configs(a.text) == []


def test_features_together_where_one_is_missing_get_the_no(ask):
    a = ask("megatron_fsdp 能同时开 tp 和 pp 吗")
    assert lead(a.text).startswith("不行：`megatron_fsdp` 不支持流水线并行")


# ---- session 2 (facts2): facts that answer by themselves, and neighbouring topics

@pytest.mark.parametrize("question,no", [
    ("Qwen2.5-0.5B 这种 tie_word_embeddings=True 的小模型能开 pp 吗？", "不能"),
    ("Llama-3.2-1B ties its input embeddings and lm_head. Can I still train it with pp_size 2?", "No"),
])
def test_a_tied_embedding_model_gets_no_for_pp_and_no_pp_config(ask, question, no):
    a = ask(question)
    first = lead(a.text)
    assert first.startswith(no) and "tie_word_embeddings" in first and "validate_hf_model_for_pipeline_support" in first
    assert shown_configs(a.text) == []


@pytest.mark.parametrize("question", [
    "cp_size 2 用 sdpa 跑 packed 数据，一条 packed 序列里不同样本之间会不会互相 attend 到？",
    "With cp_size 4 on the sdpa attention, what happens to the attention_mask I pass in?",
])
def test_cp_on_sdpa_says_the_mask_is_dropped_first(ask, question):
    first = lead(ask(question).text)
    assert "attention_mask" in first and "is_causal=True" in first and "THD" in first


def test_fp32_master_weights_lead_with_model_torch_dtype(ask):
    first = lead(ask("想要 fp32 的 master weights、计算用 bf16，fsdp2 下面咋配？").text)
    assert "model.torch_dtype: float32" in first and "reduce_dtype" in first


def test_a_capability_asked_in_prose_gets_the_strategy_limits(ask):
    a = ask("The skill says MegatronFSDP has no PP, no EP and no sequence_parallel. "
            "Does that mean it has no tensor parallelism either?")
    # asked in the negative ("has no TP either?"), the answer contradicts the "no": "No: ... does support TP"
    assert re.search(r"megatron_fsdp` (supports|does support) tensor parallelism", lead(a.text))


def test_model_onboarding_asked_as_a_fact_is_pointed_upstream(ask):
    first = lead(ask("咋用 AutoModel 训刚出的 Qwen3？需要自己写模型代码吗").text)
    assert "不在 Meshwise 的范围内" in first and "model-onboarding" in first


@pytest.mark.parametrize("question,want", [
    ("Is the strategy field case sensitive?", "case-insensitive"),
    ("patch_inner_model 什么时候要关？", "false"),
    ("when should I set patch_inner_model to false?", "Hugging Face"),
])
def test_field_advice_and_case_are_answered_from_the_reference(ask, question, want):
    a = ask(question)
    assert want in lead(a.text) and "fact" in a.asks and shown_configs(a.text) == []


@pytest.mark.parametrize("q, lead_has", [
    ("What is ep_shard and when is it bigger than 1?", "`ep_shard = dp_size * cp_size * tp_size / ep_size`"),
    ("ep_shard 是什么意思", "`ep_shard = dp_size * cp_size * tp_size / ep_size`"),
    ("why does ddp ignore dp_size?", "`ddp` ignores `dp_size`"),
    ("为啥 ddp 不认 dp_size?", "`ddp` 会忽略 `dp_size`"),
])
def test_a_definition_or_a_why_is_answered_as_a_fact_not_a_number(ask, q, lead_has):
    a = ask(q)
    assert a.asks == ["fact"] and lead_has in lead(a.text), a.text
    assert shown_configs(a.text) == []


@pytest.mark.parametrize("q", ["fsdp2 和 ddp 哪个省显存", "fsdp2 or ddp, which uses less memory?"])
def test_which_strategy_saves_memory_is_answered_first(ask, q):
    assert lead(ask(q).text).startswith("`fsdp2`")


def test_dp_replicate_is_replica_groups_not_a_node_count(ask):
    for q, lang, opening in (("is dp_replicate_size the number of nodes?", "en", "Not necessarily"),
                             ("dp_replicate_size 就是节点数吗", "zh", "不一定")):
        a = ask(q, lang=lang)
        first = lead(a.text)
        assert first.startswith(opening) and "dp_shard = dp_size / dp_replicate_size" in first
        assert a.judged is None


# --- concept questions (round 2): the fact that answers them leads, worked on the user's numbers ---

def test_ep_with_tp_is_answered_as_shared_ranks_with_the_users_ep_shard(ask):
    # main led with a recommendation ("Use strategy: fsdp2 with ep_size > 1") and a YAML
    a = ask("I set ep_size 8 on 8 GPUs and tp_size 2. Does EP multiply with TP or share ranks?")
    first = lead(a.text)
    assert first.startswith("EP shares ranks") and "ep_shard = 1" in first
    assert shown_configs(a.text) == []


def test_ep_shares_ranks_in_chinese_with_ep_shard_two(ask):
    # main led with a verdict on the layout ("可以：...")
    a = ask("16 张卡，tp_size 2，ep_size 8，EP 和 TP 是相乘还是共用同一批 GPU？")
    first = lead(a.text)
    assert first.startswith("EP 与 DP、CP、TP 共用") and "ep_shard = 2" in first


def test_cp_and_sequence_length_gives_the_per_gpu_tokens(ask):
    a = ask("If my sequences are 64k tokens and I set cp_size 8, how long is the piece each GPU holds?")
    first = lead(a.text)
    assert "seq_len / cp_size" in first and "8192 tokens per GPU" in first


def test_strategies_compared_by_what_each_supports(ask):
    # main answered only "different strategies: fsdp2 selects FSDP2Config; ..."
    a = ask("What's the difference between fsdp2 and megatron_fsdp in AutoModel?")
    first = lead(a.text)
    assert "mesh (dp, cp, tp)" in first and "mesh (pp, dp_replicate, dp_shard, cp, tp)" in first
    assert "zero_dp_strategy" in first and shown_configs(a.text) == []


def test_sequence_parallel_worth_it_leads_with_what_sp_does(ask):
    # main led with "megatron_fsdp has no sequence_parallel"
    a = ask("Is sequence_parallel worth turning on with tp_size 2?")
    first = lead(a.text)
    assert first.startswith("`sequence_parallel: true`") and "activation memory" in first


def test_a_size_with_a_value_is_not_the_subject_beside_another_field(ask):
    # "tp_size 4 的时候 sequence_parallel 有什么用" led with the meaning of tp_size
    a = ask("tp_size 4 的时候 sequence_parallel 有什么用，值得开吗？")
    assert lead(a.text).startswith("`distributed.sequence_parallel`")


def test_two_pipeline_schedules_compared(ask):
    # main answered "1f1b 和 interleaved1f1b 有什么区别？" with how to delete pp_schedule
    a = ask("1f1b 和 interleaved1f1b 有什么区别？")
    first = lead(a.text)
    assert first.startswith("`1f1b`（默认）") and "虚拟 stage" in first and "max(1, m // pp_size)" in first


def test_is_a_feature_worth_it_beside_stated_sizes_is_its_cost_not_a_verdict(ask):
    # main answered "Yes: `strategy: fsdp2`, `tp_size: 2` is valid" on the sizes beside the question
    a = ask("Is activation checkpointing worth turning on for a 7B model with tp_size 2?")
    first = lead(a.text)
    assert first.startswith("Activation checkpointing trades compute for memory") and "verdict" not in a.asks


def test_how_a_feature_works_beside_stated_sizes_is_its_fact_not_only_a_verdict(ask):
    # Automodel #426: the layout's verdict alone left "what does sequence_parallel change?" unanswered
    a = ask("Gemma3 27B on 8 nodes x 8 H100, fsdp2 with tp_size 8, sequence_parallel: true. Is sequence_parallel "
            "supported with tp 8, and what does sequence_parallel actually change in the TP plan?")
    assert "fact" in a.asks
    assert re.search(r"norms?[^\n]{0,160}sequence", a.text)


def test_does_setting_a_field_fix_this_leads_with_what_the_field_does(ask):
    # Automodel #2585: the lead was "Yes: your layout is valid" for an OOM the user asked AC to fix
    a = ask("gemma 2 9b CUDA-OOMs on 8 H100 in the backward pass, no activation checkpointing. "
            "distributed: {strategy: fsdp2, tp_size: 1}. Does setting distributed.activation_checkpointing: true "
            "fix this, and what does it recompute?")
    first = lead(a.text)
    assert not first.startswith("Yes: your layout is valid") and re.search(r"[Rr]ecomput", first)


def test_a_module_asked_about_beside_a_pasted_layout_is_answered_from_the_kb(ask):
    # "What does it do with the lm_head under TP?" got "fsdp2 accepts strategy" from the layout's fields
    a = ask("My model has vocab 151655. distributed: strategy: fsdp2, tp_size: 4. What does Automodel do with the "
            "lm_head / embed_tokens under TP?")
    assert re.search(r"vocab[^\n]{0,120}split", a.text)
    assert "accepts `strategy`" not in a.text


def test_several_features_a_strategy_lacks_lead_with_the_one_no(ask):
    a = ask("Can I use megatron_fsdp in NeMo AutoModel if I need pipeline parallelism, expert parallelism, or sequence_parallel?")
    assert lead(a.text).startswith("No: `megatron_fsdp` cannot do")


@pytest.mark.parametrize("q, start", [
    ("Does tp_size 1 with sequence_parallel true change anything?", "Nothing changes: at `tp_size: 1`"),
    ("tp_size 1 配 sequence_parallel: true 有区别吗？", "没有任何变化：`tp_size: 1`"),
    ("tp_size=1 and enable_async_tensor_parallel: true, what happens?", "Nothing changes: at `tp_size: 1`"),
])
def test_a_setting_that_does_nothing_at_the_users_sizes_says_so_first(ask, q, start):
    # issue 18: the lead was "`megatron_fsdp` has no `sequence_parallel`", a neighbour; upstream applies
    # no TP plan (and no SP styles) when the TP mesh is 1 (components/distributed/parallelizer.py)
    a = ask(q)
    assert lead(a.text).startswith(start), a.text[:300]


def test_a_setting_that_works_at_the_users_sizes_gets_no_inert_lead(ask):
    a = ask("With tp_size 4, what does sequence_parallel do?")
    assert "Nothing changes" not in a.text


@pytest.mark.parametrize("question", [
    "单机 8 卡、fsdp2、ep_size 8，EP 是不是要另外占卡？ep_shard_size 是多少？",
    "16 卡，pp_size 2、ep_size 2：ep 会像 Megatron 一样乘进需要的卡数里吗？",
])
def test_whether_ep_costs_gpus_of_its_own_leads_with_the_shared_ranks(ask, question):
    first = lead(ask(question).text)
    assert first.startswith("EP 与 DP、CP、TP 共用同一批 rank")


def test_a_field_named_only_inside_the_ep_formula_brings_no_facts_of_its_own(ask):
    # "(dp_size × cp_size) must be divisible by ep_size" quotes the EP rule: dp_size and CP are not asked about
    a = ask("ep_size 的约束到底是 dp*cp 还是 dp*cp*tp？finetune 文档里写的是 (dp_size × cp_size) must be divisible by "
            "ep_size。那 8 卡 tp 2 ep 8 到底行不行？")
    assert "MW-E-EP-DIVIDES" in a.text and "MW-E-DP-MISMATCH" not in a.text and "上下文并行" not in a.text


def test_each_clause_naming_a_strategy_and_a_parallelism_gets_that_strategys_answer(ask):
    # issue 18 (t9 realzh): the second clause asked about ddp and was answered about megatron_fsdp's fields
    q = ("单机 8 卡做长文本：\n\n```yaml\ndistributed:\n  strategy: megatron_fsdp\n  tp_size: 1\n  cp_size: 8\n```\n\n"
         "这时候 dp_size 是不是就 1 了？megatron_fsdp 支持 cp 吗？顺便问 ddp 能不能开 cp")
    first = lead(ask(q).text)
    assert "`megatron_fsdp` 支持上下文并行" in first and "`ddp` 不支持上下文并行" in first
