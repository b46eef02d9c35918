"""How much a data change moves the ask model's decisions (issue 18: every helper's batch of labelled
clauses flipped other cases' borderline clauses on the refit). Printed by train_asks beside the
cross-validation: the model is refitted, thresholds and all, on the labelled clauses minus a seeded
random tenth of the paraphrases (a batch of unrelated data, taken away instead of added), and the
tuning cases' clauses whose decision changes are counted. A decision is what asks.detect_asks takes from
the reader for the clause alone: the model's kind, `unknown` or context for a clause no cue decides, the
cue's kind or the one the model overrules it with for a clause of one cue kind.

Deterministic: the seeds are fixed, and so are the fold splits of every refit.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from assistant.understand.ask_model import AskModel

SEEDS = (1, 2, 3)  # three draws: one draw's count moved 3-10 between seeds at the same settings
DROP = 0.1  # the share of the paraphrase clauses left out of each refit


@dataclass(frozen=True)
class Thresholds:
    min_probability: float
    statement_probability: float
    override_probability: float

    @classmethod
    def of(cls, model: AskModel) -> "Thresholds":
        return cls(model.min_probability, model.statement_probability, model.override_probability)


def decision(p: dict[str, float], clause: str, th: Thresholds) -> str:
    """The reader's decision on one clause as detect_asks takes it (a condition and a clause of several
    cue kinds are the cues' alone: the model decides nothing there)."""
    from assistant.understand.asks import _CONDITION, cue_kinds, model_kind, overruled_kind

    if _CONDITION.match(clause):
        return "condition"
    cues = sorted({k for _, k in cue_kinds(clause)})
    if not cues:
        return model_kind(p, clause, th.min_probability, th.statement_probability) or "context"
    if len(cues) == 1:
        return overruled_kind(p, cues[0], th.override_probability) or cues[0]
    return "+".join(cues)


def decisions(model: AskModel, texts: Sequence[str], x: np.ndarray, th: Thresholds | None = None) -> list[str]:
    """Each clause's decision by `model` on its features `x` (with the model's own thresholds unless `th`)."""
    th = th or Thresholds.of(model)
    return [decision(dict(zip(model.labels, map(float, row))), t, th)
            for t, row in zip(texts, model.probabilities(x))]


def dropped(paraphrases: np.ndarray, seed: int, share: float = DROP) -> set[int]:
    """The indices of one seeded draw of `share` of the paraphrase clauses."""
    rng = np.random.default_rng(seed)
    return set(rng.choice(paraphrases, size=int(len(paraphrases) * share), replace=False).tolist())


def stability(texts: Sequence[str], is_case: np.ndarray, x: np.ndarray, model: AskModel,
              refit: Callable[[np.ndarray], AskModel], seeds: Sequence[int] = SEEDS) -> dict:
    """Per seed, the tuning cases' clauses whose decision changes when the model is refitted without a
    tenth of the paraphrases (`refit` fits on the given indices); `by_model` counts those that change
    with the full model's thresholds kept, so a moved threshold and a moved probability are told apart."""
    cases = np.flatnonzero(is_case)
    case_texts = [texts[i] for i in cases]
    full = decisions(model, case_texts, x[cases])
    changed, by_model, thresholds = [], [], []
    for seed in seeds:
        drop = dropped(np.flatnonzero(~is_case), seed)
        other = refit(np.array([i for i in range(len(texts)) if i not in drop]))
        changed.append(sum(a != b for a, b in zip(full, decisions(other, case_texts, x[cases]))))
        by_model.append(sum(a != b for a, b in zip(full, decisions(other, case_texts, x[cases], Thresholds.of(model)))))
        thresholds.append([other.min_probability, other.statement_probability, other.override_probability])
    return {"case_clauses": len(cases), "dropped_per_refit": int((len(texts) - len(cases)) * DROP),
            "changed": changed, "mean_changed": round(float(np.mean(changed)), 1), "changed_by_model": by_model,
            "refit_thresholds": thresholds}
