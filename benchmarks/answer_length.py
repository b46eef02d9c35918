"""How long the answers of one eval run are, per case file and language: median, p90 and max body
characters (the sources block excluded, as the scorer counts them), the share of answers that show a
YAML block, and the share longer than their case's `max_chars` (of the cases that set one).

    PYTHONPATH=. .venv/bin/python benchmarks/answer_length.py eval-report/ [--set evals/cases] [--top 10]
    PYTHONPATH=. .venv/bin/python benchmarks/answer_length.py before/ after/   # two runs side by side

A run is an `meshwise eval --out` folder (its answers.jsonl) or an answers.jsonl itself. With two runs,
each row prints before -> after. `--top N` lists the N longest answers of the (last) run.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def read_run(path: Path) -> dict[str, str]:
    """case id -> answer text."""
    f = path / "answers.jsonl" if path.is_dir() else path
    out: dict[str, str] = {}
    for line in f.read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            out[rec["case"]] = rec.get("answer") or ""
    return out


def rows(answers: dict[str, str], cases) -> dict[tuple[str, str], dict]:
    """(case file, lang) -> stats, plus ("ALL", lang) and ("ALL", "all")."""
    from evals.report import percentile
    from evals.scorer import answer_body, fenced_yaml_blocks

    groups: dict[tuple[str, str], list] = defaultdict(list)
    for c in cases:
        if c.id not in answers:
            continue
        text = answers[c.id]
        n = len(answer_body(text))
        item = (n, bool(fenced_yaml_blocks(text)), c.expect.max_chars)
        name = Path(c.source).stem if c.source else "?"
        for key in ((name, c.lang), ("ALL", c.lang), ("ALL", "all")):
            groups[key].append(item)
    out = {}
    for key, items in groups.items():
        lengths = [float(n) for n, _y, _m in items]
        capped = [(n, m) for n, _y, m in items if m is not None]
        out[key] = {
            "n": len(items),
            "median": percentile(lengths, 50),
            "p90": percentile(lengths, 90),
            "max": int(max(lengths)),
            "yaml": sum(y for _n, y, _m in items) / len(items),
            "capped": len(capped),
            "over": sum(n > m for n, m in capped),
        }
    return out


def _cell(s: dict | None) -> str:
    if s is None:
        return "-"
    over = f"{s['over']}/{s['capped']}" if s["capped"] else "-"
    return f"{s['median']:.0f} / {s['p90']:.0f} / {s['max']} | {s['yaml']:.0%} | {over}"


def main(argv: list[str] | None = None) -> int:
    from evals.schema import load_set

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", type=Path, nargs="+", help="eval --out folder(s) or answers.jsonl (one or two)")
    ap.add_argument("--set", type=Path, action="append", default=None, help="case files (default evals/cases)")
    ap.add_argument("--top", type=int, default=0, help="list the N longest answers of the last run")
    args = ap.parse_args(argv)
    if len(args.runs) > 2:
        ap.error("one run, or two to compare")
    cases = load_set(args.set or [REPO / "evals" / "cases"])
    tables = [rows(read_run(r), cases) for r in args.runs]
    keys = sorted(set().union(*tables), key=lambda k: (k[0] == "ALL", k[0], k[1] == "all", k[1]))
    head = "median / p90 / max chars | with YAML | over max_chars"
    print(f"| case file | lang | {head} |" + (f" after: {head} |" if len(tables) == 2 else ""))
    print("|---|---|---|---|---|" + ("---|---|---|" if len(tables) == 2 else ""))
    for k in keys:
        cells = " | ".join(_cell(t.get(k)) for t in tables)
        print(f"| {k[0]} | {k[1]} | {cells} |")
    if args.top:
        from evals.scorer import answer_body

        last = read_run(args.runs[-1])
        by_id = {c.id: c for c in cases}
        longest = sorted(((len(answer_body(t)), cid) for cid, t in last.items() if cid in by_id), reverse=True)
        print()
        for n, cid in longest[: args.top]:
            print(f"{n:6d}  {cid}  (max_chars {by_id[cid].expect.max_chars})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
