"""The question as the extractive answer weighs it (compose/knowledge/extract.py picks the kb sentences
inside the retrieved chunks that answer it): its terms with their weights (its own words, the glossary's
English terms of a Chinese question, the other words of a cue group at a discount), its identifiers,
the values it states for a field, and whether it asks what something is or how many. Tokens come from
the BM25 channel's tokenizer, passed in, so the question is read the way retrieval read it; the cues
are question_terms.yaml (`cues.Reading.terms`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Callable

from assistant.datafile import read_yaml

_FILE = Path(__file__).with_name("question_terms.yaml")
MAX_QUESTION_CHARS = 4000
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_IDENT = re.compile(r"`[^`\n]+`|[A-Za-z_][A-Za-z0-9_]*(?:[._][A-Za-z0-9_]+)+|[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z]+[A-Z][A-Za-z0-9]*")
_VALUE_IN_QUESTION = re.compile(
    r"(?<![A-Za-z0-9_])([a-z][a-z0-9]*_[a-z0-9_]+)`?\s*(?:is|was|=|==|:|of|to|at|为|是|设为|设成|设置为|等于)?\s*(\d+)(?![\d.])",
    re.IGNORECASE)


@dataclass(frozen=True)
class _Cues:
    discount: float
    groups: tuple[frozenset[str], ...]
    definition_question: tuple[re.Pattern[str], ...]
    quantity_question: tuple[re.Pattern[str], ...]


@lru_cache(maxsize=1)
def _cues() -> _Cues:
    data = read_yaml(_FILE)
    return _Cues(float(data["discount"]), tuple(frozenset(str(w).lower() for w in g) for g in data["groups"]),
                 tuple(re.compile(p, re.IGNORECASE) for p in data["definition_question"]),
                 tuple(re.compile(p, re.IGNORECASE) for p in data["quantity_question"]))


class QuestionTerms:
    """One question (its first MAX_QUESTION_CHARS), read for the extractive answer."""

    def __init__(self, text: str):
        self._q = (text or "")[:MAX_QUESTION_CHARS]
        self._by_tok: list = []  # (tokenizer, (terms, identifiers)): a tokenizer need not be hashable

    @property
    def empty(self) -> bool:
        return not self._q.strip()

    @cached_property
    def defines(self) -> bool:
        """"what is HSDP?": the sentence that spells it out is preferred."""
        return any(p.search(self._q) for p in _cues().definition_question)

    @cached_property
    def counts(self) -> bool:
        """"how many microbatches?": the sentence with the arithmetic is preferred."""
        return any(p.search(self._q) for p in _cues().quantity_question)

    @cached_property
    def stated(self) -> dict[str, int]:
        """field -> the value the question states for it (`ep_size is 1`, `tp_size=4`)."""
        return {m.group(1).lower(): int(m.group(2)) for m in _VALUE_IN_QUESTION.finditer(self._q)}

    def terms(self, tok: Callable[[str], list[str]]) -> dict[str, float]:
        """Question term -> weight factor, under that tokenizer."""
        return self._read(tok)[0]

    def identifiers(self, tok: Callable[[str], list[str]]) -> set[str]:
        """The question's identifiers as whole tokens under that tokenizer."""
        return self._read(tok)[1]

    def _read(self, tok):
        for t, read in self._by_tok:
            if t is tok:
                return read
        read = (_question_terms(self._q, tok), _identifier_tokens(self._q, tok))
        self._by_tok.append((tok, read))
        return read


def tokens(text: str, tok: Callable[[str], list[str]]) -> set[str]:
    """The tokenizer's tokens plus the pieces of dotted paths: `moe.reshard_after_forward` also
    yields `reshard_after_forward`."""
    out = set(tok(text))
    out.update(p for t in list(out) if "." in t for p in t.split(".") if p)
    out.update(_singular(t) for t in list(out))
    return out


def _singular(word: str) -> str:
    """English plural -> singular, so "microbatches" meets "microbatch" and "runs" meets "run"."""
    if not word.isascii() or not word.isalpha() or len(word) < 4:
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _question_terms(question: str, tok: Callable[[str], list[str]]) -> dict[str, float]:
    """Question term -> weight factor: its own words 1.0; glossary English terms of a Chinese
    question and the cue words of its groups at a discount."""
    own = {t for t in tokens(question, tok) if len(t) > 1 or t.isdigit() or _CJK.search(t)}
    terms = {t: 1.0 for t in own}
    gloss = glossary()
    if gloss is not None and _CJK.search(question):
        # the English terms of the glossary entries a Chinese question names: an English chunk can match
        for t in tokens(gloss.expand(question), tok):
            terms.setdefault(t, 1.0)
        # and the Chinese terms of the English ones it mixes in ("pipeline step 跑几个 microbatch"):
        # the Chinese chunk writes 微批次
        low = question.lower()
        for entry, en_terms in zip(gloss.entries, _en_term_patterns()):
            if any(term in low and pat.search(low) for term, pat in en_terms):
                for zh in entry.zh:
                    for t in tokens(zh, tok):
                        terms.setdefault(t, 1.0)
    cues = _cues()
    for group in cues.groups:
        if own & group:
            for t in group:
                terms.setdefault(t, cues.discount)
    return terms


def _identifier_tokens(question: str, tok: Callable[[str], list[str]]) -> set[str]:
    out: set[str] = set()
    for m in _IDENT.finditer(question):
        words = tok(m.group(0).strip("`"))
        out.update(words[:1])  # the whole identifier, not its parts
    return out


@lru_cache(maxsize=1)
def _en_term_patterns() -> tuple[tuple[tuple[str, re.Pattern[str]], ...], ...]:
    """Per glossary entry, (term, pattern) for each English term, compiled once: built per question
    they were ~390 patterns that evicted the vocabulary patterns from `re`'s cache. The substring test
    before each search keeps a Chinese question from running them all."""
    gloss = glossary()
    return tuple(tuple((e.lower(), re.compile(rf"(?<![a-z0-9_]){re.escape(e.lower())}(?![a-z0-9_])")) for e in entry.en)
                 for entry in (gloss.entries if gloss is not None else ()))


@lru_cache(maxsize=1)
def glossary():
    """The kb glossary (zh -> en terms), None when it cannot be read."""
    from assistant.config import KB_DIR
    from assistant.index.glossary import load_glossary

    try:
        return load_glossary(KB_DIR / "glossary.yaml")
    except (OSError, ValueError):
        return None
