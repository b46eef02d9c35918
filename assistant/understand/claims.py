"""The claims a question makes ("the docstring says X defaults to True, so ...?", "ep 必须等于 dp 对吧"),
read once (issue 18): whether it states or checks a claim at all, which claims of claims.yaml its
words hold, the default it claims for a named field, as the config loader would read the value, and
the features it says a strategy lacks ("ddp can't do tp", "megatron_fsdp 不支持张量并行", `Claim.denied`):
the polarity a yes/no answer on a capability is relative to, read here and nowhere else.
compose/knowledge/corrections.py corrects them from the code (`cues.Reading.claim`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from assistant.datafile import read_yaml
from assistant.understand.params import load_vocab, mask_formulas, normalize
from assistant.validator.coerce import translate_value
from assistant.validator.fields import FieldRef, field_table

_PATH = Path(__file__).with_name("claims.yaml")
MAX_QUESTION_CHARS = 8000  # a claim is stated in prose; a long paste is read only up to here
UNKNOWN = object()  # a claimed word that is no value ("defaults to the world size")
# What may stand between two chained feature names ("pp or cp", "TP 和 PP"): they share one denial.
_CHAIN_GAP = re.compile(r"\s*(?:,|/|\+|&|\bor\b|\bnor\b|\band\b|、|或|和|以及|及|也)\s*(?:_size\s*)?", re.I)
_ALTERNATIVE = re.compile(r"`?\s*(?:还是|或者|或是|or\b|/)", re.I)


@dataclass(frozen=True)
class _Row:
    key: str
    when: tuple[tuple[re.Pattern[str], ...], ...]
    unless: tuple[re.Pattern[str], ...]


@dataclass(frozen=True)
class _Data:
    cues: tuple[re.Pattern[str], ...]
    rows: tuple[_Row, ...]
    default_claims: tuple[re.Pattern[str], ...]
    truthy: frozenset[str]
    falsy: frozenset[str]
    denial_before: re.Pattern[str]
    denial_after: re.Pattern[str]


def _rx(p: str) -> re.Pattern[str]:
    return re.compile(p, re.IGNORECASE | re.DOTALL)


def _group(g) -> tuple[re.Pattern[str], ...]:
    return tuple(_rx(p) for p in (g if isinstance(g, list) else [g]))


@lru_cache(maxsize=1)
def _data() -> _Data:
    d = read_yaml(_PATH)
    rows = tuple(_Row(r["id"], tuple(_group(g) for g in r["when"]), tuple(_rx(p) for p in r.get("unless") or ()))
                 for r in d["rows"])
    return _Data(tuple(_rx(p) for p in d["cues"]), rows, tuple(_rx(p) for p in d["default_claims"]),
                 frozenset(str(v).lower() for v in d["truthy"]), frozenset(str(v).lower() for v in d["falsy"]),
                 _rx(d["denial"]["before"]), _rx(d["denial"]["after"]))


def claim_keys() -> tuple[str, ...]:
    """The ids of the claims read (compose/knowledge/corrections.yaml words each)."""
    return tuple(r.key for r in _data().rows)


@dataclass(frozen=True)
class DefaultClaim:
    """A default claimed in the text ("defaults to True"): where, as written, and as the loader reads it."""
    pos: int
    raw: str
    value: Any


class Claim:
    """What one text (its first MAX_QUESTION_CHARS) claims."""

    def __init__(self, text: str):
        self._t = text[:MAX_QUESTION_CHARS]

    @cached_property
    def makes_claim(self) -> bool:
        """The text states or checks a claim (a "so ...?", "right?", "the doc says", "对吧")."""
        return any(c.search(self._t) for c in _data().cues)

    @cached_property
    def _said(self) -> dict[str, str]:
        """Row id -> the words of its first group, for the rows whose every group matches."""
        out = {}
        for r in _data().rows:
            found = [next((m for p in g if (m := p.search(self._t))), None) for g in r.when]
            if all(found):
                out[r.key] = found[0].group(0)
        return out

    @cached_property
    def rows(self) -> tuple[tuple[str, str], ...]:
        """(row id, the words the claim is about, as written) of each claim the text holds, in row
        order; a row's `unless` vetoes it."""
        d = _data()
        return tuple((r.key, self._said[r.key]) for r in d.rows
                     if r.key in self._said and not any(p.search(self._t) for p in r.unless))

    @cached_property
    def denied(self) -> frozenset[str]:
        """The features (vocab.yaml `features`: tp, pp, cp, ep, sp, hsdp, ...) the text says something lacks:
        a denial right before the feature's name ("can't do tp", "has no tensor parallelism", "不支持 cp",
        "开不了 pp") or right after it ("tp isn't supported", "pp 是不是不能开"), the names chained to it
        sharing it ("can't do pp or cp"). A size stated beside it ("we want tp 2") does not change what the
        claim says, unlike Params.unwanted, which is the user's own exclusion."""
        d = _data()
        text = mask_formulas(normalize(self._t))
        found = sorted((m.start(), m.end(), feat) for feat, pat in load_vocab().features.items()
                       for m in pat.finditer(text))
        out: set[str] = set()
        chained_to: str | None = None  # the denial the previous mention carried, while a chain goes on
        last_end = -1
        for start, end, feat in found:
            gap = text[last_end:start] if last_end >= 0 else None
            chained = gap is not None and _CHAIN_GAP.fullmatch(gap) is not None and chained_to is not None
            if start < last_end:
                continue  # "tp" inside "tp_size" already read
            denied = chained or d.denial_before.search(text[max(0, start - 60):start]) is not None \
                or d.denial_after.match(text[end:end + 40]) is not None
            if denied:
                out.add(feat)
            chained_to = feat if denied else None
            last_end = end
        return frozenset(out)

    @cached_property
    def strategies_named(self) -> tuple[str, ...]:
        """The strategies the text names, in the order first named: a switch names two ("we run fsdp2 ...
        if we switch to ddp, do we keep cp?"), so a verdict on one of them says what the switch keeps."""
        text = normalize(self._t)
        found = []
        for name, pat in load_vocab().strategies.items():
            for m in pat.finditer(text):
                if name == "fsdp2" and re.search(r"megatron[\s_-]*$", text[:m.start()], re.I):
                    continue  # the "fsdp" of "megatron fsdp"
                found.append((m.start(), name))
                break
        return tuple(n for _, n in sorted(found))

    def holds(self, key: str) -> bool:
        """The text is the claim of that row (every group matches; `unless` not read)."""
        return key in self._said

    @cached_property
    def named_fields(self) -> tuple[tuple[int, FieldRef], ...]:
        """(position, row) of the fields the text names whose default a claim can be about."""
        return tuple((pos, r) for pos, r in field_table().mentions(self._t)
                     if not r.is_strategy_name and not isinstance(r.default, dict))

    @cached_property
    def defaults_claimed(self) -> tuple[DefaultClaim, ...]:
        """Each default the text claims, in the order of the patterns and then of the text; "默认是 true
        还是 false" (a question between values) and a word that is no value claim none."""
        out = []
        for rx in _data().default_claims:
            for m in rx.finditer(self._t):
                if _ALTERNATIVE.match(self._t, m.end()):
                    continue
                value = _value(m.group("value"))
                if value is not UNKNOWN:
                    out.append(DefaultClaim(m.start(), m.group("value"), value))
        return tuple(out)


def _value(raw: str) -> Any:
    """The claimed value as the config loader would read it; UNKNOWN for a word that is no value."""
    low = raw.strip("`'\"").lower()
    d = _data()
    if low in d.truthy:
        return True
    if low in d.falsy:
        return False
    if low in ("none", "null"):
        return None
    v = translate_value(low)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v
    return low if low in _known_values() else UNKNOWN


@lru_cache(maxsize=1)
def _known_values() -> frozenset[str]:
    """Values the reference itself uses (`bfloat16`, `1f1b`, `up`): a claimed default among them is a value."""
    words: set[str] = set()
    for r in field_table().refs:
        words.update(show_value(a).lower() for a in r.allowed)
        if not isinstance(r.default, dict):
            words.add(show_value(r.default).lower())
    return frozenset(words)


def show_value(v: Any) -> str:
    """A value as YAML writes it (`null`, `true`), to compare a claimed default with the reference's."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)
