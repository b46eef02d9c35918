"""The world size from the launch context, with where it came from (en + zh).

- the environment: `WORLD_SIZE`, else `SLURM_NNODES` x `SLURM_GPUS_PER_NODE` (what slurm.sub exports);
- the recipe's launcher sections (cli/app.py sends the job there, ignoring --nproc-per-node):
  `skypilot:` num_nodes (default 1) x `gpus_per_node`, else the count in `accelerators` ("A100:8"; a
  value without ":N" is 1 GPU: skypilot/launcher.py _parse_gpus_per_node); `nemo_run:` when it sets
  both `nodes` and the processes per node (`ntasks_per_node`, `gpus_per_node` or `devices`);
- `ci=True`: the recipe's own `ci:` section as upstream's CI runs it (ci.py).
"""
from __future__ import annotations

from typing import Mapping

from assistant.launch import ci as ci_section
from assistant.launch.counts import count, gpus_in, make
from assistant.launch.types import WorldSize


def world_from_env(env: Mapping[str, str]) -> WorldSize | None:
    if env.get("WORLD_SIZE", "").strip():
        w = count(env["WORLD_SIZE"], "WORLD_SIZE", "WORLD_SIZE")
        return make(None, None, f"WORLD_SIZE={w} in the environment", f"环境变量 WORLD_SIZE={w}", world_size=w)
    nodes, gpus = env.get("SLURM_NNODES", "").strip(), env.get("SLURM_GPUS_PER_NODE", "").strip()
    if nodes and gpus:
        n = count(nodes, "SLURM_NNODES", "SLURM_NNODES")
        g = count(gpus_in(gpus), "SLURM_GPUS_PER_NODE", "SLURM_GPUS_PER_NODE")
        return make(n, g, f"SLURM_NNODES={n} x SLURM_GPUS_PER_NODE={gpus} in the environment",
                    f"环境变量 SLURM_NNODES={n} x SLURM_GPUS_PER_NODE={gpus}")
    return None


def launcher_section(recipe: Mapping) -> str | None:
    """The launcher section cli/app.py sends the job to ("skypilot" first, then "nemo_run"), if any."""
    for name in ("skypilot", "nemo_run"):
        if recipe.get(name):  # app.py: `if skypilot_config := config.pop("skypilot", None)`
            return name
    return None


def _skypilot(sec: Mapping) -> WorldSize:
    nodes = count(sec.get("num_nodes", 1), "skypilot.num_nodes", "skypilot.num_nodes")
    if sec.get("gpus_per_node"):
        gpn = count(sec["gpus_per_node"], "skypilot.gpus_per_node", "skypilot.gpus_per_node")
        said = f"gpus_per_node {gpn}"
    else:
        acc = str(sec.get("accelerators", "T4:1"))
        parts = acc.split(":")
        gpn = int(parts[1]) if len(parts) == 2 and parts[1].strip().lstrip("+-").isdigit() else 1
        gpn = count(gpn, "skypilot.accelerators", "skypilot.accelerators")
        said = f"accelerators {acc}" + ("" if len(parts) == 2 else " (no :N, so 1 GPU)")
    return make(nodes, gpn, f"the recipe's skypilot: section (num_nodes {nodes} x {said})",
                f"recipe 的 skypilot: 段（num_nodes {nodes} x {said}）")


def _nemo_run(sec: Mapping) -> WorldSize | None:
    per = next((k for k in ("ntasks_per_node", "gpus_per_node", "devices") if sec.get(k)), None)
    if "nodes" not in sec or per is None:
        return None  # the executor in executors.py decides; not visible in the recipe
    nodes = count(sec["nodes"], "nemo_run.nodes", "nemo_run.nodes")
    gpn = count(sec[per], f"nemo_run.{per}", f"nemo_run.{per}")
    return make(nodes, gpn, f"the recipe's nemo_run: section (nodes {nodes} x {per} {gpn})",
                f"recipe 的 nemo_run: 段（nodes {nodes} x {per} {gpn}）")


def world_from_recipe(recipe: Mapping, *, ci: bool) -> WorldSize | None:
    """The world the recipe itself asks for: its `ci:` section when `ci`, else its launcher section."""
    if not isinstance(recipe, Mapping):
        return None
    if ci:
        return ci_section.ci_world(recipe)
    name = launcher_section(recipe)
    sec = recipe.get(name) if name else None
    if not isinstance(sec, Mapping):
        return None
    return _skypilot(sec) if name == "skypilot" else _nemo_run(sec)
