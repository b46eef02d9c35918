"""The facts about NeMo AutoModel's config classes the rules read, loaded once: accepted keys,
strategy map and defaults from the field reference (fields.yaml), so what answers describe and what
the validator accepts cannot drift apart; the rest from upstream_schema.yaml."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from assistant.datafile import read_yaml
from assistant.validator.fields import field_table

_S = read_yaml(Path(__file__).resolve().parent / "upstream_schema.yaml")
_F = field_table()
STRATEGIES: dict[str, str] = _F.strategy_map()
CANONICAL: dict[str, str] = _F.canonical_strategy()
STRATEGY_FIELDS: dict[str, frozenset[str]] = {dc: frozenset(_F.dataclass_fields(dc)) for dc in CANONICAL}
FSDP2_FIELDS = STRATEGY_FIELDS["FSDP2Config"]
SCOPE_CHECKED = frozenset(_S["scope_checked"])
MULTIMODAL_CHECKED = frozenset(_S["multimodal_checked"])
SIZE_DEFAULTS: tuple[tuple[str, Any], ...] = tuple(_F.defaults("distributed", "_PARALLELISM_DEFAULTS").items())
SIZE_KEYS = frozenset(k for k, _ in SIZE_DEFAULTS)
META_KEYS: tuple[str, ...] = tuple(_S["meta_keys"])
_AC_ALIASES = _F.get("distributed.activation_checkpointing")[0].value_aliases
AC_FALSE = frozenset({"false"} | {a for a, v in _AC_ALIASES.items() if v is False})
AC_TRUE = frozenset({"true"} | {a for a, v in _AC_ALIASES.items() if v is True})
AC_SELECTIVE = frozenset(_S["ac_selective"])
AC_SELECTIVE_STRATEGIES = frozenset(_F.get("distributed.activation_checkpointing")[0].value_strategies["selective"])
AC_SCOPES = frozenset(next(r for r in _F.get("activation_checkpointing_scope")).allowed)
AC_SCOPE_ALIASES: dict[str, str] = dict(_S["ac_scope_aliases"])
PIPELINE_FIELDS = frozenset(_F.dataclass_fields("PipelineConfig"))
PIPELINE_DEFAULT_SCHEDULE: str = _F.defaults("distributed.pipeline")["pp_schedule"]
MOE_FIELDS = frozenset(_F.dataclass_fields("MoEParallelizerConfig"))
MP_FIELDS = frozenset(_F.dataclass_fields("MixedPrecisionPolicy"))
MP_DTYPE_KEYS: tuple[str, ...] = tuple(_S["mp_policy_dtype_keys"])
KNOWN_TARGETS: dict[str, frozenset[str]] = {k: frozenset(_F.dataclass_fields(k)) for k in _S["known_targets"]}
MULTIMODAL_FIELDS = frozenset(_S["multimodal_fields"])
VISION_FIELDS = frozenset(_S["multimodal_vision_fields"])
FRAME_FIELDS = frozenset(_S["frame_sharding_fields"])
FROZEN_SHARDING = frozenset(_S["frozen_sharding_values"])
DTYPE_NAMES = frozenset(_S["dtype_names"])
SS_DEFAULTS: dict[str, int] = {k: _F.defaults("step_scheduler")[k] for k in ("global_batch_size", "local_batch_size")}
PP_MICROBATCH_DEFAULT: int = _F.defaults("distributed.pipeline")["pp_microbatch_size"]
RECIPE_KEYS = frozenset(_S["recipe_keys"])
ALL_STRATEGY_FIELDS = frozenset().union(*STRATEGY_FIELDS.values())
# feature -> {dataclass: rule code} for the parallel sizes a strategy refuses (see capabilities.py)
SIZE_REFUSALS: dict[str, dict[str, str]] = {k: dict(v) for k, v in _S["size_refusals"].items()}
