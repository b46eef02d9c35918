"""The types every answer module shares: what it is given, what it declares it needs, what it returns."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Literal, Mapping, Sequence

from assistant.compose.knowledge.anchors import Anchor
from assistant.compose.knowledge.diagnose import Diagnosis
from assistant.compose.writer import Writer
from assistant.planner.plan import Plan
from assistant.retrieve.hit import Hit
from assistant.understand.query import Query
from assistant.validator.report import ValidationReport

# What the engine may compute before composing; a kind lists the ones it reads, so a question
# whose asks need no plan never runs the planner.
Need = Literal["plan", "retrieval", "anchors", "validation", "errors"]


@dataclass(frozen=True)
class ComposeInput:
    query: Query
    plan: Plan | None
    gpus_per_node: int
    # The user's own layout (pasted YAML, else the sizes stated in prose) validated at the user's
    # numbers, with the nearest valid layout when it fails.
    diagnosis: Diagnosis | None = None
    anchors: Sequence[Hit] = ()  # code-anchor hits, for location asks
    code_anchors: Mapping[str, Anchor] = field(default_factory=dict)  # kb/anchors.yaml by anchor id
    asks: tuple = ()  # the asks to answer, in order (Query.asks, else derived from the intent)
    errors: tuple = ()  # pasted upstream error messages, matched to the rules that raise them


@dataclass
class Part:
    """What one ask's answer showed: the config (with its verdict) and the strategy it is about.

    `report` is the verdict the answer gives (on `judged`, the user's layout, when there is one);
    `yaml` is judged by `report` too unless `yaml_report` is set: a verdict's YAML is the nearest
    valid layout, with its own passing report."""
    yaml: str | None = None
    report: ValidationReport | None = None
    strategy: str | None = None
    judged: dict | None = None
    yaml_report: ValidationReport | None = None
    # the kind that answers this ask instead ("is `interleaved_1f1b` right?" with nothing of the user's
    # to judge is a fact); the registry's write() follows it, so no module calls another's writer
    handoff: str | None = None

    @property
    def shown_report(self) -> ValidationReport | None:
        """The report of the YAML shown (None when none is shown)."""
        if not self.yaml:
            return None
        return self.yaml_report if self.yaml_report is not None else self.report


@dataclass(frozen=True)
class AnswerKind:
    kind: str
    needs: frozenset[str]
    write: Callable[[Writer, ComposeInput, object], Part]
    # needs that depend on the question (a fact question about a code symbol also reads the anchors)
    needs_for: Callable[[Query], frozenset[str]] | None = None

    def needs_of(self, query: Query) -> frozenset[str]:
        return self.needs | (self.needs_for(query) if self.needs_for else frozenset())
