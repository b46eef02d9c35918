"""Differential test against NeMo AutoModel's real start-up code (slow; needs the upstream checkout
and torch). Random configs from differential_cases.py go through the upstream loader,
parse_distributed_section, DistributedSetup.build and mesh creation on a fake process group
(upstream_oracle.py, in a subprocess), and through our validator; verdicts and meshes must agree."""
from __future__ import annotations

import importlib.util
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.validator import validate
from assistant.validator.upstream_errors import match_upstream_error

UPSTREAM_SRC = Path(os.environ.get("MESHWISE_UPSTREAM_SRC", "/work/upstream-src"))
HERE = Path(__file__).resolve().parent

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (UPSTREAM_SRC / "nemo_automodel").is_dir(), reason="upstream checkout not present"),
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed"),
]


def _helper(name: str):
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _oracle(cases: list[dict]) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": str(UPSTREAM_SRC), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, str(HERE / "upstream_oracle.py")], env=env, capture_output=True, text=True,
                          input="".join(json.dumps(c) + "\n" for c in cases), timeout=1200)
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(out) == len(cases), proc.stderr[-2000:]
    return out


@pytest.mark.parametrize("recipe_checks", [False, True], ids=["distributed", "recipe"])
def test_agrees_with_upstream_on_random_configs(recipe_checks):
    gen = _helper("differential_cases")
    rng = random.Random(7 if recipe_checks else 11)
    make = gen.random_recipe_case if recipe_checks else gen.random_case
    cases = sorted((make(rng) for _ in range(1500)), key=lambda c: c[1])
    verdicts = _oracle([{"yaml": t, "world_size": w, "recipe_checks": recipe_checks} for t, w in cases])
    disagree, accepted, worded, misread = [], 0, 0, []
    for (text, world), o in zip(cases, verdicts):
        r = validate(text, world_size=world, recipe_checks=None if recipe_checks else False, suggest_fix=False)
        same = r.ok == o["ok"]
        if same and not r.ok and o["error"]:
            # the message upstream raised maps back to the rule we report first (when a pattern knows it)
            codes = [m.code for m in match_upstream_error(o["error"])]
            worded += bool(codes)
            if codes and r.errors[0].code not in codes:
                misread.append((o["error"], r.errors[0].code, codes))
        if same and o["ok"]:
            accepted += 1
            d = r.derived
            same = (list(d.mesh_shape) or None) == o["mesh"] and (list(d.moe_mesh_shape) if d.moe_mesh_shape else None) == o["moe_mesh"]
            if recipe_checks:
                same = same and d.grad_acc_steps == o.get("grad_acc")
        if not same:
            disagree.append((world, text, o, r.codes))
    assert not disagree, disagree[:5]
    assert accepted > 100  # the generator must exercise the accept side too
    assert not misread, misread[:5]
    assert worded > 200  # most rejections carry an upstream message that a rule pattern reads
