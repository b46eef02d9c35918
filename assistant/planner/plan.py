"""The planner's result: a recommendation that carries its arithmetic and its validation."""
from __future__ import annotations

from dataclasses import dataclass, field

from assistant.validator.report import ValidationReport


@dataclass(frozen=True)
class Step:
    """One line of sizing arithmetic, in both languages, e.g. `dp_size = 64 / (8*4*1) = 2`."""
    en: str
    zh: str


@dataclass(frozen=True)
class Plan:
    strategy: str  # fsdp2 | megatron_fsdp | ddp
    distributed: dict  # the minimal `distributed:` mapping
    yaml: str  # YAML text of {"distributed": ...} (plus step_scheduler when relevant)
    report: ValidationReport  # validator's verdict on `yaml`; the planner never returns ok=False unless `feasible` is False
    world_size: int | None
    gpus_per_node: int
    arithmetic: tuple[Step, ...] = ()
    rationale: tuple[Step, ...] = ()  # why this strategy and these sizes
    assumptions: tuple[Step, ...] = ()  # e.g. "world size not given; assumed 8 nodes x 8 GPUs"
    feasible: bool = True  # False when the user's constraints admit no valid config
    infeasible_reason: Step | None = None
    rejected: tuple[Step, ...] = ()  # strategies or features ruled out, and why (e.g. megatron_fsdp has no PP)
