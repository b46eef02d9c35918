"""Writes data/ci_sweep.jsonl: every upstream example recipe with a `ci:` section, its CI world and the
ci facts that set it (nodes, nproc_per_node, cluster_tag, ep_size, local_batch_size and the phase's
distributed / step_scheduler / packed_sequence overrides), and upstream's own verdict there: its
start-up code (tests/assistant/validator/upstream_oracle.py, torch + a fake process group) run on the
CI-resolved sections at that world. Facts only: no recipe text is copied.

    MESHWISE_UPSTREAM_SRC=/work/automodel python tests/assistant/launch/make_ci_sweep.py
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from assistant.launch.meshes import reads_fsdp_section  # noqa: E402
from assistant.launch.resolve import resolve  # noqa: E402

UPSTREAM = Path(os.environ.get("MESHWISE_UPSTREAM_SRC", "/work/automodel"))
OUT = Path(__file__).resolve().parent / "data" / "ci_sweep.jsonl"
SECTIONS = ("distributed", "step_scheduler", "packed_sequence")
CI_WORLD_KEYS = ("nodes", "nproc_per_node", "cluster_tag", "ep_size", "local_batch_size", "max_steps")


def _no_imports(v):
    # the oracle's ConfigNode imports `_target_` / `*_fn` values (collate functions in packed_sequence):
    # not part of the layout, and not importable without the model extras
    if isinstance(v, dict):
        return {k: _no_imports(x) for k, x in v.items() if not (isinstance(k, str) and (k == "_target_" or k.endswith("_fn")))}
    if isinstance(v, list):
        return [_no_imports(x) for x in v]
    return v


def ci_facts(ci: dict) -> dict:
    facts = {k: ci[k] for k in CI_WORLD_KEYS if k in ci}
    for phase in ("nightly",):
        sec = ci.get(phase)
        if isinstance(sec, dict):
            kept = {k: v for k, v in sec.items() if str(k).split(".", 1)[0] in SECTIONS}
            if kept:
                facts[phase] = kept
    return facts


def main() -> None:
    rows, cases = [], []
    for path in sorted((UPSTREAM / "examples").rglob("*.yaml")):
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError:
            continue
        if not isinstance(data, dict) or not isinstance(data.get("ci"), dict):
            continue
        rel = str(path.relative_to(UPSTREAM))
        facts = ci_facts(data["ci"])
        sections = {k: data[k] for k in SECTIONS if k in data}
        res = resolve({**sections, "ci": facts}, ci=True)
        row = {"path": rel, "ci": facts, "world": res.world.world_size, "gpus_per_node": res.world.gpus_per_node}
        reads = reads_fsdp_section(data)
        if reads:
            row.update(reads=reads, upstream_ok=None, upstream_error=None)
        else:
            cases.append({"yaml": yaml.safe_dump(_no_imports({k: v for k, v in res.recipe.items() if k in SECTIONS})),
                          "world_size": res.world.world_size, "recipe_checks": True})
        rows.append(row)
    oracle = ROOT / "tests" / "assistant" / "validator" / "upstream_oracle.py"
    order = sorted(range(len(cases)), key=lambda n: cases[n]["world_size"])  # one fake group per world size
    env = {**os.environ, "PYTHONPATH": str(UPSTREAM), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, str(oracle)], env=env, capture_output=True, text=True, timeout=3000,
                          input="".join(json.dumps(cases[n]) + "\n" for n in order))
    verdicts = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(verdicts) == len(cases), proc.stderr[-2000:]
    by_case = dict(zip(order, verdicts))
    k = 0
    for row in rows:
        if "reads" in row:
            continue
        v = by_case[k]
        row.update(upstream_ok=v["ok"], upstream_error=v["error"])
        k += 1
    OUT.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), encoding="utf-8")
    print(f"{len(rows)} recipes with a ci: section; upstream accepts {sum(r['upstream_ok'] is True for r in rows)}, "
          f"rejects {sum(r['upstream_ok'] is False for r in rows)}, reads no distributed: {sum('reads' in r for r in rows)}")


if __name__ == "__main__":
    main()
