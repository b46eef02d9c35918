"""Keyboard mash: letters that spell no words, even around a domain word ("tp asdkjh qwpeoi", "fsdp 啊啊啊").
Real words of any topic ("what is the weather") are not gibberish: those are out of scope, and are told so.
Thresholds and known short terms: gibberish.yaml."""
from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from assistant.datafile import read_yaml

_FILE = Path(__file__).with_name("gibberish.yaml")
MAX_TEXT_CHARS = 4000
_REPEAT = re.compile(r"(.)\1{2,}")
_WORDS = re.compile(r"[a-z]+|[\u3400-\u9fff]+")
_CJK_RUN = re.compile(r"[\u3400-\u9fff]+")
_SOUP_WORDS = re.compile(r"[a-z][a-z0-9]*|[\u3400-\u9fff]")
_IDENTIFIER = re.compile(r"[a-z0-9]+(?:[_.][a-z0-9]+)+")  # tp_size, moe.mp_policy: code, not words


@dataclass(frozen=True)
class _Scope:
    key_rows: tuple[str, ...]
    known: frozenset[str]
    filler: frozenset[str]
    min_len: int
    max_logprob: float
    share: float


@lru_cache(maxsize=1)
def _scope() -> _Scope:
    g = read_yaml(_FILE)["gibberish"]
    return _Scope(tuple(g["key_rows"]), frozenset(g["known"]), frozenset(g["filler"]), int(g["min_len"]),
                  float(g["max_logprob"]), float(g["share"]))


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



def keyword_soup(text: str) -> bool:
    """"ep ep ep lorem ipsum ???", "tp tp 嗯嗯 那个": terms of the trade among filler, no number and nothing
    else; a question needs more than its keywords. A bare "tp?" or "fsdp2 ddp" is not soup: it needs
    filler or a term said three times over."""
    s = _scope()
    low = (text or "")[:MAX_TEXT_CHARS].lower()
    if re.search(r"\d", _IDENTIFIER.sub(" ", low).replace("fsdp2", "")):
        return False
    words = _SOUP_WORDS.findall(low)
    if not words or any(w not in s.known and w not in s.filler for w in words):
        return False
    said = Counter(words)
    return any(w in s.filler for w in words) or max(said.values()) >= 3


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
def kb_words() -> tuple[str, ...]:
    """The words of the kb's English prose, lower-cased, in file order: what English in this domain
    looks like (the letter model here, the spellings in spelling.py)."""
    from assistant.config import KB_DIR

    return tuple(w for path in sorted((KB_DIR / "en").rglob("*.md"))
                 for w in re.findall(r"[a-z]+", path.read_text(encoding="utf-8").lower()))


@lru_cache(maxsize=1)
def _bigrams() -> tuple[Counter, Counter]:
    """Letter-pair counts of the kb's English prose."""
    pairs: Counter = Counter()
    firsts: Counter = Counter()
    for word in kb_words():
        w = f"^{word}$"
        for a, b in zip(w, w[1:]):
            pairs[a + b] += 1
            firsts[a] += 1
    return pairs, firsts
