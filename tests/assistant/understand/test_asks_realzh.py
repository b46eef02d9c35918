"""Long real-style Chinese messages (issue 18, t9 realzh): a clause's own quantity before the field named
the clause before, a bare "真的吗" after a claim, a size turned off or proposed "行的话", the strategy a
clause names, and a yes/no on a derived number read as that number."""
from __future__ import annotations

import pytest

from assistant.understand import understand

_YAML = "```yaml\ndistributed:\n  strategy: fsdp2\n  tp_size: 1\n  ep_size: 16\n```\n\n"


@pytest.fixture(scope="module")
def read(mw_assistant):
    return lambda q: understand(q, encoders=mw_assistant._clause_encoders)


def _quantities(q):
    return [(a.target, a.layout) for a in q.asks if a.kind == "quantity"]


def test_a_clause_with_a_quantity_of_its_own_does_not_take_the_field_named_before(read):
    q = read(_YAML + "32 卡，128 个 expert。ep_shard_size 是几？每张卡上分到几个 expert？")
    assert _quantities(q)[:2] == [("ep_shard", None), ("experts_per_rank", None)]


def test_a_bare_quantity_clause_still_takes_the_field_named_before(read):
    q = read("```yaml\ndistributed:\n  strategy: fsdp2\n  tp_size: 4\n  dp_size: none\n```\n\n"
             "64 卡。dp_size 我写的 none，实际会是多少？")
    assert ("dp_size", None) in _quantities(q)


def test_a_bare_verdict_after_a_claim_judges_the_claimed_sizes(read):
    q = read("```yaml\ndistributed:\n  strategy: fsdp2\n  dp_replicate_size: 2\n```\n\n"
             "16 卡。dp_shard 会是几？另外同事说 dp_replicate_size 直接写 16 也行，真的吗？")
    assert [a.target for a in q.asks if a.kind == "verdict"] == ["dp_replicate_size=16"]


def test_a_size_turned_off_is_asked_at_one(read):
    q = read("```yaml\ndistributed:\n  strategy: megatron_fsdp\n  tp_size: 2\n  pp_size: 2\n```\n\n"
             "16 卡。把 pp 去掉以后 dp_size 是多少？")
    assert ("dp_size", "pp_size=1") in _quantities(q)


def test_a_quantity_after_if_so_is_asked_on_the_alternative(read):
    q = read(_YAML + "32 卡，128 个 expert。每张卡放几个 expert？改成 ep 32 行不行，行的话每卡几个 expert？")
    assert _quantities(q) == [("experts_per_rank", None), ("experts_per_rank", "ep_size=32")]


def test_the_strategy_a_clause_names_is_what_it_asks_about(read):
    q = read("```yaml\ndistributed:\n  strategy: megatron_fsdp\n  cp_size: 8\n```\n\n"
             "8 卡。megatron_fsdp 支持 cp 吗？顺便问 ddp 能不能开 cp")
    assert [a.target for a in q.asks if a.kind == "fact"] == ["megatron_fsdp", "ddp"]


@pytest.mark.parametrize("question, target", [
    ("这时候 dp_size 是不是就 1 了", "dp_size"),
    ("AutoModel 会不会也丢层啊", "layers_per_stage"),
])
def test_a_yes_no_on_a_derived_number_asks_the_number(read, question, target):
    q = read("```yaml\ndistributed:\n  strategy: fsdp2\n  cp_size: 8\n  pp_size: 1\n```\n\n8 卡，30 层。" + question + "？")
    assert (target, None) in _quantities(q)


def test_a_story_statement_asks_nothing(read):
    q = read("我这 AutoModel 8 卡，attention 用的默认 sdpa，fsdp2 cp_size 2。dp_size 是多少？")
    assert [a.kind for a in q.asks] == ["quantity"]


@pytest.mark.parametrize("question, layout", [
    ("16 卡。dp 是多少？那 tp 8 呢？", "tp_size=8"),
    ("16 卡。dp_size 是几？tp 改成 4 的话呢", "tp_size=4"),
    ("16 GPUs. What's dp_size? And with tp 4?", "tp_size=4"),
])
def test_an_elliptical_clause_asks_the_number_before_again_on_its_sizes(read, question, layout):
    q = read("```yaml\ndistributed:\n  strategy: fsdp2\n  tp_size: 2\n```\n\n" + question)
    assert _quantities(q) == [("dp_size", None), ("dp_size", layout)]


def test_if_so_is_read_at_the_clause_s_own_place_when_its_words_came_before(read):
    # the clause after "可以的话" says the same words as the first question: it is found where it stands
    q = read(_YAML + "16 卡，128 个 expert。每张卡几个专家？换成 ep 32 可以吗，可以的话每张卡几个专家？")
    assert _quantities(q) == [("experts_per_rank", None), ("experts_per_rank", "ep_size=32")]
