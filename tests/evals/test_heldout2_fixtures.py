"""The held-out v2 replay fixtures (evals/llm_fixtures/heldout2) are well-formed and reach their
questions: each answers the current prompt, its `match` is in the QUESTION section Meshwise builds for
its case (so the replay server finds it), and every tool call it makes is one the tools accept.
Reads only the questions of the held-out files; scoring them is the lead's one run at the end."""
from __future__ import annotations

import pytest
import yaml

from assistant.compose.llm.tools import ToolContext, run_tool, tool_names
from assistant.compose.llm.prompts import PROMPT_VERSION, prompt_question
from assistant.compose.llm.tool_loop import MAX_TOOL_CALLS
from assistant.config import EVALS_DIR
from assistant.understand import understand
from evals.replay_server import load_fixtures

FIXTURES = EVALS_DIR / "llm_fixtures" / "heldout2"
SETS = [EVALS_DIR / "heldout" / "heldout2_en.yaml", EVALS_DIR / "heldout" / "heldout2_zh.yaml"]


@pytest.fixture(scope="module")
def fixtures():
    return load_fixtures(FIXTURES)


@pytest.fixture(scope="module")
def questions():
    """Each case's QUESTION section and those of its earlier user turns, as the prompt shows them."""
    out = {}
    for path in SETS:
        for case in yaml.safe_load(path.read_text(encoding="utf-8"))["cases"]:
            history = case.get("history") or []
            turns = [prompt_question(understand(h["content"])) for h in history if h["role"] == "user"]
            out[case["id"]] = (prompt_question(understand(case["question"], history)), turns)
    return out


def test_every_fixture_answers_the_current_prompt_and_a_held_out_case(fixtures, questions):
    assert len(fixtures) >= 100
    stale = [f.case for f in fixtures if f.prompt_version != PROMPT_VERSION]
    assert not stale, f"re-record these fixtures for prompt {PROMPT_VERSION}: {stale}"
    assert {f.case for f in fixtures} <= set(questions)


def test_each_match_is_in_its_question_or_an_earlier_turn(fixtures, questions):
    missed = []
    for f in fixtures:
        question, turns = questions[f.case]
        if f.match not in question and not any(f.match in t for t in turns):
            missed.append(f.case)
    assert not missed, f"these fixtures would not be found by the replay server: {missed}"
    scored = [f.case for f in fixtures if f.match in questions[f.case][0]]
    assert len(scored) == len(set(scored)), "two fixtures for one question"


def test_tool_replies_call_known_tools_with_accepted_arguments_then_answer(fixtures):
    for f in fixtures:
        *calls, final = f.tools
        assert final.get("content", "").strip() and not final.get("tool_calls"), f.case
        names = [c["name"] for reply in calls for c in reply["tool_calls"]]
        assert set(names) <= set(tool_names()) and len(names) <= MAX_TOOL_CALLS, f.case
        for reply in calls:
            for c in reply["tool_calls"]:
                if c["name"] != "search_kb":  # needs the kb; its arguments are checked in test_llm_tools
                    result = run_tool(c["name"], c["arguments"], ToolContext(lang="zh" if "-zh-" in f.case else "en"))
                    assert result.ok, (f.case, c["name"], result.error)
