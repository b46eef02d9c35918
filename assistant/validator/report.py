"""The validator's result types. Pure data: other packages read these, only the validator builds them."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    code: str  # stable, e.g. "MW-E-EP-DIVIDES"; never renamed once shipped
    severity: Severity
    message: str  # English, carries its arithmetic
    message_zh: str  # Chinese, same facts, identifiers kept in English
    path: str  # dotted path of the offending key, e.g. "distributed.ep_size"
    upstream: str  # upstream file (and symbol) this rule mirrors, or "meshwise" for our own advice


@dataclass(frozen=True)
class Derived:
    strategy: str
    world_size: int
    tp_size: int
    pp_size: int
    cp_size: int
    ep_size: int
    dp_size: int
    dp_replicate_size: int
    dp_shard_size: int
    ep_shard_size: int | None  # None when ep_size == 1 (no moe_mesh)
    mesh_dim_names: tuple[str, ...]  # fsdp2: ("pp","dp_replicate","dp_shard","cp","tp")
    mesh_shape: tuple[int, ...]
    moe_mesh_shape: tuple[int, int] | None  # (ep_shard, ep) per pipeline stage
    grad_acc_steps: int | None  # when a step_scheduler section is present and valid


@dataclass(frozen=True)
class MemoryEstimate:
    gpu: str | None
    capacity_gib: float | None
    params_gib: float
    grads_gib: float
    optimizer_gib: float
    activations_gib: float
    total_gib: float
    assumptions: tuple[str, ...]  # English
    assumptions_zh: tuple[str, ...] = ()  # the same lines in Chinese

    def assumptions_in(self, lang: str) -> tuple[str, ...]:
        return self.assumptions_zh if lang == "zh" and self.assumptions_zh else self.assumptions


@dataclass(frozen=True)
class ValidationReport:
    ok: bool
    errors: tuple[Finding, ...] = ()
    warnings: tuple[Finding, ...] = ()
    derived: Derived | None = None
    memory: MemoryEstimate | None = None
    suggested_fix: str | None = None  # YAML of the nearest valid config, itself re-validated
    world_size: int | None = None
    gpus_per_node: int | None = None

    @property
    def codes(self) -> list[str]:
        return [f.code for f in (*self.errors, *self.warnings)]

    def to_dict(self) -> dict:
        return asdict(self)


class UnusableInput(ValueError):
    """The input is not a recipe at all: unparseable YAML, over a size cap, or a bad world size.

    A config that parses but is wrong is never this: it gets a ValidationReport with errors.
    """

    def __init__(self, message: str, message_zh: str | None = None):
        super().__init__(message)
        self.message = message
        self.message_zh = message_zh or message
