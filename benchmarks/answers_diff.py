"""Are the answers the same as a stored run? Runs every case through the engine (the `ask --json`
path, follow-up histories replayed as `meshwise eval` does) and compares each answer with a stored
run on what the user sees and what is scored: answer text, language, intent, strategy, YAML,
validation, asks, params, notices and the cited sources (not timings, not retrieval scores).

    .venv/bin/python benchmarks/answers_diff.py --set evals/cases --record base.jsonl
    .venv/bin/python benchmarks/answers_diff.py --set evals/cases --against base.jsonl

Exit status 0 when every case matches (or after --record), 1 when any differs, 2 on unusable input.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

COMPARED = ("answer", "language", "intent", "strategy", "yaml", "validation", "asks", "params",
            "notices", "judged")


def comparable(answer: dict) -> dict:
    """The parts of an `ask --json` object that must not change when only speed does."""
    out = {k: answer.get(k) for k in COMPARED}
    out["sources"] = [s["id"] for s in answer.get("sources") or []]
    return json.loads(json.dumps(out, ensure_ascii=False))  # as stored: tuples become lists


def run_cases(paths: list[Path], case_filter: str | None) -> dict[str, dict]:
    from evals.runner import run_case
    from evals.schema import load_set
    from assistant.engine import Assistant

    cases = load_set(paths)
    if case_filter:
        cases = [c for c in cases if case_filter in c.id]
    assistant = Assistant.load()
    out: dict[str, dict] = {}
    try:
        for case in cases:
            _, answer = run_case(assistant, case)
            out[case.id] = comparable(answer) if answer is not None else {"error": "engine raised"}
    finally:
        assistant.close()
    return out


def differences(old: dict, new: dict) -> list[str]:
    keys = sorted(set(old) | set(new))
    return [k for k in keys if old.get(k) != new.get(k)]


def first_difference(old, new, path: str = "") -> str:
    """Where two JSON values first differ, e.g. `validation.memory.per_gpu_gb`."""
    if isinstance(old, dict) and isinstance(new, dict):
        for k in sorted(set(old) | set(new)):
            if old.get(k) != new.get(k):
                return first_difference(old.get(k), new.get(k), f"{path}.{k}" if path else k)
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new)):
            if a != b:
                return first_difference(a, b, f"{path}[{i}]")
    return f"{path}: {json.dumps(old, ensure_ascii=False)[:200]} -> {json.dumps(new, ensure_ascii=False)[:200]}"


def _write(path: Path, answers: dict[str, dict]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for cid, a in answers.items():
            f.write(json.dumps({"id": cid, **a}, ensure_ascii=False) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", action="append", type=Path, default=[], dest="sets", metavar="PATH",
                    help="case file or directory (repeatable; default evals/cases)")
    ap.add_argument("--filter", default=None, help="only cases whose id contains TEXT")
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--record", type=Path, metavar="OUT.jsonl", help="store this run")
    mode.add_argument("--against", type=Path, metavar="STORED.jsonl", help="diff against a stored run")
    ap.add_argument("--save", type=Path, metavar="OUT.jsonl", help="with --against: store this run too")
    ap.add_argument("--show", type=int, default=10, help="print at most this many differing cases")
    args = ap.parse_args()
    answers = run_cases(args.sets or [REPO / "evals" / "cases"], args.filter)
    if args.record:
        _write(args.record, answers)
        print(f"recorded {len(answers)} answers to {args.record}")
        return 0
    stored = {}
    for line in args.against.read_text(encoding="utf-8").splitlines():
        if line.strip():
            obj = json.loads(line)
            stored[obj.pop("id")] = obj
    if args.filter:
        stored = {cid: a for cid, a in stored.items() if args.filter in cid}
    missing = sorted(set(stored) - set(answers))
    added = sorted(set(answers) - set(stored))
    changed = {cid: differences(stored[cid], a) for cid, a in answers.items() if cid in stored}
    changed = {cid: d for cid, d in changed.items() if d}
    for cid in list(changed)[: args.show]:
        print(f"{cid}: {', '.join(changed[cid])} differ")
        for k in changed[cid]:
            print(f"  {first_difference(stored[cid].get(k), answers[cid].get(k), k)}")
    if args.save:
        _write(args.save, answers)
    print(f"{len(answers)} cases: {len(changed)} differ, {len(missing)} missing, {len(added)} new")
    return 0 if not (changed or missing or added) else 1


if __name__ == "__main__":
    sys.exit(main())
