"""The launch reader's result types: pure data every module of assistant/launch returns."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assistant.validator.report import UnusableInput, quick_init


@quick_init  # the dataclass __init__ of a frozen class was a third of parse_overrides' time
@dataclass(frozen=True)
class Override:
    path: str  # dotted path, e.g. "distributed.pp_size"
    value: Any  # translated exactly as upstream translates it (twice: parse_args_and_load_config, then _wrap)
    argument: str  # the argument as typed, e.g. "--distributed.pp_size 2"
    index: int  # position among the overrides (last one wins)
    raw: str = ""  # the value text as typed, before translation
    span: tuple[int, int] | None = None  # the tokens [start, end) of the launch line it came from


@dataclass(frozen=True)
class LaunchWarning:
    code: str  # stable, e.g. "MW-W-LAUNCH-BEFORE-CONFIG"
    en: str
    zh: str
    argument: str | None  # the argument it is about, as typed
    upstream: str = ""  # the upstream file whose reading this mirrors


@dataclass(frozen=True)
class WorldSize:
    world_size: int
    gpus_per_node: int | None
    nodes: int | None
    source: str  # e.g. "--nproc-per-node 4 on the launch line"
    source_zh: str


@dataclass(frozen=True)
class Launch:
    config_path: str | None
    overrides: tuple[Override, ...]
    world: WorldSize | None
    warnings: tuple[LaunchWarning, ...]
    tokens: tuple[str, ...] = ()  # the line as shell words, for the edited line of a fix
    form: str = ""  # "automodel", "torchrun-module", "torchrun-script", "script"; "sbatch" when no command was found
    nproc_argument: str | None = None  # the --nproc-per-node argument of an automodel line, as typed
    # the world when nothing else says it: `python script.py` with no torchrun runs one process unless the
    # launch environment sets WORLD_SIZE (init_utils.get_world_size_safe), so the environment comes first
    fallback_world: WorldSize | None = None
    # the line says the world size in a way that cannot be read (`--nnodes $N` with no --env, an elastic
    # MIN:MAX, `$(nvidia-smi -L | wc -l)`): raised only when nothing else (--world-size, ci:, ...) gives it
    world_error: "LaunchError | None" = None


class LaunchError(UnusableInput):
    """A launch line, sbatch script, environment or override that cannot be read (exit 2), in en + zh."""
