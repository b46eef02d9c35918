"""The question-first expectation keys: `lead`, `max_chars`, `judged`, `judged_absent`, `asks`.

Each key is scored on hand-built answers, one that should pass and one that should fail for the
reason the key exists. An answer from an engine that does not report `judged` / `asks` fails those
checks (it does not crash the run).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from assistant.answer import Answer
from evals.schema import CaseFormatError, case_from_dict, load_fact_library
from evals.scorer import answer_body, lead_of, score

VERDICT_NO = {"name": "verdict_no", "any": [r"\bno\b|not valid|invalid|fails"]}

SOURCES = "\n\n**Sources**\n\n[1] Device mesh - how dp_size is inferred — `kb/en/device-mesh.md`\n" + "[2] x\n" * 200


@pytest.fixture(scope="module")
def lib():
    return load_fact_library()


def make_case(lib, expect: dict, question: str = "32 GPUs, tp_size 4, ep_size 8, pp and cp both 1: does it run?"):
    return case_from_dict({"id": "t-q", "lang": "en", "category": "verdict", "question": question, "expect": expect}, lib)


def answer(text: str, **extra) -> Answer:
    ans = Answer(id="t", text=text, language="en", intent="sizing", strategy=None, yaml=None, validation=None)
    for k, v in extra.items():  # `judged` / `asks` as the engine reports them
        setattr(ans, k, v)
    return ans


@dataclass
class OldAnswer:
    """An answer from an engine that predates `judged` and `asks`."""

    text: str
    language: str = "en"
    intent: str = "sizing"
    strategy: str | None = None
    yaml: str | None = None
    validation: object = None
    sources: list = field(default_factory=list)
    params: dict = field(default_factory=dict)


def check(result, name: str):
    (c,) = [c for c in result.checks if c.name == name]
    return c


# ----------------------------------------------------------------------------- lead


def test_lead_is_the_first_paragraph_after_notices():
    text = "_LLM timed out; offline answer shown._\n\nNo: 40 is not divisible by tp*pp = 12.\nSo it fails.\n\nRest."
    assert lead_of(text) == "No: 40 is not divisible by tp*pp = 12.\nSo it fails."
    assert len(lead_of("x" * 1000)) == 400


def test_lead_passes_when_the_verdict_comes_first(lib):
    case = make_case(lib, {"lead": [VERDICT_NO]})
    good = "No: 40 is not divisible by tp_size * pp_size = 12, so start-up fails.\n\nThe nearest valid layout ..."
    assert check(score(case, answer(good)), "lead").passed


def test_lead_fails_when_the_verdict_is_buried(lib):
    case = make_case(lib, {"lead": [VERDICT_NO]})
    buried = ("Recommendation: use fsdp2 with tp_size 4 for this model.\n\n"
              "With your numbers the layout is invalid because 40 is not divisible by 12.")
    result = score(case, answer(buried))
    assert not result.passed
    assert "verdict_no" in check(result, "lead").detail


def test_lead_accepts_named_facts_from_the_library(lib):
    case = make_case(lib, {"lead": ["dp_formula"]})
    assert check(score(case, answer("dp_size = world_size / (tp_size * pp_size * cp_size) = 32 / 4 = 8.")), "lead").passed


# ----------------------------------------------------------------------------- max_chars


def test_body_excludes_the_sources_block():
    assert answer_body("Yes, it runs." + SOURCES) == "Yes, it runs."
    assert answer_body("是的。\n\n**来源**\n\n[1] x") == "是的。"


def test_max_chars_counts_the_body_only(lib):
    case = make_case(lib, {"max_chars": 100})
    assert check(score(case, answer("Yes: dp_size is 8." + SOURCES)), "max_chars").passed


def test_max_chars_fails_a_long_body(lib):
    case = make_case(lib, {"max_chars": 100})
    result = score(case, answer("Yes. " + "Some template bullet that does not bear on the question. " * 5 + SOURCES))
    assert not result.passed
    assert "> 100" in check(result, "max_chars").detail


# ----------------------------------------------------------------------------- judged

USER_LAYOUT = {"distributed.tp_size": 4, "distributed.ep_size": 8,
               "distributed.pp_size": {"in": [1, None]}, "distributed.cp_size": {"in": [1, None]}}


def test_judged_passes_on_the_users_own_layout(lib):
    case = make_case(lib, {"judged": USER_LAYOUT})
    judged = {"distributed": {"strategy": "fsdp2", "tp_size": 4, "ep_size": 8, "pp_size": 1, "cp_size": 1}}
    assert check(score(case, answer("Yes, it runs.", judged=judged)), "judged").passed
    assert check(score(case, {"answer": "Yes, it runs.", "language": "en", "judged": judged}), "judged").passed


def test_judged_fails_when_the_engine_changed_the_users_numbers(lib):
    case = make_case(lib, {"judged": USER_LAYOUT})
    changed = {"distributed": {"strategy": "fsdp2", "tp_size": 4, "ep_size": 8, "pp_size": 2, "cp_size": 2}}
    result = score(case, answer("Yes, valid.", judged=changed))
    assert not result.passed
    assert "distributed.pp_size" in check(result, "judged").detail


def test_judged_fails_when_nothing_was_judged(lib):
    case = make_case(lib, {"judged": USER_LAYOUT})
    assert not check(score(case, answer("Yes.", judged=None)), "judged").passed


def test_judged_absent_passes_for_a_pure_fact_answer(lib):
    case = make_case(lib, {"judged_absent": True}, question="What does reshard_after_forward default to?")
    assert check(score(case, answer("It defaults to false in the moe block.", judged=None)), "judged_absent").passed


def test_judged_absent_fails_when_a_layout_was_validated(lib):
    case = make_case(lib, {"judged_absent": True}, question="What does reshard_after_forward default to?")
    result = score(case, answer("It defaults to false.", judged={"distributed": {"strategy": "fsdp2"}}))
    assert not result.passed and not check(result, "judged_absent").passed


# ----------------------------------------------------------------------------- asks


def test_asks_is_an_order_insensitive_subset(lib):
    case = make_case(lib, {"asks": ["verdict", "quantity"]})
    assert check(score(case, answer("No. dp_size is 2.", asks=["quantity", "fact", "verdict"])), "asks").passed
    assert check(score(case, {"answer": "No. dp is 2.", "language": "en", "asks": ["verdict", "quantity"]}), "asks").passed


def test_asks_fails_when_a_part_of_the_question_was_not_detected(lib):
    case = make_case(lib, {"asks": ["verdict", "quantity"]})
    result = score(case, answer("No, it does not run.", asks=["verdict"]))
    assert not result.passed
    assert "quantity" in check(result, "asks").detail


# ----------------------------------------------------------------------------- older engines and the schema


@pytest.mark.parametrize("expect", [{"judged": USER_LAYOUT}, {"judged_absent": True}, {"asks": ["verdict"]}])
def test_an_answer_without_judged_or_asks_fails_those_checks(lib, expect):
    case = make_case(lib, expect)
    for old in (OldAnswer("No: it does not run."), {"answer": "No: it does not run.", "language": "en"}):
        result = score(case, old)
        assert not result.passed
        (name,) = expect
        assert not check(result, name).passed
        assert "does not report" in check(result, name).detail


def test_body_length_and_yaml_shown_are_recorded(lib):
    case = make_case(lib, {})
    text = "Use this:\n\n```yaml\ndistributed:\n  strategy: fsdp2\n  tp_size: 4\n```" + SOURCES
    result = score(case, answer(text))
    assert result.body_chars == len(answer_body(text)) < len(text)
    assert result.shows_yaml is True
    assert score(case, answer("No YAML here.")).shows_yaml is False


@pytest.mark.parametrize(
    "expect, message",
    [
        ({"asks": ["verdict", "opinion"]}, "unknown ask kinds"),
        ({"max_chars": 0}, "positive integer"),
        ({"judged_absent": "yes"}, "judged_absent"),
        ({"judged_absent": True, "judged": {"distributed.tp_size": 4}}, "contradict"),
        ({"judged": {"distributed.tp_size": {"about": 4}}}, "use one of"),
        ({"lead": ["no_such_fact"]}, "unknown lead name"),
    ],
)
def test_bad_new_keys_are_rejected(lib, expect, message):
    with pytest.raises(CaseFormatError, match=message):
        make_case(lib, expect)
