"""Questions Meshwise does not answer: where upstream documents a neighbouring topic, a plain "outside
what Meshwise covers" for the rest. Wording and patterns: scope.yaml. (Keyboard mash is recognised by
the understanding step, assistant/understand/gibberish.py.)
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from assistant.datafile import read_yaml
from assistant.understand.gibberish import looks_like_gibberish  # noqa: F401 - part of this module's API

_FILE = Path(__file__).with_name("scope.yaml")
MAX_TEXT_CHARS = 4000


@dataclass(frozen=True)
class Topic:
    name: str
    label: dict[str, str]
    match: tuple[re.Pattern[str], ...]
    guides: tuple[str, ...]


@dataclass(frozen=True)
class _Scope:
    text: dict[str, dict[str, str]]
    neutral: tuple[re.Pattern[str], ...]
    topics: tuple[Topic, ...]
    off_topic_requests: tuple[re.Pattern[str], ...]
    off_topic: tuple[re.Pattern[str], ...]
    domain: tuple[re.Pattern[str], ...]

    def say(self, key: str, lang: str, **values: str) -> str:
        return self.text[key]["zh" if lang == "zh" else "en"].format(**values)


@lru_cache(maxsize=1)
def _scope() -> _Scope:
    d = read_yaml(_FILE)

    def pats(items) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(p, re.IGNORECASE) for p in items)

    topics = tuple(Topic(name, t["label"], pats(t["match"]), tuple(t["guides"])) for name, t in d["topics"].items())
    text = {k: d[k] for k in ("covers", "neighbour", "off_topic", "list_sep", "list_last")}
    return _Scope(text, pats(d["neutral"]), topics, pats(d["off_topic_requests"]), pats(d["off_topic_match"]),
                  pats(d["domain"]))


def neighbour_topic(question: str) -> Topic | None:
    """The neighbouring topic a question is about (Slurm, checkpoints, LoRA ...), first in table order."""
    s = _scope()
    text = question[:MAX_TEXT_CHARS]
    for pat in s.neutral:
        text = pat.sub(" ", text)
    return next((t for t in s.topics if any(p.search(text) for p in t.match)), None)


def names_the_domain(question: str) -> bool:
    """The question mentions distributed training (sizes, strategies, GPUs, sharding ...)."""
    text = question[:MAX_TEXT_CHARS]
    return any(p.search(text) for p in _scope().domain)


def is_off_topic(question: str) -> bool:
    """A request for a poem or a joke, or a question about the weather or a restaurant, that is not
    also about distributed training."""
    s = _scope()
    text = question[:MAX_TEXT_CHARS]
    if any(p.search(text) for p in s.off_topic_requests):
        return True
    return any(p.search(text) for p in s.off_topic) and not names_the_domain(text)


def scope_reply(question: str, lang: str, *, default: bool = False) -> str | None:
    """One or two sentences for a question outside Meshwise's scope: for a neighbouring topic, where
    upstream documents it; for anything off-topic, that it is outside; then what Meshwise covers.
    None when the question is neither (with `default`, the off-topic reply instead: the caller already
    knows the question is out of scope)."""
    s = _scope()
    lang = "zh" if lang == "zh" else "en"
    topic = neighbour_topic(question)
    if topic is not None:
        guides = [f"`{g}`" for g in topic.guides]
        joined = guides[0] if len(guides) == 1 else \
            s.say("list_sep", lang).join(guides[:-1]) + s.say("list_last", lang) + guides[-1]
        first = s.say("neighbour", lang, label=topic.label[lang], guides=joined)
    elif default or is_off_topic(question):
        first = s.say("off_topic", lang)
    else:
        return None
    return f"{first}{'' if lang == 'zh' else ' '}{s.say('covers', lang)}"


