"""A recipe's `ci:` section as upstream's CI runs it (tests/ci_tests/).

World: `ci.nodes` (TEST_NODE_COUNT, default 1) x `ci.nproc_per_node` (CONFIG_NPROC_PER_NODE), else the
cluster's GPUs per node: 4 on GB200 cluster tags, 8 otherwise (utils/generate_ci_tests.py CI_KEY_TO_VAR,
scripts/finetune_launcher.sh). Overrides: scripts/config_resolver.py layers, last wins: the phase
defaults of config_templates/ci_config.yaml, the recipe's `ci.<phase>` mapping (fixture keys skipped),
then the env layer: `ci.local_batch_size` -> LOCAL_BATCH_SIZE -> step_scheduler.local_batch_size and
`ci.ep_size` -> EP_SIZE -> distributed.ep_size, each coerced int -> float -> str.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from assistant.datafile import read_yaml
from assistant.launch.counts import count, make
from assistant.launch.types import Override, WorldSize

_TABLE = read_yaml(Path(__file__).resolve().parent / "ci_layers.yaml")


def _section(recipe: Mapping) -> Mapping | None:
    sec = recipe.get("ci") if isinstance(recipe, Mapping) else None
    return sec if isinstance(sec, Mapping) else None


def ci_world(recipe: Mapping) -> WorldSize | None:
    sec = _section(recipe)
    if sec is None:
        return None
    nodes = count(sec.get("nodes", _TABLE["default_nodes"]), "ci.nodes", "ci.nodes")
    tag = str(sec.get("cluster_tag") or "")
    if sec.get("nproc_per_node") is not None:
        gpn = count(sec["nproc_per_node"], "ci.nproc_per_node", "ci.nproc_per_node")
        why, why_zh = f"ci.nproc_per_node {gpn}", f"ci.nproc_per_node {gpn}"
    else:
        gpn = next((n for t, n in _TABLE["gpus_per_node_by_cluster_tag"].items() if t in tag.lower()),
                   _TABLE["default_gpus_per_node"])
        on = f"cluster_tag {tag}" if tag else "the default CI cluster"
        on_zh = f"cluster_tag {tag}" if tag else "默认 CI 集群"
        why, why_zh = f"{gpn} GPUs per node on {on}", f"{on_zh} 每节点 {gpn} 块 GPU"
    n_said = f"ci.nodes {nodes}" if "nodes" in sec else f"ci.nodes unset (1)"
    return make(nodes, gpn, f"the recipe's ci: section ({n_said} x {why})", f"recipe 的 ci: 段（{n_said} x {why_zh}）")


def _coerce(value: Any) -> Any:
    # config_resolver._coerce: CI passes these through environment variables, so they arrive as text
    text = str(value)
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def ci_overrides(recipe: Mapping, phase: str = "nightly") -> tuple[Override, ...]:
    """The overrides upstream's CI applies to the recipe in `phase`, in the order it applies them."""
    sec = _section(recipe)
    if sec is None:
        return ()
    out: list[tuple[str, Any, str]] = []
    for path, value in (_TABLE["phase_defaults"].get(phase) or {}).items():
        out.append((path, value, f"CI {phase} default {path}={value}"))
    skip = set((_TABLE.get("fixture_keys") or {}).get(phase) or ())
    for path, value in ((sec.get(phase) or {}) if isinstance(sec.get(phase), Mapping) else {}).items():
        if path not in skip:
            out.append((str(path), value, f"ci.{phase}.{path}: {value}"))
    for key, spec in _TABLE["env_layer"].items():
        if key in sec and (spec.get("phases") is None or phase in spec["phases"]):
            out.append((spec["target"], _coerce(sec[key]), f"ci.{key}: {sec[key]} ({spec['var']} -> {spec['target']})"))
    return tuple(Override(path=p, value=v, argument=a, index=n, raw=str(v)) for n, (p, v, a) in enumerate(out))
