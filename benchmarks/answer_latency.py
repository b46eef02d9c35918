"""Answer latency of the offline engine: warm p95 (target < 300 ms) and the cold start of
`meshwise ask` (target < 10 s), on this machine.

    OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1 \
        .venv/bin/python benchmarks/answer_latency.py [--rounds 3] [--cold 3] [--json OUT]

Warm: the engine is loaded once (index built first if missing), every question of
benchmarks/answer_latency.yaml is asked once untimed, then `--rounds` timed rounds; the first timed
round is reported separately as well (answers that repeat nothing from an earlier identical question
would look like it). Cold: `meshwise ask "<question>" --json` in a fresh process, wall clock from
spawn to exit, `--cold` times. Prints medians, p95 and the ratio to each target.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import yaml  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

QUESTIONS = REPO / "benchmarks" / "answer_latency.yaml"
WARM_TARGET_MS = 300.0
COLD_TARGET_S = 10.0


def p95(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(0.95 * len(xs) + 0.5) - 1))]


def warm(rounds: int) -> dict:
    from assistant.answer import AskRequest
    from assistant.engine import Assistant

    t = time.perf_counter()
    a = Assistant.load()
    load_s = time.perf_counter() - t
    qs = yaml.safe_load(QUESTIONS.read_text(encoding="utf-8"))["questions"]
    for q in qs:  # untimed pass: lazy imports and first-use caches
        a.ask(AskRequest(question=q))
    per_round: list[list[float]] = []
    stages: dict[str, list[float]] = {}
    for _ in range(rounds):
        times = []
        for q in qs:
            t = time.perf_counter()
            ans = a.ask(AskRequest(question=q))
            times.append((time.perf_counter() - t) * 1000)
            for k, v in ans.timings_ms.items():
                stages.setdefault(k, []).append(v)
        per_round.append(times)
    a.close()
    all_ms = [x for r in per_round for x in r]
    return {
        "questions": len(qs), "rounds": rounds, "load_s": load_s,
        "median_ms": statistics.median(all_ms), "p95_ms": p95(all_ms), "max_ms": max(all_ms),
        "first_round_p95_ms": p95(per_round[0]),
        "stage_median_ms": {k: statistics.median(v) for k, v in stages.items()},
    }


def cold(times: int) -> dict:
    exe = Path(sys.executable).with_name("meshwise")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-c", "import sys; from assistant.cli import main; sys.exit(main())"]
    q = "Which strategy for a 70B model on 8 nodes with TP and PP?"
    walls = []
    for _ in range(times):
        t = time.perf_counter()
        p = subprocess.run([*cmd, "ask", q, "--json"], capture_output=True, text=True, timeout=600)
        walls.append(time.perf_counter() - t)
        if p.returncode != 0:
            raise SystemExit(f"meshwise ask failed: {p.stderr[-500:]}")
        json.loads(p.stdout)
    return {"runs": times, "median_s": statistics.median(walls), "max_s": max(walls), "all_s": walls}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cold", type=int, default=3, help="cold `meshwise ask` runs (0 to skip)")
    ap.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    args = ap.parse_args()
    print(f"load average: {os.getloadavg()[0]:.2f} (2-core machine; numbers inflate with load)")
    w = warm(args.rounds)
    print(f"engine load (index present): {w['load_s']:.2f} s")
    print(f"warm answers: {w['questions']} questions x {w['rounds']} rounds")
    print(f"  median {w['median_ms']:.1f} ms   p95 {w['p95_ms']:.1f} ms   max {w['max_ms']:.1f} ms")
    print(f"  first timed round p95 {w['first_round_p95_ms']:.1f} ms")
    print(f"  p95 / target {WARM_TARGET_MS:.0f} ms = {w['p95_ms'] / WARM_TARGET_MS:.2f}")
    print("  stage medians: " + ", ".join(f"{k} {v:.1f}" for k, v in w["stage_median_ms"].items()))
    out = {"warm": w}
    if args.cold:
        c = cold(args.cold)
        out["cold"] = c
        print(f"cold `meshwise ask --json`: median {c['median_s']:.2f} s, max {c['max_s']:.2f} s over {c['runs']} runs")
        print(f"  median / target {COLD_TARGET_S:.0f} s = {c['median_s'] / COLD_TARGET_S:.2f}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, allow_nan=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
