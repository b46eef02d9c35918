"""Whether a question is about a neighbouring topic (Slurm, checkpoints, LoRA ...) or off-topic (the
weather, a poem), read on its words: patterns in off_topic.yaml. compose/knowledge/scope.py words the
reply from `cues.Reading.neighbour_topic` / `.off_topic`. (Keyboard mash is gibberish.py's.)
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from assistant.datafile import read_yaml

_FILE = Path(__file__).with_name("off_topic.yaml")
MAX_TEXT_CHARS = 4000


@dataclass(frozen=True)
class _Patterns:
    neutral: tuple[re.Pattern[str], ...]
    topics: tuple[tuple[str, tuple[re.Pattern[str], ...]], ...]
    off_topic_requests: tuple[re.Pattern[str], ...]
    off_topic: tuple[re.Pattern[str], ...]
    domain: tuple[re.Pattern[str], ...]


@lru_cache(maxsize=1)
def _patterns() -> _Patterns:
    d = read_yaml(_FILE)

    def pats(items) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(p, re.IGNORECASE) for p in items)

    topics = tuple((name, pats(t["match"])) for name, t in d["topics"].items())
    return _Patterns(pats(d["neutral"]), topics, pats(d["off_topic_requests"]), pats(d["off_topic_match"]),
                     pats(d["domain"]))


def topic_names() -> tuple[str, ...]:
    """The neighbouring topics, in the order they are tried."""
    return tuple(name for name, _ in _patterns().topics)


def neighbour_topic(text: str) -> str | None:
    """The neighbouring topic a text is about, first in table order (distributed-training terms that
    look like one, "activation checkpointing", taken out first)."""
    s = _patterns()
    text = text[:MAX_TEXT_CHARS]
    for pat in s.neutral:
        text = pat.sub(" ", text)
    return next((name for name, match in s.topics if any(p.search(text) for p in match)), None)


def names_the_domain(text: str) -> bool:
    """The text mentions distributed training (sizes, strategies, GPUs, sharding ...)."""
    text = text[:MAX_TEXT_CHARS]
    return any(p.search(text) for p in _patterns().domain)


def is_off_topic(text: str) -> bool:
    """A request for a poem or a joke, or a question about the weather or a restaurant, that is not
    also about distributed training."""
    s = _patterns()
    text = text[:MAX_TEXT_CHARS]
    if any(p.search(text) for p in s.off_topic_requests):
        return True
    return any(p.search(text) for p in s.off_topic) and not names_the_domain(text)
