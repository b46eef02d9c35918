"""What a recipe asks of each GPU, read leniently: sequence length, micro-batch, checkpointing, schedule.

The model checks and the memory estimate both need these. Values arrive already coerced by the
validator (strings like "2" became 2), but anything odd is treated as "not given" here: the rule
checks own the errors for bad values, this module only reads what can be used.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

# Used when a recipe states no sequence length at all; said so in the estimate's assumptions.
DEFAULT_SEQ_LEN = 4096
# Counts above this are read as this: far beyond any real run, small enough for float arithmetic.
_MAX_COUNT = 1 << 40
# torch.distributed.pipelining: the schedules that subclass PipelineScheduleSingle (one stage per
# rank); every other accepted schedule is multi-stage (get_schedule_class in schedules.py).
SINGLE_STAGE_SCHEDULES = frozenset({"1f1b", "gpipe", "pipelineschedulesingle"})
# Schedules that run all micro-batches' forwards before the backwards (activations of every
# micro-batch live at once on the first stage).
ALL_FORWARD_FIRST_SCHEDULES = frozenset({"gpipe", "loopedbfs"})
# Multi-stage schedules that place stages in a V (rank r holds stages r and 2*pp-1-r).
V_SCHEDULES = frozenset({"zbvzerobubble", "dualpipev"})

_AC_ON = {"full", "on", "yes", "enabled", "enable", "true"}
_AC_OFF = {"off", "no", "disabled", "disable", "none", "false", ""}
_DECODER_SCOPES = {"all", "language", "default", "auto"}
_SEQ_KEYS = ("seq_len", "seq_length", "max_length", "max_seq_length", "max_seq_len")

ACMode = Literal["none", "full", "selective"]


@dataclass(frozen=True)
class Workload:
    seq_len: int
    seq_source: str  # the recipe key the length came from, or "default"
    packed: bool  # packed_sequence_size > 0
    micro_batch: int  # samples per forward on one GPU (pp_microbatch_size under PP)
    micro_batch_source: str
    n_microbatches: int  # per step and pipeline (local_batch_size // pp_microbatch_size); 1 without PP
    local_batch_size: int | None
    ac: ACMode  # activation checkpointing of the decoder blocks
    ac_decoder: bool  # the AC scope covers the decoder blocks (all/language)
    ac_raw: Any
    sequence_parallel: bool
    pp_schedule: str  # lower-case
    layers_per_stage: int | None
    round_virtual_stages: str | None
    ignore_router_for_ac: bool | None  # None when the moe block does not say
    tp_plan_given: bool
    weights_dtype: str | None  # model.torch_dtype normalized to "fp32" / "bf16"; None when not stated
    peft: bool  # a peft section: base weights frozen


def as_int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str) and v.strip().lstrip("+").isdigit():
        digits = v.strip().lstrip("+")
        return int(digits) if len(digits) <= 18 else _MAX_COUNT
    return None


def as_bool(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        low = v.strip().lower()
        if low in {"true", "yes", "on", "1"}:
            return True
        if low in {"false", "no", "off", "0"}:
            return False
    if isinstance(v, int) and v in (0, 1):
        return bool(v)
    return None


def section(mapping: Any, key: str) -> dict:
    value = mapping.get(key) if isinstance(mapping, dict) else None
    return value if isinstance(value, dict) else {}


def ac_mode(value: Any) -> ACMode:
    if value is True:
        return "full"
    if isinstance(value, str):
        low = value.strip().lower()
        if low == "selective":
            return "selective"
        if low in _AC_ON:
            return "full"
    return "none"


def ac_covers_decoder(scope: Any) -> bool:
    if scope is None:
        return True
    parts: list[str] = []
    items = [scope] if isinstance(scope, str) else list(scope) if isinstance(scope, (list, tuple)) else []
    for item in items:
        if isinstance(item, str):
            parts += [p.strip() for p in item.lower().replace("-", "_").replace("+", ",").split(",")]
    parts = [p for p in parts if p]
    return not parts or any(p in _DECODER_SCOPES for p in parts)


def _dtype(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    low = value.strip().lower().removeprefix("torch.")
    if low in {"bf16", "bfloat16"}:
        return "bf16"
    if low in {"fp32", "float32", "float"}:
        return "fp32"
    return None


def positive(v: Any) -> int | None:
    n = as_int(v)
    return min(n, _MAX_COUNT) if n is not None and n > 0 else None


def read_workload(dist: dict, recipe: dict | None, *, pp_size: int = 1, seq_len: int | None = None) -> Workload:
    """Read the workload from a distributed mapping and (optionally) the whole recipe."""
    dist = dist if isinstance(dist, dict) else {}
    recipe = recipe if isinstance(recipe, dict) else {}
    pipeline = section(dist, "pipeline")
    moe = section(dist, "moe")
    packed_size = positive(section(recipe, "packed_sequence").get("packed_sequence_size"))
    dataset = section(recipe, "dataset")

    if seq_len is not None and seq_len > 0:
        seq, seq_src = seq_len, "argument"
    elif packed_size:
        seq, seq_src = packed_size, "packed_sequence.packed_sequence_size"
    elif positive(pipeline.get("pp_seq_len")) and pp_size > 1:
        seq, seq_src = positive(pipeline.get("pp_seq_len")), "distributed.pipeline.pp_seq_len"
    else:
        seq, seq_src = DEFAULT_SEQ_LEN, "default"
        for k in _SEQ_KEYS:
            if positive(dataset.get(k)):
                seq, seq_src = positive(dataset.get(k)), f"dataset.{k}"
                break

    lbs = positive(section(recipe, "step_scheduler").get("local_batch_size"))
    if pp_size > 1:
        mbs = positive(pipeline.get("pp_microbatch_size")) or 1
        mb_src = "distributed.pipeline.pp_microbatch_size" if positive(pipeline.get("pp_microbatch_size")) else "default"
        n_mb = max(1, (lbs or mbs) // mbs)
    else:
        mbs = lbs or 1
        mb_src = "step_scheduler.local_batch_size" if lbs else "default"
        n_mb = 1

    schedule = pipeline.get("pp_schedule")
    schedule = schedule.strip().lower() if isinstance(schedule, str) and schedule.strip() else "1f1b"
    rnd = pipeline.get("round_virtual_stages_to_pp_multiple")
    model = section(recipe, "model")
    return Workload(
        seq_len=seq,
        seq_source=seq_src,
        packed=packed_size is not None,
        micro_batch=mbs,
        micro_batch_source=mb_src,
        n_microbatches=n_mb,
        local_batch_size=lbs,
        ac=ac_mode(dist.get("activation_checkpointing")),
        ac_decoder=ac_covers_decoder(dist.get("activation_checkpointing_scope")),
        ac_raw=dist.get("activation_checkpointing"),
        sequence_parallel=as_bool(dist.get("sequence_parallel")) is True,
        pp_schedule=schedule,
        layers_per_stage=positive(pipeline.get("layers_per_stage")),
        round_virtual_stages=rnd if rnd in ("up", "down") else None,
        ignore_router_for_ac=as_bool(moe.get("ignore_router_for_ac")),
        tp_plan_given=dist.get("tp_plan") not in (None, {}, ""),
        weights_dtype=_dtype(model.get("torch_dtype")),
        peft=recipe.get("peft") not in (None, {}, False),
    )
