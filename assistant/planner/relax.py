"""When no layout keeps every request: drop the fewest requests, and name them.

A request is a size the user fixed (`tp_size 4`) or a feature they asked for ("suggest tp, pp and
ep"). Dropping all of them at once turns "Qwen3-235B on 128 GPUs, suggest tp, pp and ep" into plain
FSDP2, though only TP is refused (upstream's MoE parallelizer has no TP plan next to EP). So the
search is repeated with one request dropped, then two, and the first size that yields a valid
layout wins (lowest score among them). The search itself is the planner's; it is passed in, so this
module knows nothing of candidates and costs.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import combinations
from typing import Callable

MAX_DROPPED = 2  # beyond two dropped requests the planner's relaxed pass (closest layout) answers


@dataclass(frozen=True)
class Request:
    dim: str  # tp / pp / cp / ep / hsdp
    fixed: int | None  # the size the user fixed, None for a feature asked for


@dataclass(frozen=True)
class Dropped:
    found: object  # the planner's _Found for the layout that keeps the rest
    requests: tuple[Request, ...]  # what it does not keep
    targets: object  # the targets it was searched with


def requests_of(targets) -> list[Request]:
    """The user's own requests in the targets, in dimension order (rules-made ones excluded)."""
    out = [Request(d, v) for d, v in targets.fixed.items() if v and v > 1]
    out += [Request(d, None) for d in sorted(targets.required - targets.automatic - set(targets.fixed))]
    return out


def without(targets, drop: tuple[Request, ...], *, rules_want: set[str]):
    """The targets with `drop` no longer required; a dim the rules want anyway (EP for a MoE) stays
    wanted by the rules, so dropping the user's wish does not forbid it."""
    fixed = {d: v for d, v in targets.fixed.items() if not any(r.dim == d for r in drop)}
    required = set(targets.required)
    automatic = set(targets.automatic)
    for r in drop:
        if r.dim in rules_want:
            automatic.add(r.dim)
        else:
            required.discard(r.dim)
    return replace(targets, fixed=fixed, required=required, automatic=automatic)


def fewest_dropped(targets, search: Callable[[object], object | None], *, rules_want: set[str]) -> Dropped | None:
    """The valid layout that drops the fewest requests (at most MAX_DROPPED), or None."""
    reqs = requests_of(targets)
    for k in range(1, min(MAX_DROPPED, len(reqs)) + 1):
        best: Dropped | None = None
        for drop in combinations(reqs, k):
            t = without(targets, drop, rules_want=rules_want)
            found = search(t)
            if found is not None and (best is None or found.score < best.found.score):
                best = Dropped(found, drop, t)
        if best is not None:
            return best
    return None
