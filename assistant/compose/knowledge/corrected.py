"""Where a question's corrections go among its answers: which asks they answer, before which ask
they stand, and how they read next to a verdict on the user's own layout. One plan, read by the
offline composer and by the LLM path's computed notes."""
from __future__ import annotations

import re
from dataclasses import dataclass

from assistant.compose.citations import with_citation
from assistant.compose.knowledge.corrections import Correction, corrections, covers, first_sentence_of, phrase, without_answer_word
from assistant.compose.writer import Writer
from assistant.understand.cues import read, read_prose

# Asks a correction does not answer: they judge the user's own layout or a pasted error.
_AFTER_CORRECTION = ("verdict", "quantity", "diagnosis", "location")


@dataclass(frozen=True)
class Said:
    text: str
    docs: tuple[str, ...]
    terms: tuple[str, ...]


@dataclass(frozen=True)
class Corrected:
    asks: tuple  # the asks still to answer, in order
    kinds: tuple[str, ...]  # the kinds answered, in order (the corrections as one fact)
    said: tuple[Said, ...]  # the corrections, worded for where they stand
    at: int  # they go before asks[at] (after every ask when at == len(asks))


def plan_corrections(inp, asks: tuple, lang: str) -> Corrected:
    # a claim is made in the user's prose; the pasted error or config around it is not one
    fixes = corrections(read(inp.query), lang, prose=read_prose(inp.query))
    if not fixes:
        return Corrected(asks, tuple(a.kind for a in asks), (), 0)
    # a correction answers the ask whose clause is the claim ("so I get prefetching without setting
    # anything?"); what judges the user's own numbers or a pasted error is still answered
    kept = tuple(a for a in asks if a.kind in _AFTER_CORRECTION or not any(covers(c, read(a)) for c in fixes))
    d = inp.diagnosis
    # the verdict on the user's layout or a pasted error's explanation comes first, then the claim
    # around it corrected ("false 也不行？"); otherwise the correction is the first answer
    judged = bool(kept) and kept[0].kind in _AFTER_CORRECTION and bool(
        inp.query.situation.pasted.errors or d is not None and d.report is not None)
    passes = judged and d is not None and d.report is not None and d.report.ok
    # "gets rejected, correct?" on a layout that passes: "it is accepted, not rejected" answers first
    at = 0 if not judged or passes and any(c.layout_lead for c in fixes) else 1
    said = tuple(Said(_worded(c, lang, judged, passes), c.docs, c.terms) for c in fixes)
    kinds = [a.kind for a in kept]
    kinds.insert(at, "fact")  # the corrections answer as a fact, where they stand
    return Corrected(kept, tuple(kinds), said, at)


def _worded(c: Correction, lang: str, judged: bool, passes: bool) -> str:
    text = c.text(lang)
    if not judged:
        return text
    # next to a verdict, which carries the yes/no and the arithmetic, the first sentence is enough
    text = first_sentence_of(without_answer_word(text))
    if c.layout_lead and passes:
        head = text[:1].lower() if re.match(r"[A-Z][a-z]", text) else text[:1]
        text = phrase("layout_accepted", lang) + head + text[1:]
    return text


def say(w: Writer, corrected: Corrected) -> None:
    """The corrections into the lead, each cited to the kb section that states the code's behaviour."""
    for s in corrected.said:
        n = w.citer.cite(s.docs, s.terms, s.text)
        w.answer(with_citation(s.text, [n]) if n else s.text)
