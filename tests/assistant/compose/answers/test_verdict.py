"""Verdicts judge the user's own layout exactly as stated; the nearest valid layout only after a "no"."""
from __future__ import annotations

import re

import yaml

from answer_checks import shown_configs
from assistant.validator import validate
from tests.assistant.compose.answers.conftest import lead


def test_stated_ones_are_kept_and_the_verdict_leads(ask):
    # issue 11: this came back as a layout with pp_size 2 and cp_size 2 added, called valid
    a = ask("32 GPUs, tp_size 4, ep_size 8, pp and cp both 1: does it run?")
    d = a.judged["distributed"]
    assert (d["tp_size"], d["ep_size"], d.get("pp_size", 1), d.get("cp_size", 1)) == (4, 8, 1, 1)
    assert "verdict" in a.asks and a.validation.ok and lead(a.text).startswith("Yes: ")
    assert shown_configs(a.text) == []  # nothing asked for a config


def test_a_no_comes_first_with_the_arithmetic_then_a_revalidated_fix(ask):
    # issue 11: this opened with "Recommendation: use fsdp2" and buried the "no"
    a = ask("Does tp 4 with pp 3 work on 40 GPUs?")
    first = lead(a.text)
    assert first.startswith("No: ") and "40" in first and "12" in first and "MW-E-WORLD-DIVISIBLE" in first
    assert (a.judged["distributed"]["tp_size"], a.judged["distributed"]["pp_size"]) == (4, 3)
    assert not a.validation.ok
    fixes = shown_configs(a.text)
    assert fixes and all(validate(c, world_size=40, gpus_per_node=8).ok for c in fixes)


def test_a_worry_is_answered_by_where_the_run_really_stops(ask):
    cfg = "distributed:\n  strategy: fsdp2\n  tp_size: 2\n  ep_size: 8\n"
    a = ask(f"Will this hang on 8 GPUs?\n```yaml\n{cfg}```")
    assert lead(a.text).startswith("It gets past start-up") and a.validation.ok
    assert a.judged == yaml.safe_load(cfg)


def test_strategy_with_a_field_is_the_validators_verdict(ask):
    a = ask("megatron_fsdp 可以设置 defer_fsdp_grad_sync 吗？")
    first = lead(a.text)
    assert first.startswith("不行") and "MW-E-STRATEGY-OPTION" in first
    assert a.judged["distributed"]["strategy"] == "megatron_fsdp"
    assert re.search(r"`strategy` 改为 `fsdp2`", first)  # the fix, in the lead


def test_an_alternative_is_judged_as_the_users_layout_with_that_change(ask):
    # h-en-multi-ep-three-parts: "could I use ep 16 instead?" was dropped; the user's ep 8 stays judged
    a = ask("MoE on 32 GPUs with tp 2 and ep 8: what is dp_size, what is ep_shard, and could I use ep 16 instead?")
    first = lead(a.text).splitlines()
    assert first[0].startswith("dp_size = 16")
    assert any(line.startswith("Yes: ") and "`ep_size: 16`" in line and "`tp_size: 2`" in line for line in first)
    assert a.judged["distributed"]["ep_size"] == 8 and a.asks == ["quantity", "quantity", "verdict"]


def test_an_alternative_that_fails_says_no_with_the_arithmetic(ask):
    a = ask("64 卡 pp 4 ep 16，行不行，不行的话改成 ep 32 呢")
    lines = lead(a.text).splitlines()
    no = [line for line in lines[1:] if line.startswith("不行")]
    assert lines[0].startswith("可以") and len(no) == 1 and "32" in no[0] and "16" in no[0]
    assert a.judged["distributed"]["ep_size"] == 16


def test_good_to_go_is_a_verdict_on_the_users_own_sizes(ask):
    # h-en-verdict-ep32-on-16: answered as a recommendation with ep changed to 16
    a = ask("16 GPUs, tp 2, ep 32 for a 64-expert model. Good to go?")
    assert lead(a.text).startswith("No: ") and a.asks == ["verdict"]
    assert (a.judged["distributed"]["tp_size"], a.judged["distributed"]["ep_size"]) == (2, 32)


def test_a_memory_worry_gets_the_model_states_after_the_verdict(ask):
    # 70B known only by size, tp 8 on 8 GPUs: 70e9 * 16 B (fp32 weights, grads, AdamW) / 8 = 140 GB per GPU
    a = ask("will 70b blow up on 8 GPUs with tp 8?")
    first = lead(a.text)
    assert "valid" in first and "About 140.0 GB of model states per GPU" in first


