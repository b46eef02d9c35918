"""The held-out v3 replay fixtures (evals/llm_fixtures/heldout3) are usable: one per held-out case, for
the current prompt, each picked by a `match` that is in the question Meshwise puts in its prompt, and
every tool call one the tool schemas accept. Nothing here scores them: the held-out sets are scored once,
by the lead, with `meshwise eval --set evals/heldout/heldout3_*.yaml --llm openai` against the replay."""
from __future__ import annotations

import json
import unicodedata

import jsonschema
import pytest

from assistant.compose.llm.tools import tool_specs
from assistant.compose.llm.prompts import PROMPT_VERSION
from assistant.config import EVALS_DIR
from assistant.understand.spelling import zh_respelled
from evals.replay_server import load_fixtures
from evals.schema import HELDOUT_DIR, load_set

FIXTURES = EVALS_DIR / "llm_fixtures" / "heldout3"
SETS = [HELDOUT_DIR / "heldout3_en.yaml", HELDOUT_DIR / "heldout3_zh.yaml"]


@pytest.fixture(scope="module")
def fixtures():
    return load_fixtures(FIXTURES)


@pytest.fixture(scope="module")
def questions():
    return {c.id: c.question for c in load_set(SETS)}


def prompt_forms(question: str) -> tuple[str, str]:
    """The question as the prompt can carry it: respelled (understand.py), and NFKC as the pasted
    prose is when a config or log was cut out of it."""
    respelled = zh_respelled(question)
    return respelled, unicodedata.normalize("NFKC", respelled)


def test_one_fixture_per_heldout3_case_for_the_current_prompt(fixtures, questions):
    cases = [f.case for f in fixtures]
    assert len(cases) == len(set(cases))
    assert set(cases) == set(questions)
    stale = [f.case for f in fixtures if f.prompt_version != PROMPT_VERSION]
    assert not stale, f"re-record these fixtures for prompt {PROMPT_VERSION}: {stale}"
    assert all(f.tools and f.tools[-1].get("content") for f in fixtures)  # the tool path ends in text


def test_each_match_is_in_its_question_and_picks_its_own_fixture(fixtures, questions):
    for f in fixtures:
        forms = prompt_forms(questions[f.case])
        assert any(f.match in q for q in forms), f.case
        rivals = [g.case for g in fixtures if g is not f and len(g.match) >= len(f.match)
                  and any(g.match in q for q in forms)]
        assert not rivals, (f.case, rivals)  # the longest match wins in the replay server


def test_every_tool_call_passes_its_schema(fixtures):
    schemas = {s["function"]["name"]: s["function"]["parameters"] for s in tool_specs()}
    for f in fixtures:
        for reply in f.tools:
            for call in reply.get("tool_calls") or []:
                args = call["arguments"]
                jsonschema.validate(json.loads(args) if isinstance(args, str) else args, schemas[call["name"]])
