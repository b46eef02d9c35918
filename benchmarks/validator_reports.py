"""Every field of many validator reports, written as JSON lines, to prove a speed-up changes no verdict.

    .venv/bin/python benchmarks/validator_reports.py --out before.jsonl      # on the old code
    .venv/bin/python benchmarks/validator_reports.py --out after.jsonl --diff before.jsonl

(`--corpus <main checkout>/../shared/upstream/recipes-corpus.jsonl` in a worktree, where assistant.config's
UPSTREAM_DIR, beside the repository, has no corpus.)

The inputs: the upstream recipes corpus (every recipe at its stated world sizes and at a spread of
others, with and without the recipe checks, as dicts and as YAML text), a grid of generated layouts
(strategies, sizes, pipeline and step-scheduler blocks, odd values, misspelled keys), the random
cases of tests/assistant/validator/differential_cases.py with models and GPUs, and the throughput
benchmark's mix under launch overrides. Each line holds the whole report (codes, both messages,
paths, upstream, derived sizes, memory), the suggested fix for every 7th invalid case, and each
finding's line, column and override as `meshwise validate` prints them; an UnusableInput or
LaunchError is recorded with both messages, any other exception as its type (a bug: the validator
is total). `--diff` prints the cases whose line differs and exits 1 when any does.
"""
from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import random
import sys
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from assistant.config import UPSTREAM_DIR  # noqa: E402
from assistant.launch import LaunchError, apply_overrides, parse_overrides  # noqa: E402
from assistant.validator import UnusableInput, validate  # noqa: E402
from assistant.validator.locate import locate_report  # noqa: E402

CORPUS = UPSTREAM_DIR / "recipes-corpus.jsonl"
WORLDS = (1, 2, 4, 6, 8, 12, 16, 32, 48, 64, 128)
FIX_EVERY = 7  # the fix search costs tens of validations: read it on a sample of invalid cases
ODD = (None, 0, -1, True, False, 1.0, 2.5, float("nan"), float("inf"), "2", "two", "none", [2], {"a": 1})
OVERRIDE_SETS = (
    ["--checkpoint.enabled", "false", "--wandb.project=bench", "--model.pretrained_model_name_or_path", "x/y"],
    ["--distributed.tp_size", "2", "--distributed.pp_size=2"],
    ["--distributed.ep_size", "'8'", "--step_scheduler.local_batch_size", "3", "--flag"],
    ["--distributed", "null", "-x", "--config", "a.yaml"],
    ["--distributed.strategy=megatron_fsdp", "--distributed.sequence_parallel", "true"],
    ["--distributed.pipeline.pp_schedule", "gpipe", "--distributed.pp_size", "4", "--distributed..tp_size", "2"],
)


def _corpus(corpus: Path) -> list[dict]:
    rows = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = []
    for row in rows:
        recipe = {"distributed": row["distributed"]}
        for key in ("step_scheduler", "packed_sequence"):
            if row.get(key) is not None:
                recipe[key] = row[key]
        out.append((row["path"], recipe, sorted({int(w) for w in row["oracle"]} | set(WORLDS))))
    return out


def _grid():
    """Generated layouts: every strategy spelling against sizes that pass and sizes that do not."""
    rng = random.Random(19)
    strategies = ("fsdp2", "megatron_fsdp", "ddp", "FSDP2", "mfsdp", "fsdp")
    for strategy, tp, pp, cp, ep, dp, dpr, world in itertools.product(
            strategies, (1, 2, 4, 8), (1, 2, 4), (1, 2), (1, 2, 8), (None, 1, 8), (1, 2, 3), (8, 16, 48, 64)):
        if rng.random() > 0.25:
            continue
        dist: dict = {"strategy": strategy, "tp_size": tp, "pp_size": pp, "cp_size": cp, "ep_size": ep,
                      "dp_replicate_size": dpr}
        if dp is not None:
            dist["dp_size"] = dp
        if pp > 1 and rng.random() < 0.8:
            dist["pipeline"] = rng.choice([{}, {"pp_schedule": "interleaved1f1b", "pp_microbatch_size": 1},
                                           {"pp_schedule": "1F1B", "pp_microbatch_size": 2},
                                           {"pp_schedule": "interleaved_1f1b"}, {"pp_schedule": None},
                                           {"pp_microbatch": 2}])
        if ep > 1 and rng.random() < 0.5:
            dist["moe"] = rng.choice([{"reshard_after_forward": False}, {"bogus": 1}, "x"])
        extra = rng.random()
        if extra < 0.1:
            dist["sequence_parallel"] = rng.choice([True, False])
        elif extra < 0.15:
            dist["tensor_parallel_size"] = 2
        elif extra < 0.2:
            dist["activation_checkpointing"] = rng.choice([True, "selective", "maybe"])
        elif extra < 0.25:
            dist["enable_async_tensor_parallel"] = True
        recipe: dict = {"distributed": dist}
        if rng.random() < 0.6:
            recipe["step_scheduler"] = {"global_batch_size": rng.choice([32, 30, 64, 0]),
                                        "local_batch_size": rng.choice([1, 2, 4, 8])}
        if rng.random() < 0.1:
            recipe["packed_sequence"] = {"packed_sequence_size": rng.choice([4096, 4097])}
        yield f"grid-{strategy}-{tp}-{pp}-{cp}-{ep}-{dp}-{dpr}", recipe, world
    keys = ("tp_size", "pp_size", "cp_size", "ep_size", "dp_size", "dp_replicate_size", "strategy",
            "activation_checkpointing", "pipeline", "moe", "sequence_parallel")
    for key, value in itertools.product(keys, ODD):
        yield f"odd-{key}-{value!r}", {"distributed": {"strategy": "fsdp2", "tp_size": 2, key: value}}, 8
    for value in ODD + ("junk", 3, [{"a": 1}]):
        yield f"odd-dist-{value!r}", {"distributed": value}, 8
        yield f"odd-bare-{value!r}", value, 8
        yield f"odd-ss-{value!r}", {"distributed": {"tp_size": 2}, "step_scheduler": value}, 8
    for world in (0, -8, "8", " 16 ", True, 2.0, None, 10**9):  # world sizes validate() refuses or reads
        yield f"odd-world-{world!r}", {"distributed": {"tp_size": 2}}, world
    for text in ("a: [", "distributed: {tp_size: 2}\n---\nb: 1\n", b"\xff\xfe", "x" * (300 * 1024),
                 "a: &a [*a]", "distributed:\n  tp_size: ${TP,2}\n  pp_size: $PP\n"):
        yield f"odd-text-{str(text)[:20]!r}", text, 8


