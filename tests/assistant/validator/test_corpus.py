"""The upstream example corpus: every recipe, at every world size the corpus states, must get the
same verdict as NeMo AutoModel's own start-up code (the corpus' `oracle` and `oracle_recipe`), with
the same dp_size, mesh shapes and gradient-accumulation steps."""
from __future__ import annotations

import json

import pytest

from assistant.config import UPSTREAM_DIR
from assistant.validator import validate

CORPUS = UPSTREAM_DIR / "recipes-corpus.jsonl"
pytestmark = pytest.mark.skipif(not CORPUS.is_file(), reason="upstream corpus not present")


def _rows():
    if not CORPUS.is_file():
        return []
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def _recipe(row: dict) -> dict:
    recipe = {"distributed": row["distributed"]}
    for key in ("step_scheduler", "packed_sequence"):
        if row.get(key) is not None:
            recipe[key] = row[key]
    return recipe


def _cases():
    return [(row, ws) for row in _rows() for ws in row["oracle"]]


def _mesh_agrees(d, o) -> bool:
    if o["mesh"] is None:
        mesh_ok = d.mesh_shape == ()
    else:
        mesh_ok = list(d.mesh_shape) == o["mesh"]["shape"] and list(d.mesh_dim_names) == o["mesh"]["dim_names"]
    moe = o["moe_mesh"]
    moe_ok = d.moe_mesh_shape is None if moe is None else list(d.moe_mesh_shape) == moe["shape"]
    return mesh_ok and moe_ok and d.dp_size == o["dp_size"] and d.ep_shard_size == o["ep_shard_size"]


def test_distributed_verdicts_agree():
    cases = _cases()
    assert len(cases) >= 460
    disagree = []
    for row, ws in cases:
        o = row["oracle"][ws]
        r = validate(_recipe(row), world_size=int(ws), recipe_checks=False, suggest_fix=False)
        if r.ok != o["ok"] or (r.ok and not _mesh_agrees(r.derived, o)):
            disagree.append((row["path"], ws, o["ok"], r.codes))
    assert not disagree, disagree[:10]


def test_recipe_verdicts_agree():
    disagree = []
    for row, ws in _cases():
        o = row["oracle_recipe"][ws]
        r = validate(_recipe(row), world_size=int(ws), suggest_fix=False)
        if r.ok != o["ok"] or (r.ok and r.derived.grad_acc_steps != o["grad_acc_steps"]):
            disagree.append((row["path"], ws, o, r.codes))
    assert not disagree, disagree[:10]


def test_rejections_get_the_upstream_reason():
    kinds = {"ep_not_dividing_dp_cp_tp": "MW-E-EP-DIVIDES", "distributed_section_not_mapping": "MW-E-DIST-NOT-MAPPING"}
    seen = set()
    for row, ws in _cases():
        o = row["oracle"][ws]
        if not o["ok"]:
            r = validate(_recipe(row), world_size=int(ws), recipe_checks=False, suggest_fix=False)
            assert r.errors[0].code == kinds[o["error_kind"]]
            seen.add(o["error_kind"])
        for failed in row["oracle_recipe"][ws]["failed_checks"]:
            assert failed["error_kind"] == "gbs_not_divisible_by_lbs_dp"
            assert "MW-E-BATCH-DIVISIBLE" in validate(_recipe(row), world_size=int(ws), suggest_fix=False).codes
    assert seen == set(kinds)
