"""Eval reports: `report.json`, `report.md` and a PNG chart of pass rate per category and language.

`build_report` turns case scores into one JSON-able dict (summary + per-case results, and the
comparison with a baseline report when one is given); the writers render that dict.
"""
from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from evals.schema import CATEGORIES, LANGS
from evals.scorer import CaseScore

MAX_BASELINE_BYTES = 64 * 1024 * 1024


def _rate(k: int, n: int) -> float | None:
    return round(k / n, 4) if n else None


def _group(scores: list[CaseScore]) -> dict:
    n = len(scores)
    k = sum(s.passed for s in scores)
    return {"cases": n, "passed": k, "pass_rate": _rate(k, n)}


def percentile(values: list[float], q: float) -> float | None:
    """Linear-interpolated percentile, q in [0, 100]."""
    if not values:
        return None
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return round(xs[lo] + (xs[hi] - xs[lo]) * (pos - lo), 2)


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def answer_shape(scores: list[CaseScore]) -> dict:
    """Per language (and all): body length distribution (sources block excluded) and the share of
    answers that show a YAML. Cases without an answer (engine errors) are not counted."""
    out = {}
    for lang in (*LANGS, "all"):
        sel = [s for s in scores if s.body_chars is not None and (lang == "all" or s.lang == lang)]
        lengths = [float(s.body_chars) for s in sel]
        with_yaml = sum(bool(s.shows_yaml) for s in sel)
        out[lang] = {
            "answers": len(sel),
            "median_chars": percentile(lengths, 50),
            "p90_chars": percentile(lengths, 90),
            "max_chars": int(max(lengths)) if lengths else None,
            "with_yaml": with_yaml,
            "yaml_share": _rate(with_yaml, len(sel)),
        }
    return out


def summarize(scores: list[CaseScore]) -> dict:
    by_lang = {lang: _group([s for s in scores if s.lang == lang]) for lang in LANGS}
    cats = [c for c in CATEGORIES if any(s.category == c for s in scores)]
    cats += sorted({s.category for s in scores} - set(cats))
    by_cat = {c: _group([s for s in scores if s.category == c]) for c in cats}
    by_cat_lang = {c: {lang: _group([s for s in scores if s.category == c and s.lang == lang]) for lang in LANGS} for c in cats}

    strat = [s.strategy_ok for s in scores if s.strategy_ok is not None]
    validity = [s.validity_ok for s in scores if s.validity_ok is not None]
    dp = [s.dp_ok for s in scores if s.dp_ok is not None]
    blocks = sum(s.yaml_blocks for s in scores)
    invalid = sum(len(s.yaml_invalid) for s in scores)
    lat = [s.latency_ms for s in scores if s.latency_ms is not None]
    retrieval = {}
    for lang in (*LANGS, "all"):
        sel = [s for s in scores if s.recall_at_5 is not None and (lang == "all" or s.lang == lang)]
        retrieval[lang] = {
            "cases": len(sel),
            "recall_at_5": _mean([s.recall_at_5 for s in sel]),
            "mrr": _mean([s.reciprocal_rank or 0.0 for s in sel]),
        }
    failures = Counter(c.name for s in scores for c in s.checks if not c.passed)
    return {
        **_group(scores),
        "by_language": by_lang,
        "by_category": by_cat,
        "by_category_language": by_cat_lang,
        "strategy_accuracy": {"cases": len(strat), "correct": sum(strat), "rate": _rate(sum(strat), len(strat))},
        "yaml_validity": {"blocks": blocks, "valid": blocks - invalid, "rate": _rate(blocks - invalid, blocks)},
        "validity_agreement": {"cases": len(validity), "agree": sum(validity), "rate": _rate(sum(validity), len(validity))},
        "dp_size_accuracy": {"cases": len(dp), "correct": sum(dp), "rate": _rate(sum(dp), len(dp))},
        "language_accuracy": _rate(sum(s.language_ok for s in scores), len(scores)),
        "retrieval": retrieval,
        "latency_ms": {"p50": percentile(lat, 50), "p95": percentile(lat, 95), "max": max(lat) if lat else None},
        "answer_shape": answer_shape(scores),
        "engine_errors": sum(1 for s in scores if s.error),
        "check_failures": dict(failures.most_common()),
    }


def shape_line(summary: dict) -> str:
    """One line per language for the CLI: body length median / p90 / max and the YAML share."""
    parts = []
    for lang, a in summary["answer_shape"].items():
        if lang != "all" and a["answers"]:
            parts.append(f"{lang} median {a['median_chars']:.0f} / p90 {a['p90_chars']:.0f} / max {a['max_chars']} chars, "
                         f"YAML in {_pct(a['yaml_share'])}")
    return "answer length (sources excluded): " + ("; ".join(parts) if parts else "no answers")


