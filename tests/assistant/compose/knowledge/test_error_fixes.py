"""A pasted upstream error explained with its own numbers and the values that pass."""
from __future__ import annotations

from assistant.compose.knowledge.error_fixes import explain
from assistant.validator.upstream_errors import match_upstream_error


def first(text: str):
    return match_upstream_error(text)[0]


def test_experts_must_divide_both_the_expert_count_and_dp_cp_tp():
    m = first("[rank3]: AssertionError: n_routed_experts 60 must be divisible by expert_parallel_degree 8")
    line = explain(m, "en", non_pp=8)
    assert "60 % 8 = 4" in line and "`ep_size` 4 or 2" in line
    assert "可用 `ep_size` 4 或 2" in explain(m, "zh", non_pp=16).replace("16", "")  # gcd(60, 16) = 4


def test_kv_heads_offer_the_tp_sizes_that_divide_them_inside_a_node():
    m = first("AssertionError: num_attention_heads (28) must be divisible by TP size (8)")
    line = explain(m, "en", gpus_per_node=8)
    assert "`tp_size` 4, 2 or 1" in line and " 7" not in line  # 7 divides 28 but no 8-GPU node


def test_virtual_stages_rounding_up_and_down():
    text = ("ValueError: Number of virtual stages (11) must be divisible by pipeline parallel size (4). "
            "Model has 32 layers with pipeline_parallel_layers_per_stage=3. Please adjust ...\ninterleaved1f1b")
    line = explain(first(text), "en", text=text)
    assert "ceil(32/3) = 11" in line and "`up` rounds to 12 stages (3 per rank)" in line
    assert "`down` to 8 stages (2 per rank)" in line and "too few" not in line


def test_rounding_down_below_two_stages_per_rank_is_flagged_for_a_multi_stage_schedule():
    text = ("Number of virtual stages (6) must be divisible by pipeline parallel size (4). "
            "Model has 12 layers with pipeline_parallel_layers_per_stage=2.")
    assert "too few for a multi-stage schedule" in explain(first(text), "en", text=text)


def test_microbatches_say_it_is_not_memory_and_the_local_batch_size_needed():
    m = first("AssertionError: pp_batch_size 1 // pp_microbatch_size 1 must be >= pp_size 4")
    assert "至少设为 4" in explain(m, "zh") and "不是显存问题" in explain(m, "zh")
    m = first("AssertionError: pp_batch_size 6 // pp_microbatch_size 2 must be >= pp_size 4")
    assert "at least 8" in explain(m, "en")


def test_megatron_pp_points_to_fsdp2():
    assert "`strategy: fsdp2`" in explain(first("ValueError: megatron_fsdp does not support pipeline parallelism"), "en")


def test_a_rule_without_an_explanation_or_without_numbers_gives_none():
    assert explain(first("ValueError: non_pp_size=12 must be a multiple of ep_size=8"), "en") is None
    assert explain(first("AssertionError: num_attention_heads in config does not match the TP size"), "en") is None


def test_a_single_stage_schedule_with_two_stages_per_rank_gets_the_layers_per_stage_that_give_one():
    text = ("ValueError: Single stage schedule requires exactly 1 stage per rank, but got 2 stages per rank. "
            "Model has 32 layers with pipeline_parallel_layers_per_stage=4, resulting in num_virtual_stages=8 "
            "across 4 PP ranks. Please increase pipeline_parallel_layers_per_stage to 8 or higher")
    line = explain(first(text), "en", text=text)
    assert "8 stages, 2 per rank on pp_size 4" in line and "`layers_per_stage` to 8" in line


def test_a_multi_stage_schedule_with_one_stage_per_rank_gets_smaller_stages():
    text = ("Multi-stage schedule requires at least 2 stages per rank, but got 1 stages per rank. Model has 32 "
            "layers with pipeline_parallel_layers_per_stage=8, resulting in num_virtual_stages=4 across 4 PP ranks.")
    line = explain(first(text), "zh", text=text)
    assert "每个 rank 1 个" in line and "`layers_per_stage` 设为 2 或 4" in line  # ceil(32/3) = 11 fits no pp 4


def test_a_world_not_divisible_is_told_with_its_remainder_and_the_products_that_fit():
    m = first("ValueError: world_size (24) must be divisible by (tp_size * cp_size * pp_size) (4 * 1 * 4 = 16)")
    line = explain(m, "en")
    assert "24 % 16 = 8" in line and "1, 2, 3, 4, 6, 8, 12 or 24" in line


def test_ddp_names_the_parallelism_it_refuses():
    assert explain(first("ValueError: ddp does not support tensor parallelism"), "zh").startswith("ddp 完全不支持张量并行")