def test_an_oom_worry_over_the_estimate_is_a_yes(ask):
    # 70B fp32 states on 16 GPUs of pure data parallel are far over 80 GB: the run starts, then OOMs
    a = ask("llama 3 70b 在 16 张 H100 上纯数据并行 fsdp2，会 OOM 吗？", lang="zh")
    first = lead(a.text)
    assert first.startswith("会：能启动，但显存不够") and "不会走到那一步" not in first
    assert a.judged["distributed"]["tp_size"] == 1 and a.judged["distributed"]["pp_size"] == 1


def test_plain_fsdp2_is_a_stated_layout_with_its_memory(ask):
    a = ask("will llama 3 8b blow up on 8 H100s with plain fsdp2?")
    first = lead(a.text)
    assert "gets past start-up" in first and "Estimated memory per GPU" in first


def test_an_alternative_asked_about_is_the_layout_judged(ask):
    a = ask("MoE on 32 GPUs with tp 2 and ep 8: what is dp_size, and could I use ep 16 instead?", world_size=32)
    first = lead(a.text)
    assert "dp_size = 16" in first and "`ep_size: 16` is valid" in first
    assert a.judged["distributed"]["ep_size"] == 8  # the user's own layout stays the one judged first


def test_a_mesh_smaller_than_the_world_passes_start_up_and_then_does_not_work(ask):
    from tests.assistant.compose.answers.conftest import lead

    a = ask("单机 4 卡，distributed 里只写了 dp_size: 2，会不会卡住？", world_size=4)
    first = lead(a.text)
    assert first.startswith("会出问题：启动能通过") and "MW-E-DP-MISMATCH" in first and "启动时就会报错" not in first
    a = ask("2 nodes x 8 GPUs with dp_size: 8 and tp, pp, cp at 1: will it hang?", world_size=16, gpus_per_node=8)
    assert lead(a.text).startswith("Yes, that is the problem: it passes start-up")


def test_a_model_size_with_the_layout_adds_whether_it_fits_on_the_assumed_gpu(ask):
    # 13B on 4 GPUs, tp 2 pp 2: dp 1, 13e9 * 16 B / 4 ranks = 52 GB, under the assumed H100's 80 GB
    a = ask("I only have 4 GPUs. Can I still use pp_size 2 and tp_size 2 for a 13B model?")
    first = lead(a.text)
    assert first.startswith("Yes: ") and "About 52.0 GB of model states per GPU" in first
    assert "80 GB" in first and "assumed" in first
    assert (a.judged["distributed"]["tp_size"], a.judged["distributed"]["pp_size"]) == (2, 2)


def test_is_it_enough_is_a_verdict_and_a_memory_no_names_the_layout_that_starts(ask):
    # Llama-3.1-70B on 16 H100 80GB, tp 8 x dp_shard 2: the mesh builds; the estimate is over 80 GB
    a = ask("两台机器 16 张 H100 80G 全量微调 Llama-3.1-70B，tp 8 加跨机 FSDP 够不够，要不要上 PP？", lang="zh")
    first = lead(a.text)
    assert a.asks[0] == "verdict" and a.judged["distributed"]["tp_size"] == 8
    assert first.startswith("不行：`strategy: fsdp2`, `tp_size: 8` 在 world_size 16 下能通过启动检查，但显存放不下")


def test_dp_left_unset_gets_the_verdict_then_the_inferred_dp(ask):
    a = ask("what happens if I leave dp_size null with tp 2 on 12 gpus")
    first = lead(a.text)
    assert a.asks[:2] == ["verdict", "quantity"] and first.startswith("Yes: ")
    assert "dp_size = 6" in first and "12 / (2 × 1 × 1)" in first


def test_model_states_that_leave_little_room_are_called_tight(ask):
    # 72B known only by size on 16 H100 80GB: 72e9 * 16 B / 16 = 72 GB, 8 GB left for activations
    a = ask("Qwen2.5-72B on 2 nodes of 8 H100 80GB: is tp 8 plus FSDP across the nodes enough?")
    first = lead(a.text)
    assert "About 72.0 GB of model states per GPU" in first and "only about 8 GB is left" in first
    assert "(assumed" not in first  # the GPU was named


