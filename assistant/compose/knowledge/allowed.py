"""The values one field can take with the rest of the user's layout kept ("which pp_size values work on
40 GPUs with tp 8?", "pp_microbatch_size 能取哪些值"): each candidate written into the layout and
judged by the validator, the same start-up rules every verdict uses, so no rule is restated here.

Candidates: a parallel size divides the world; a pipeline microbatch size divides local_batch_size;
a global batch size is a multiple of local_batch_size * dp_size, the nearest below and above the one
given. A rule that fails for every candidate (another field's problem) does not decide.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Callable

from assistant.validator.paths import put_path

_SIZES = frozenset({"tp_size", "pp_size", "cp_size", "ep_size", "dp_size", "dp_replicate_size"})
_PATHS = {**{k: f"distributed.{k}" for k in _SIZES},
          "pp_microbatch_size": "distributed.pipeline.pp_microbatch_size",
          "global_batch_size": "step_scheduler.global_batch_size"}
FIELDS = frozenset(_PATHS)  # the fields whose values this module can list


@dataclass(frozen=True)
class Allowed:
    field: str
    values: tuple[int, ...]
    current: int | None  # the value the layout has now (None: not set)
    step: int | None = None  # global_batch_size: the multiple it must be (local_batch_size * dp_size)


def _get(recipe: dict, dotted: str):
    node = recipe
    for part in dotted.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def _divisors(n: int) -> list[int]:
    return [c for c in range(1, n + 1) if n % c == 0]


def allowed_values(field: str, recipe: dict, world: int, validate: Callable, *, ignore: frozenset[str] = frozenset(),
                   dp_size: int | None = None, **kwargs) -> Allowed | None:
    """The values of `field` the validator accepts in `recipe` at `world` (its other keyword arguments go
    to `validate`); None when the field is not one of FIELDS or there is nothing to vary it against."""
    path = _PATHS.get(field)
    if path is None or not world:
        return None
    current = _get(recipe, path)
    current = current if isinstance(current, int) and not isinstance(current, bool) else None
    step = None
    if field == "global_batch_size":
        lbs = _get(recipe, "step_scheduler.local_batch_size")
        if not isinstance(lbs, int) or not dp_size:
            return None
        step = lbs * dp_size
        if current is None or current % step == 0:
            return Allowed(field, (current or step,), current, step)
        below = current // step * step  # the multiples either side of the value given
        return Allowed(field, tuple(c for c in (below, below + step) if c > 0), current, step)
    if field == "pp_microbatch_size":
        lbs = _get(recipe, "step_scheduler.local_batch_size")
        if not isinstance(lbs, int) or lbs < 1:
            return None
        candidates = _divisors(lbs)
    else:
        candidates = _divisors(world)
    reports = {}
    for c in candidates:
        r = copy.deepcopy(recipe)
        put_path(r, path, c)
        dist = r.get("distributed")
        if isinstance(dist, dict) and (dist.get("pp_size") or 1) > 1 and not isinstance(dist.get("pipeline"), dict):
            dist["pipeline"] = {}  # a pp_size tried without the block the user would add with it
        try:
            reports[c] = {f.code for f in validate(r, world_size=world, **kwargs).errors} - ignore
        except ValueError:  # an input the validator cannot read at this value
            continue
    if not reports:
        return None
    shared = set.intersection(*reports.values())  # failing whatever the value: not this field's rule
    return Allowed(field, tuple(c for c, codes in reports.items() if codes <= shared), current)
