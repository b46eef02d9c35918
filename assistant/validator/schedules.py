"""Pipeline schedule names: which ones torch's get_schedule_class accepts, and what a rejected one meant.

The accepted list is data (schedules.yaml), read once from torch's source, so the validator
never imports torch.
"""
from __future__ import annotations

import difflib
from functools import lru_cache
from pathlib import Path

from assistant.datafile import read_yaml

_DATA = read_yaml(Path(__file__).resolve().parent / "schedules.yaml")

ACCEPTED: tuple[str, ...] = tuple(_DATA["accepted"])
ACCEPTED_LOWER: frozenset[str] = frozenset(n.lower() for n in ACCEPTED)
ABSTRACT_LOWER: frozenset[str] = frozenset(n.lower() for n in _DATA["abstract"])
RUNNABLE_LOWER: tuple[str, ...] = tuple(n.lower() for n in ACCEPTED if n.lower() not in ABSTRACT_LOWER)
_MISSPELLINGS: dict[str, str] = {str(k).lower(): v for k, v in _DATA["misspellings"].items()}


def is_accepted(name: object) -> bool:
    """True when get_schedule_class(name) returns a class (it calls name.lower())."""
    return isinstance(name, str) and name.lower() in ACCEPTED_LOWER


def is_abstract(name: object) -> bool:
    return isinstance(name, str) and name.lower() in ABSTRACT_LOWER


def suggest(name: object) -> str | None:
    """The accepted spelling a rejected schedule name most likely meant, or None."""
    return _suggest(name) if isinstance(name, str) else None


@lru_cache(maxsize=1024)
def _suggest(name: str) -> str | None:
    # cached: difflib is most of the cost of rejecting a misspelled schedule, and the same few recur
    low = name.strip().lower()
    if low in _MISSPELLINGS:
        return _MISSPELLINGS[low]
    squashed = low.replace("_", "").replace("-", "").replace(" ", "")
    if squashed in ACCEPTED_LOWER:
        return squashed
    if squashed in _MISSPELLINGS:
        return _MISSPELLINGS[squashed]
    close = difflib.get_close_matches(squashed, RUNNABLE_LOWER, n=1, cutoff=0.6)
    return close[0] if close else None
