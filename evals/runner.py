"""Run eval cases through the answer engine, the same path as `meshwise ask`, and score each answer.

The engine is loaded once. A follow-up case replays its history: a user turn without an assistant
turn after it is answered by the engine first, so the conversation is what Meshwise itself said.
Only the final question is timed.
"""
from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Iterable, Protocol

from tqdm import tqdm

from assistant.answer import AskRequest, Turn
from evals.schema import Case
from evals.scorer import CaseScore, failed_score, score


class Asker(Protocol):
    def ask(self, req: AskRequest) -> Any: ...


@dataclass
class RunResult:
    scores: list[CaseScore]
    answers: dict[str, dict] = field(default_factory=dict)  # case id -> the `ask --json` object
    llm: str = "offline"
    load_s: float = 0.0
    wall_s: float = 0.0


def _as_json(answer: Any) -> dict:
    return answer.to_json() if hasattr(answer, "to_json") else dict(answer)


def resolve_history(assistant: Asker, case: Case, llm: str | None = None) -> tuple[Turn, ...]:
    """The case's history with every unanswered user turn answered by the engine."""
    turns: list[Turn] = []
    for i, t in enumerate(case.history):
        turns.append(Turn(t.role, t.content))
        answered = i + 1 < len(case.history) and case.history[i + 1].role == "assistant"
        if t.role == "user" and not answered:
            prior = AskRequest(
                question=t.content, world_size=case.world_size, gpus_per_node=case.gpus_per_node,
                history=tuple(turns[:-1]), llm=llm, id=f"{case.id}#h{i}",
            )
            turns.append(Turn("assistant", assistant.ask(prior).text))
    return tuple(turns)


def request_for(case: Case, history: tuple[Turn, ...], llm: str | None = None) -> AskRequest:
    return AskRequest(
        question=case.question, world_size=case.world_size, gpus_per_node=case.gpus_per_node,
        history=history, llm=llm, id=case.id,
    )


def run_case(assistant: Asker, case: Case, *, llm: str | None = None, validate_fn=None) -> tuple[CaseScore, dict | None]:
    """Ask one case and score it; an engine exception fails the case instead of the run."""
    try:
        history = resolve_history(assistant, case, llm)
        req = request_for(case, history, llm)
        t0 = time.perf_counter()
        answer = assistant.ask(req)
        latency = (time.perf_counter() - t0) * 1000.0
    except Exception as exc:  # the report must show engine failures per case
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return failed_score(case, f"engine raised {last}"), None
    result = score(case, answer, validate_fn=validate_fn)
    result.latency_ms = round(latency, 2)
    return result, _as_json(answer)


def run(
    cases: Iterable[Case],
    *,
    assistant: Asker | None = None,
    settings=None,
    llm: str = "offline",
    progress: bool = True,
    validate_fn=None,
    record_dir=None,
) -> RunResult:
    """Run every case; loads the engine once unless one is given (`record_dir`: the model's requests
    and replies are stored there)."""
    cases = list(cases)
    t_start = time.perf_counter()
    owned = assistant is None
    if owned:
        from assistant.engine import Assistant

        assistant = Assistant.load(settings, llm=llm, record_dir=record_dir)
    load_s = time.perf_counter() - t_start
    out = RunResult(scores=[], llm=llm, load_s=round(load_s, 3))
    try:
        for case in tqdm(cases, desc="meshwise eval", unit="case", disable=not progress, dynamic_ncols=True):
            result, answer = run_case(assistant, case, llm=llm, validate_fn=validate_fn)
            out.scores.append(result)
            if answer is not None:
                out.answers[case.id] = answer
    finally:
        if owned and hasattr(assistant, "close"):
            assistant.close()
    out.wall_s = round(time.perf_counter() - t_start, 3)
    return out
