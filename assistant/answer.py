"""What goes into and comes out of `Assistant.ask`: every front end renders the same `Answer`."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

from assistant.retrieve.hit import Hit
from assistant.validator.report import ValidationReport

Lang = Literal["en", "zh"]
LlmMode = Literal["offline", "openai", "local"]


@dataclass(frozen=True)
class Turn:
    role: Literal["user", "assistant"]
    content: str


@dataclass(frozen=True)
class AskRequest:
    question: str
    world_size: int | None = None
    gpus_per_node: int | None = None
    lang: Literal["auto", "en", "zh"] = "auto"
    history: tuple[Turn, ...] = ()
    llm: LlmMode | None = None  # None: the Assistant's own mode; "offline" forces the offline answer
    gpu: str | None = None  # e.g. "h100-80gb"
    model: str | None = None  # e.g. "llama-3.1-70b"
    id: str | None = None


@dataclass
class Answer:
    id: str
    text: str  # Markdown, citations as [n] pointing into `sources` (1-based)
    language: Lang
    intent: str
    strategy: str | None
    yaml: str | None  # the YAML shown; always validated unless intent is "diagnose"
    validation: ValidationReport | None
    sources: list[Hit] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)  # e.g. "LLM timed out; offline answer shown"
    params: dict = field(default_factory=dict)  # understood parameters (world_size, model, ...)
    # The config mapping `validation` judged: for a verdict, quantity or diagnosis the user's own
    # layout exactly as stated; for a recommendation the plan's. None when nothing was judged.
    judged: dict | None = None
    asks: list[str] = field(default_factory=list)  # the ask kinds answered, in order
    # The report of `yaml`, the config shown: when the judged layout fails, `yaml` is the nearest valid
    # layout and `validation` (the verdict on `judged`) is not its report. None when no YAML is shown.
    yaml_validation: ValidationReport | None = None

    @property
    def judged_validation(self) -> ValidationReport | None:
        """The verdict on `judged` (the same object as `validation`, named for the layout it belongs to)."""
        return self.validation if self.judged is not None else None

    def to_json(self) -> dict:
        """The `meshwise ask --json` object."""
        return {
            "id": self.id,
            "answer": self.text,
            "language": self.language,
            "intent": self.intent,
            "strategy": self.strategy,
            "yaml": self.yaml,
            "validation": _report(self.validation),
            "sources": [{"id": h.id, "title": h.title, "path": h.path, "score": round(h.score, 4)} for h in self.sources],
            "timings_ms": {k: round(v, 2) for k, v in self.timings_ms.items()},
            "notices": list(self.notices),
            "params": dict(self.params),
            "judged": self.judged,
            "asks": list(self.asks),
            # each layout with its own report; `validation` is kept as it was (the answer's verdict)
            "judged_validation": _report(self.judged_validation),
            "yaml_validation": _report(self.yaml_validation),
        }


def _report(report: ValidationReport | None) -> dict | None:
    return report.to_dict() if report is not None else None