def load_report(path: Path) -> dict:
    path = Path(path)
    if path.stat().st_size > MAX_BASELINE_BYTES:
        raise ValueError(f"{path}: larger than {MAX_BASELINE_BYTES} bytes; not a report")
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        raise ValueError(f"{path}: not a meshwise eval report (no `cases` list)")
    return data


def compare(current: list[dict], baseline: dict) -> dict:
    """Regressions (passed before, fail now), fixes (the reverse), and cases only on one side."""
    before = {c["id"]: bool(c.get("passed")) for c in baseline.get("cases", []) if isinstance(c, dict) and "id" in c}
    now = {c["id"]: bool(c["passed"]) for c in current}
    return {
        "baseline_pass_rate": (baseline.get("summary") or {}).get("pass_rate"),
        "regressions": sorted(i for i, ok in now.items() if i in before and before[i] and not ok),
        "fixes": sorted(i for i, ok in now.items() if i in before and not before[i] and ok),
        "new": sorted(set(now) - set(before)),
        "removed": sorted(set(before) - set(now)),
    }


def build_report(scores: Iterable[CaseScore], *, meta: dict | None = None, baseline: dict | None = None) -> dict:
    scores = list(scores)
    cases = [s.to_dict() for s in scores]
    report = {
        "meta": {"created": datetime.now(timezone.utc).isoformat(timespec="seconds"), **(meta or {})},
        "summary": summarize(scores),
        "cases": cases,
    }
    if baseline is not None:
        report["baseline"] = compare(cases, baseline)
    return report


def threshold_failures(report: dict, *, min_pass: float | None = None, min_yaml_valid: float | None = None) -> list[str]:
    """Human-readable misses; empty when every given threshold holds (overall and per language)."""
    s = report["summary"]
    out = []
    if min_pass is not None:
        for name, rate in [("overall", s["pass_rate"]), *((lang, g["pass_rate"]) for lang, g in s["by_language"].items() if g["cases"])]:
            if rate is None or rate < min_pass:
                out.append(f"pass rate {name} {_pct(rate)} < {_pct(min_pass)}")
    if min_yaml_valid is not None:
        rate = s["yaml_validity"]["rate"]
        if rate is not None and rate < min_yaml_valid:
            out.append(f"shown YAML valid {_pct(rate)} < {_pct(min_yaml_valid)}")
    return out


# ----------------------------------------------------------------------------- Markdown


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _cell(g: dict) -> str:
    return f"{_pct(g['pass_rate'])} ({g['passed']}/{g['cases']})" if g["cases"] else "-"


