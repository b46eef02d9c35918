"""Questions Meshwise does not answer: where upstream documents a neighbouring topic, a plain "outside
what Meshwise covers" for the rest. Wording, labels and guides: scope.yaml; which topic a question is
about, or whether it is off-topic, is read in understand/off_topic.py (`cues.Reading`). (Keyboard mash
is recognised by the understanding step, assistant/understand/gibberish.py.)
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from assistant.datafile import read_yaml
from assistant.understand.cues import Reading
from assistant.understand.gibberish import looks_like_gibberish  # noqa: F401 - part of this module's API

_FILE = Path(__file__).with_name("scope.yaml")


@dataclass(frozen=True)
class Topic:
    name: str
    label: dict[str, str]
    guides: tuple[str, ...]


@dataclass(frozen=True)
class _Scope:
    text: dict[str, dict[str, str]]
    topics: dict[str, Topic]

    def say(self, key: str, lang: str, **values: str) -> str:
        return self.text[key]["zh" if lang == "zh" else "en"].format(**values)


@lru_cache(maxsize=1)
def _scope() -> _Scope:
    d = read_yaml(_FILE)
    topics = {name: Topic(name, t["label"], tuple(t["guides"])) for name, t in d["topics"].items()}
    text = {k: d[k] for k in ("covers", "neighbour", "off_topic", "list_sep", "list_last")}
    return _Scope(text, topics)


def scope_reply(said: Reading, lang: str, *, default: bool = False) -> str | None:
    """One or two sentences for a question outside Meshwise's scope: for a neighbouring topic, where
    upstream documents it; for anything off-topic, that it is outside; then what Meshwise covers.
    None when the question is neither (with `default`, the off-topic reply instead: the caller already
    knows the question is out of scope)."""
    s = _scope()
    lang = "zh" if lang == "zh" else "en"
    topic = s.topics.get(said.neighbour_topic) if said.neighbour_topic is not None else None
    if topic is not None:
        guides = [f"`{g}`" for g in topic.guides]
        joined = guides[0] if len(guides) == 1 else \
            s.say("list_sep", lang).join(guides[:-1]) + s.say("list_last", lang) + guides[-1]
        first = s.say("neighbour", lang, label=topic.label[lang], guides=joined)
    elif default or said.off_topic:
        first = s.say("off_topic", lang)
    else:
        return None
    return f"{first}{'' if lang == 'zh' else ' '}{s.say('covers', lang)}"
