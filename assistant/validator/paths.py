"""Dotted paths into a recipe mapping ("distributed.pipeline.pp_schedule"): the one setter the fixer,
the judged layout and the stated layout share."""
from __future__ import annotations

from typing import Any


def put_path(mapping: dict, dotted: str, value: Any, *, keep_empty: bool = False) -> None:
    """Set `value` at `dotted` in place, making (or replacing with) mappings along the way.

    `keep_empty` keeps empty segments ("a..b") as keys named "", as upstream's set_by_dotted does for
    a command-line override."""
    *heads, last = dotted.split(".") if keep_empty else [p for p in dotted.split(".") if p]
    node = mapping
    for h in heads:
        nxt = node.get(h)
        if not isinstance(nxt, dict):
            nxt = node[h] = {}
        node = nxt
    node[last] = value
