"""`meshwise eval`: run the eval set through the answer engine and write a scored report.

Default set: every case file under evals/cases plus the upstream skill's evals.json when it is
present; the held-out cases (evals/heldout) run only when named: `--set evals/heldout`. Writes report.json, report.md, pass_rate.png and answers.jsonl to --out. Exit status 0
unless a threshold given by --min-pass / --min-yaml-valid is missed (1), or the set is unusable (2).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _fraction(text: str) -> float:
    """0.95 or 95 (percent) -> 0.95."""
    v = float(text)
    if v > 1:
        v /= 100.0
    if not 0 <= v <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a fraction or a percentage")
    return v


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("eval", help="run the eval set and write a scored report",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--set", action="append", type=Path, default=[], dest="sets", metavar="PATH",
                   help="case file (YAML, JSONL, or an upstream evals.json) or directory; repeatable "
                        "(default: evals/cases and the upstream evals.json; held-out cases only "
                        "with --set evals/heldout)")
    p.add_argument("--llm", choices=("offline", "openai"), default="offline", help="answer mode (default offline)")
    p.add_argument("--out", type=Path, default=Path("eval-report"), help="output directory (default ./eval-report)")
    p.add_argument("--baseline", type=Path, default=None, metavar="PREV.json",
                   help="an earlier report.json; lists regressions and fixes")
    p.add_argument("--min-pass", type=_fraction, default=None, metavar="X",
                   help="fail unless the pass rate overall and in each language is at least X (0.95 or 95)")
    p.add_argument("--min-yaml-valid", type=_fraction, default=None, metavar="Y",
                   help="fail unless at least Y of the shown YAML blocks validate (1.0 = all)")
    p.add_argument("--record", type=Path, default=None, metavar="DIR",
                   help="with --llm openai: store every request to the model and its reply in DIR/exchanges.jsonl "
                        "(the material of replay fixtures, evals/replay_server.py)")
    p.add_argument("--filter", default=None, metavar="TEXT", help="only cases whose id contains TEXT")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def _paths(answers: dict) -> dict[str, int]:
    """How many answers each path wrote (tools, single_shot, offline)."""
    out: dict[str, int] = {}
    for a in answers.values():
        key = a.get("llm_path") or "offline"
        out[key] = out.get(key, 0) + 1
    return out


def run(args: argparse.Namespace) -> int:
    from assistant.config import load_settings
    from evals.report import build_report, load_report, shape_line, threshold_failures, write_report
    from evals.runner import run as run_cases
    from evals.schema import CaseFormatError, default_set_paths, load_set

    try:
        cases = load_set(args.sets or default_set_paths())
        baseline = load_report(args.baseline) if args.baseline else None
    except (CaseFormatError, ValueError, OSError) as exc:
        print(f"meshwise eval: {exc}", file=sys.stderr)
        return 2
    if args.filter:
        cases = [c for c in cases if args.filter in c.id]
    if not cases:
        print("meshwise eval: no cases to run", file=sys.stderr)
        return 2
    if args.record is not None and args.llm != "openai":
        print("meshwise eval: --record needs --llm openai", file=sys.stderr)
        return 2

    result = run_cases(cases, settings=load_settings(), llm=args.llm, progress=not args.no_progress,
                       record_dir=args.record)
    meta = {
        "llm": args.llm,
        "sets": [str(p) for p in (args.sets or default_set_paths())],
        "load_s": result.load_s,
        "wall_s": result.wall_s,
        "llm_paths": _paths(result.answers),
    }
    report = build_report(result.scores, meta=meta, baseline=baseline)
    paths = write_report(report, args.out, answers=result.answers)

    s = report["summary"]
    pct = lambda x: "-" if x is None else f"{100 * x:.1f}%"  # noqa: E731
    langs = ", ".join(f"{k} {pct(g['pass_rate'])}" for k, g in s["by_language"].items() if g["cases"])
    print(f"cases: {s['cases']}  passed: {s['passed']}  pass rate: {pct(s['pass_rate'])} ({langs})")
    print(f"strategy accuracy: {pct(s['strategy_accuracy']['rate'])}  shown YAML valid: "
          f"{pct(s['yaml_validity']['rate'])} of {s['yaml_validity']['blocks']}  validity agreement: "
          f"{pct(s['validity_agreement']['rate'])}")
    print(shape_line(s))
    if args.llm != "offline":
        print("answer paths: " + ", ".join(f"{k} {v}" for k, v in sorted(meta["llm_paths"].items())))
    r = s["retrieval"]["all"]
    print(f"retrieval recall@5: {r['recall_at_5']}  MRR: {r['mrr']}  latency p50/p95: "
          f"{s['latency_ms']['p50']}/{s['latency_ms']['p95']} ms  wall: {result.wall_s:.1f} s")
    if "baseline" in report:
        b = report["baseline"]
        print(f"against baseline: {len(b['regressions'])} regressions, {len(b['fixes'])} fixes")
        for cid in b["regressions"]:
            print(f"  regression: {cid}")
    for name, path in paths.items():
        print(f"{name}: {path}")

    misses = threshold_failures(report, min_pass=args.min_pass, min_yaml_valid=args.min_yaml_valid)
    for m in misses:
        print(f"threshold missed: {m}", file=sys.stderr)
    return 1 if misses else 0
