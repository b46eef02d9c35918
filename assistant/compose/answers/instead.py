"""A verdict on an alternative the user names next to their own layout ("what is dp_size, and could
I use ep 16 instead?", "能不能换成 tp 4？"): their layout with only the named sizes changed, judged at
their numbers. The user's own layout stays the one judged for the answer (`Answer.judged`)."""
from __future__ import annotations

import copy

from assistant.compose.answers.base import ComposeInput, Part
from assistant.compose.diagnose import judge_stated
from assistant.compose.writer import Writer
from assistant.validator import UnusableInput, validate


def changes_of(target: str | None) -> dict[str, int]:
    """`ep_size=16,tp_size=4` (the Ask target asks.instead_sizes writes) as a mapping."""
    out: dict[str, int] = {}
    for part in (target or "").split(","):
        key, _, value = part.partition("=")
        if key.endswith("_size") and value.isdigit():
            out[key] = int(value)
    return out


def write_instead(w: Writer, inp: ComposeInput, ask) -> Part | None:
    """The alternative's verdict as the ask's direct answer; None when there is no layout of the
    user's to change or the ask names no alternative."""
    from assistant.compose.answers.verdict import verdict_line

    d = inp.diagnosis
    changes = changes_of(getattr(ask, "target", None))
    if d is None or not changes or not isinstance(d.judged, dict) or not d.world_size:
        return None
    recipe = copy.deepcopy(d.judged)
    dist = recipe.setdefault("distributed", {})
    if not isinstance(dist, dict):
        return None
    dist.update(changes)
    if dist.get("pp_size", 1) > 1:
        dist.setdefault("pipeline", {})  # a stated pp_size is written with its block, as the user's own is
    alt = judge_stated(recipe, world_size=d.world_size, gpus_per_node=d.gpus_per_node, validate=validate,
                       unusable=UnusableInput)
    w.answer(verdict_line(w, alt, getattr(ask, "text", "")))
    return Part()
