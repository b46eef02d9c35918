"""Report writer: JSON, Markdown tables per category and language, failed cases, chart, baseline diff."""
from __future__ import annotations

import json

from evals.report import (build_report, compare, load_report, percentile, render_markdown, shape_line,
                          threshold_failures, write_report)
from evals.scorer import CaseScore, Check


def cs(cid: str, lang: str, cat: str, passed: bool, **kw) -> CaseScore:
    checks = [Check("facts", passed, "" if passed else "ep_rule_code")]
    return CaseScore(id=cid, lang=lang, category=cat, passed=passed, checks=checks,
                     missing_facts=[] if passed else ["ep_rule_code"], **kw)


SCORES = [
    cs("a-en", "en", "sizing", True, latency_ms=10.0, yaml_blocks=1, dp_ok=True, recall_at_5=1.0, reciprocal_rank=1.0),
    cs("a-zh", "zh", "sizing", True, latency_ms=20.0, yaml_blocks=1, dp_ok=True, recall_at_5=0.5, reciprocal_rank=0.5),
    cs("b-en", "en", "diagnosis", True, latency_ms=30.0, validity_ok=True, strategy_ok=True),
    cs("b-zh", "zh", "diagnosis", False, latency_ms=40.0, yaml_blocks=2, yaml_invalid=["world_size=12 (case): MW-E-EP-DIVIDES"],
       validity_ok=False, strategy_ok=False, forbidden_hits=["f_ep_rule_without_tp: ep_size 必须整除 dp_size * cp_size"]),
]
SCORES[-1].checks.append(Check("yaml_valid", False, SCORES[-1].yaml_invalid[0]))


def test_summary_numbers():
    s = build_report(SCORES, meta={"llm": "offline"})["summary"]
    assert (s["cases"], s["passed"], s["pass_rate"]) == (4, 3, 0.75)
    assert s["by_language"]["zh"]["pass_rate"] == 0.5 and s["by_language"]["en"]["pass_rate"] == 1.0
    assert s["by_category_language"]["diagnosis"]["zh"] == {"cases": 1, "passed": 0, "pass_rate": 0.0}
    assert s["yaml_validity"] == {"blocks": 4, "valid": 3, "rate": 0.75}
    assert s["strategy_accuracy"]["rate"] == 0.5
    assert s["retrieval"]["all"] == {"cases": 2, "recall_at_5": 0.75, "mrr": 0.75}
    assert s["latency_ms"]["p50"] == 25.0 and s["latency_ms"]["p95"] == 38.5


def test_percentile():
    assert percentile([], 50) is None
    assert percentile([5.0], 95) == 5.0
    assert percentile([1, 2, 3, 4], 50) == 2.5


def test_markdown_has_tables_and_failed_cases():
    md = render_markdown(build_report(SCORES, meta={"llm": "offline", "wall_s": 3.2, "load_s": 1.0}))
    assert "| category | en | zh | all |" in md
    assert "| diagnosis | 100.0% (1/1) | 0.0% (0/1) | 50.0% (1/2) |" in md
    assert "| language | pass rate | recall@5 | MRR |" in md
    assert "### `b-zh` (zh, diagnosis)" in md
    assert "missing facts: ep_rule_code" in md
    assert "MW-E-EP-DIVIDES" in md
    assert "`a-en`" not in md.split("## Failed cases")[1]


def test_write_report_files(tmp_path):
    report = build_report(SCORES, meta={"llm": "offline"})
    paths = write_report(report, tmp_path / "out", answers={"a-en": {"answer": "x", "language": "en"}})
    assert json.loads(paths["json"].read_text(encoding="utf-8"))["summary"]["cases"] == 4
    assert paths["md"].read_text(encoding="utf-8").startswith("# Meshwise eval report")
    png = paths["chart"].read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    line = json.loads(paths["answers"].read_text(encoding="utf-8").splitlines()[0])
    assert line["case"] == "a-en"
    assert load_report(paths["json"])["cases"][0]["id"] == "a-en"


def test_baseline_regressions_and_fixes(tmp_path):
    before = build_report([
        cs("a-en", "en", "sizing", False), cs("a-zh", "zh", "sizing", True),
        cs("b-zh", "zh", "diagnosis", True), cs("gone", "en", "pitfalls", True),
    ])
    now = build_report(SCORES, baseline=before)
    b = now["baseline"]
    assert b["regressions"] == ["b-zh"]
    assert b["fixes"] == ["a-en"]
    assert b["new"] == ["b-en"] and b["removed"] == ["gone"]
    md = render_markdown(now)
    assert "- regressions (1): `b-zh`" in md and "- fixes (1): `a-en`" in md
    assert compare(now["cases"], {"cases": []})["new"] == sorted(c.id for c in SCORES)


def test_thresholds_per_language():
    report = build_report(SCORES)
    assert threshold_failures(report) == []
    misses = threshold_failures(report, min_pass=0.7, min_yaml_valid=1.0)
    assert misses == ["pass rate zh 50.0% < 70.0%", "shown YAML valid 75.0% < 100.0%"]
    assert threshold_failures(report, min_pass=0.5) == []


def test_answer_shape_per_language():
    scores = [
        cs("l1", "en", "verdict", True, body_chars=100, shows_yaml=False),
        cs("l2", "en", "verdict", True, body_chars=300, shows_yaml=True),
        cs("l3", "en", "verdict", False, body_chars=2000, shows_yaml=True),
        cs("l4", "zh", "verdict", True, body_chars=500, shows_yaml=False),
        cs("l5", "zh", "verdict", False, error="engine raised X"),  # no answer: not counted
    ]
    report = build_report(scores)
    shape = report["summary"]["answer_shape"]
    assert shape["en"] == {"answers": 3, "median_chars": 300.0, "p90_chars": 1660.0, "max_chars": 2000,
                           "with_yaml": 2, "yaml_share": 0.6667}
    assert shape["zh"]["answers"] == 1 and shape["zh"]["yaml_share"] == 0.0
    assert shape["all"]["max_chars"] == 2000
    md = render_markdown(report)
    assert "| en | 3 | 300.0 | 1660.0 | 2000 | 66.7% (2/3) |" in md
    line = shape_line(report["summary"])
    assert "en median 300 / p90 1660 / max 2000 chars, YAML in 66.7%" in line and "zh median 500" in line
