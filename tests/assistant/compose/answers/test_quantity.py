"""Quantities are the validator's derived sizes of the user's layout, each the result first."""
from __future__ import annotations

import re

import pytest
from answer_checks import shown_configs
from tests.assistant.compose.answers.conftest import lead


def test_every_number_asked_is_in_the_lead(ask):
    # issue 11: three numbers asked, one answered
    a = ask("What are dp_size and the ep_shard size, and how many gradient-accumulation steps with global 64 / "
            "local 2? 32 GPUs, tp_size 2, ep_size 4.")
    first = lead(a.text)
    # dp = 32 / 2 = 16; ep_shard = 16*1*2 / 4 = 8; grad acc = 64 / (2 * 16) = 2
    assert "dp_size = 16" in first and "ep_shard = 8" in first and "Gradient accumulation = 2" in first
    assert a.asks.count("quantity") >= 2 and shown_configs(a.text) == []
    assert a.judged["step_scheduler"] == {"global_batch_size": 64, "local_batch_size": 2}


def test_a_failing_layout_has_a_verdict_not_quantities(ask):
    a = ask("On 24 GPUs with tp_size 8 and pp_size 2, what is dp_size?")
    assert lead(a.text).startswith("No: ") and not a.validation.ok


@pytest.mark.parametrize("question, in_lead", [
    # issue 18 (t9 forms): 64 % 12 fails the experts rule, but the mesh builds: dp = 48 / 1 = 48
    ("48 GPUs, 64 experts, ep 12: must ep divide experts? And what dp_size do we end up with?",
     ("64 % 12 = 4", "dp_size = 48")),
    # an elliptic follow-on: dp of tp 2, then of tp 2 with cp 2
    ("On 16 GPUs with tp 2, what's dp_size? and with cp 2?", ("16 / (2 × 1 × 1)", "16 / (2 × 1 × 2)")),
    # inverse: dp = 64 / 8 = 8, local_batch_size = 512 / (4 * 8) = 16; microbatches: 16 / 4 = 4
    ("global_batch_size 512 on 64 GPUs with tp 8: what local_batch_size gives grad-acc 4?",
     ("`local_batch_size: 16`", "512 / (4 × 8) = 16")),
    ("local_batch_size 16，pp 4，想要 4 个 microbatch，pp_microbatch_size 填几？",
     ("`pp_microbatch_size: 4`", "16 / 4 = 4")),
    # the third layout listed: 8 * 4 = 32 does not divide 24
    ("Options on 24 GPUs: (a) tp 2 pp 3, (b) tp 4 pp 2, (c) tp 8 pp 4. Is the third option valid?",
     ("No: ", "8*1*4 = 32")),
])
def test_each_layout_asked_about_gets_its_own_numbers(ask, question, in_lead):
    first = lead(ask(question).text)
    assert all(part in first for part in in_lead), first


def test_experts_per_rank_is_the_stated_count_over_ep(ask):
    # a phrasing and numbers of our own: 96 experts over ep 8 on 16 GPUs -> 12 per rank
    a = ask("My MoE has 96 routed experts. With 16 GPUs and ep_size 8, how many experts sit on each GPU?")
    first = lead(a.text)
    assert "12 experts per EP rank" in first and "96 / 8" in first
    assert "n_routed_experts % ep_size == 0" in first and shown_configs(a.text) == []


def test_experts_per_rank_that_do_not_divide_say_start_up_fails(ask):
    a = ask("60 experts and ep_size 8 on 8 GPUs: how many experts per rank do I get?")
    first = lead(a.text)
    assert "60 % 8 = 4" in first and "start-up" in first and "12 experts per" not in first


def test_experts_per_rank_reads_the_model_table(ask):
    a = ask("每张卡上有几个专家？Qwen3-30B-A3B，16 卡，ep_size 16", lang="zh")
    assert "128 / 16" in lead(a.text) and "8 个专家" in lead(a.text)


def test_hsdp_size_left_to_us_is_one_shard_group_per_node(ask):
    # a wording of our own: the user wants HSDP, states the strategy and the cluster, asks the sizes
    a = ask("We run fsdp2 on 64 GPUs, 8 per node, and want HSDP with every node its own shard group. "
            "How big is dp_replicate_size then?")
    first = lead(a.text)
    assert "dp_replicate_size 8" in first and "dp_shard = 8" in first and "64 / 8" in first
    assert a.judged["distributed"]["dp_replicate_size"] == 8



