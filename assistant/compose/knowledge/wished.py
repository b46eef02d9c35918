"""The option values a config request names ("param bf16, reduce fp32", "with it turned off",
"把 activation checkpointing 打开"): the config shown for that request carries them, validated.

Sizes are the stated layout's (understand/stated.py); the other keys of `distributed:` the user wants
written are read in understand/wishes.py (`cues.Reading.wished`).
"""
from __future__ import annotations

from typing import Any

from assistant.understand.cues import read, read_prose


def wished_options(query) -> dict[str, Any]:
    """`distributed:` keys (dotted below it) and the values the question wants the config to have."""
    out: dict[str, Any] = {}
    p = query.params
    if "ac" in p.wanted and "ac" not in p.unwanted:
        out["activation_checkpointing"] = "selective" if "ac_selective" in query.topics else True
    out.update((read_prose(query) if query.situation.pasted.prose else read(query)).wished)
    return out


def with_options(recipe: dict, options: dict[str, Any]) -> dict:
    """A copy of the recipe with the options written under `distributed:`; keys the user set stay."""
    dist = dict(recipe.get("distributed") or {})
    for dotted, value in options.items():
        head, _, tail = dotted.partition(".")
        if tail:
            block = dict(dist.get(head) or {}) if isinstance(dist.get(head), (dict, type(None))) else None
            if block is None:
                continue
            block.setdefault(tail, value)
            dist[head] = block
        else:
            dist.setdefault(head, value)
    return {**recipe, "distributed": dist}
