"""One answer module per ask kind, in one registry.

Each module declares what it needs (`plan`, `retrieval`, `anchors`, `validation`, `errors`) and
writes its ask's direct answer into the lead, then its body. The engine computes only what the
asks of a question need; adding a kind is one module here and its phrases.
"""
from __future__ import annotations

from typing import Iterable

from assistant.compose.answers import (
    config, diagnosis, fact, location, nonsense, out_of_scope, quantity, recommendation, unknown, verdict,
)
from assistant.compose.answers.base import AnswerKind, ComposeInput, Part

REGISTRY: dict[str, AnswerKind] = {m.KIND.kind: m.KIND for m in (
    verdict, quantity, fact, location, recommendation, config, diagnosis, out_of_scope, nonsense, unknown)}

def write(w, inp: ComposeInput, ask) -> Part:
    """The ask's answer by its kind's module, or by the module it hands the ask to (at most once per
    kind: a loop of handoffs ends with what the last module wrote)."""
    kind, seen = ask.kind, set()
    while True:
        w.kind = kind  # the body segments it writes are this kind's (compose/budget.py)
        part = REGISTRY[kind].write(w, inp, ask)
        seen.add(kind)
        if part.handoff is None or part.handoff in seen or part.handoff not in REGISTRY:
            return part
        kind = part.handoff


def needs_of(asks: Iterable, query) -> frozenset[str]:
    """What the engine computes before composing: the union of what the asks' kinds need."""
    return frozenset(n for a in asks for n in REGISTRY[a.kind].needs_of(query))


__all__ = ["REGISTRY", "AnswerKind", "ComposeInput", "Part", "needs_of", "write"]
