"""Validator throughput: validations per second for bare `distributed:` mappings, on one core.

    .venv/bin/python benchmarks/validator_throughput.py [--seconds 3] [--repeats 5]

Prints the median rate per workload (dicts as the API receives them, and YAML text), plus the ratio
to the 20,000/s target. Suggested fixes are switched off for the dict workloads (they only run when a
config is invalid); a last line measures invalid configs with the fix search on.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant.validator import validate  # noqa: E402

TARGET = 20_000

VALID = [
    ({"strategy": "fsdp2", "tp_size": 2, "cp_size": 1, "pp_size": 1, "dp_size": "none"}, 8),
    ({"strategy": "fsdp2", "tp_size": 8, "pp_size": 4, "pipeline": {"pp_schedule": "interleaved1f1b", "pp_microbatch_size": 1}}, 64),
    ({"strategy": "fsdp2", "ep_size": 8, "moe": {"reshard_after_forward": False}, "activation_checkpointing": True}, 16),
    ({"strategy": "megatron_fsdp", "tp_size": 2, "cp_size": 1}, 8),
    ({"strategy": "ddp", "find_unused_parameters": True}, 8),
    ({"strategy": "fsdp2", "dp_replicate_size": 2, "sequence_parallel": True, "tp_size": 4}, 32),
]
INVALID = [
    ({"strategy": "fsdp2", "tp_size": 8, "pp_size": 4, "pipeline": {}}, 48),
    ({"strategy": "megatron_fsdp", "sequence_parallel": False}, 8),
    ({"strategy": "fsdp2", "ep_size": 16}, 8),
    ({"pp_size": 2, "pipeline": {"pp_schedule": "interleaved_1f1b"}}, 8),
]


def _yaml(cases):
    import yaml

    return [(yaml.safe_dump(c, sort_keys=False), w) for c, w in cases]


def rate(cases, seconds: float, **kw) -> tuple[float, float]:
    """(validations per wall-clock second, per CPU second of this process)."""
    n, start, cpu = 0, time.perf_counter(), time.process_time()
    deadline = start + seconds
    while True:
        for cfg, world in cases:
            validate(cfg, world_size=world, **kw)
        n += len(cases)
        now = time.perf_counter()
        if now >= deadline:
            return n / (now - start), n / max(time.process_time() - cpu, 1e-9)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="duration of one measurement")
    ap.add_argument("--repeats", type=int, default=5, help="measurements per workload (the median is reported)")
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core
    workloads = [
        ("valid dicts", VALID, {"suggest_fix": False}),
        ("invalid dicts (no fix)", INVALID, {"suggest_fix": False}),
        ("valid YAML text", _yaml(VALID), {"suggest_fix": False}),
        ("invalid dicts (with fix search)", INVALID, {}),
    ]
    rate(VALID, 0.3, suggest_fix=False)  # warm caches
    # wall-clock rate is what a caller sees; the CPU-time rate is the same work on a core of its own
    # (they differ when other processes share the machine's cores)
    print(f"{'workload':34s} {'wall med/s':>11s} {'wall min/s':>11s} {'cpu med/s':>10s} {'cpu vs target':>14s}")
    for name, cases, kw in workloads:
        runs = [rate(cases, args.seconds, **kw) for _ in range(args.repeats)]
        wall = [r[0] for r in runs]
        cpu = statistics.median(r[1] for r in runs)
        print(f"{name:34s} {statistics.median(wall):11.0f} {min(wall):11.0f} {cpu:10.0f} {cpu / TARGET:13.2f}x")
    print(f"load average during the run: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")


if __name__ == "__main__":
    main()
