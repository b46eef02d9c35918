"""Secrets out of every answer: the configured ones by value, well-known key shapes by form.

A stream is redacted across its delta boundaries: a key the model splits over two deltas ("sk-ab" +
"cdef...") is still one key. `StreamRedactor` holds back the tail that could still become (or grow) a
secret: the last `longest configured secret - 1` characters, and any run of key characters that reaches
the end. Its pieces joined are exactly `Redactor.scrub` of the whole text, so what a front end streamed
and the final answer agree.
"""
from __future__ import annotations

import re
import string
from dataclasses import dataclass
from functools import cached_property
from typing import Iterable

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 4  # a shorter configured value would redact ordinary words
_KEY_SET = string.ascii_letters + string.digits + "_-"
# Shapes of well-known secrets, scrubbed even when they were never configured here. A match lies inside
# one run of key characters (the stream never cuts a run) and starts where no identifier goes on
# (`validate_hf_model_for_pipeline_support` is a function name); a CJK letter before a key is no word.
_SHAPES = re.compile(r"(?<![A-Za-z0-9_])(?:sk-[A-Za-z0-9_-]{16,}|xox[abposr]-[A-Za-z0-9-]{10,}"
                     r"|xapp-[A-Za-z0-9-]{10,}|hf_[A-Za-z0-9]{20,})")


@dataclass(frozen=True)
class Redactor:
    secrets: tuple[str, ...] = ()  # configured values, longest first

    @classmethod
    def of(cls, values: Iterable[str | None]) -> "Redactor":
        kept = {v for v in values if isinstance(v, str) and len(v) >= MIN_SECRET_CHARS}
        return cls(tuple(sorted(kept, key=len, reverse=True)))

    @cached_property
    def _literal(self) -> re.Pattern | None:
        return re.compile("|".join(map(re.escape, self.secrets))) if self.secrets else None

    def scrub(self, text: str) -> str:
        literal = self._literal
        if literal is not None:
            text = literal.sub(REDACTED, text)
        return _SHAPES.sub(REDACTED, text)

    def stream(self) -> "StreamRedactor":
        return StreamRedactor(self)


class StreamRedactor:
    """feed(delta) -> the redacted text that is safe to show so far; close() -> the rest."""

    def __init__(self, redactor: Redactor):
        self._r = redactor
        self._literal = redactor._literal
        self._hold = max((len(s) for s in redactor.secrets), default=1) - 1
        self._buf = ""

    def feed(self, delta: str) -> str:
        self._buf += delta
        cut = self._safe_cut()
        out, self._buf = self._buf[:cut], self._buf[cut:]
        return self._r.scrub(out) if out else ""

    def close(self) -> str:
        out, self._buf = self._buf, ""
        return self._r.scrub(out) if out else ""

    def _safe_cut(self) -> int:
        """The longest prefix no secret crosses: every configured secret that starts in it ends in it,
        and no run of key characters runs over its end."""
        buf = self._buf
        cut = max(0, len(buf) - self._hold)
        spans = [m.span() for m in self._literal.finditer(buf)] if self._literal is not None else []
        while True:
            before = cut
            if cut == len(buf) or buf[cut] in _KEY_SET:
                cut = len(buf[:cut].rstrip(_KEY_SET))  # back to the start of the run it would split
            for start, end in spans:
                if start < cut < end:
                    cut = start
            if cut == before:
                return cut
