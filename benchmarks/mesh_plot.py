"""Mesh picture latency: `meshwise validate FILE --world-size N --plot OUT` as a user runs it (a fresh process).

    .venv/bin/python benchmarks/mesh_plot.py [--repeats 7]

Prints the median wall time and the median CPU time (user + system of the child: what the command costs
when the machine is not shared) of the whole command per case (PNG and SVG, the 64-rank TP+PP example, a
512-rank large view, a MoE view), the same command without --plot, and the ratio to the 1 s target.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = str(ROOT / "examples" / "llama3_70b_tp8_pp4.yaml")
MOE = "distributed:\n  strategy: fsdp2\n  ep_size: 8\n"
LARGE = "distributed:\n  strategy: fsdp2\n  tp_size: 8\n  pp_size: 4\n  pipeline:\n    pp_schedule: 1f1b\n"
TARGET_S = 1.0


def _run(argv: list[str]) -> tuple[float, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "assistant.cli", "validate", *argv], env=env, capture_output=True)
    elapsed = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"validate {' '.join(argv)} exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        moe = Path(tmp) / "moe.yaml"
        moe.write_text(MOE, encoding="utf-8")
        large = Path(tmp) / "large.yaml"
        large.write_text(LARGE, encoding="utf-8")
        cases = {
            "no --plot (64 ranks)": [EXAMPLE, "--world-size", "64"],
            "png, tp8 pp4, 64 ranks": [EXAMPLE, "--world-size", "64", "--plot", f"{tmp}/m.png"],
            "svg, tp8 pp4, 64 ranks": [EXAMPLE, "--world-size", "64", "--plot", f"{tmp}/m.svg"],
            "png, 512 ranks (node rows)": [str(large), "--world-size", "512", "--plot", f"{tmp}/l.png"],
            "png, moe view, 16 ranks": [str(moe), "--world-size", "16", "--plot", f"{tmp}/e.png", "--plot-view", "moe"],
        }
        for name, argv in cases.items():
            runs = [_run(argv) for _ in range(args.repeats)]
            wall = statistics.median(w for w, _ in runs)
            cpu = statistics.median(c for _, c in runs)
            print(f"{name:28s} wall {wall:.3f} s (min {min(w for w, _ in runs):.3f})  cpu {cpu:.3f} s  "
                  f"{wall / TARGET_S:.2f}x / {cpu / TARGET_S:.2f}x of the {TARGET_S:.0f} s target")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