def _differential() -> list[dict]:
    spec = importlib.util.spec_from_file_location(
        "report_cases", ROOT / "tests" / "assistant" / "validator" / "report_cases.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.cases(n=900, corpus=False)


def _finding(f) -> list:
    return [f.code, f.severity, f.path, f.message, f.message_zh, f.upstream]


def _record(case: str, call, text=None, overrides=(), fix: bool = False) -> dict:
    try:
        r = call()
    except (UnusableInput, LaunchError) as exc:
        return {"case": case, "unusable": [exc.message, exc.message_zh]}
    except Exception as exc:  # noqa: BLE001 - the validator is total: record the bug, keep going
        return {"case": case, "bug": type(exc).__name__}
    out = {"case": case, "ok": r.ok, "errors": [_finding(f) for f in r.errors],
           "warnings": [_finding(f) for f in r.warnings],
           "derived": asdict(r.derived) if r.derived is not None else None,
           "memory": asdict(r.memory) if r.memory is not None else None,
           "world": [r.world_size, r.gpus_per_node]}
    if fix:
        out["fix"] = r.suggested_fix
    if out["errors"] or out["warnings"]:
        out["at"] = [[loc.line, loc.col, loc.argument] for _, loc in locate_report(r, text, overrides=overrides)]
    return out


def reports(corpus: Path):
    n = 0

    def fix_now(ok_hint: bool = False) -> bool:
        nonlocal n
        n += 1
        return n % FIX_EVERY == 0 and not ok_hint

    for path, recipe, worlds in _corpus(corpus):
        text = yaml.safe_dump(recipe, sort_keys=False)
        for w in worlds:
            yield _record(f"corpus {path} @{w}", lambda: validate(recipe, world_size=w), text, fix=fix_now())
            yield _record(f"corpus {path} @{w} dist", lambda: validate(recipe, world_size=w, recipe_checks=False,
                                                                      suggest_fix=False))
        yield _record(f"corpus {path} text", lambda: validate(text, world_size=worlds[0]), text)
    for case, recipe, w in _grid():
        text = yaml.safe_dump(recipe, sort_keys=False) if isinstance(recipe, dict) else None
        yield _record(case, lambda: validate(recipe, world_size=w, gpus_per_node=8), text, fix=fix_now())
        if text is not None:
            yield _record(case + " text", lambda: validate(text, world_size=w, gpus_per_node=4), text)
    for i, kw in enumerate(_differential()):
        text = kw["recipe"] if isinstance(kw["recipe"], str) else None
        yield _record(f"diff {i}", lambda: validate(**kw), text, fix=fix_now())
    for (path, recipe, worlds), argv in zip(_corpus(corpus)[::5], itertools.cycle(OVERRIDE_SETS)):
        text = yaml.safe_dump(recipe, sort_keys=False)

        def launched():
            overrides = parse_overrides(argv)[0]
            launched.overrides = overrides
            return validate(apply_overrides(recipe, overrides), world_size=worlds[0])

        launched.overrides = ()
        rec = _record(f"override {path} {argv}", launched, text, fix=fix_now())
        if "at" in rec:  # again, now with the overrides each finding may name
            rec["at"] = [[loc.line, loc.col, loc.argument] for _, loc in
                         locate_report(launched(), text, overrides=launched.overrides)]
        yield rec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="JSON lines, one report a line")
    ap.add_argument("--diff", help="an earlier --out file: print the cases that differ")
    ap.add_argument("--corpus", default=str(CORPUS), help=f"the recipes corpus (default {CORPUS})")
    args = ap.parse_args()
    lines = [json.dumps(r, sort_keys=True, ensure_ascii=False, default=repr) for r in reports(Path(args.corpus))]
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    bugs = sum('"bug":' in line for line in lines)
    print(f"{len(lines)} reports -> {args.out} ({bugs} raised something other than UnusableInput)")
    if args.diff:
        before = Path(args.diff).read_text(encoding="utf-8").splitlines()
        diffs = [(a, b) for a, b in itertools.zip_longest(before, lines) if a != b]
        for a, b in diffs[:10]:
            print(f"- {a}\n+ {b}")
        print(f"{len(diffs)} differences")
        if diffs:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
