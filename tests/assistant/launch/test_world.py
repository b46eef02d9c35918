"""World size from the environment and from the recipe's launcher sections, with its source."""
from __future__ import annotations

import pytest

from assistant.launch import LaunchError, world_from_env, world_from_recipe


def test_env_world_size_first_then_slurm():
    w = world_from_env({"WORLD_SIZE": "16", "SLURM_NNODES": "4", "SLURM_GPUS_PER_NODE": "8"})
    assert w.world_size == 16 and "WORLD_SIZE=16" in w.source and "WORLD_SIZE" in w.source_zh
    w = world_from_env({"SLURM_NNODES": "4", "SLURM_GPUS_PER_NODE": "h100:8"})
    assert (w.world_size, w.nodes, w.gpus_per_node) == (32, 4, 8)
    assert world_from_env({"SLURM_NNODES": "4"}) is None and world_from_env({}) is None
    with pytest.raises(LaunchError):
        world_from_env({"WORLD_SIZE": "many"})


@pytest.mark.parametrize("sky, world", [
    ({"cloud": "gcp", "accelerators": "A100:8", "num_nodes": 2}, 16),
    ({"cloud": "gcp", "accelerators": "A100"}, 1),  # no :N is one GPU (_parse_gpus_per_node)
    ({"cloud": "gcp", "accelerators": "A100:8", "gpus_per_node": 4}, 4),  # gpus_per_node is read first
    ({"cloud": "gcp"}, 1),  # the default T4:1
])
def test_skypilot(sky, world):
    w = world_from_recipe({"skypilot": sky}, ci=False)
    assert w.world_size == world and "skypilot" in w.source


def test_nemo_run_needs_both():
    assert world_from_recipe({"nemo_run": {"executor": "x", "nodes": 2, "ntasks_per_node": 8}}, ci=False).world_size == 16
    assert world_from_recipe({"nemo_run": {"executor": "x", "ntasks_per_node": 8}}, ci=False) is None
    assert world_from_recipe({"distributed": {}}, ci=False) is None


@pytest.mark.parametrize("ci, world, gpn", [
    ({"nodes": 16, "cluster_tag": "gb200"}, 64, 4),
    ({"nodes": 2, "cluster_tag": "h100"}, 16, 8),
    ({"recipe_owner": "x"}, 8, 8),  # nodes omitted -> 1
    ({"nodes": 1, "nproc_per_node": 2, "cluster_tag": "gb200"}, 2, 2),  # CONFIG_NPROC_PER_NODE wins
])
def test_ci_world(ci, world, gpn):
    w = world_from_recipe({"ci": ci}, ci=True)
    assert (w.world_size, w.gpus_per_node) == (world, gpn) and "ci:" in w.source
    assert world_from_recipe({"ci": ci}, ci=False) is None
