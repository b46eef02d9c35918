"""The rank -> coordinate map and the process groups of a validated layout (assistant/validator/ranks.py)."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from assistant.validator import validate
from assistant.validator.ranks import colour_axes, crosses_node, moe_mesh, rank_mesh

HERE = Path(__file__).resolve().parent

# (strategy, world, sizes) - every layout is first checked valid by the validator itself.
LAYOUTS = [
    ("fsdp2", 16, {"tp": 2, "pp": 2, "ep": 4}),
    ("fsdp2", 32, {"tp": 4, "cp": 2, "dp_replicate": 2}),
    ("fsdp2", 64, {"tp": 8, "pp": 4}),
    ("fsdp2", 24, {"tp": 2, "pp": 3, "ep": 8}),
    ("fsdp2", 48, {"pp": 2, "cp": 3, "dp_replicate": 2, "ep": 6}),
    ("megatron_fsdp", 16, {"tp": 2, "cp": 2}),
]
KEYS = {"tp": "tp_size", "pp": "pp_size", "cp": "cp_size", "ep": "ep_size", "dp_replicate": "dp_replicate_size"}


def derived(strategy: str, world: int, sizes: dict):
    dist = {"strategy": strategy, **{KEYS[k]: v for k, v in sizes.items()}}
    if sizes.get("pp", 1) > 1:
        dist["pipeline"] = {"pp_schedule": "1f1b", "pp_microbatch_size": 1}
    report = validate({"distributed": dist},
                      world_size=world, recipe_checks=False, suggest_fix=False)
    assert report.ok, report.codes
    return report.derived


@pytest.mark.parametrize("strategy,world,sizes", LAYOUTS)
def test_coordinates_are_row_major_over_the_mesh_dims(strategy, world, sizes):
    d = derived(strategy, world, sizes)
    m = rank_mesh(d)
    assert m.dims == d.mesh_dim_names and m.size == world
    for r in range(world):
        assert m.coords(r) == tuple(int(c) for c in np.unravel_index(r, d.mesh_shape))
        assert m.rank(m.coords(r)) == r


@pytest.mark.parametrize("strategy,world,sizes", LAYOUTS)
def test_groups_partition_the_world_and_vary_only_their_own_axes(strategy, world, sizes):
    d = derived(strategy, world, sizes)
    m = rank_mesh(d)
    grid = np.arange(world).reshape(d.mesh_shape)
    for axis in (*m.dims, *(name for name, _ in m.flattened)):
        groups = list(m.groups(axis))
        assert len(groups) == m.group_count(axis)
        assert sorted(r for g in groups for r in g) == list(range(world))
        keep = [i for i, dim in enumerate(m.dims) if dim in m.axes(axis)]
        for g in groups:
            # numpy's view of the same group: fix the other coordinates, read the axes row-major
            idx = tuple(slice(None) if i in keep else c for i, c in enumerate(m.coords(g[0])))
            assert g == tuple(grid[idx].reshape(-1).tolist())
            assert {m.group_index(axis, r) for r in g} == {groups.index(g)}


def test_known_groups_of_a_tp_pp_ep_layout():
    d = derived("fsdp2", 16, {"tp": 2, "pp": 2, "ep": 4})
    m, moe = rank_mesh(d), moe_mesh(d)
    assert m.coords(13) == (1, 0, 2, 0, 1)
    assert m.group("tp", 5) == (4, 5)
    assert m.group("pp", 1) == (1, 9)
    assert m.group("dp_shard", 0) == (0, 2, 4, 6)
    assert m.group("dp", 9) == (9, 11, 13, 15)
    assert moe.shape == (2, 2, 4)
    assert moe.group("ep", 9) == (8, 9, 10, 11)
    assert moe.group("ep_shard", 9) == (9, 13)
    assert moe.coords(13) == (1, 1, 1)


def test_ddp_is_one_dp_axis_and_megatron_has_no_pp():
    d = validate({"distributed": {"strategy": "ddp"}}, world_size=8, recipe_checks=False).derived
    m = rank_mesh(d)
    assert m.dims == ("dp",) and m.group("dp", 3) == tuple(range(8))
    assert moe_mesh(d) is None
    assert colour_axes(derived("megatron_fsdp", 16, {"tp": 2, "cp": 2})) == ("tp", "cp", "dp")


def test_colour_axes_put_real_axes_first_and_tp_crossing_is_seen():
    d = derived("fsdp2", 64, {"tp": 8, "pp": 4})
    assert colour_axes(d)[:3] == ("tp", "pp", "dp_shard")
    m = rank_mesh(d)
    assert not any(crosses_node(g, 8) for g in m.groups("tp"))
    assert all(crosses_node(g, 4) for g in m.groups("tp"))


def test_a_rank_outside_the_mesh_is_an_error():
    m = rank_mesh(derived("fsdp2", 16, {"tp": 2, "pp": 2, "ep": 4}))
    with pytest.raises(IndexError):
        m.coords(16)
    with pytest.raises(KeyError):
        m.group("ep", 0)


UPSTREAM_SRC = Path(os.environ.get("MESHWISE_UPSTREAM_SRC", ""))


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("MESHWISE_UPSTREAM_SRC") or not (UPSTREAM_SRC / "nemo_automodel").is_dir(),
                    reason="MESHWISE_UPSTREAM_SRC not set")
@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed")
def test_every_rank_agrees_with_the_meshes_upstream_builds_on_that_rank():
    cases = [{"strategy": s, "world_size": w, **sizes} for s, w, sizes in LAYOUTS]
    env = {**os.environ, "PYTHONPATH": str(UPSTREAM_SRC), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, str(HERE / "upstream_ranks_oracle.py")], env=env, capture_output=True,
                          text=True, input="".join(json.dumps(c) + "\n" for c in cases), timeout=600)
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(results) == len(cases), proc.stderr[-2000:]
    for (strategy, world, sizes), res in zip(LAYOUTS, results):
        d = derived(strategy, world, sizes)
        m, moe = rank_mesh(d), moe_mesh(d)
        for r, up in enumerate(res["ranks"]):
            assert list(m.coords(r)) == up["coord"], (strategy, world, sizes, r)
            for axis, members in up["groups"].items():
                assert list(m.group(axis, r)) == members, (strategy, world, sizes, r, axis)
            if up["moe_coord"] is None:
                assert moe is None
                continue
            assert list(moe.coords(r)[1:]) == up["moe_coord"], (sizes, r)
            for axis, members in up["moe_groups"].items():
                assert list(moe.group(axis, r)) == members, (sizes, r, axis)
