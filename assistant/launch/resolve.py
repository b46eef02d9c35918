"""The recipe and world size as the launch gives them: one function the front ends call.

Order, as upstream builds the config: the YAML is loaded with its environment references resolved
(ConfigNode resolves while loading, so an unset variable fails before any override is applied), then
the overrides are set in order (CI's layers first with `ci`, then the launch line's, then those typed
after the file), each value resolved in its turn. The world size: with `ci`, the recipe's `ci:` section
(asked for by name, so it comes first: an explicit world size is then the fallback for the recipes
without one, as a `--ci --world-size 8` sweep over a folder needs); then explicit flags, else the
recipe's launcher section when the line is `automodel` (cli/app.py sends the job there and ignores
--nproc-per-node), else the launch line or sbatch script, else the launcher section, else the
environment, else the launch's fallback (one process for `python script.py`).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

from assistant.launch import codes
from assistant.launch.ci import ci_overrides
from assistant.launch.env_vars import resolve_env_vars
from assistant.launch.overrides import apply_overrides
from assistant.launch.types import Launch, LaunchWarning, Override, WorldSize
from assistant.launch.world import launcher_section, world_from_env, world_from_recipe


@dataclass(frozen=True)
class Resolved:
    recipe: Any  # what the validator is given: environment resolved, overrides applied
    loaded: Any  # the recipe before the overrides (environment resolved): what a fix is compared with
    overrides: tuple[Override, ...]  # every override applied, in order, re-indexed from 0
    world: WorldSize | None
    warnings: tuple[LaunchWarning, ...]


def resolve(recipe: Any, *, launch: Launch | None = None, overrides: Sequence[Override] = (),
            env: Mapping[str, str] | None = None, ci: bool = False,
            explicit: WorldSize | None = None) -> Resolved:
    warnings: list[LaunchWarning] = list(launch.warnings) if launch else []
    loaded = resolve_env_vars(recipe, env) if env is not None else recipe
    chain = [*(ci_overrides(loaded) if ci and isinstance(loaded, Mapping) else ()),
             *(launch.overrides if launch else ()), *overrides]
    chain = [replace(o, index=n, value=resolve_env_vars(o.value, env) if env is not None else o.value)
             for n, o in enumerate(chain)]
    data = apply_overrides(loaded, chain) if isinstance(loaded, Mapping) else loaded
    world = _world(data if isinstance(data, Mapping) else {}, launch, env, ci, explicit, warnings)
    if launch and launch.form in APP_FORMS and isinstance(data, Mapping) and not _names_recipe(data):
        warnings.append(codes.warning("MW-W-LAUNCH-NO-RECIPE", None))
    return Resolved(recipe=data, loaded=loaded, overrides=tuple(chain), world=world, warnings=tuple(warnings))


APP_FORMS = ("automodel", "torchrun-module")  # the lines cli/app.py runs


def _names_recipe(recipe: Mapping) -> bool:
    """cli/app.py main: `recipe:` is a non-empty string or a mapping with `_target_`, else it exits 1."""
    r = recipe.get("recipe")
    return (isinstance(r, str) and bool(r.strip())) or (isinstance(r, Mapping) and "_target_" in r)


def _world(recipe: Mapping, launch: Launch | None, env: Mapping[str, str] | None, ci: bool,
           explicit: WorldSize | None, warnings: list[LaunchWarning]) -> WorldSize | None:
    section = launcher_section(recipe)
    if launch and launch.nproc_argument and section and launch.form == "automodel":
        warnings.append(codes.warning("MW-W-LAUNCH-NPROC-IGNORED", launch.nproc_argument, section=section))
        line_world = None
    else:
        line_world = launch.world if launch else None
    ci_world = world_from_recipe(recipe, ci=True) if ci else None
    candidates = [ci_world, explicit,
                  world_from_recipe(recipe, ci=False) if section and launch and launch.form == "automodel" else None,
                  line_world, world_from_recipe(recipe, ci=False), world_from_env(env) if env is not None else None]
    found = [w for w in candidates if w is not None]
    if not found:
        if launch and launch.world_error is not None:
            raise launch.world_error  # the line's own world size, unreadable, and nothing else gives one
        return launch.fallback_world if launch else None
    chosen = found[0]
    # under --ci an explicit world size only stands in for a missing ci: section: no disagreement to warn of
    rest = [w for w in found[1:] if not (chosen is ci_world and w is explicit)]
    other = next((w for w in rest if w.world_size != chosen.world_size), None)
    if other is not None:
        warnings.append(codes.warning("MW-W-LAUNCH-WORLD-DIFFERS", None, world_size=chosen.world_size,
                                      source=chosen.source, source_zh=chosen.source_zh, other_world=other.world_size,
                                      other_source=other.source, other_source_zh=other.source_zh))
    return chosen
