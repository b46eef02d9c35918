"""The stability metric train_asks prints beside the cross-validation: the tuning cases' decisions a
refit without a tenth of the paraphrases changes, told apart by moved thresholds and moved probabilities."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from assistant.understand.ask_model import AskModel
from assistant.understand.ask_stability import Thresholds, decision, decisions, dropped, stability
from assistant.understand.clause_features import LABELS


def _model(reading: dict[str, float], statement: float = 0.75) -> AskModel:
    """A model that reads every clause with the probabilities `reading` (constant logits)."""
    labels = tuple(LABELS)
    logits = np.log(np.array([reading.get(k, 1e-4) for k in labels]))
    return AskModel(labels, np.zeros((len(labels), 3), np.float32), logits.astype(np.float32), np.zeros(3, np.float32),
                    np.ones(3, np.float32), ("use-multilingual",), (), "test", 0.5, statement, 0.6)


FACT = {"fact": 0.7, "context": 0.3}


def test_a_statement_no_cue_decides_is_context_below_the_statement_threshold():
    th = Thresholds(0.5, 0.75, 0.6)
    assert decision(FACT, "dp_size 是按 world size 自动算的", th) == "context"
    assert decision(FACT, "dp_size 是按 world size 自动算的", replace(th, statement_probability=0.65)) == "fact"
    assert decision(FACT, "is it computed from the world size?", th) == "fact"  # a question form: the lower one


def test_a_single_cue_is_kept_unless_the_model_overrules_it():
    th = Thresholds(0.5, 0.75, 0.6)
    recommendation = {"recommendation": 0.8, "fact": 0.2}
    assert decision(recommendation, "tp 要不要开", th) == "recommendation"
    assert decision(recommendation, "tp 要不要开", replace(th, override_probability=0.9)) == "fact"


def test_the_draw_is_a_seeded_tenth_of_the_paraphrases():
    paraphrases = np.arange(100, 400)
    assert dropped(paraphrases, 1) == dropped(paraphrases, 1)
    assert dropped(paraphrases, 1) != dropped(paraphrases, 2)
    assert len(dropped(paraphrases, 1)) == 30 and dropped(paraphrases, 1) <= set(paraphrases.tolist())


def test_a_moved_threshold_counts_as_changed_but_not_as_changed_by_the_model():
    texts = ["dp_size 是按 world size 自动算的", "我们有 2 台机器", "what is dp_size?"] + [f"para {i}" for i in range(20)]
    is_case = np.array([True] * 3 + [False] * 20)
    x = np.zeros((len(texts), 3), np.float32)
    model = _model(FACT)
    seen: list[np.ndarray] = []

    def same(idx):
        seen.append(idx)
        return model

    report = stability(texts, is_case, x, model, same, seeds=(1, 2))
    assert report["changed"] == [0, 0] and report["dropped_per_refit"] == 2
    assert all(len(idx) == 21 and {0, 1, 2} <= set(idx.tolist()) for idx in seen)  # the cases' clauses always train
    lower = stability(texts, is_case, x, model, lambda idx: _model(FACT, statement=0.65), seeds=(1,))
    # the two statements now read as facts; the question was a fact already
    assert lower["changed"] == [2] and lower["changed_by_model"] == [0]
    assert decisions(model, texts[:1], x[:1]) == ["context"]
