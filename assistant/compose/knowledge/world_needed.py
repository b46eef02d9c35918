"""How many GPUs a model needs: the smallest world, in whole nodes, where the planner's validated
layout fits the model in memory ("deepseek v3 671b 多少张卡能训?", "how many GPUs for 70B?").

The memory model's lower bound (every trained parameter's bytes over every GPU's usable memory) skips
the worlds that cannot fit; the planner then judges at most a few worlds, each doubling the last.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from assistant.defaults import ASSUMED_GPU
from assistant.planner.plan import Plan
from assistant.validator.memory import MEMORY_TIGHT_FRACTION, PRECISIONS, fits
from assistant.validator.models import load_gpu, lookup_model

_MAX_TRIES = 4
_MAX_WORLD = 1 << 15


@dataclass(frozen=True)
class WorldNeeded:
    world: int
    nodes: int
    model: str  # the table's name for it
    plan: Plan
    gpu: str
    gpu_assumed: bool


def world_needed(query, gpus_per_node: int) -> WorldNeeded | None:
    """None when the model is not in the table or nothing fits within a few doublings."""
    from assistant.planner.recommend import plan as make_plan

    sit = query.situation
    facts = lookup_model(sit.model) if sit.model else None
    if facts is None:
        return None
    gpu = sit.gpu or ASSUMED_GPU
    try:
        capacity = load_gpu(gpu).memory_gib * (1 << 30) * MEMORY_TIGHT_FRACTION
    except (KeyError, ValueError):
        return None
    p = PRECISIONS["fp32"]  # the recipes load fp32 weights: 16 B per trained parameter
    lower = math.ceil(facts.params_b * 1e9 * (p.weight + p.grad + p.optim) / capacity)
    nodes = 1 << max(0, math.ceil(math.log2(max(1, math.ceil(lower / gpus_per_node)))))
    for _ in range(_MAX_TRIES):
        world = nodes * gpus_per_node
        if world > _MAX_WORLD:
            return None
        plan = make_plan(query, world_size=world, gpus_per_node=gpus_per_node, gpu=gpu)
        memory = plan.report.memory
        if plan.report.ok and memory is not None and fits(memory):
            return WorldNeeded(world, nodes, facts.name, plan, gpu, sit.gpu is None)
        nodes *= 2
    return None