def render_markdown(report: dict) -> str:
    s, meta = report["summary"], report["meta"]
    lines = [
        "# Meshwise eval report",
        "",
        f"{meta.get('created', '')} · llm `{meta.get('llm', '?')}` · {s['cases']} cases"
        + (f" · run {meta['wall_s']:.1f} s (engine load {meta.get('load_s', 0):.1f} s)" if meta.get("wall_s") is not None else ""),
        "",
        "| metric | value |",
        "|---|---|",
        f"| behaviour pass rate | {_cell(s)} |",
        f"| strategy accuracy | {_pct(s['strategy_accuracy']['rate'])} ({s['strategy_accuracy']['correct']}/{s['strategy_accuracy']['cases']}) |",
        f"| shown YAML valid | {_pct(s['yaml_validity']['rate'])} ({s['yaml_validity']['valid']}/{s['yaml_validity']['blocks']}) |",
        f"| expected-validity agreement | {_pct(s['validity_agreement']['rate'])} ({s['validity_agreement']['agree']}/{s['validity_agreement']['cases']}) |",
        f"| dp_size correct | {_pct(s['dp_size_accuracy']['rate'])} ({s['dp_size_accuracy']['correct']}/{s['dp_size_accuracy']['cases']}) |",
        f"| answer language correct | {_pct(s['language_accuracy'])} |",
        f"| retrieval recall@5 / MRR | {s['retrieval']['all']['recall_at_5']} / {s['retrieval']['all']['mrr']} ({s['retrieval']['all']['cases']} cases) |",
        f"| latency p50 / p95 | {s['latency_ms']['p50']} ms / {s['latency_ms']['p95']} ms |",
        f"| engine errors | {s['engine_errors']} |",
        "",
        "## Per language",
        "",
        "| language | pass rate | recall@5 | MRR |",
        "|---|---|---|---|",
    ]
    for lang, g in s["by_language"].items():
        r = s["retrieval"][lang]
        lines.append(f"| {lang} | {_cell(g)} | {r['recall_at_5']} | {r['mrr']} |")
    lines += ["", "## Answer length and YAML shown", "",
              "| language | answers | median chars | p90 chars | max chars | with YAML |", "|---|---|---|---|---|---|"]
    for lang, a in s["answer_shape"].items():
        lines.append(f"| {lang} | {a['answers']} | {a['median_chars']} | {a['p90_chars']} | {a['max_chars']} | "
                     f"{_pct(a['yaml_share'])} ({a['with_yaml']}/{a['answers']}) |")
    lines += ["", "## Per category", "", "| category | en | zh | all |", "|---|---|---|---|"]
    for cat, g in s["by_category"].items():
        cl = s["by_category_language"][cat]
        lines.append(f"| {cat} | {_cell(cl['en'])} | {_cell(cl['zh'])} | {_cell(g)} |")
    if s["check_failures"]:
        lines += ["", "Failed checks: " + ", ".join(f"{k} {v}" for k, v in s["check_failures"].items())]

    base = report.get("baseline")
    if base:
        lines += ["", "## Against the baseline", "", f"Baseline pass rate {_pct(base['baseline_pass_rate'])}, now {_pct(s['pass_rate'])}.", ""]
        for key in ("regressions", "fixes", "new", "removed"):
            ids = base[key]
            lines.append(f"- {key} ({len(ids)}): " + (", ".join(f"`{i}`" for i in ids) if ids else "none"))

    failed = [c for c in report["cases"] if not c["passed"]]
    lines += ["", f"## Failed cases ({len(failed)})", ""]
    if not failed:
        lines.append("None.")
    for c in failed:
        lines.append(f"### `{c['id']}` ({c['lang']}, {c['category']})")
        if c.get("error"):
            lines.append(f"- error: {c['error']}")
        if c["missing_facts"]:
            lines.append("- missing facts: " + "; ".join(c["missing_facts"]))
        if c["forbidden_hits"]:
            lines.append("- forbidden claims: " + " | ".join(h.replace("|", "/") for h in c["forbidden_hits"]))
        for chk in c["checks"]:
            if not chk["passed"] and chk["name"] not in ("facts", "forbid"):
                lines.append(f"- {chk['name']}: {chk['detail']}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


# ----------------------------------------------------------------------------- chart


def write_chart(report: dict, path: Path) -> Path:
    """Grouped bars: pass rate per category, one bar per language, plus the overall group."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = report["summary"]
    groups = ["overall", *s["by_category"].keys()]
    rates: dict[str, list[float]] = defaultdict(list)
    for g in groups:
        for lang in LANGS:
            cell = s["by_language"][lang] if g == "overall" else s["by_category_language"][g][lang]
            rates[lang].append(100 * cell["pass_rate"] if cell["cases"] else float("nan"))
    fig, ax = plt.subplots(figsize=(max(8, 0.9 * len(groups) + 2), 4.5))
    width = 0.8 / len(LANGS)
    for i, lang in enumerate(LANGS):
        xs = [x + (i - (len(LANGS) - 1) / 2) * width for x in range(len(groups))]
        ax.bar(xs, rates[lang], width, label=lang)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, rotation=30, ha="right")
    ax.set_ylim(0, 105)
    ax.set_ylabel("pass rate (%)")
    ax.set_title(f"Meshwise eval: pass rate per category and language ({s['cases']} cases)")
    ax.axhline(95, color="grey", linewidth=0.8, linestyle="--")
    ax.legend()
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def write_report(report: dict, out_dir: Path, *, answers: dict[str, Any] | None = None) -> dict[str, Path]:
    """Write report.json, report.md, pass_rate.png (and answers.jsonl when answers are given)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "report.json", "md": out / "report.md", "chart": out / "pass_rate.png"}
    paths["json"].write_text(json.dumps(report, ensure_ascii=False, indent=1, default=str, allow_nan=False), encoding="utf-8")
    paths["md"].write_text(render_markdown(report), encoding="utf-8")
    write_chart(report, paths["chart"])
    if answers is not None:
        paths["answers"] = out / "answers.jsonl"
        with paths["answers"].open("w", encoding="utf-8") as f:
            for cid, ans in answers.items():
                f.write(json.dumps({"case": cid, **ans}, ensure_ascii=False, default=str, allow_nan=False) + "\n")
    return paths
