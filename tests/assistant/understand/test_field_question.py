"""What a question asks about the fields it names (understand/field_question.py)."""
from __future__ import annotations

import pytest

from assistant.understand.field_question import FieldQuestion


def asked_kinds(question: str) -> list[str]:
    return list(FieldQuestion(question).kinds)


@pytest.mark.parametrize("question,kinds", [
    ("What does `reshard_after_forward` default to in `moe:`?", ["default"]),
    ("Are `megatron-fsdp` and `mfsdp` different strategies?", ["same"]),
    ("what pp_schedule do I get if my pipeline block doesn't set one?", ["default"]),
    ("If ep_size is 1, is my moe: block read?", ["read"]),
    ("Which strategies accept sequence_parallel?", ["accept"]),
    ("What values can round_virtual_stages_to_pp_multiple take?", ["allowed"]),
    ("What is `round_virtual_stages_to_pp_multiple` for?", ["meaning"]),
    ("pp_schedule 可选哪些值？", ["allowed"]),
    ("megatron-fsdp 和 mfsdp 一样吗？", ["same"]),
    ("ignore_router_for_ac 是干什么用的？", ["meaning"]),
    ("dp_replicate_size 哪些策略能用？", ["accept"]),
])
def test_the_ask_is_read_from_the_question(question, kinds):
    got = asked_kinds(question)
    assert got[: len(kinds)] == kinds


def test_what_value_a_strategy_uses_is_not_an_acceptance_question():
    # "What precision does FSDP2 use by default ...?" led with "Yes: `fsdp2` accepts `mp_policy`"
    q = "Which precision will fsdp2 use for the gradient reduce by default?"
    assert "accept" not in asked_kinds(q) and "default" in asked_kinds(q)
    assert "accept" in asked_kinds("Does fsdp2 use mp_policy?")


def test_does_that_mean_is_not_a_meaning_question():
    assert asked_kinds("MegatronFSDP has no PP. Does that mean it has no tensor parallelism either?") == []


def test_the_sizes_and_values_a_question_names():
    fq = FieldQuestion("ep_size 写的 null, tp_size=4; set pp_schedule to interleaved_1f1b, ok?")
    assert fq.stated_size("ep_size") == 1 and fq.stated_size("tp_size") == 4 and fq.stated_size("cp_size") is None
    assert (fq.value_asked, fq.value_needed) == (True, False)
    assert any(raw == "interleaved_1f1b" for rank in range(fq.value_cue_count)
               for _, raw in fq.named_values(rank, "pp_schedule"))
