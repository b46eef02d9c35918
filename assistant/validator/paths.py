"""Dotted paths into a recipe mapping ("distributed.pipeline.pp_schedule"): the one setter the fixer,
the judged layout and the stated layout share."""
from __future__ import annotations

from typing import Any


def put_path(mapping: dict, dotted: str, value: Any) -> None:
    """Set `value` at `dotted` in place, making (or replacing with) mappings along the way."""
    *heads, last = [p for p in dotted.split(".") if p]
    node = mapping
    for h in heads:
        nxt = node.get(h)
        if not isinstance(nxt, dict):
            nxt = node[h] = {}
        node = nxt
    node[last] = value
