"""What Meshwise computed for each ask of a question, as data an LLM is given instead of a task.

The notes are the answer modules' own output (compose/answers/), run once more on the same input with
a writer that records which lead sentences and body lines each ask wrote: one source of truth for the
verdict, the derived sizes, the rule codes, the field facts, the code anchors and the kb sentences,
whichever path (offline or LLM) words the answer.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Sequence

from assistant.compose.answers import ComposeInput, write as write_ask
from assistant.compose.citations import Citer
from assistant.compose.knowledge.corrected import plan_corrections
from assistant.compose.knowledge.corrected import say as say_corrections
from assistant.compose.knowledge.diagnose import Diagnosis
from assistant.compose.phrases import Phrases
from assistant.compose.writer import Writer
from assistant.retrieve.hit import Hit
from assistant.validator.report import ValidationReport

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_HEADING = re.compile(r"^\*\*[^*]+\*\*.*$")


@dataclass(frozen=True)
class AskNote:
    kind: str
    text: str  # the clause that asks it
    target: str | None
    leads: tuple[str, ...]  # the direct answer(s) the answer module gave: what the first lines must say
    details: tuple[str, ...]  # its supporting lines (other failing checks, why, warnings), no code blocks


@dataclass(frozen=True)
class Computed:
    """Everything Meshwise decided for one question, for the prompt and for checking the answer."""
    notes: tuple[AskNote, ...]
    judged: Diagnosis | None  # the user's own layout validated, with its nearest valid layout
    errors: tuple  # pasted upstream errors matched to their rules (UpstreamErrorMatch)
    config_yaml: str | None  # the one config the answer may show, validated
    config_report: ValidationReport | None

    @property
    def lead(self) -> str:
        """The offline answer's lead: every ask's direct answer, in order."""
        return "\n".join(dict.fromkeys(s for n in self.notes for s in n.leads))


def _details(lines: Sequence[str]) -> tuple[str, ...]:
    out, in_code = [], False
    for line in lines:
        if _FENCE.match(line):
            in_code = not in_code
            continue
        s = line.strip()
        if in_code or not s or _HEADING.match(s):
            continue
        out.append(s.removeprefix("- ").strip())
    return tuple(out)


def ask_notes(inp: ComposeInput, sources: Sequence[Hit], phrases: Phrases) -> tuple[AskNote, ...]:
    """Each ask's lead and body as its module writes them, citations numbered into `sources`."""
    w = Writer(inp.query.lang, phrases, Citer(sources, inp.query.lang))
    corrected = plan_corrections(inp, tuple(inp.asks), w.lang)
    inp = replace(inp, asks=corrected.asks)
    notes = []

    def correction_note() -> None:
        # a wrong claim the question repeats: its correction is an answer the model must give too
        if corrected.said:
            n_leads = len(w.leads)
            say_corrections(w, corrected)
            notes.append(AskNote("fact", inp.query.situation.pasted.prose or inp.query.text, None,
                                 tuple(w.leads[n_leads:]), ()))

    for i, ask in enumerate(corrected.asks):
        if i == corrected.at:
            correction_note()
        n_leads, n_lines = len(w.leads), len(w.lines)
        write_ask(w, inp, ask)
        notes.append(AskNote(ask.kind, ask.text, ask.target, tuple(w.leads[n_leads:]), _details(w.lines[n_lines:])))
    if len(corrected.asks) <= corrected.at:
        correction_note()
    return tuple(notes)


def validated_report(yaml_text: str | None, inp: ComposeInput,
                     report: ValidationReport | None = None) -> ValidationReport | None:
    """The passing report of the config an answer shows: the nearest valid layout's, the plan's, or
    its own; None when the config is none of those that passed."""
    if not yaml_text:
        return None
    d, plan = inp.diagnosis, inp.plan
    known = ((d.fix_yaml, d.fix_report) if d is not None else (None, None),
             (plan.yaml, plan.report) if plan is not None else (None, None),
             (d.yaml_text, d.report) if d is not None else (None, None),
             (yaml_text, report))
    return next((r for text, r in known if text and r is not None and r.ok and text.strip() == yaml_text.strip()), None)


def computed_for(inp: ComposeInput, sources: Sequence[Hit], phrases: Phrases, *, config_yaml: str | None,
                 config_report: ValidationReport | None = None) -> Computed:
    """The notes of every ask, the user's judged layout, the matched errors and the config the
    offline answer shows (`config_yaml`), with the report that passed it."""
    report = validated_report(config_yaml, inp, config_report)
    return Computed(ask_notes(inp, sources, phrases), inp.diagnosis, tuple(inp.errors),
                    config_yaml if report is not None else None, report)
