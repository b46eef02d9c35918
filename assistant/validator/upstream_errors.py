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
