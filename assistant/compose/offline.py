"""The offline composer: each ask of the question (as understand/planned.py planned them) answered in
order by its module (compose/answers/), the direct answers first, in one lead paragraph, then each answer's body, then the sources.

Every kb fact is one sentence from `phrases.yaml` with a citation `[n]` to a chunk that supports it;
every number is the validator's, on the user's own numbers.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from assistant.compose.answers import ComposeInput, Part, write as write_ask
from assistant.compose.budget import dropped_code, trim
from assistant.compose.citations import Citer
from assistant.compose.knowledge.corrected import plan_corrections
from assistant.compose.coverage import cannot_tell, covered
from assistant.compose.knowledge.corrected import say as say_corrections
from assistant.compose.phrases import Phrases
from assistant.compose.writer import Writer
from assistant.validator.report import ValidationReport


@dataclass
class Composed:
    text: str
    yaml: str | None
    validation: ValidationReport | None
    strategy: str | None
    judged: dict | None = None
    asks: list[str] = field(default_factory=list)
    leads: list[str] = field(default_factory=list)  # the direct answer to each ask, as computed offline
    uncited: list[str] = field(default_factory=list)  # facts stated without a supporting chunk (should stay empty)
    yaml_validation: ValidationReport | None = None  # the report of `yaml` (`validation` judges `judged`)
    uncovered: list[str] = field(default_factory=list)  # asks no module gave a lead sentence of its own (coverage.py)


def compose(inp: ComposeInput, citer: Citer, phrases: Phrases) -> Composed:
    """The offline answer to every ask of the question."""
    w = Writer(inp.query.lang, phrases, citer)
    if inp.query.injection:
        w.notice(w.say("injection"))
    asks = inp.asks  # as understand/planned.py planned them
    corrected = plan_corrections(inp, asks, w.lang)
    inp = replace(inp, asks=corrected.asks)
    parts: list[Part] = []
    uncovered: list = []
    for i, a in enumerate(corrected.asks):
        if i == corrected.at:
            say_corrections(w, corrected)
        before = (len(w.leads), len(w.lines))
        w.ask_index = i
        parts.append(write_ask(w, inp, a))
        if not covered(before, w, a, corrected.asks[:i]):
            uncovered.append(a)
            cannot_tell(w, a.text)  # no lead sentence speaks about it: say so, not a neighbour's answer
    if len(corrected.asks) <= corrected.at:
        say_corrections(w, corrected)
    leads = list(w.leads)  # every direct answer computed, before the budget moves supporting ones into the body
    trim(w, corrected.asks, inp.query)  # over its asks' budget: supporting material goes, each ask's lead stays
    # The answer's verdict is the first one given: the user's layout before any recommendation.
    main = next((p for p in parts if p.report is not None), None) or next((p for p in parts if p.yaml), Part())
    strategy = main.strategy or next((p.strategy for p in parts if p.strategy), None)
    # a config the budget took out of the text is not shown beside it either
    shown = None if main.yaml and main.yaml.rstrip("\n") in dropped_code(w) else main.yaml
    return Composed(w.render(), shown, main.report, strategy, main.judged, list(corrected.kinds), leads,
                    w.uncited, main.shown_report if shown else None, [f"{a.kind}: {a.text}" for a in uncovered])

