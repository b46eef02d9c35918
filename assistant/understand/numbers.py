"""Numbers as people write them in questions: `64`, `eight`, `sixty-four`, `八`, `两`, `六十四`, `1,024`."""
from __future__ import annotations

import re

_EN_UNITS = {
    "a": 1, "an": 1, "one": 1, "single": 1, "two": 2, "pair": 2, "three": 3, "four": 4, "five": 5,
    "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19,
}
_EN_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}

_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "俩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "单": 1, "双": 2}
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10000}

# Regex fragments other modules embed to match a number token in either language.
EN_NUMBER_WORDS = r"(?:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[\s-](?:one|two|three|four|five|six|seven|eight|nine))?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|single)"
ZH_NUMBER = r"[零〇一二两俩三四五六七八九十百千万]+"
NUMBER = rf"(?:\d{{1,3}}(?:,\d{{3}})+(?!\d)|\d+|{EN_NUMBER_WORDS}|{ZH_NUMBER})"


def parse_number(token: str) -> int | None:
    """The integer a token spells, or None when it is not a number."""
    t = token.strip().lower()
    if not t:
        return None
    if re.fullmatch(r"\d{1,3}(,\d{3})+|\d+", t):
        return int(t.replace(",", ""))
    if t in _EN_UNITS:
        return _EN_UNITS[t]
    m = re.fullmatch(r"(twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[\s-](one|two|three|four|five|six|seven|eight|nine))?", t)
    if m:
        return _EN_TENS[m.group(1)] + (_EN_UNITS[m.group(2)] if m.group(2) else 0)
    if re.fullmatch(ZH_NUMBER + r"|[单双]", t):
        return _parse_zh(t)
    return None


def _parse_zh(t: str) -> int | None:
    # Positional shorthand such as 六四 is rare in this domain; treat digit runs without units as digits.
    if all(c in _ZH_DIGITS for c in t):
        if len(t) == 1:
            return _ZH_DIGITS[t]
        return int("".join(str(_ZH_DIGITS[c]) for c in t))
    total, section, digit = 0, 0, None
    for c in t:
        if c in _ZH_DIGITS:
            digit = _ZH_DIGITS[c]
        elif c in _ZH_UNITS:
            unit = _ZH_UNITS[c]
            if unit == 10000:
                total += (section + (digit or 0)) * unit
                section, digit = 0, None
            else:
                section += (digit if digit is not None else 1) * unit
                digit = None
        else:
            return None
    return total + section + (digit or 0)


def blank(text: str, span: tuple[int, int]) -> str:
    """The text with `span` turned to spaces: a consumed number is not read twice, and offsets hold."""
    a, b = span
    return text[:a] + " " * (b - a) + text[b:]
