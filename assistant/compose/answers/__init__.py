"""One answer module per ask kind, in one registry.

Each module declares what it needs (`plan`, `retrieval`, `anchors`, `validation`, `errors`) and
writes its ask's direct answer into the lead, then its body. The engine computes only what the
asks of a question need; adding a kind is one module here and its phrases.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from assistant.compose.answers import (
    config, diagnosis, fact, location, nonsense, out_of_scope, quantity, recommendation, verdict,
)
from assistant.compose.answers.base import AnswerKind, ComposeInput, Part

REGISTRY: dict[str, AnswerKind] = {m.KIND.kind: m.KIND for m in (
    verdict, quantity, fact, location, recommendation, config, diagnosis, out_of_scope, nonsense)}

# A query without detected asks (a hand-built one, an old caller) is answered by its intent.
_INTENT_ASKS = {
    "nonsense": "nonsense", "out_of_scope": "out_of_scope", "code_location": "location", "python_api": "config",
    "yaml": "config", "diagnose": "diagnosis", "sizing": "quantity", "strategy": "recommendation",
    "limitations": "fact", "howto": "fact",
}


@dataclass(frozen=True)
class IntentAsk:
    kind: str
    text: str = ""
    target: str | None = None


def asks_of(query) -> tuple:
    asks = tuple(a for a in (getattr(query, "asks", None) or ()) if a.kind in REGISTRY)
    return asks or (IntentAsk(_INTENT_ASKS.get(query.intent, "recommendation"), query.text),)


def needs_of(asks: Iterable) -> frozenset[str]:
    return frozenset(n for a in asks for n in REGISTRY[a.kind].needs)


__all__ = ["REGISTRY", "AnswerKind", "ComposeInput", "IntentAsk", "Part", "asks_of", "needs_of"]
