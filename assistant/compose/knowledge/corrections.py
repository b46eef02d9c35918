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
from assistant.understand.claims import claim_keys, show_value
from assistant.understand.cues import Reading

_PATH = Path(__file__).with_name("corrections.yaml")


@dataclass(frozen=True)
class Correction(Fact):
    """A fact sentence (cited the same way) that corrects a claim."""
    layout_lead: bool = False  # the claim would reject a layout the code accepts (a judged layout leads)


@dataclass(frozen=True)
class _Data:
    rows: dict[str, Correction]  # claim id (understand/claims.yaml) -> its correction, in row order
    phrases: dict
    default_docs: tuple[str, ...]


@lru_cache(maxsize=1)
def _data() -> _Data:
    d = read_yaml(_PATH)
    rows = {r["id"]: Correction(r["id"], r["en"], r["zh"], tuple(r.get("docs") or ()), tuple(r.get("terms") or ()),
                                bool(r.get("layout_lead")))
            for r in d["rows"]}
    if tuple(rows) != claim_keys():
        raise ValueError("corrections.yaml and understand/claims.yaml must hold the same rows in the same order")
    return _Data(rows, d["phrases"], tuple(d.get("default_docs") or ()))


def corrections(said: Reading, lang: str, prose: Reading | None = None) -> list[Correction]:
    """The corrections the question's claims call for, in the order of the rows; [] for none. With
    `prose` (the question without its pasted error and config), the claim must be made there: an
    error message states no claim, though it may name what the claim is about."""
    if not said.text_given:
        return []
    if not (prose if prose is not None and prose.text_given else said).claim.makes_claim:
        return []
    d = _data()
    out = []
    for key, words in said.claim.rows:
        # `{match}` in a correction names what the user wrote (the doc's `interleaved_1f1b`)
        c = d.rows[key]
        out.append(replace(c, en=c.en.replace("{match}", words), zh=c.zh.replace("{match}", words)))
    wrong = _default_claim(said, lang)
    return out + ([wrong] if wrong is not None else [])


def covers(c: Correction, said: Reading) -> bool:
    """Whether a clause of the question is the claim `c` corrects (the correction answers that ask)."""
    if c.key.startswith("default:"):
        return any(r.path == c.key.removeprefix("default:") for r in said.fields)
    return c.key in _data().rows and said.claim.holds(c.key)


_ANSWER_WORD = re.compile(r"^(?:No|Yes)\b[,:]?\s*|^(?:不是|不对|不行|不会|是的)[：:，,]\s*")


def without_answer_word(text: str) -> str:
    """The correction without its leading "No:" (another answer already says yes or no)."""
    body = _ANSWER_WORD.sub("", text, count=1)
    return body[:1].upper() + body[1:] if body else text


def _default_claim(said: Reading, lang: str) -> Correction | None:
    """A default claimed for a named field that the field reference contradicts ("enable_fsdp2_prefetch
    defaults to True" -> it defaults to false); None when no default is claimed or the code agrees."""
    d = _data()
    named = said.claim.named_fields
    if not named or not said.claim.defaults_claimed:
        return None
    claimed = said.claim.defaults_claimed[0]
    # the field named last before the claim, else the first one after it
    before = [(pos, r) for pos, r in named if pos <= claimed.pos]
    ref = (before[-1] if before else named[0])[1]
    rows = [r for _, r in named if r.key == ref.key]
    if any(_same(claimed.value, r.default) for r in rows) or len({show_value(r.default) for r in rows}) > 1:
        # the code agrees, or the key lives in blocks with different defaults and the question
        # names none: the field facts answer it block by block
        return None
    values = {"path": ref.path, "default": show_value(ref.default), "upstream": ref.upstream, "claimed": claimed.raw}
    en, zh = (d.phrases["default_wrong"][k].format(**values) for k in ("en", "zh"))
    sep = {"en": " ", "zh": ""}
    en, zh = ((t + sep[k] + ref.note(k)) if ref.note(k) else t for k, t in (("en", en), ("zh", zh)))
    return Correction(f"default:{ref.path}", en, zh, d.default_docs, (ref.key,))


def _same(claimed: Any, default: Any) -> bool:
    return show_value(claimed).lower() == show_value(default).lower()



def phrase(key: str, lang: str) -> str:
    return _data().phrases[key]["zh" if lang == "zh" else "en"]


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])|(?<=[。！？])")


def first_sentence_of(text: str) -> str:
    """The first sentence, with code spans kept whole (a `.` inside backticks ends nothing)."""
    masked = re.sub(r"`[^`]*`", lambda m: "x" * len(m.group(0)), text)
    m = _SENTENCE_END.search(masked)
    return text[:m.start()].rstrip() if m else text
