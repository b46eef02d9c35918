"""cues.yaml's fact cues: the words that single out a fact of compose/phrases.yaml, and the roles of
the cued facts. A leaf module, so asks.py (which cues.py imports) reads them too: a clause whose own
words single out a fact that answers on its own ("how many tokens does each CP rank hold") is that
fact's question, not the clause before it joined to it."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from assistant.datafile import read_yaml

_CUES = Path(__file__).with_name("cues.yaml")


@lru_cache(maxsize=1)
def _fact_cues() -> dict[str, tuple[str, ...]]:
    """cues.yaml `fact_cues`: fact key -> its cues, lower case."""
    return {str(k): tuple(str(c).lower() for c in v or ()) for k, v in read_yaml(_CUES)["fact_cues"].items()}


@dataclass(frozen=True)
class FactRoles:
    """cues.yaml: the cued facts that answer a question on their own, the quantity that completes one,
    and those that refuse the feature asked about."""
    answering: tuple[str, ...]
    quantities: dict[str, str]
    refusing: tuple[str, ...]


@lru_cache(maxsize=1)
def fact_roles() -> FactRoles:
    d = read_yaml(_CUES)
    return FactRoles(tuple(str(k) for k in d.get("answering_facts") or ()),
                     {str(k): str(v) for k, v in (d.get("answering_quantities") or {}).items()},
                     tuple(str(k) for k in d.get("refusing_facts") or ()))


def fact_cue_keys() -> tuple[str, ...]:
    """The fact keys cues.yaml cues (compose/phrases.py checks each names a fact it holds)."""
    return tuple(_fact_cues())


@lru_cache(maxsize=1)
def _matchers() -> tuple[tuple[str, re.Pattern[str] | None, tuple[tuple[str, ...], ...]], ...]:
    """Per fact: one pattern for its one-part cues (it finds a text holding any of them, as checking
    each would: read per clause, that was 0.2 ms a call, a question's clauses 1 ms) and its "a + b"
    cues split into their parts."""
    out = []
    for k, cues in _fact_cues().items():
        single = [c for c in cues if " + " not in c]
        out.append((k, re.compile("|".join(map(re.escape, single))) if single else None,
                    tuple(tuple(c.split(" + ")) for c in cues if " + " in c)))
    return tuple(out)


def cued_facts(text: str) -> tuple[str, ...]:
    """The facts whose cues the text holds, in the table's order; a cue "a + b" needs every part."""
    q = text.lower()
    return tuple(k for k, single, parted in _matchers()
                 if (single is not None and single.search(q)) or any(all(p in q for p in c) for c in parted))


def answers_itself(text: str) -> bool:
    """The text singles out a fact that answers a question on its own (cues.yaml answering_facts)."""
    return bool(set(cued_facts(text)) & set(fact_roles().answering))
