"""Clauses that take their ask from another part of the question: an elliptic follow-on ("ep4 pp2 呢",
"and with cp 2?", "那 tp 3 呢", "tp 改成 4 的话呢", "And local to 4?") asks the asks before it again on
other values, and a back-reference to one of several layouts the question lists ("the second option",
"第二个方案") asks of that layout. This module is the one reader of both; asks.detect_asks calls it.

Only the exact parts are rules here: the size tokens (field names and numbers), the elliptic forms and
the ordinal words; what kind of ask a clause is stays the ask model's and asks.yaml's reading.
"""
from __future__ import annotations

import re
from typing import Sequence

from assistant.understand.query import Ask

# "tp 4", "tp_size=4", "ep8", "dp_replicate_size: 2": one parallel size as users write it
_SIZE = re.compile(r"(?<![A-Za-z0-9_])(?P<key>dp_replicate|tp|pp|cp|ep|dp)(?:_size)?\s*[=:：]?\s*(?P<n>\d{1,4})(?!\d|\s*(?:[x×*/%]|GPU|gpu|卡|张|层|layers?\b))")
# what may stand between the sizes of one layout: "tp 4 pp 2", "tp4·pp2", "tp 4 + cp 2", "tp 4 and pp 2"
_SAME_LAYOUT = re.compile(r"^(?:\s|[·+/&、]|\band\b|和|加)*$", re.I)
# the words around an elliptic follow-on that carry no ask of their own
_FILLER = re.compile(r"\b(?:and|or|but|so|then|also|now|what\s+about|how\s+about|with|if|instead|again|too|the|same|case"
                     r"|sizes?|layout|setting)\b|那么|那|要是|如果|假如|换成|改成|改为|再加上|再加|加上|再开|再|的话|时候|的|呢"
                     r"|又|这样|情况|[?？,，。.;；:：!！()（）\s·+/&、和]", re.I)

_ORDINALS: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(r"\b(?:first|1st)\s+(?:option|one|layout|choice|plan|config)|\boption\s*(?:a|1)\b|第一(?:个|种)?(?:方案|选项|配置)|方案\s*(?:a|一|1)\b|\ba\s*方案", re.I), 0),
    (re.compile(r"\b(?:second|2nd)\s+(?:option|one|layout|choice|plan|config)|\boption\s*(?:b|2)\b|第二(?:个|种)?(?:方案|选项|配置)|方案\s*(?:b|二|2)\b|\bb\s*方案", re.I), 1),
    (re.compile(r"\b(?:third|3rd)\s+(?:option|one|layout|choice|plan|config)|\boption\s*(?:c|3)\b|第三(?:个|种)?(?:方案|选项|配置)|方案\s*(?:c|三|3)\b|\bc\s*方案", re.I), 2),
    (re.compile(r"\b(?:last|final)\s+(?:option|one|layout|choice|plan|config)|最后(?:一|那)?(?:个|种)?(?:方案|选项|配置)", re.I), -1),
)


# "ep", "PP" written alone: the size field by its short name
_SHORT = re.compile(r"(?<![A-Za-z0-9_])(?P<key>tp|pp|cp|ep|dp)(?![A-Za-z0-9_])", re.I)


def short_size(text: str) -> str | None:
    """The size field a text names by its short name only ("ep 可以取哪些值": `ep_size`), else None."""
    m = _SHORT.search(text or "")
    return _key(m.group("key")) if m else None


def _key(short: str) -> str:
    return f"{short.lower()}_size"


def layouts(text: str) -> list[dict[str, int]]:
    """The layouts a text lists, in order: a new one starts where a size repeats a key of the one being
    read or other words stand between two sizes ("tp 2 pp 2, tp 4 pp 1 or tp 8")."""
    found: list[dict[str, int]] = []
    end = None
    for m in _SIZE.finditer(text or ""):
        key = _key(m.group("key"))
        if not found or key in found[-1] or not _SAME_LAYOUT.match(text[end:m.start()]):
            found.append({})
        found[-1][key] = int(m.group("n"))
        end = m.end()
    return found


def _as_layout(sizes: dict[str, int]) -> str:
    return ",".join(f"{k}={v}" for k, v in sizes.items())


def follow_on_sizes(clause: str) -> str | None:
    """"ep4 pp2 呢", "and with cp 2?", "那 tp 3 呢": the sizes of a clause that states nothing but other
    sizes (as `tp_size=3`, the form of `Ask.layout`); None when the clause says anything else."""
    found = layouts(clause)
    if len(found) != 1:
        return None
    if _FILLER.sub("", _SIZE.sub("", clause)):
        return None  # other words: the clause asks something of its own
    return _as_layout(found[0])


# "tp 改成 4 的话呢", "and with tp 4?", "what about pp 2?", "And local to 4?": a clause that only puts other
# values in place and asks "what about them"
_ELLIPTICAL = re.compile(r"(?:的话|时候?)?\s*呢\s*[?？]?\s*$|^\W*(?:and\s+)?(?:with|what\s+about|how\s+about)\b[^?]{0,40}[?]?\s*$"
                         r"|^\W*(?:and\s+)?(?:(?:if\s+)?(?:i\s+|we\s+)?(?:set|put|bump|raise|change|move)\s+)?[\w.]{1,30}\s+(?:to\s+)?\d+\s*[?]?\s*$", re.I)


def elliptic(clause: str, marked: bool) -> bool:
    """The clause asks nothing of its own but "and on these values?": only other sizes, asked by its
    question mark or a 呢 ("ep4 pp2 呢", "and with cp 2?"), or one of the elliptic forms ("tp 改成 4
    的话呢", "And local to 4?")."""
    if follow_on_sizes(clause) is not None and (marked or clause.rstrip().endswith("呢")):
        return True
    return _ELLIPTICAL.search(clause) is not None


def asked_again(last: Sequence[Ask], asks: Sequence[Ask], batch_field: bool) -> list[Ask]:
    """The asks an elliptic follow-on asks again: the numbers and verdicts of the clause before it
    (a second follow-on repeats the same, so `last` is the first follow-on's); when that clause asked no
    number and the follow-on changes a batch field ("梯度累积几步？这样跟多卡一样吗？local 改成 4 的话呢"), the
    numbers asked last, past the clauses between; [] when there is nothing to ask again."""
    again = [a for a in last if a.kind == "verdict" or a.kind == "quantity" and (a.target or a.borrowed)]
    if any(a.kind == "quantity" for a in again) or not batch_field:
        return again
    at = next((i for i in range(len(asks) - 1, -1, -1) if asks[i].kind == "quantity" and asks[i].target), None)
    return [] if at is None else [a for a in asks[at:] if a.kind == "quantity" and a.target and a.text == asks[at].text]


def referenced_layout(clause: str, whole: str) -> str | None:
    """"What dp_size does the second option give?": the sizes of the listed layout the clause points at
    by its ordinal, every key any listed layout names set (1 where that one leaves it out, as upstream
    reads an unset size); None when the clause points at none or the question lists fewer than two."""
    listed = layouts(whole.replace(clause, " ")) if clause in whole else layouts(whole)
    if len(listed) < 2:
        return None
    for pattern, index in _ORDINALS:
        if pattern.search(clause):
            if index >= len(listed):
                return None
            keys = list(dict.fromkeys(k for lay in listed for k in lay))
            chosen = listed[index]
            return _as_layout({k: chosen.get(k, 1) for k in keys})
    return None
