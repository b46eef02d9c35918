"""The JSON-lines batch modes' input and output (`ask --json --stdin`, `validate --json --stdin`).

A line is read bounded: one longer than the limit is drained in pieces and never held whole (a
300 MB line read whole peaked at 1 GB RSS). It is parsed strictly: UTF-8 only, no NaN or Infinity
(they could not be echoed back as JSON), nesting too deep for the parser is that line's error. Every
answer is written as strict JSON, so one bad line never ends the batch or breaks a reader.
"""
from __future__ import annotations

import json
from typing import BinaryIO, Iterator, TextIO

from assistant.wellformed import well_formed


def read_lines(stream: BinaryIO | TextIO, limit: int) -> Iterator[bytes | str | None]:
    """Each line of `stream` (newline kept), or None for a line longer than `limit` bytes (characters
    for a text stream)."""
    while True:
        raw = stream.readline(limit + 1)
        if not raw:
            return
        nl = b"\n" if isinstance(raw, bytes) else "\n"
        if len(raw) > limit and not raw.endswith(nl):
            while True:  # drop the rest of the oversized line, a piece at a time
                more = stream.readline(limit)
                if not more or more.endswith(nl):
                    break
            yield None
            continue
        yield raw


def _reject_constant(name: str):
    raise ValueError(f"not strict JSON: {name} is not a JSON value")


def _finite(text: str) -> float:
    v = float(text)
    if v in (float("inf"), float("-inf")):
        raise ValueError(f"not strict JSON: {text} is out of range")
    return v


def parse_line(raw: bytes | str, line_no: int):
    """One batch line -> its JSON value; ValueError with a clear message for anything else."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"line {line_no} is not valid UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        return json.loads(raw, parse_constant=_reject_constant, parse_float=_finite)
    except RecursionError:
        raise ValueError(f"line {line_no} is nested too deeply to read") from None


def json_line(obj) -> str:
    """Strict JSON (ValueError on NaN or Infinity), well-formed UTF-8: a lone surrogate in an echoed
    id becomes U+FFFD."""
    return well_formed(json.dumps(obj, ensure_ascii=False, allow_nan=False))