def test_a_world_smaller_than_a_node_is_not_called_8_gpus_per_node(ask):
    a = ask("I only have 4 GPUs. Can I use pp_size 2 and tp_size 2?")
    assert "world_size 4 (4 GPUs per node)" in a.text and "(8 GPUs per node)" not in a.text.split("\n\n")[0]


def test_a_good_idea_ask_weighs_the_cross_node_warning_in_the_lead(ask):
    # issue 18: this opened "Yes: ... is valid"; it starts, but TP across nodes is a bad idea
    a = ask("tp_size 16 on two 8-GPU nodes for a 70B model, good idea?")
    first = lead(a.text)
    assert a.validation.ok and first.startswith("Not a good idea as it stands")
    assert "MW-W-TP-CROSS-NODE" in first and "tp_size 8" in first and "PP or data parallelism" in first


def test_a_good_idea_ask_weighs_the_warning_and_the_memory_together(ask):
    # it starts, TP spans the nodes and the estimate is over the H100's memory: both lead, in 400 chars,
    # then what to use instead for both (not the memory fix alone, which keeps tp 16)
    a = ask("Llama 3.1 70B on two nodes of 8 H100 with tp_size 16, good idea?")
    first = lead(a.text)
    assert first.startswith("Not a good idea as it stands") and "MW-W-TP-CROSS-NODE" in first[:400]
    assert "MW-E-MEMORY" in first and "tp_size 8" in first and "activation_checkpointing" in first


def test_an_advice_ask_in_words_no_cue_lists_is_read_by_the_advice_reader(ask):
    a = ask("4 台机器每台 4 张卡，一共 16 卡，Qwen3-32B 开 tp_size 8 是个好主意吗？", gpus_per_node=4)
    assert lead(a.text).startswith("目前这样不建议") and "MW-W-TP-CROSS-NODE" in lead(a.text)


def test_a_good_idea_ask_on_a_sound_layout_is_a_yes(ask):
    a = ask("70B 模型 2 机 16 卡，tp 8 pp 2，建议这样吗？")
    assert a.validation.ok and lead(a.text).startswith("可以")


def test_what_happens_to_a_decimal_size_leads_with_the_silent_change(ask):
    # "会咋样" after a size written as 2.0: the run starts, as tp_size 1 (mesh_utils reads non-ints as 1)
    a = ask("不小心把 tp_size 写成 2.0 了，会咋样？报错吗", world_size=8)
    first = lead(a.text)
    assert "MW-W-SIZE-NOT-INT" in first and "tp_size = 1" in first
    assert shown_configs(a.text) == []


def test_cp_with_packing_on_sdpa_is_advised_against(ask):
    cfg = ("distributed:\n  strategy: fsdp2\n  cp_size: 2\npacked_sequence:\n  packed_sequence_size: 8192\n"
           "model:\n  attn_implementation: sdpa\n")
    a = ask(f"8 GPUs, CP and packing:\n```yaml\n{cfg}```\nIs CP + packing on SDPA a good idea?", world_size=8)
    first = lead(a.text)
    assert "MW-W-CP-PACKING-SDPA" in first and "attn: te" in first and not first.startswith("Yes")
    assert "use the TE attention backend" not in first.split("MW-W-CP-PACKING-SDPA")[0]  # the reason, then the advice


def test_a_hard_wrapped_sentence_keeps_its_pipeline_block(ask):
    # "keep a\npipeline: block with pp_size 1": one sentence, so the verdict judges pp 1 with the block kept
    a = ask("My config has\n\n```yaml\ndistributed:\n  strategy: fsdp2\n  pp_size: 2\n```\n\nand no pipeline section, on "
            "8 GPUs. Why does it fail now? And separately: our other configs keep a\npipeline: block with pp_size 1 "
            "as a reference, will those break too?")
    assert "MW-W-PIPELINE-DROPPED" in a.text


def test_those_in_a_sentence_of_its_own_are_the_configs_of_the_sentence_before(ask):
    a = ask("This config raises a ValueError on 8 GPUs:\n\n```yaml\ndistributed:\n  strategy: fsdp2\n  pp_size: 2\n```\n\n"
            "There is no pipeline section. Also, several of our recipes have a pipeline: section while pp_size is 1. "
            "Do those fail too?")
    assert "MW-W-PIPELINE-DROPPED" in a.text


