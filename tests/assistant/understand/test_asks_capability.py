"""What a strategy can do, asked as a claim to check (issue 18, t10 capability): a fact its limits
answer, never a verdict on the size 1 the negation implies."""
from __future__ import annotations

import pytest

from assistant.understand import understand
from assistant.understand.planned import planned_asks


@pytest.fixture(scope="module")
def read(mw_assistant):
    return lambda q: understand(q, encoders=mw_assistant._clause_encoders)


@pytest.mark.parametrize("q", ["Is it true megatron_fsdp can't do pp?", "megatron_fsdp 真的不能开 pp 吗",
                               "megatron_fsdp 不能开 pp 吗"])
def test_a_capability_asked_in_the_negative_is_a_fact(read, q):
    assert [a.kind for a in planned_asks(read(q))] == ["fact"]


@pytest.mark.parametrize("q", ["no TP at all, please", "ddp doesn't do tp"])
def test_a_negation_before_the_feature_excludes_it(read, q):
    # "at all" after a negated feature is no inquiry ("do I need TP at all?" is one: tests/.../test_params.py)
    assert "tp" in read(q).params.unwanted


def test_a_claim_about_a_capability_checked_is_a_fact(read):
    q = read("A teammate claims megatron_fsdp cannot do expert parallelism. Is that really true?")
    assert [a.kind for a in planned_asks(q)] == ["fact"]


def test_a_setup_without_a_feature_is_still_judged(read):
    q = read("Llama 70B 全参微调，单机 8 张 80G 的 H100，纯 fsdp2 不开 tp/pp，会不会爆显存？")
    assert "verdict" in [a.kind for a in planned_asks(q)]
