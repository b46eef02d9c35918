"""`meshwise eval --llm openai --record DIR` end to end: the real CLI in its own process against the
scripted OpenAI-compatible server on 127.0.0.1 (evals/replay_server.py). Every request the engine sends
is stored with the reply it got, the stored replies (a tool call, then the answer) are the ones played,
and the report is written and scored."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from assistant.config import EVALS_DIR, REPO_ROOT
from evals.replay_server import ReplayServer, load_fixtures

CASE = "q-en-verdict-tp4-pp3-40gpus"


def test_eval_llm_openai_record_stores_requests_replays_replies_and_writes_the_report(mw_assistant, tmp_path):
    (fixture,) = [f for f in load_fixtures(EVALS_DIR / "llm_fixtures" / "tuning") if f.case == CASE]
    s = mw_assistant.settings  # the session's test index (built by the fixture), reused, not rebuilt
    rec, out = tmp_path / "rec", tmp_path / "out"
    with ReplayServer([fixture]) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MESHWISE_")}
        env.update(PYTHONPATH=str(REPO_ROOT), MESHWISE_CONFIG=str(tmp_path / "none.toml"),
                   MESHWISE_INDEX_DIR=str(s.index_dir), MESHWISE_DATA_DIR=str(tmp_path / "data"),
                   MESHWISE_MODEL_CACHE_DIR=str(s.model_cache_dir), MESHWISE_LLM_BASE_URL=server.url,
                   MESHWISE_LLM_MODEL="replay", MESHWISE_LLM_TIMEOUT="20")
        run = subprocess.run([sys.executable, "-m", "assistant.cli", "eval", "--llm", "openai", "--record", str(rec),
                              "--set", str(EVALS_DIR / "cases" / "q_verdict_en.yaml"), "--filter", CASE,
                              "--out", str(out), "--no-progress"],
                             cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)
        served = list(server.requests)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "cases: 1  passed: 1" in run.stdout and "answer paths: tools 1" in run.stdout
    # requests stored: one line per request the server got, the same messages, with the reply played
    rows = [json.loads(line) for line in (rec / "exchanges.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == len(served) == 2 and server.misses == 0
    assert [r["request"]["messages"] for r in rows] == [q["messages"] for q in served]
    assert all(r["kind"] == "tools" and r["match"] == fixture.match and r["error"] is None for r in rows)
    assert rows[0]["reply"]["tool_calls"][0]["function"]["name"] == "validate_layout"
    assert rows[1]["request"]["messages"][-1]["role"] == "tool"  # the tool's result went back to the model
    assert rows[1]["reply"]["content"] == fixture.tools[1]["content"]
    # the report: written, scored, the path that ran named
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["summary"]["cases"] == 1 and report["summary"]["passed"] == 1
    assert report["meta"]["llm"] == "openai" and report["meta"]["llm_paths"] == {"tools": 1}
    (answer,) = [json.loads(line) for line in (out / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert answer["id"] == CASE and answer["llm_path"] == "tools" and answer["answer"].startswith("No: 40 GPUs cannot be split")
    assert answer["model_validated"]["user_stated"] and answer["validation"]["ok"] is False
