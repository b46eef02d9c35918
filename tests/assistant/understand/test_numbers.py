"""Numbers as written in questions."""
from __future__ import annotations

import pytest

from assistant.understand.numbers import parse_number


@pytest.mark.parametrize("tok,value", [
    ("64", 64), ("1,024", 1024), ("eight", 8), ("sixty-four", 64), ("thirty two", 32), ("a", 1),
    ("single", 1), ("八", 8), ("两", 2), ("十", 10), ("十六", 16), ("三十二", 32), ("六十四", 64),
    ("一百二十八", 128), ("二百五十六", 256), ("一千零二十四", 1024), ("单", 1), ("双", 2), ("二五六", 256),
])
def test_values(tok, value):
    assert parse_number(tok) == value


@pytest.mark.parametrize("tok", ["", "gpu", "8,64", "x", "卡"])
def test_not_numbers(tok):
    assert parse_number(tok) is None