def test_two_layouts_compared_each_get_their_numbers(ask):
    # our own wording and numbers: 16 GPUs, global 64 / local 2, pp 2 -> pp 4
    a = ask("16 GPUs, global batch 64, local batch 2: going from pp 2 to pp 4, how many gradient accumulation steps?")
    first = lead(a.text)
    assert "With `pp_size: 2`: Gradient accumulation = 4" in first and "64 / (2 × 8)" in first
    # pp 4 needs 4 microbatches but local_batch_size 2 gives 2: the rule, not a number
    assert "With `pp_size: 4`: No:" in first and "MW-E-PP-MICROBATCH-COUNT" in first
    assert "global_batch_size stays 64" in first


def test_the_layout_named_in_the_asking_sentence_is_the_one_computed(ask):
    # two layouts stated; the question names the second: dp = 16 / (4 * 2) = 2, not 16 / (2 * 2) = 4
    a = ask("On 16 GPUs tp 2 pp 2 was too slow, so we moved to tp 4 pp 2. For the tp 4 pp 2 run, what is dp_size?")
    assert lead(a.text).startswith("dp_size = 2:") and a.judged["distributed"]["tp_size"] == 4


def test_a_world_size_asked_about_in_the_sentence_is_the_one_computed(ask):
    # our numbers: tp 4 pp 2 fails on 12 GPUs; the second question moves to 24 GPUs -> dp = 24 / 8 = 3
    a = ask("Does tp 4 with pp 2 run on 12 GPUs? If it doesn't, what dp_size do I get on 24 GPUs with the same sizes?")
    first = lead(a.text)
    assert first.startswith("No: ") and "dp_size = 3" in first and "24 / (4 × 2 × 1)" in first


def test_a_stated_dp_that_is_asked_about_is_computed_not_taken(ask):
    a = ask("Our run sheet says 'tp2 pp2 dp8' for 32 GPUs. What is dp_size actually with tp 2 and pp 2 on 32 GPUs?")
    assert lead(a.text).startswith("dp_size = 8:")
    a = ask("Our run sheet says 'tp2 pp2 dp4' for 32 GPUs. What is dp_size actually with tp 2 and pp 2 on 32 GPUs?")
    assert lead(a.text).startswith("dp_size = 8:") and "dp_size" not in a.judged["distributed"]


def test_a_per_node_count_in_the_sentence_is_not_the_world_asked_about(ask):
    # 8 GPUs, global 16 / local 1, no TP: dp 8, grad acc 2; "a node only has 2 GPUs" is not a world of 2
    a = ask("8 GPUs, global_batch_size 16 and local_batch_size 1. With ep_size 4 and no TP, how many gradient "
            "accumulation steps do I get, and is ep 4 allowed when a node only has 2 GPUs?")
    assert "Gradient accumulation = 2" in lead(a.text) and "16 / (1 × 8)" in lead(a.text)


def test_how_many_nodes(ask):
    a = ask("A recipe header says world = tp1 * cp8 * pp1 * dp4 = 32. Do I have to write dp_size: 4 myself, "
            "and how many 8-GPU nodes is that?")
    assert "4 nodes of 8 GPUs" in lead(a.text) and a.asks == ["fact", "quantity", "quantity"]


def test_minimum_local_batch_size_is_pp_times_microbatch(ask):
    # train_ft.py: local_batch_size // pp_microbatch_size >= pp_size -> 4 * 2
    a = ask("16 卡，tp 2，pp_size=4，pipeline 的 pp_microbatch_size 我设的是 2。这种情况下 local_batch_size 最小多少？",
            world_size=16, lang="zh")
    first = lead(a.text)
    assert first.startswith("local_batch_size 最小为 8") and "4 × 2" in first
    assert "dp_size" not in first  # the number asked, not the layout's dp
    assert a.judged["distributed"]["pipeline"] == {"pp_microbatch_size": 2}


def test_minimum_local_batch_size_with_the_ratio_asked(ask):
    a = ask("Rule of thumb says 4x as many microbatches as stages. With pp 4 and pp_microbatch_size 1, what is "
            "the minimum local_batch_size?", world_size=8)
    first = lead(a.text)
    assert "at least 4" in first and "4 × 4 × 1 = 16" in first


