"""Recommendations and configs: the plan's layout, with the sizes an asked-for feature sets in the lead."""
from __future__ import annotations

import pytest

from tests.assistant.compose.answers.conftest import lead


def test_config_for_hsdp_across_nodes_has_the_split_in_the_lead(ask):
    a = ask("2 machines with 4 GPUs each. Replicate between machines, shard within each machine: what should I put in the config?")
    first = lead(a.text)
    assert "dp_replicate_size 2" in first and "dp_shard = 4" in first
    assert {"config", "recommendation"} & set(a.asks) and "dp_replicate_size: 2" in a.text


def test_config_carries_the_option_values_the_request_names(ask):
    # wordings and numbers of our own: a stated layout with an option, and one with dtypes only
    a = ask("16 卡 tp 4 的配置怎么写？把 defer_fsdp_grad_sync 关掉", lang="zh")
    assert "defer_fsdp_grad_sync: false" in a.text and "tp_size: 4" in a.text and a.validation.ok
    a = ask("Give me the fsdp2 yaml for fp16 params with fp32 gradient reduction")
    assert "param_dtype: float16" in a.text and "reduce_dtype: float32" in a.text and a.validation.ok


def test_stated_layout_with_checkpointing_wished_writes_it(ask):
    a = ask("4 张 3090，不开 TP，激活检查点要打开，yaml 怎么写", lang="zh")
    assert "activation_checkpointing: true" in a.text and a.validation.ok


def test_a_size_left_to_us_leads_with_its_number(ask):
    a = ask("qwen3 30b a3b，两台机器 16 卡，不开 tp 也不开 pp，ep 设多少？", world_size=16, gpus_per_node=8, lang="zh")
    first = lead(a.text)
    assert first.startswith("`ep_size` 设为 ") and "recommendation" in a.asks
    assert "**不要用**" not in a.text  # what other strategies lack was not asked
    a = ask("qwen3 30b a3b on 2 nodes of 8 GPUs, no tp and no pp. what should ep be?", world_size=16, gpus_per_node=8)
    assert lead(a.text).startswith("Set `ep_size: ")


@pytest.mark.parametrize("q, lead_start", [
    ("32 张 H100 训练 DeepSeek-V3，怎么配？", "放不下：32 张卡上"),
    ("Qwen3 235B on 32 H800 GPUs, what layout?", "No: no validated layout fits"),
])
def test_a_model_that_fits_no_layout_is_told_how_many_gpus_it_needs(ask, q, lead_start):
    a = ask(q)
    assert a.text.startswith(lead_start) and "```yaml" not in a.text
    assert "tp_size 1, as upstream's own recipes" not in a.text  # the dense 3-13B reason, not for a 235B MoE


def test_a_recommendation_after_a_verdict_that_showed_its_layout_says_it_once(ask):
    # our own wording: "支持 pp 吗" asks a fact about the strategy (as case t6-asksmodel-zh-mfsdp-pp reads
    # it) and "换啥" the layout to switch to, fsdp2 tp 4 pp 2: one config shown, not a second with the same sizes
    a = ask("megatron_fsdp 支持 pp 吗？不支持的话换啥？16 卡 tp 4 pp 2", lang="zh")
    assert a.asks[:2] == ["fact", "recommendation"]
    body = a.text.split("**来源**")[0]
    assert body.count("```yaml") == 1 and "tp_size: 4" in body and "strategy: fsdp2" in body
    assert "`strategy: fsdp2`" in body  # the recommendation's lead still names the strategy
