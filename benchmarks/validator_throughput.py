"""Validator throughput on one core: validations per second over a mixed set of recipes.

    .venv/bin/python benchmarks/validator_throughput.py [--seconds 2] [--repeats 5]

Two more rows measure a recipe as launched with overrides (assistant/launch): applied to each
validation (the arguments read once, as the YAML text is read once outside the dict rows), and also
read each time.

The mix is realistic: 6 valid and 12 invalid configs (2/3 invalid, as real questions are), each
invalid one a mistake users make (world not divisible, EP not dividing dp*cp*tp, an fsdp2 option on
megatron_fsdp, a misspelled schedule, batches that do not divide, ...). Two figures have targets:
`validate()` with its defaults (suggested fix on) and the bare verdict (suggest_fix=False), both on
the mix. The suggested fix is searched when a caller first reads `report.suggested_fix`, so the
"read suggested_fix" row is the cost of a caller that wants the fix of every invalid config. The
other rows split the mix to show where the time goes; the last places every finding at its line and
column (validator/locate.py), as `meshwise validate` does when it prints (never inside validate()); the
very last adds launch overrides to that, the whole of `meshwise validate FILE --a.b x`. Each row is the median of
--repeats runs, in validations per CPU second of this process (wall-clock too: they differ when
other processes share the core), and its ratio to the target.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant.launch import apply_overrides, parse_overrides  # noqa: E402
from assistant.validator import validate  # noqa: E402
from assistant.validator.coerce import load_yaml  # noqa: E402
from assistant.validator.locate import locate_report  # noqa: E402

# overrides as a launch line carries them, on sections the mix's verdicts do not read: the cost of
# reading and applying them (parse_overrides + apply_overrides) on every validation
OVERRIDES = ["--checkpoint.enabled", "false", "--wandb.project=bench", "--model.pretrained_model_name_or_path", "x/y"]

TARGET_DEFAULT = 20_000  # validate() as called, suggested fix on
TARGET_VERDICT = 50_000  # suggest_fix=False

VALID = [
    ({"distributed": {"strategy": "fsdp2", "tp_size": 2, "cp_size": 1, "pp_size": 1, "dp_size": "none"}}, 8),
    ({"distributed": {"strategy": "fsdp2", "tp_size": 8, "pp_size": 4,
                      "pipeline": {"pp_schedule": "interleaved1f1b", "pp_microbatch_size": 1}},
      "step_scheduler": {"global_batch_size": 64, "local_batch_size": 8}}, 64),
    ({"distributed": {"strategy": "fsdp2", "ep_size": 8, "moe": {"reshard_after_forward": False},
                      "activation_checkpointing": True}}, 16),
    ({"distributed": {"strategy": "megatron_fsdp", "tp_size": 2, "cp_size": 1}}, 8),
    ({"distributed": {"strategy": "ddp", "find_unused_parameters": True},
      "step_scheduler": {"global_batch_size": 32, "local_batch_size": 4}}, 8),
    ({"distributed": {"strategy": "fsdp2", "dp_replicate_size": 2, "sequence_parallel": True, "tp_size": 4}}, 32),
]
INVALID = [
    ({"distributed": {"strategy": "fsdp2", "tp_size": 8, "pp_size": 4, "pipeline": {}}}, 48),
    ({"distributed": {"strategy": "megatron_fsdp", "sequence_parallel": False}}, 8),
    ({"distributed": {"strategy": "fsdp2", "ep_size": 16}}, 8),
    ({"distributed": {"pp_size": 2, "pipeline": {"pp_schedule": "interleaved_1f1b"}}}, 8),
    ({"distributed": {"strategy": "fsdp2", "tp_size": 2, "pp_size": 2}}, 16),
    ({"distributed": {"strategy": "fsdp2", "dp_size": 1}}, 8),
    ({"distributed": {"strategy": "ddp", "tp_size": 2}}, 8),
    ({"distributed": {"strategy": "megatron_fsdp", "pp_size": 2, "pipeline": {}}}, 16),
    ({"distributed": {"strategy": "fsdp2", "tp_size": 4},
      "step_scheduler": {"global_batch_size": 30, "local_batch_size": 2}}, 16),
    ({"distributed": {"strategy": "fsdp2", "pp_size": 4, "pipeline": {"pp_microbatch_size": 2}},
      "step_scheduler": {"global_batch_size": 32, "local_batch_size": 4}}, 16),
    ({"distributed": {"strategy": "fsdp2", "dp_replicate_size": 3}}, 16),
    ({"distributed": {"strategy": "fsdp2", "tensor_parallel_size": 2}}, 8),
]
MIX = VALID + INVALID


def _yaml(cases):
    import yaml

    return [(yaml.safe_dump(c, sort_keys=False), w) for c, w in cases]


def rate(cases, seconds: float, read_fix: bool = False, locate: bool = False, argv: list[str] | None = None,
         parse_each: bool = False, **kw) -> tuple[float, float]:
    """(validations per wall-clock second, per CPU second of this process)."""
    parsed = parse_overrides(argv)[0] if argv is not None else None
    n, start, cpu = 0, time.perf_counter(), time.process_time()
    deadline = start + seconds
    while True:
        for text, world in cases:
            cfg = text
            if argv is not None:
                # as `meshwise validate FILE --a.b x` does: the text read, the overrides set on its values
                data = load_yaml(text) if isinstance(text, str) else text
                cfg = apply_overrides(data, parse_overrides(argv)[0] if parse_each else parsed)
            report = validate(cfg, world_size=world, **kw)
            if read_fix:
                report.suggested_fix  # noqa: B018 - the fix is searched on first read
            if locate:
                locate_report(report, text, overrides=parsed or ())
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
    bad = [c for c, w in VALID if not validate(c, world_size=w, suggest_fix=False).ok]
    bad += [c for c, w in INVALID if validate(c, world_size=w, suggest_fix=False).ok]
    if bad:
        raise SystemExit(f"the mix is mislabelled: {bad}")
    workloads = [
        ("mix, validate() defaults (fix on)", MIX, {}, TARGET_DEFAULT),
        ("mix, bare verdict (no fix)", MIX, {"suggest_fix": False}, TARGET_VERDICT),
        ("valid only", VALID, {}, None),
        ("mix, defaults + read suggested_fix", MIX, {"read_fix": True}, None),
        ("invalid only, fix on", INVALID, {}, None),
        ("invalid only, no fix", INVALID, {"suggest_fix": False}, None),
        ("mix as YAML text, defaults", _yaml(MIX), {}, None),
        ("mix as YAML text + line mapping", _yaml(MIX), {"locate": True}, None),
        # like the dict rows, which leave out reading the YAML text: the arguments are read once per call
        ("mix + 3 overrides applied, defaults", MIX, {"argv": OVERRIDES}, TARGET_DEFAULT),
        ("mix + 3 overrides read + applied", MIX, {"argv": OVERRIDES, "parse_each": True}, None),
        # the whole of `meshwise validate FILE <overrides>` after reading the file: YAML text loaded,
        # overrides applied, validated, every finding placed at its line or override
        ("YAML text + 3 overrides + line mapping", _yaml(MIX), {"argv": OVERRIDES, "locate": True}, TARGET_DEFAULT),
    ]
    rate(MIX, 0.3)  # warm caches
    print(f"mix: {len(VALID)} valid + {len(INVALID)} invalid recipes ({len(INVALID) / len(MIX):.0%} invalid), dicts unless noted")
    print(f"{'workload':36s} {'cpu med/s':>10s} {'wall med/s':>11s} {'wall min/s':>11s} {'target':>8s} {'ratio':>7s}")
    for name, cases, kw, target in workloads:
        runs = [rate(cases, args.seconds, **kw) for _ in range(args.repeats)]
        wall = [r[0] for r in runs]
        cpu = statistics.median(r[1] for r in runs)
        tgt = f"{target:8d}" if target else f"{'':8s}"
        ratio = f"{cpu / target:6.2f}x" if target else ""
        print(f"{name:36s} {cpu:10.0f} {statistics.median(wall):11.0f} {min(wall):11.0f} {tgt} {ratio:>7s}")
    print(f"load average during the run: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()})")


if __name__ == "__main__":
    main()