def test_layers_per_stage_from_the_model_table(ask):
    # Qwen3-30B-A3B: 48 layers over 4 single-stage (1f1b) ranks
    a = ask("qwen3 30b a3b 单机 8 卡，想开 pp 4、ep 2，默认 1f1b 调度的话每个 stage 几层？", world_size=8, lang="zh")
    assert "每个 stage 12 层" in lead(a.text) and "48 层 / 4 个 stage" in lead(a.text)


def test_layers_per_stage_uneven_and_interleaved(ask):
    # DeepSeek-V3: 61 layers, interleaved1f1b -> 2 stages per rank, 8 stages: 61 = 5*8 + 5
    a = ask("deepseek v3 with pp 4 and pp_schedule interleaved1f1b on 64 GPUs, ep 16: how many layers per stage?",
            world_size=64)
    first = lead(a.text)
    assert "7 or 8 layers per stage" in first and "first 5 stage(s) 8 layers" in first


def test_layers_per_stage_from_a_stated_count(ask):
    a = ask("A 60-layer model, pp 6 on 12 GPUs with tp 2: how many layers does each stage get?", world_size=12)
    assert "10 layers per stage" in lead(a.text)


def test_the_asked_run_of_a_story_is_judged(ask):
    a = ask("之前 64 卡 tp 2 的时候 global_batch_size 512、local_batch_size 2。现在缩到 32 卡、tp 改成 4，"
            "gbs 和 lbs 都不变，梯度累积几步？", lang="zh")
    assert a.judged["distributed"]["tp_size"] == 4 and "梯度累积步数 = 32" in lead(a.text)


def test_model_states_for_a_model_known_by_size(ask):
    # 7B, bf16 weights: 2 + 2 + 4 bytes per parameter, sharded over 8 ranks = 7 GB
    a = ask("7B 全参微调，8 卡 fsdp2 纯数据并行，torch_dtype 用 bf16、AdamW，每张卡参数+梯度+优化器状态大概要几个 G？",
            world_size=8, lang="zh")
    assert "每卡模型状态约 7.0 GB" in lead(a.text)


def test_global_batch_without_accumulation_and_tp_not_dp(ask):
    a = ask("16 卡 HSDP，dp_replicate_size 2、tp 2，local_batch_size 2。不想做梯度累积的话 global_batch_size 应该填几？"
            "tp 那两张卡算不算数据并行", world_size=16, lang="zh")
    first = lead(a.text)
    assert "global_batch_size 填 16" in first and "2 × 8" in first and "不算数据并行" in first


def test_an_unstated_global_batch_does_not_stop_the_microbatch_count(ask):
    a = ask("pp 4 and tp 2 on 32 GPUs, local_batch_size 16, pp_microbatch_size 2. How many microbatches does each "
            "pipeline step run?", world_size=32)
    assert lead(a.text).startswith("8 microbatches per step") and shown_configs(a.text) == []


def test_hsdp_described_by_nodes(ask):
    a = ask("We have 2 nodes x 8 A100s. I want to replicate between machines and shard within each one. What do I "
            "set dp_replicate_size to, and what's the shard group size then?", world_size=16, gpus_per_node=8)
    assert "dp_shard = 8" in lead(a.text) and "dp_replicate_size 2" in lead(a.text)
    assert a.judged["distributed"]["dp_replicate_size"] == 2


def test_microbatches_without_batch_sizes_is_the_pp_size_minimum(ask):
    # main answered "How many microbatches does 1f1b need with pp_size 4?" with the mesh only
    a = ask("How many microbatches does 1f1b need with pp_size 4?")
    first = lead(a.text)
    assert first.startswith("At least pp_size = 4 microbatches") and "local_batch_size // pp_microbatch_size" in first
    assert "Interleaved" not in first


def test_interleaved_microbatches_add_the_rounds_rule(ask):
    a = ask("用 interleaved1f1b、pp_size 2 的话每步要多少个 microbatch？")
    first = lead(a.text)
    # rounds = max(1, m // pp): m = 5 gives 2 rounds and 5 % 2 != 0; m = 4 works
    assert first.startswith("每步至少 pp_size = 2 个 microbatch") and "5 不行、4 可以" in first


