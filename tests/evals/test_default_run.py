"""The default eval run against the real offline engine, with the thresholds CI holds it to:
at least 95% of cases pass overall and in each language, and every YAML shown validates."""
from __future__ import annotations

import pytest

from evals.report import build_report, render_markdown, threshold_failures
from evals.runner import run
from evals.schema import default_set_paths, load_set

MIN_PASS = 0.95
MIN_YAML_VALID = 1.0
MAX_RUN_S = 120.0  # the bound for the default offline run on 2 cores


@pytest.mark.slow
def test_default_set_meets_the_thresholds(mw_assistant, tmp_path):
    cases = load_set(default_set_paths())
    result = run(cases, assistant=mw_assistant, progress=False)
    report = build_report(result.scores, meta={"llm": "offline", "wall_s": result.wall_s})
    (tmp_path / "report.md").write_text(render_markdown(report), encoding="utf-8")
    misses = threshold_failures(report, min_pass=MIN_PASS, min_yaml_valid=MIN_YAML_VALID)
    failed = [c["id"] for c in report["cases"] if not c["passed"]]
    assert not misses, f"{misses}; failed cases: {failed}; full report: {tmp_path / 'report.md'}"
    assert report["summary"]["engine_errors"] == 0
    assert result.wall_s < MAX_RUN_S, f"default run took {result.wall_s:.0f} s"


@pytest.mark.slow
def test_cli_eval_writes_the_report(mw_settings, monkeypatch, tmp_path, capsys):
    from assistant.cli import main

    monkeypatch.setenv("MESHWISE_INDEX_DIR", str(mw_settings.index_dir))
    monkeypatch.setenv("MESHWISE_DATA_DIR", str(mw_settings.data_dir))
    monkeypatch.setenv("MESHWISE_CONFIG", str(tmp_path / "none.toml"))
    out = tmp_path / "out"
    code = main(["eval", "--filter", "diag-", "--out", str(out), "--no-progress", "--min-pass", "0"])
    assert code == 0
    assert {p.name for p in out.iterdir()} >= {"report.json", "report.md", "pass_rate.png", "answers.jsonl"}
    first = main(["eval", "--filter", "diag-", "--out", str(tmp_path / "again"), "--no-progress",
                  "--baseline", str(out / "report.json")])
    assert first == 0
    assert "against baseline:" in capsys.readouterr().out
