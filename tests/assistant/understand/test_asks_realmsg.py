"""Real user messages (issue 18, t8 realmsg): a soft-wrapped line, a question asked again on other sizes,
the values a field may take, the line announcing the questions and the pasted error line itself."""
from __future__ import annotations

import pytest

from assistant.understand import understand

_YAML = "```yaml\nstep_scheduler:\n  global_batch_size: 64\n  local_batch_size: 2\ndistributed:\n  strategy: fsdp2\n  tp_size: 4\n```\n\n"


@pytest.fixture(scope="module")
def read(mw_assistant):
    def _read(q: str, **kw):
        return understand(q, encoders=mw_assistant._clause_encoders, **kw)
    return _read


def test_a_soft_wrapped_line_is_one_clause(read):
    q = read("fsdp2 on 16 GPUs. What does the default mp_policy use for\ngradient reduction?")
    assert any("gradient reduction" in a.text for a in q.asks)


def test_a_quantity_asked_again_on_other_sizes_is_its_own_ask(read):
    q = read(_YAML + "32 GPUs. What's dp_size? If I drop to tp_size 2, what is dp then?")
    dp = [a for a in q.asks if a.kind == "quantity" and a.target == "dp_size"]
    assert [a.layout for a in dp] == [None, "tp_size=2"]


def test_a_chinese_condition_without_a_space_puts_its_sizes(read):
    q = read(_YAML + "64 卡。梯度累积是几步？要是把 tp_size 提到 8，梯度累积变成多少？")
    assert [a.layout for a in q.asks if a.target == "grad_acc_steps"] == [None, "tp_size=8"]


@pytest.mark.parametrize("question, target", [
    ("40 GPUs, fsdp2, tp_size 8, pp_size 2. If tp stays 8, which pp_size values work?", "values:pp_size"),
    ("24 卡，fsdp2，dp_replicate_size 5 报错了。dp_replicate_size 能取哪些值？", "values:dp_replicate_size"),
    ("16 卡 tp 2，lbs 4，gbs 100 不能整除。离 100 最近的能用的 gbs 是多少？", "values:global_batch_size"),
])
def test_the_values_a_number_field_may_take(read, question, target):
    assert target in [a.target for a in read(question).asks if a.kind == "quantity"]


def test_the_values_of_a_name_field_stay_its_facts(read):
    q = read("activation_checkpointing 能填哪些值？")
    assert [a.kind for a in q.asks] == ["fact"]


def test_the_pasted_error_line_and_the_announcing_line_ask_nothing(read):
    q = read("8 卡 ddp 加了 tp_size: 2，报了\n`ValueError: ddp does not support tensor parallelism`。\n几个问题：1）ddp 能和 tp 一起用吗？")
    assert all("ValueError" not in a.text for a in q.asks if a.kind != "diagnosis")
    assert all(a.text != "几个问题" for a in q.asks)


def test_a_clause_after_a_comma_and_must_is_its_own_ask(read):
    q = read("GLM-4.5-Air has 46 layers. On 32 GPUs with fsdp2, tp_size 1, pp_size 4, ep_size 8 and pipeline: {}, "
             "what dp_size do I get, and must 46 be divisible by 4?")
    assert [a.target for a in q.asks if a.kind == "quantity"] == ["dp_size", "layers_per_stage"]


def test_an_enumeration_label_is_no_part_of_the_ask(read):
    q = read("2 nodes of 8 H100, Qwen2.5-32B. Question 1: what tp/pp would you suggest? Question 2: is dp_size inferred?")
    assert q.asks[0].kind == "recommendation" and q.asks[0].text == "what tp/pp would you suggest"
