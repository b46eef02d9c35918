"""A pasted upstream error, traceback or log -> the rule codes whose upstream message it contains.

The patterns are the rule tables' `upstream_message` regexes (the text NeMo AutoModel, torch or
Python raises for that rule, numbers as named groups), the rule's own and its variants'. Matching searches every line, so log
prefixes (`[rank3]:`, timestamps, `ValueError: `) and surrounding traceback frames do not matter.

    match_upstream_error("[rank0]: ValueError: non_pp_size=12 must be a multiple of ep_size=8")
    -> [UpstreamErrorMatch(code="MW-E-EP-DIVIDES", values={"non_pp": "12", "ep": "8"}, ...)]
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from assistant.validator.findings import RULES

MAX_TEXT_CHARS = 256 * 1024  # a long log; beyond this only the end (where the exception is) is read
_MAX_LINE_CHARS = 4096  # a pattern never needs more than one line; longer lines are cut


@dataclass(frozen=True)
class UpstreamErrorMatch:
    code: str  # the rule code, e.g. "MW-E-EP-DIVIDES"
    values: dict[str, str]  # the named groups of the pattern that matched, as written in the text
    matched: str  # the matched text
    upstream: str  # the upstream file (and symbol) of the rule


@lru_cache(maxsize=1)
def _patterns() -> tuple[tuple[str, re.Pattern[str], str], ...]:
    out = []
    for rule in RULES.values():
        # a variant (the same code, another cause) may carry its own message and upstream file
        sources = [(rule.upstream, rule.upstream_message)]
        sources += [(v.get("upstream", rule.upstream), _as_tuple(v.get("upstream_message")))
                    for v in rule.variants.values()]
        for upstream, patterns in sources:
            upstream = upstream.split(" {", 1)[0] if "{" in upstream else upstream
            out.extend((rule.code, re.compile(p), upstream) for p in patterns)
    return tuple(out)


def _as_tuple(patterns: str | list[str] | None) -> tuple[str, ...]:
    return () if patterns is None else (patterns,) if isinstance(patterns, str) else tuple(patterns)


def match_upstream_error(text: str) -> list[UpstreamErrorMatch]:
    """Every rule whose upstream message occurs in `text`, in order of first occurrence, each
    (code, matched text) once (a multi-rank log repeats the same error per rank). Pure; never raises."""
    if not isinstance(text, str) or not text:
        return []
    text = text[-MAX_TEXT_CHARS:]
    found: dict[tuple[str, str], tuple[int, UpstreamErrorMatch]] = {}
    for n, line in enumerate(text.splitlines()):
        line = line[:_MAX_LINE_CHARS]
        for code, rx, upstream in _patterns():
            for m in rx.finditer(line):
                key = (code, m.group(0))
                if key not in found:
                    values = {k: v for k, v in m.groupdict().items() if v is not None}
                    found[key] = ((n, m.start()), UpstreamErrorMatch(code, values, m.group(0), upstream))
    return [m for _, m in sorted(found.values(), key=lambda x: x[0])]


_GROUP = re.compile(r"\(\?P<\w+>(?:[^()]|\([^()]*\))*\)")  # a named group, one level of nesting inside
_SYNTAX = re.compile(r"\\[dswDSWb]|\[[^\]]*\]|\(\?:|[()?+*|^${}]|\\")
_WORD = re.compile(r"[a-z0-9_]+")
MIN_QUOTED_WORDS = 4  # fewer literal words ("Unknown strategy: X") name too little to place a quote


@lru_cache(maxsize=1)
def _literal_words() -> tuple[tuple[str, tuple[str, ...], str], ...]:
    """(code, the pattern's literal words in order, upstream) for every upstream message."""
    out = []
    for code, rx, upstream in _patterns():
        text = _SYNTAX.sub(" ", _GROUP.sub(" ", rx.pattern)).lower()
        words = tuple(_WORD.findall(text))
        if len(words) >= MIN_QUOTED_WORDS:
            out.append((code, words, upstream))
    return tuple(out)


def quoted_rules(text: str) -> list[UpstreamErrorMatch]:
    """Rules whose upstream message a question quotes without its numbers ("where is `non_pp_size must
    be a multiple of ep_size` checked?"): every literal word of the message, in order, close together.
    Pure; never raises."""
    if not isinstance(text, str) or not text:
        return []
    tokens = _WORD.findall(text[:MAX_TEXT_CHARS // 64].lower())
    found: dict[str, tuple[int, UpstreamErrorMatch]] = {}
    for code, words, upstream in _literal_words():
        start = _in_order(words, tokens)
        if start is not None and code not in found:
            found[code] = (start, UpstreamErrorMatch(code, {}, " ".join(words), upstream))
    return [m for _, m in sorted(found.values(), key=lambda x: x[0])]


def _in_order(words: tuple[str, ...], tokens: list[str]) -> int | None:
    """Where `words` start inside `tokens` as a subsequence spanning at most twice their length."""
    for i, t in enumerate(tokens):
        if t != words[0]:
            continue
        j, k = i + 1, 1
        while k < len(words) and j < len(tokens) and j - i <= 2 * len(words) + 2:
            if tokens[j] == words[k]:
                k += 1
            j += 1
        if k == len(words):
            return i
    return None