def test_which_ep_size_should_i_use_leads_with_the_number(ask):
    # "which ep_size should I use" was not a size choice (only "what ep_size should ..." was)
    a = ask("Qwen3-30B-A3B on 16 GPUs, which ep_size should I use?")
    assert lead(a.text).startswith("Set `ep_size: 8`")


@pytest.mark.parametrize("q, start", [
    # issue 18: "what is the largest ep_size" got a recommendation with ep 8; ep must divide dp*cp*tp = 32
    ("32 GPUs, tp 4, cp 2, pp 1: what is the largest ep_size I can use?", "The largest ep_size is 32"),
    ("32 卡，tp 4，cp 2，ep 最大能开多少？", "ep_size 最大可以是 32"),
    # the routed experts cap it too: Qwen3-30B-A3B has 128, pp 2 leaves 32 non-PP ranks
    ("Qwen3-30B-A3B on 64 GPUs with pp 2 and tp 1, how high can ep go?", "The largest ep_size is 32"),
    ("Qwen3-30B-A3B on 64 GPUs with pp 2 and tp 2: maximum ep_size?", "With tp_size 2 this MoE model gets no EP at all"),
])
def test_the_largest_ep_size_is_the_ceiling_the_other_sizes_allow(ask, q, start):
    a = ask(q)
    assert lead(a.text).startswith(start), a.text[:300]


def test_the_largest_ep_of_a_moe_class_that_takes_no_ep_is_1(ask):
    # Mixtral loads as the HF MixtralForCausalLM (no MoEFSDPSyncMixin): capabilities.py validate_for_mesh
    # refuses any ep_size > 1, whatever tp_size the layout takes
    for q in ("What's the max ep_size I can use for Mixtral 8x7B on 16 GPUs?", "mixtral 8x22b 32 张卡，专家并行最多能拉到几？"):
        first = lead(ask(q).text)
        assert "MixtralForCausalLM" in first and "MoEFSDPSyncMixin" in first, first
        assert "largest ep_size is 1:" in first or "ep_size 最大只能是 1" in first, first


def test_is_that_hsdp_is_answered_from_the_layout_not_as_a_verdict(ask):
    # issue 18: "Is that HSDP?" asks what the layout is: dp 16/2 = 8, dp_shard 8/2 = 4
    a = ask("I set dp_replicate_size: 2 with strategy fsdp2 on 16 GPUs and tp_size 2. Is that HSDP? What is dp_shard then?")
    first = lead(a.text)
    assert first.startswith("Yes, that is HSDP") and "dp_shard = 8 / 2" in first


def test_do_i_need_layers_per_stage_gets_the_split(ask):
    # issue 18: the ask after "or" is answered; functional.py: 30 layers over 4 stages -> 8, 8, 7, 7
    a = ask("pp_size 4 with 30 layers on Llama, is that going to work or do I need to set layers_per_stage?")
    assert "No need to set `layers_per_stage`" in a.text and "first 2 stage(s) 8 layers" in a.text


def test_numbers_after_a_switch_asked_for_are_those_of_the_layout_switched_to(ask):
    # "不支持的话换啥？换了之后 ... dp 是几": the dp of the fsdp2 layout, not a second "no"
    a = ask("1) megatron_fsdp 支持 pp 吗 2) 不支持的话换啥 3) 换了之后 16 卡 tp 4 pp 2，dp 是几")
    assert re.search(r"dp_size = 2\b", a.text)


def test_numbers_asked_after_a_verdict_on_a_change_are_of_the_changed_layout(ask):
    # issue 18: "ep 能不能开到 32？这时候 dp_size 是多少？": moe_mesh (1, 32) of ep 32, not (4, 8) of today's ep 8
    a = ask("32 卡 H100 训 Qwen3-30B-A3B，现在 ep_size 8、tp 1、pp 1。1) ep 能不能开到 32？2) 这时候 dp_size 是多少？", lang="zh")
    assert "(1, 32)" in a.text and "(4, 8)" not in a.text


