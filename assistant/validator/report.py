"""The validator's result types. Pure data: other packages read these, only the validator builds them."""
from __future__ import annotations

from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from typing import Callable, Literal


Severity = Literal["error", "warning"]


def quick_init(cls):
    """Give a frozen dataclass an __init__ that fills the instance dict in one step.

    The generated __init__ of a frozen dataclass sets each field through object.__setattr__: about
    0.2 us a field, a quarter of a whole validation for the four result types built per call
    (measured: 2.0 us vs 0.4 us for ten fields). Same signature, defaults, equality, hash and
    immutability (assignment still raises FrozenInstanceError); fields with default_factory are not
    supported."""
    names, params, env = [], [], {}
    for f in fields(cls):
        if not f.init or f.default_factory is not MISSING:
            raise TypeError(f"quick_init: {cls.__name__}.{f.name} needs the generated __init__")
        names.append(f.name)
        if f.default is MISSING:
            params.append(f.name)
        else:
            env[f"default_{f.name}"] = f.default
            params.append(f"{f.name}=default_{f.name}")
    items = ", ".join(f"{n!r}: {n}" for n in names)
    ns: dict = {}
    exec(f"def __init__(self, {', '.join(params)}):\n    self.__dict__.update({{{items}}})\n", env, ns)  # noqa: S102 - our own field names
    init = ns["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init
    return cls


@quick_init
@dataclass(frozen=True)
class Finding:
    code: str  # stable, e.g. "MW-E-EP-DIVIDES"; never renamed once shipped
    severity: Severity
    message: str  # English, carries its arithmetic
    message_zh: str  # Chinese, same facts, identifiers kept in English
    path: str  # dotted path of the offending key, e.g. "distributed.ep_size"
    upstream: str  # upstream file (and symbol) this rule mirrors, or "meshwise" for our own advice

    @classmethod
    def deferred(cls, code: str, severity: Severity, path: str, upstream: str, en: str, zh: str,
                 values: dict) -> Finding:
        """A finding whose two messages are `en` and `zh` filled from `values`, rendered on first read.

        Most callers (the gate, the planner, the fix search) read only codes and paths: filling both
        templates cost 11% of the instructions of a validation on benchmarks/validator_throughput.py's
        mix. The finding is the same value either way (equality, hash, repr, asdict read the fields);
        `values` must hold only immutable scalars, so the text cannot change after the call."""
        f = object.__new__(cls)
        f.__dict__.update({"code": code, "severity": severity, "path": path, "upstream": upstream,
                           "_text": (en, zh, values)})
        return f


class Blank(dict):
    # A template field the caller did not supply renders as empty, never as a KeyError.
    def __missing__(self, key: str) -> str:
        return ""


class _Rendered:
    """A message field of a deferred Finding: its template filled on first read, then kept in the
    instance dict (which a non-data descriptor yields to, so later reads are plain attributes)."""

    __slots__ = ("name", "index")

    def __init__(self, name: str, index: int):
        self.name, self.index = name, index

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        text = obj.__dict__["_text"]
        rendered = text[self.index].format_map(Blank(text[2]))
        obj.__dict__[self.name] = rendered
        return rendered


# set after @dataclass, which would otherwise take a class attribute for the field's default
Finding.message = _Rendered("message", 0)  # type: ignore[assignment]
Finding.message_zh = _Rendered("message_zh", 1)  # type: ignore[assignment]


@quick_init
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
class OtherMesh:
    """A mesh the launch builds beside the one `derived` describes: knowledge distillation's teacher."""
    label: str  # the section behind it: "teacher_distributed" (its own mesh), "teacher_model" (the shared one)
    ranks: tuple[int, int]  # its first and last global rank
    derived: Derived | None
    shared: bool  # built on the student's own mesh (kd_utils.create_kd_distributed_setups, separate_meshes false)


@quick_init
@dataclass(frozen=True)
class ValidationReport:
    ok: bool
    errors: tuple[Finding, ...] = ()
    warnings: tuple[Finding, ...] = ()
    derived: Derived | None = None
    memory: MemoryEstimate | None = None
    # the suggested fix, or what computes it on first read (see suggested_fix)
    fix: str | Callable[[], str | None] | None = field(default=None, repr=False, compare=False)
    world_size: int | None = None
    gpus_per_node: int | None = None
    meshes: tuple[OtherMesh, ...] = ()  # the other meshes the launch builds (assistant/launch/meshes.py)

    @property
    def suggested_fix(self) -> str | None:
        """YAML of the nearest valid config, itself re-validated; None when there is none.

        Searched for on first read, not when the report is made: most callers only want the
        verdict, and the search costs tens of validations."""
        fix = self.fix
        if callable(fix):
            fix = fix()
            object.__setattr__(self, "fix", fix)  # a cache of a pure function of the frozen fields
        return fix

    @property
    def codes(self) -> list[str]:
        return [f.code for f in (*self.errors, *self.warnings)]

    def to_dict(self) -> dict:
        d = asdict(replace(self, fix=self.suggested_fix))
        if not d["meshes"]:
            del d["meshes"]  # only a launch with another mesh (KD's teacher) has the key
        return {("suggested_fix" if k == "fix" else k): v for k, v in d.items()}


class UnusableInput(ValueError):
    """The input is not a recipe at all: unparseable YAML, over a size cap, or a bad world size.

    A config that parses but is wrong is never this: it gets a ValidationReport with errors.
    """

    def __init__(self, message: str, message_zh: str | None = None):
        super().__init__(message)
        self.message = message
        self.message_zh = message_zh or message
