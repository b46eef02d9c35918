"""Wrong claims a question repeats ("the docstring says X defaults to True, so ...?", "ep 必须等于 dp
对吧"): the correction, from the upstream code, as the answer's first sentence.

Two sources, both data: the rows of `corrections.yaml` (each a CODE-FACTS point the skill doc or a
guide states otherwise), and the field reference for a default claimed for a named field. A claim
the code agrees with gets no correction (the asks answer it).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from assistant.compose.phrases import Fact
from assistant.datafile import read_yaml
from assistant.validator.coerce import translate_value
from assistant.validator.fields import field_table

_PATH = Path(__file__).with_name("corrections.yaml")
_MAX_QUESTION_CHARS = 8000  # a claim is stated in prose; a long paste is read only up to here


@dataclass(frozen=True)
class Correction(Fact):
    """A fact sentence (cited the same way) that corrects a claim."""
    layout_lead: bool = False  # the claim would reject a layout the code accepts (a judged layout leads)


@dataclass(frozen=True)
class _Row:
    key: str
    when: tuple[tuple[re.Pattern[str], ...], ...]
    unless: tuple[re.Pattern[str], ...]
    correction: Correction


@dataclass(frozen=True)
class _Data:
    cues: tuple[re.Pattern[str], ...]
    rows: tuple[_Row, ...]
    default_claims: tuple[re.Pattern[str], ...]
    truthy: frozenset[str]
    falsy: frozenset[str]
    phrases: dict
    default_docs: tuple[str, ...]


def _rx(p: str) -> re.Pattern[str]:
    return re.compile(p, re.IGNORECASE | re.DOTALL)


def _group(g) -> tuple[re.Pattern[str], ...]:
    return tuple(_rx(p) for p in (g if isinstance(g, list) else [g]))


@lru_cache(maxsize=1)
def _data() -> _Data:
    d = read_yaml(_PATH)
    rows = tuple(
        _Row(r["id"], tuple(_group(g) for g in r["when"]), tuple(_rx(p) for p in r.get("unless") or ()),
             Correction(r["id"], r["en"], r["zh"], tuple(r.get("docs") or ()), tuple(r.get("terms") or ()),
                        bool(r.get("layout_lead"))))
        for r in d["rows"])
    return _Data(tuple(_rx(p) for p in d["cues"]), rows, tuple(_rx(p) for p in d["default_claims"]),
                 frozenset(str(v).lower() for v in d["truthy"]), frozenset(str(v).lower() for v in d["falsy"]),
                 d["phrases"], tuple(d.get("default_docs") or ()))


def claims(text: str) -> bool:
    """Whether the text states or checks a claim (a "so ...?", "right?", "the doc says", "对吧")."""
    return any(c.search(text) for c in _data().cues)


def corrections(text: str, lang: str, prose: str | None = None) -> list[Correction]:
    """The corrections the question's claims call for, in the order of the rows; [] for none. With
    `prose` (the question without its pasted error and config), the claim must be made there: an
    error message states no claim, though it may name what the claim is about."""
    if not isinstance(text, str) or not text.strip():
        return []
    text = text[:_MAX_QUESTION_CHARS]
    if not claims(prose if isinstance(prose, str) and prose.strip() else text):
        return []
    d = _data()
    out = []
    for r in d.rows:
        found = [next((m for p in g if (m := p.search(text))), None) for g in r.when]
        if all(found) and not any(p.search(text) for p in r.unless):
            # `{match}` in a correction names what the user wrote (the doc's `interleaved_1f1b`)
            said = found[0].group(0)
            c = r.correction
            out.append(replace(c, en=c.en.replace("{match}", said), zh=c.zh.replace("{match}", said)))
    wrong = _default_claim(text, lang)
    return out + ([wrong] if wrong is not None else [])


def covers(c: Correction, clause: str) -> bool:
    """Whether a clause of the question is the claim `c` corrects (the correction answers that ask)."""
    if c.key.startswith("default:"):
        return any(r.path == c.key.removeprefix("default:") for r in field_table().mentioned(clause))
    row = next((r for r in _data().rows if r.key == c.key), None)
    return row is not None and all(any(p.search(clause) for p in g) for g in row.when)


_ANSWER_WORD = re.compile(r"^(?:No|Yes)\b[,:]?\s*|^(?:不是|不对|不行|不会|是的)[：:，,]\s*")


def without_answer_word(text: str) -> str:
    """The correction without its leading "No:" (another answer already says yes or no)."""
    body = _ANSWER_WORD.sub("", text, count=1)
    return body[:1].upper() + body[1:] if body else text


def _default_claim(text: str, lang: str) -> Correction | None:
    """A default claimed for a named field that the field reference contradicts ("enable_fsdp2_prefetch
    defaults to True" -> it defaults to false); None when no default is claimed or the code agrees."""
    d = _data()
    named = [(pos, r) for pos, r in field_table().mentions(text)
             if not r.is_strategy_name and not isinstance(r.default, dict)]
    if not named:
        return None
    for rx in d.default_claims:
        for m in rx.finditer(text):
            if _ALTERNATIVE.match(text, m.end()):
                continue  # "默认是 true 还是 false": a question between values, no claim
            claimed = _value(m.group("value"))
            if claimed is _UNKNOWN:
                continue
            # the field named last before the claim, else the first one after it
            before = [(pos, r) for pos, r in named if pos <= m.start()]
            ref = (before[-1] if before else named[0])[1]
            rows = [r for _, r in named if r.key == ref.key]
            if any(_same(claimed, r.default) for r in rows) or len({_show(r.default) for r in rows}) > 1:
                # the code agrees, or the key lives in blocks with different defaults and the question
                # names none: the field facts answer it block by block
                return None
            values = {"path": ref.path, "default": _show(ref.default), "upstream": ref.upstream,
                      "claimed": m.group("value")}
            en, zh = (d.phrases["default_wrong"][k].format(**values) for k in ("en", "zh"))
            sep = {"en": " ", "zh": ""}
            en, zh = ((t + sep[k] + ref.note(k)) if ref.note(k) else t for k, t in (("en", en), ("zh", zh)))
            return Correction(f"default:{ref.path}", en, zh, d.default_docs, (ref.key,))
    return None


_UNKNOWN = object()
_ALTERNATIVE = re.compile(r"`?\s*(?:还是|或者|或是|or\b|/)", re.I)


def _value(raw: str) -> Any:
    """The claimed value as the config loader would read it; _UNKNOWN for a word that is no value
    ("defaults to the world size")."""
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
    return low if low in _known_values() else _UNKNOWN


@lru_cache(maxsize=1)
def _known_values() -> frozenset[str]:
    """Values the reference itself uses (`bfloat16`, `1f1b`, `up`): a claimed default among them is a value."""
    words: set[str] = set()
    for r in field_table().refs:
        words.update(_show(a).lower() for a in r.allowed)
        if not isinstance(r.default, dict):
            words.add(_show(r.default).lower())
    return frozenset(words)


def _same(claimed: Any, default: Any) -> bool:
    return _show(claimed).lower() == _show(default).lower()


def _show(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def phrase(key: str, lang: str) -> str:
    return _data().phrases[key]["zh" if lang == "zh" else "en"]


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])|(?<=[。！？])")


def first_sentence_of(text: str) -> str:
    """The first sentence, with code spans kept whole (a `.` inside backticks ends nothing)."""
    masked = re.sub(r"`[^`]*`", lambda m: "x" * len(m.group(0)), text)
    m = _SENTENCE_END.search(masked)
    return text[:m.start()].rstrip() if m else text