def test_a_stated_expert_count_is_checked_with_no_model_named(ask):
    # components/moe/experts.py asserts n_routed_experts % ep_size == 0: 48 % 32 = 16, so ep 32 fails
    a = ask("我们自己写的 MoE，48 个专家，32 卡 tp 1，ep 想直接开 32，能行吗？", lang="zh")
    assert lead(a.text).startswith("不行") and "48 % 32 = 16" in lead(a.text)


def test_an_uneven_split_says_the_layers_need_not_divide(ask):
    # pipelining/functional.py generate_hf_model_fqn_per_model_part: 46 // 4 = 11, the first 46 % 4 = 2 stages get 12
    a = ask("46 layers, 4 nodes of 8 GPUs, fsdp2 with pp_size 4 and a pipeline: {} block. "
            "How many layers per stage, do they have to divide evenly?")
    assert "first 2 stage(s) 12 layers and the rest 11" in a.text and "need not divide evenly" in a.text


def test_an_uneven_layer_split_lists_each_stage_and_says_none_is_dropped(ask):
    # issue 18 (t9 realzh): "30 层 pp 4 会不会丢层？每个 stage 分别几层？": pipelining/functional.py
    # generate_hf_model_split gives the first 30 % 4 = 2 stages one more layer
    q = ("30 层的模型，16 卡：\n\n```yaml\ndistributed:\n  strategy: fsdp2\n  tp_size: 2\n  pp_size: 4\n"
         "  pipeline:\n    pp_schedule: 1f1b\n```\n\n每个 stage 分别几层？")
    a = ask(q)
    assert "8、8、7、7" in lead(a.text) and "一层不丢" in lead(a.text)


@pytest.mark.parametrize("question, in_lead, not_in", [
    # issue 18: the quantity after "the largest ..." is asked at that value. 64 GPUs, 32 experts: the
    # largest ep divides 64 and 32 -> 32; ep_shard = 64 / 32 = 2 (not "no moe_mesh" at the user's ep 1)
    ("gpt-oss-20b on 64 GPUs, fsdp2, tp_size 1. Largest ep_size? And ep_shard at that size?",
     ("The largest ep_size is 32", "`ep_size: 32`", "ep_shard = 2"), "No moe_mesh"),
    # lbs 16, pp 4: pp_microbatch_size 1, 2, 4 (8 gives 2 < 4) -> at 4: 16 / 4 = 4 microbatches
    ("8 GPUs, tp 2, pp 4, local_batch_size 16. Largest pp_microbatch_size I can use, and how many "
     "microbatches does that give per step?", ("the largest is 4", "16 / 4 = 4"), "16 / 1"),
])
def test_a_quantity_after_the_largest_value_is_asked_at_it(ask, question, in_lead, not_in):
    text = ask(question).text
    assert all(part in lead(text) for part in in_lead), lead(text)
    assert not_in not in text


def test_grad_acc_arithmetic_ends_in_its_result(ask):
    # 128 / (2 * 8) = 8, written out to the result
    first = lead(ask("8 GPUs, fsdp2, global_batch_size 128, local_batch_size 2: how many grad accumulation steps?").text)
    assert "128 / (2 × 8) = 8" in first


def test_a_quantity_stating_its_own_size_after_the_values_is_not_asked_at_the_largest(ask):
    # 24 GPUs, tp 4: pp 1, 2, 3, 6 work; "with pp 3" is asked at 3: dp = 24 / (4 * 3) = 2, not the largest 6's 1
    text = ask("24 GPUs, fsdp2, tp_size 4, pp_size 4 fails. Which pp_size values work with tp 4, "
               "and what would dp_size be with pp 3?").text
    assert "1, 2, 3, 6" in text and "With `pp_size: 6`" not in text


def test_values_on_sizes_the_clause_puts_instead_are_judged_on_a_cluster_that_holds_them(ask):
    # 16 GPUs, tp 8, lbs 6; "scale out to pp_size 4": 8 * 4 = 32 GPUs, and 6 // mbs >= 4 leaves only 1
    text = ask("Llama 3.1 70B, 2 nodes 16 GPUs, pp_size 2, tp 8, local_batch_size 6. Which pp_microbatch_size "
               "values work? If we later go to pp_size 4 (lbs still 6), what's the largest pp_microbatch_size?").text
    assert "`pp_size: 4`, `world_size: 32`" in text and "can be 1; the largest is 1" in text
