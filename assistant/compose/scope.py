"""Questions Meshwise does not answer: where upstream documents a neighbouring topic, a plain "outside
what Meshwise covers" for the rest, and a test for keyboard mash. Wording and patterns: scope.yaml.
"""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from assistant.datafile import read_yaml

_FILE = Path(__file__).with_name("scope.yaml")
MAX_TEXT_CHARS = 4000
_REPEAT = re.compile(r"(.)\1{2,}")
_WORDS = re.compile(r"[a-z]+|[\u3400-\u9fff]+")
_CJK_RUN = re.compile(r"[\u3400-\u9fff]+")
_IDENTIFIER = re.compile(r"[a-z0-9]+(?:[_.][a-z0-9]+)+")  # tp_size, moe.mp_policy: code, not words


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
    key_rows: tuple[str, ...]
    known: frozenset[str]
    min_len: int
    max_logprob: float
    share: float

    def say(self, key: str, lang: str, **values: str) -> str:
        return self.text[key]["zh" if lang == "zh" else "en"].format(**values)


@lru_cache(maxsize=1)
def _scope() -> _Scope:
    d = read_yaml(_FILE)

    def pats(items) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(p, re.IGNORECASE) for p in items)

    topics = tuple(Topic(name, t["label"], pats(t["match"]), tuple(t["guides"])) for name, t in d["topics"].items())
    text = {k: d[k] for k in ("covers", "neighbour", "off_topic", "list_sep", "list_last")}
    g = d["gibberish"]
    return _Scope(text, pats(d["neutral"]), topics, pats(d["off_topic_requests"]), pats(d["off_topic_match"]),
                  pats(d["domain"]),
                  tuple(g["key_rows"]), frozenset(g["known"]), int(g["min_len"]), float(g["max_logprob"]),
                  float(g["share"]))


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


def looks_like_gibberish(text: str) -> bool:
    """Keyboard mash, even around a domain word ("tp asdkjh qwpeoi", "fsdp 啊啊啊"): letters that
    spell no words. Real words of any topic ("what is the weather") are not gibberish."""
    s = _scope()
    low = _IDENTIFIER.sub(" ", (text or "")[:MAX_TEXT_CHARS].lower())
    words = [w for w in _WORDS.findall(low) if w not in s.known]
    if not words:
        return False
    judged = [w for w in words if _CJK_RUN.fullmatch(w) or len(w) >= 3]
    bad = [w for w in judged if _mashed(w, s)]
    return bool(bad) and len(bad) >= s.share * len(judged)



def _mashed(word: str, s: _Scope) -> bool:
    if _REPEAT.search(word) or (len(word) >= 4 and any(word in row for row in s.key_rows)):
        return True
    if _CJK_RUN.fullmatch(word):
        return False  # Chinese without repeats: no letter model to judge it by
    if len(word) >= 4 and not re.search(r"[aeiouy]", word):
        return True
    return len(word) >= s.min_len and _logprob(word) < s.max_logprob


def _logprob(word: str) -> float:
    """Mean log P(next letter | letter) of `^word$` under the kb's English letter bigrams."""
    table, totals = _bigrams()
    w = f"^{word}$"
    lp = 0.0
    for a, b in zip(w, w[1:]):
        lp += math.log((table.get(a + b, 0) + 1) / (totals.get(a, 0) + 28))
    return lp / (len(w) - 1)


@lru_cache(maxsize=1)
def _bigrams() -> tuple[Counter, Counter]:
    """Letter-pair counts of the kb's English prose: what English in this domain looks like."""
    from assistant.config import KB_DIR

    pairs: Counter = Counter()
    firsts: Counter = Counter()
    for path in sorted((KB_DIR / "en").rglob("*.md")):
        for word in re.findall(r"[a-z]+", path.read_text(encoding="utf-8").lower()):
            w = f"^{word}$"
            for a, b in zip(w, w[1:]):
                pairs[a + b] += 1
                firsts[a] += 1
    return pairs, firsts
