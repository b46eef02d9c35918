"""Verdict claims in text that is not the validator's (a model's prose, a retrieved chunk)."""
from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from assistant.datafile import read_yaml

CLAIMS_PATH = Path(__file__).with_name("claims.yaml")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？；;])\s*")


@cache
def _patterns() -> tuple[re.Pattern, ...]:
    return tuple(re.compile(p, re.I) for p in read_yaml(CLAIMS_PATH)["patterns"])


def has_claim(text: str) -> bool:
    return any(p.search(text) for p in _patterns())


def sentences(text: str) -> list[str]:
    """The sentences of one line (a sentence ends at . ! ? ; and their Chinese forms)."""
    return [s for s in _SENTENCE_END.split(text) if s]


def drop_claims(line: str) -> str:
    """The line without its sentences that claim a verdict; "" when nothing else was on it."""
    if not has_claim(line):
        return line
    end = line[len(line.rstrip("\r\n")):]
    kept = [s for s in sentences(line.rstrip("\r\n")) if not has_claim(s)]
    return (" ".join(kept) + end) if kept else ""
