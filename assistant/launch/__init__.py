"""The input side of a launch: what the recipe, overrides and world size are where a job is started.

    from assistant.launch import parse_launch_line, apply_overrides
    launch = parse_launch_line("automodel cfg.yaml --nproc-per-node 4 --distributed.tp_size 2")

Pure functions over text and mappings (no file, process or environment access): each mirrors how
NeMo AutoModel's own launch reads the same input (the module docstrings name the upstream file).
"""
from __future__ import annotations

from assistant.launch.as_launched import edited_line, fix_as_overrides
from assistant.launch.env_vars import EnvVarUnset, resolve_env_vars
from assistant.launch.launch_line import parse_launch_line
from assistant.launch.overrides import apply_overrides, parse_overrides
from assistant.launch.sbatch import parse_sbatch
from assistant.launch.types import Launch, LaunchError, LaunchWarning, Override, WorldSize
from assistant.launch.world import world_from_env, world_from_recipe

__all__ = ["Launch", "LaunchError", "LaunchWarning", "Override", "WorldSize", "EnvVarUnset", "apply_overrides",
           "edited_line", "fix_as_overrides", "parse_launch_line", "parse_overrides", "parse_sbatch",
           "resolve_env_vars", "world_from_env", "world_from_recipe"]
