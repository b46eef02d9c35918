"""assistant/cli/jsonlines.py: bounded line reading, strict parsing, strict output (issue 20.5, 20.6)."""
from __future__ import annotations

import io

import pytest

from assistant.cli.jsonlines import json_line, parse_line, read_lines


class _Endless(io.RawIOBase):
    """`size` bytes of one line, made on demand, then a short line; records the largest read."""

    def __init__(self, size: int):
        self.left, self.tail, self.largest = size, b'\n{"id": 2}\n', 0

    def readable(self):
        return True

    def readinto(self, buf):
        self.largest = max(self.largest, len(buf))
        if self.left > 0:
            n = min(len(buf), self.left)
            buf[:n] = b"x" * n
            self.left -= n
            return n
        n = min(len(buf), len(self.tail))
        buf[:n], self.tail = self.tail[:n], self.tail[n:]
        return n


def test_an_oversized_line_is_drained_in_pieces_and_the_next_line_is_read():
    raw = _Endless(64 << 20)
    got = list(read_lines(io.BufferedReader(raw, buffer_size=1 << 16), 1 << 20))
    assert got == [None, b'{"id": 2}\n']
    assert raw.largest <= (1 << 20) + (1 << 16)  # never a read of the whole line


def test_a_line_at_the_limit_is_kept_and_text_streams_work_too():
    assert list(read_lines(io.BytesIO(b"abcd\nabcde\nab"), 4)) == [b"abcd\n", None, b"ab"]
    assert list(read_lines(io.StringIO("abcd\nabcde\n"), 4)) == ["abcd\n", None]


@pytest.mark.parametrize("line,why", [
    (b'{"id": NaN}', "NaN"), (b'{"id": -Infinity}', "Infinity"), (b'{"id": 1e999}', "out of range"),
    (b"[" * 100_000, "nested too deeply"), (b'{"id": "\xff"}', "UTF-8"),
])
def test_lines_strict_json_rejects_are_clear_errors(line, why):
    with pytest.raises(ValueError, match=why):
        parse_line(line, 4)


def test_output_is_strict_json():
    assert json_line({"id": "a\ud800", "n": 1.5}) == '{"id": "a\ufffd", "n": 1.5}'
    with pytest.raises(ValueError):
        json_line({"x": float("nan")})
