"""Every ask covered: after an ask's module has written, the ask must have a direct statement in the
lead. When it has none (or the ask is `unknown`: no kind read with confidence), the answer says
plainly what Meshwise cannot tell from its sources and cites the closest kb section, instead of
letting a neighbouring answer stand in for it.
"""
from __future__ import annotations

from typing import Sequence

from assistant.compose.citations import with_citation
from assistant.compose.writer import Writer
from assistant.retrieve.hit import Hit
from assistant.understand.cues import same_clause

_SECTION_KINDS = ("doc", "pitfall", "faq")
_MAX_CLAUSE = 120


def closest_section(sources: list[Hit], lang: str) -> Hit | None:
    """The best-ranked kb section retrieved for the question, in the answer's language first."""
    kb = [h for h in sources if h.kind in _SECTION_KINDS]
    return next((h for h in kb if h.lang == lang), None) or (kb[0] if kb else None)


def cannot_tell(w: Writer, clause: str) -> None:
    """The plain "cannot tell" lead for one ask, with the closest section cited."""
    clause = " ".join(clause.split())
    if len(clause) > _MAX_CLAUSE:
        clause = clause[:_MAX_CLAUSE].rstrip() + "…"
    hit = closest_section(w.citer.sources, w.lang)
    if hit is None:
        w.answer(w.say("cannot_tell", clause=clause))
        return
    n = w.citer.add(hit) + 1
    w.citer.cited.add(n)
    section = hit.heading or hit.title
    w.answer(with_citation(w.say("cannot_tell_closest", clause=clause, section=section), [n]))


def covered(before: tuple[int, int], w: Writer, ask, earlier: Sequence) -> bool:
    """Whether the ask just written has a direct statement: its module put a lead sentence of its
    own, or wrote its answer into the body under a lead an earlier ask of the same clause gave
    ("what are dp_size and ep_shard?" is two quantities and one sentence). An `unknown` ask is never
    covered by a module: it has none."""
    if ask.kind == "unknown":
        return False
    leads, lines = before
    if len(w.leads) > leads:
        return True
    return bool(w.leads) and (any(same_clause(ask, e) for e in earlier) or len(w.lines) > lines)
