"""Answer latency of the offline engine on this machine, English and Chinese reported apart: warm
median and p95 over a case set (targets <= 18 ms and <= 30 ms) and the cold start of `meshwise ask`
(targets <= 1.5 s English, <= 2.0 s Chinese, median of `--cold` runs).

    OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1 \
        .venv/bin/python benchmarks/answer_latency.py [--set evals/cases] [--rounds 1] [--cold 5] [--json OUT]

Warm: the engine is loaded once (index built first if missing) and every case of `--set` (default
evals/cases; follow-up histories answered first, as `meshwise eval` does) is asked once untimed, then
`--rounds` timed rounds. `--questions` uses benchmarks/answer_latency.yaml instead (one question per
path, no language split by case). Cold: `meshwise ask "<question>" --json` in a fresh process, wall
clock from spawn to exit and the child's CPU time (user + sys, which load inflates far less than the
wall clock), `--cold` times per language, interleaved. Prints medians, p95 and the ratio to each
target, with the load average: on a shared machine every number inflates with load.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
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
DEFAULT_SET = REPO / "evals" / "cases"
WARM_MEDIAN_TARGET_MS = 18.0
WARM_P95_TARGET_MS = 30.0
COLD_TARGET_S = {"en": 1.5, "zh": 2.0}
COLD_QUESTIONS = {
    "en": "Which strategy for a 70B model on 8 nodes with TP and PP?",
    "zh": "我在 16 张卡上训练 Qwen3-30B-A3B，想用专家并行，怎么配？",
}


def p95(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(0.95 * len(xs) + 0.5) - 1))]


def _requests(a, set_paths: list[Path] | None):
    """(language, request) pairs; follow-up histories are answered here, untimed."""
    from assistant.answer import AskRequest
    from assistant.index.glossary import query_lang

    if set_paths is None:
        qs = yaml.safe_load(QUESTIONS.read_text(encoding="utf-8"))["questions"]
        return [(query_lang(q), AskRequest(question=q)) for q in qs]
    from evals.runner import request_for, resolve_history
    from evals.schema import load_set

    return [(c.lang, request_for(c, resolve_history(a, c))) for c in load_set(set_paths)]


def _summary(ms: list[float]) -> dict:
    return {"n": len(ms), "median_ms": statistics.median(ms), "p95_ms": p95(ms), "max_ms": max(ms)}


def warm(rounds: int, set_paths: list[Path] | None) -> dict:
    from assistant.engine import Assistant

    t = time.perf_counter()
    a = Assistant.load()
    load_s = time.perf_counter() - t
    reqs = _requests(a, set_paths)
    for _, r in reqs:  # untimed pass: lazy imports and first-use caches
        a.ask(r)
    by_lang: dict[str, list[float]] = {}
    stages: dict[str, list[float]] = {}
    for _ in range(rounds):
        for lang, r in reqs:
            t = time.perf_counter()
            ans = a.ask(r)
            by_lang.setdefault(lang, []).append((time.perf_counter() - t) * 1000)
            for k, v in ans.timings_ms.items():
                stages.setdefault(k, []).append(v)
    a.close()
    all_ms = [x for v in by_lang.values() for x in v]
    return {
        "questions": len(reqs), "rounds": rounds, "load_s": load_s, "all": _summary(all_ms),
        "by_language": {k: _summary(v) for k, v in sorted(by_lang.items())},
        "stage_median_ms": {k: statistics.median(v) for k, v in stages.items()},
    }


def cold(times: int) -> dict:
    exe = Path(sys.executable).with_name("meshwise")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-c", "import sys; from assistant.cli import main; sys.exit(main())"]
    walls: dict[str, list[float]] = {lang: [] for lang in COLD_QUESTIONS}
    cpus: dict[str, list[float]] = {lang: [] for lang in COLD_QUESTIONS}
    loads: list[float] = []
    for _ in range(times):
        for lang, q in COLD_QUESTIONS.items():
            loads.append(os.getloadavg()[0])
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            p = subprocess.run([*cmd, "ask", q, "--json"], capture_output=True, text=True, timeout=600)
            walls[lang].append(time.perf_counter() - t)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus[lang].append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
            if p.returncode != 0:
                raise SystemExit(f"meshwise ask failed: {p.stderr[-500:]}")
            json.loads(p.stdout)
    return {"runs": times, "load_avg_median": statistics.median(loads),
            "by_language": {lang: {"median_s": statistics.median(w), "max_s": max(w), "all_s": w,
                                   "cpu_median_s": statistics.median(cpus[lang]), "cpu_all_s": cpus[lang]}
                            for lang, w in walls.items()}}


def _line(name: str, w: dict) -> str:
    return (f"  {name:<4} {w['n']:4d} asks  median {w['median_ms']:6.1f} ms "
            f"(/{WARM_MEDIAN_TARGET_MS:.0f} = {w['median_ms'] / WARM_MEDIAN_TARGET_MS:.2f})   "
            f"p95 {w['p95_ms']:6.1f} ms (/{WARM_P95_TARGET_MS:.0f} = {w['p95_ms'] / WARM_P95_TARGET_MS:.2f})   "
            f"max {w['max_ms']:.1f} ms")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", action="append", type=Path, default=[], dest="sets", metavar="PATH",
                    help="case file or directory for the warm run (repeatable; default evals/cases)")
    ap.add_argument("--questions", action="store_true", help="warm run over benchmarks/answer_latency.yaml instead")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--cold", type=int, default=5, help="cold `meshwise ask` runs per language (0 to skip)")
    ap.add_argument("--no-warm", action="store_true", help="cold runs only")
    ap.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    args = ap.parse_args()
    out: dict = {}
    if not args.no_warm:
        print(f"load average: {os.getloadavg()[0]:.2f} (2-core machine; numbers inflate with load)")
        w = warm(args.rounds, None if args.questions else (args.sets or [DEFAULT_SET]))
        out["warm"] = w
        print(f"engine load (index present): {w['load_s']:.2f} s")
        print(f"warm answers: {w['questions']} questions x {w['rounds']} rounds "
              f"(load average now {os.getloadavg()[0]:.2f})")
        print(_line("all", w["all"]))
        for lang, v in w["by_language"].items():
            print(_line(lang, v))
        print("  stage medians: " + ", ".join(f"{k} {v:.1f}" for k, v in w["stage_median_ms"].items()))
    if args.cold:
        c = cold(args.cold)
        out["cold"] = c
        print(f"cold `meshwise ask --json` ({c['runs']} runs per language, median load average {c['load_avg_median']:.2f}):")
        for lang, v in c["by_language"].items():
            print(f"  {lang}: median {v['median_s']:.2f} s (/{COLD_TARGET_S[lang]} s = "
                  f"{v['median_s'] / COLD_TARGET_S[lang]:.2f}), max {v['max_s']:.2f} s; CPU median {v['cpu_median_s']:.2f} s")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, allow_nan=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