def test_a_verdict_on_the_asked_ep_says_its_own_rule_before_another_failure(ask):
    # issue 18 (t9-rz-zh-06): "ep 8 还合法么" was answered by the batch rule alone, as if EP failed
    a = ask("64 卡。\n\n```yaml\nstep_scheduler:\n  global_batch_size: 32\n  local_batch_size: 8\ndistributed:\n"
            "  strategy: fsdp2\n  pp_size: 4\n  ep_size: 8\n  pipeline:\n    pp_schedule: 1f1b\n```\n\nep 8 还合法么")
    assert not a.validation.ok and re.search(r"`ep_size` 8 本身合法：\(dp × cp × tp\) % ep = 16 % 8 = 0", a.text)


def test_tp_inside_a_node_is_said_when_asked(ask):
    # issue 18 (t9-rz-zh-14): "tp 8 会不会跨机" was left to a pitfall bullet of a diagnosis
    a = ask("4 机 32 卡，每机 8 卡，fsdp2，tp_size 8，pp_size 2。tp 8 会不会跨机？")
    assert "不会跨机" in a.text and "连续的 8 个 rank" in a.text and a.text.count("不会跨机") == 1


def test_good_idea_over_memory_is_no_good_idea_with_what_to_change(ask):
    # issue 18: a layout that starts but does not fit led "No: ..." as if it did not start
    a = ask("Full fine-tune of Llama 3.1 70B on one node of 8x A100 40GB with fsdp2 and tp_size 8. Is that a good idea?")
    first = lead(a.text)
    assert first.startswith("Not a good idea") and "MW-E-MEMORY" in first and "activation_checkpointing" in first
    assert a.text.count("consecutive ranks") == 1  # TP inside the node said once, beside the memory


def test_a_switch_says_what_the_new_strategy_keeps_and_which_would_drop_it(ask):
    # issue 18 (t10-cap-en-05): megatron_fsdp's mesh is (dp, cp, tp), ddp rejects tp (mesh_utils)
    a = ask("Our 70B run uses fsdp2 with tp_size 4 on 4 nodes. Infra now standardizes on megatron_fsdp. "
            "Is there any way to keep TP after the switch?")
    assert a.judged["distributed"]["strategy"] == "megatron_fsdp" and a.judged_validation.ok
    assert "`megatron_fsdp` keeps tensor parallelism (TP): `tp_size: 4`" in a.text
    assert re.search(r"`ddp` would not: it rejects tensor parallelism", a.text)


def test_a_true_negative_claim_with_sizes_is_confirmed_then_rejected(ask):
    # issue 18: "No: ..." read as if the claim were wrong; ddp has no TP (mesh_utils _require_size_one)
    a = ask("Is it true ddp can't do tp? we want tp 2 on 4 GPUs")
    first = lead(a.text)
    assert first.startswith("Yes, that's true") and "MW-E-DDP-PARALLEL" in first
    assert not a.judged_validation.ok and a.judged["distributed"] == {"strategy": "ddp", "tp_size": 2}
    assert all(validate(c, world_size=4).ok for c in shown_configs(a.text))


def test_a_wrong_negative_claim_is_contradicted_and_the_layout_passes(ask):
    # mixed polarity: the user says megatron_fsdp has no TP; its mesh is (dp, cp, tp)
    a = ask("megatron_fsdp 完全不支持张量并行，对吧？我们本来打算 8 卡上 tp_size 2")
    first = lead(a.text)
    assert first.startswith("不是的") and "(4, 1, 2)" in first and a.judged_validation.ok


def test_a_switch_that_drops_a_parallelism_names_the_strategies_that_keep_it(ask):
    a = ask("现在是 fsdp2 + cp_size 2，单机 8 卡。如果换成 ddp，cp 还能保留吗？")
    assert lead(a.text).startswith("不行") and not a.judged_validation.ok
    assert "`fsdp2` 和 `megatron_fsdp` 都支持上下文并行" in a.text


def test_a_bare_check_after_a_claim_judges_the_claim_on_the_stated_size(ask):
    # "Is that so?" names nothing: the claim before it (megatron_fsdp has no TP) is what it checks
    a = ask("My understanding is that megatron_fsdp cannot combine with tensor parallel at all, so moving off "
            "fsdp2 would cost us our tp_size 2 on 16 GPUs. Is that so?")
    assert a.judged["distributed"]["strategy"] == "megatron_fsdp" and a.judged_validation.ok
    assert lead(a.text).startswith("No: `megatron_fsdp` does support tensor parallelism")
    b = ask("megatron_fsdp can't do pp. Is tp 2 on 8 GPUs valid with it?")
    assert not lead(b.text).startswith(("Yes, that's true", "No: `megatron_fsdp` does support"))
