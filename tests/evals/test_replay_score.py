"""`python -m evals.replay_score`: replay fixtures scored on the tool path, the single-shot path and the
offline composer, each answer written by the path it names."""
from __future__ import annotations

from assistant.config import EVALS_DIR
from evals.replay_score import PATHS, _line, score_paths
from evals.replay_server import load_fixtures
from evals.schema import default_set_paths, load_set

WANTED = {"q-en-verdict-tp4-pp3-40gpus", "q-zh-rec-13b-pp2-rest-dp"}


def test_each_path_answers_the_fixtured_cases_and_is_scored(mw_assistant):
    fixtures = [f for f in load_fixtures(EVALS_DIR / "llm_fixtures" / "tuning") if f.case in WANTED]
    cases = [c for c in load_set(default_set_paths()) if c.id in WANTED]
    summary = score_paths(cases, fixtures, mw_assistant)
    assert summary["replay_misses"] == 0
    for path in PATHS:
        s = summary[path]
        assert s["cases"] == 2 and s["answer_paths"] == {path: 2}, (path, s)
        assert set(s["by_language"]) == {"en", "zh"} and s["passed"] == 2 and not s["failed"], (path, s)
    assert summary["tools"]["tool_calls"] >= 1 and summary["single_shot"]["tool_calls"] == 0
    assert _line("tools", summary["tools"]).startswith("tools: 2/2 = 100.0% (en 1/1 = 100.0%, zh 1/1 = 100.0%)")
