"""Slips of the keyboard in a question's prose ("is this valdi?", "a pipline block", "what does it
meen"), read as the word of the ask patterns (asks.yaml) they are one slip away from, so the asks are
detected as meant. Pasted config and error text are never respelled (asks.py reads only the prose)."""
from __future__ import annotations

import difflib
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from assistant.datafile import read_yaml
from assistant.understand.gibberish import kb_words

_HERE = Path(__file__)
_ASKS_PATH = _HERE.with_name("asks.yaml")
_WORD = re.compile(r"[A-Za-z]{4,}")


@lru_cache(maxsize=1)
def _vocabulary() -> tuple[frozenset[str], tuple[str, ...]]:
    """Every word spelled as meant (the kb's English prose, the model table, the ask patterns), and the
    words of the ask patterns, which a misspelling is corrected to."""
    from assistant.config import KB_DIR

    data = read_yaml(_ASKS_PATH)
    sources = [data["split"], data["domain"]] + [p for ps in data["kinds"].values() for p in ps] + \
        [p for ps in data["quantity_targets"].values() for p in ps]
    # the letters of a regex's literal words; `\b`, `\s` and `\w` escapes leave a stray letter in front
    trigger = {w.lower() for src in sources for w in re.findall(r"(?<![\\])[a-z]{4,}", re.sub(r"\\[a-zA-Z]", " ", src))}
    texts = [(KB_DIR / "models.yaml").read_text(encoding="utf-8"), _HERE.with_name("intents.yaml").read_text(encoding="utf-8")]
    known = {w.lower() for text in texts for w in _WORD.findall(text)} | set(kb_words())
    return frozenset(known | trigger), tuple(sorted(trigger))


def respelled(prose: str) -> str:
    """"is this valdi?", "a pipline block", "what does it meen": a word that is in neither the kb
    nor the ask patterns, one slip away from a word of the patterns, read as that word (difflib's
    ratio, as the validator's "did you mean")."""
    known, trigger = _vocabulary()

    def fix(m: re.Match) -> str:
        word = m.group(0)
        low = word.lower()
        if low in known or _VERSION_NEXT.match(prose, m.end()):
            return word  # "minimax m2.5", "kimi-k2": a name with its version is not a slip
        close = difflib.get_close_matches(low, _candidates(low), n=1, cutoff=_SPELLING_CUTOFF)
        # a slip keeps the first letter: "sbatch" is no "batch"; and it drops or adds at most two letters:
        # "thinking" is no "thing"
        return close[0] if close and close[0][0] == low[0] and abs(len(close[0]) - len(low)) <= _MAX_SLIP_LETTERS \
            else word

    return _WORD.sub(fix, prose)


@lru_cache(maxsize=1)
def _letter_counts() -> tuple[np.ndarray, np.ndarray]:
    """Each pattern word's length and count of each letter a-z (the words are lowercase ASCII)."""
    trigger = _vocabulary()[1]
    counts = np.zeros((len(trigger), 26), dtype=np.int32)
    for i, w in enumerate(trigger):
        np.add.at(counts[i], np.frombuffer(w.encode("ascii"), dtype=np.uint8) - 97, 1)
    return np.fromiter(map(len, trigger), dtype=np.int32, count=len(trigger)), counts


def _candidates(low: str) -> list[str]:
    """The pattern words difflib's two upper bounds (real_quick_ratio: the lengths; quick_ratio: the
    letters in common) leave above the cutoff, in their order. get_close_matches drops the others
    before it computes a ratio, so its answer over these is its answer over all 385 words; the bounds
    here are one numpy step, where difflib built a matcher per word (18 ms per unknown word)."""
    trigger = _vocabulary()[1]
    lengths, counts = _letter_counts()
    word = np.bincount(np.frombuffer(low.encode("ascii"), dtype=np.uint8) - 97, minlength=26)[:26]
    common = np.minimum(counts, word).sum(axis=1)
    total = lengths + len(low)
    # difflib's own arithmetic (2.0 * matches / length, in float64), so a bound is >= the cutoff here
    # exactly where it is there
    keep = (2.0 * np.minimum(lengths, len(low)) / total >= _SPELLING_CUTOFF) & (2.0 * common / total >= _SPELLING_CUTOFF)
    return [trigger[i] for i in np.flatnonzero(keep)]


@lru_cache(maxsize=1)
def _zh_slips() -> tuple[tuple[re.Pattern, str], ...]:
    return tuple((re.compile(pat), word) for pat, word in read_yaml(_HERE.with_name("vocab.yaml"))["zh_slips"])


def zh_respelled(text: str) -> str:
    """"每张卡占多少现存", "梯度规约用什么精度": a Chinese homophone slip (vocab.yaml `zh_slips`) read
    as the word meant, so the whole question (asks, intent, retrieval) sees 显存 / 归约."""
    if not re.search(r"[\u3400-\u9fff]", text):
        return text
    for pat, word in _zh_slips():
        text = pat.sub(word, text)
    return text


_VERSION_NEXT = re.compile(r"[\s_-]*[A-Za-z]?\d")
_MAX_SLIP_LETTERS = 2  # "pipline" -> "pipeline" is one; "thinking" -> "thing" (three) is another word
_SPELLING_CUTOFF = 0.75  # "meen" -> "mean" scores 0.75; "lorem" is nothing's slip
