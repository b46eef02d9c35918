"""Clauses that take their ask from elsewhere in the question: an elliptic follow-on asks the ask
before it again on other sizes; an ordinal points at one of the layouts the question lists; neither
one's sizes are the user's own layout (issue 18, evals/cases/t9_forms_*.yaml)."""
from __future__ import annotations

import pytest

from assistant.understand import understand
from assistant.understand.follow_on import asked_again, elliptic, follow_on_sizes, layouts, referenced_layout
from assistant.understand.query import Ask


@pytest.mark.parametrize("clause, sizes", [
    ("ep4 pp2 呢", "ep_size=4,pp_size=2"),
    ("and with cp 2", "cp_size=2"),
    ("那 tp 3 呢", "tp_size=3"),
    ("再加上 cp 2 呢", "cp_size=2"),
    ("what about tp_size=8 and pp 2", "tp_size=8,pp_size=2"),
])
def test_follow_on_sizes(clause, sizes):
    assert follow_on_sizes(clause) == sizes


@pytest.mark.parametrize("clause", ["what's dp_size with tp 2", "tp 4 pp 2 on 16 GPUs", "ep 8 is too big 呢",
                                    "tp 2 pp 2, tp 4 pp 1"])
def test_a_clause_with_words_of_its_own_is_no_follow_on(clause):
    assert follow_on_sizes(clause) is None


def test_layouts_split_where_a_key_repeats_or_words_stand_between():
    assert layouts("choosing between tp 2 pp 2, tp 4 pp 1 and tp 8 pp 1 on 16 GPUs") == [
        {"tp_size": 2, "pp_size": 2}, {"tp_size": 4, "pp_size": 1}, {"tp_size": 8, "pp_size": 1}]
    assert layouts("(a) tp 2 pp 3, (b) tp 4 pp 2") == [{"tp_size": 2, "pp_size": 3}, {"tp_size": 4, "pp_size": 2}]


@pytest.mark.parametrize("clause, whole, sizes", [
    ("What dp_size does the second option give", "tp 2 pp 2, tp 4 or tp 8 pp 1. What dp_size does the second option give",
     "tp_size=4,pp_size=1"),
    ("第二个方案能跑吗", "24 卡两个方案：tp 4 pp 2，或者 tp 8 pp 4。第二个方案能跑吗", "tp_size=8,pp_size=4"),
    ("is the last option valid", "tp 2, tp 4 or tp 8. is the last option valid", "tp_size=8"),
])
def test_referenced_layout(clause, whole, sizes):
    assert referenced_layout(clause, whole) == sizes


def test_no_reference_without_two_listed_layouts():
    assert referenced_layout("is the second option valid", "tp 4 on 16 GPUs. is the second option valid") is None


@pytest.mark.parametrize("question, stated, layout", [
    ("On 16 GPUs with tp 2, what's dp_size? and with cp 2?", {"tp_size": 2}, "cp_size=2"),
    ("64 卡，ep8 pp4 的话 dp 是多少？ep4 pp2 呢？", {"pp_size": 4, "ep_size": 8}, "ep_size=4,pp_size=2"),
])
def test_a_follow_on_asks_the_quantity_again_and_keeps_its_sizes_out_of_the_users(question, stated, layout):
    q = understand(question)
    assert dict(q.situation.stated.sizes) == stated
    assert [(a.kind, a.target, a.layout) for a in q.asks] == [("quantity", "dp_size", None),
                                                              ("quantity", "dp_size", layout)]


def test_a_follow_on_after_a_verdict_is_a_verdict_on_its_sizes():
    asks = understand("16 卡 tp 4 合法吗？那 tp 3 呢？").asks
    assert asks[-1].kind == "verdict" and asks[-1].target == "tp_size=3"


def test_an_ordinal_asks_of_the_listed_layout():
    q = understand("Options on 24 GPUs: (a) tp 2 pp 3, (b) tp 4 pp 2, (c) tp 8 pp 4. Is the third option valid?")
    assert [(a.kind, a.target) for a in q.asks] == [("verdict", "tp_size=8,pp_size=4")]


@pytest.mark.parametrize("clause, marked", [("ep4 pp2 呢", False), ("and with cp 2", True), ("tp 改成 4 的话呢", False),
                                            ("And local to 4", True), ("what about pp 2", False)])
def test_the_elliptic_forms_are_one_reading(clause, marked):
    assert elliptic(clause, marked)


@pytest.mark.parametrize("clause", ["what's dp_size with tp 2", "how do I set the pipeline block up for this run",
                                    "ep 8 is too big 呢 for us"])
def test_a_clause_that_asks_of_its_own_is_not_elliptic(clause):
    assert not elliptic(clause, True)


def test_asked_again_repeats_the_numbers_and_verdicts_before_or_the_last_numbers_for_a_batch_field():
    acc = Ask("quantity", "梯度累积几步", "grad_acc_steps")
    same = Ask("verdict", "这样跟多卡一样吗")
    assert asked_again([acc, Ask("fact", "x", "pp_schedule")], [acc], False) == [acc]
    assert asked_again([same], [acc, same], False) == [same]  # a size changed: the verdict is asked again
    assert asked_again([same], [acc, same], True) == [acc]  # a batch field changed: the number asked last
    assert asked_again([], [], True) == []


@pytest.mark.parametrize("question, target, layout", [
    ("单机 8 卡 fsdp2，global_batch_size 256，local 是 2。梯度累积是几步？local 改成 8 的话呢", "grad_acc_steps",
     "local_batch_size=8"),
    ("On 32 GPUs with fsdp2, tp 4 pp 2: what's dp_size? And with cp 2?", "dp_size", "cp_size=2"),
])
def test_both_follow_on_forms_ask_the_number_again_on_their_values(question, target, layout):
    asks = understand(question).asks
    assert (asks[-1].kind, asks[-1].target, asks[-1].layout) == ("quantity", target, layout)


@pytest.mark.parametrize("question", [
    "2 机 16 卡，fsdp2。设 dp_replicate_size: 2 的话 dp_shard 是多少？不设的话呢？",
    "16 GPUs, fsdp2. If I set dp_replicate_size: 2, what's dp_shard? And what is dp_shard without it?",
])
def test_without_the_size_named_before_asks_again_at_one(question):
    asks = [a for a in understand(question).asks if a.kind == "quantity" and a.target == "dp_shard"]
    assert len(asks) == 2 and asks[0].layout in (None, "dp_replicate_size=2") and asks[1].layout == "dp_replicate_size=1"


def test_without_a_size_set_elsewhere_takes_nothing_away():
    asks = understand("16 GPUs, fsdp2, tp 2. What's dp_size without pp, with tp 4?").asks
    assert all(a.layout != "tp_size=1" for a in asks)

