"""upstream_schema.yaml, loaded once: the facts about NeMo AutoModel's config classes the rules read."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from assistant.datafile import read_yaml

_S = read_yaml(Path(__file__).resolve().parent / "upstream_schema.yaml")
STRATEGIES: dict[str, str] = dict(_S["strategies"])
CANONICAL: dict[str, str] = dict(_S["canonical_strategy"])
STRATEGY_FIELDS: dict[str, frozenset[str]] = {k: frozenset(v) for k, v in _S["strategy_fields"].items()}
FSDP2_FIELDS = STRATEGY_FIELDS["FSDP2Config"]
SCOPE_CHECKED = frozenset(_S["scope_checked"])
MULTIMODAL_CHECKED = frozenset(_S["multimodal_checked"])
SIZE_DEFAULTS: tuple[tuple[str, Any], ...] = tuple(_S["size_defaults"].items())
SIZE_KEYS = frozenset(k for k, _ in SIZE_DEFAULTS)
META_KEYS: tuple[str, ...] = tuple(_S["meta_keys"])
AC_FALSE = frozenset(_S["ac_false"])
AC_TRUE = frozenset(_S["ac_true"])
AC_SELECTIVE = frozenset(_S["ac_selective"])
AC_SELECTIVE_STRATEGIES = frozenset(_S["ac_selective_strategies"])
AC_SCOPES = frozenset(_S["ac_scopes"])
AC_SCOPE_ALIASES: dict[str, str] = dict(_S["ac_scope_aliases"])
PIPELINE_FIELDS = frozenset(_S["pipeline_fields"])
PIPELINE_DEFAULT_SCHEDULE: str = _S["pipeline_default_schedule"]
MOE_FIELDS = frozenset(_S["moe_fields"])
MP_FIELDS = frozenset(_S["mp_policy_fields"])
MP_DTYPE_KEYS: tuple[str, ...] = tuple(_S["mp_policy_dtype_keys"])
KNOWN_TARGETS: dict[str, frozenset[str]] = {k: frozenset(_S[v]) for k, v in _S["known_targets"].items()}
MULTIMODAL_FIELDS = frozenset(_S["multimodal_fields"])
VISION_FIELDS = frozenset(_S["multimodal_vision_fields"])
FRAME_FIELDS = frozenset(_S["frame_sharding_fields"])
FROZEN_SHARDING = frozenset(_S["frozen_sharding_values"])
DTYPE_NAMES = frozenset(_S["dtype_names"])
SS_DEFAULTS: dict[str, int] = dict(_S["step_scheduler_defaults"])
PP_MICROBATCH_DEFAULT: int = _S["pp_microbatch_default"]
RECIPE_KEYS = frozenset(_S["recipe_keys"])
ALL_STRATEGY_FIELDS = frozenset().union(*STRATEGY_FIELDS.values())
# feature -> {dataclass: rule code} for the parallel sizes a strategy refuses (see capabilities.py)
SIZE_REFUSALS: dict[str, dict[str, str]] = {k: dict(v) for k, v in _S["size_refusals"].items()}
