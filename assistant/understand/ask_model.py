"""The fitted ask model at query time: a multinomial logistic regression over [the embedding of the
clause by each encoder it was fitted with (USE-multilingual and MiniLM: see train_asks.MODEL_ENCODERS), the rule
features and hashed n-grams of clause_features.py], stored as plain arrays in
ask_model.npz by train_asks.py (numpy only here: scikit-learn is never imported to answer).

The engine hands the retriever's loaded encoders in (`ClauseEncoders`); every clause the model must
read in a question is embedded in one batch call per encoder.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from assistant.understand.clause_features import rule_feature_names, rule_features

MODEL_PATH = Path(__file__).with_name("ask_model.npz")
# Used only by a stored model fitted before its thresholds were: below this probability the model's
# kind is not trusted (the clause is an `unknown` ask), and a cue's kind is never overruled. A model
# fitted by train_asks carries its own, fitted on the cross-validated probabilities of its training data.
MIN_PROBABILITY = 0.45
NEVER = 1.01

Embed = Callable[[Sequence[str]], np.ndarray]


@dataclass(frozen=True)
class ClauseEncoders:
    """The encoders the retriever already holds, and the glossary that gives an English-only one
    (MiniLM) Chinese text in English words, as retrieval does."""
    encoders: tuple
    expand: Callable[[str], str]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(e.model_id for e in self.encoders)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        # embed_batch: the advice reader often reads the clause batch the ask model just read
        cols = [e.embed_batch([self.expand(t) if e.english_only else t for t in texts]) for e in self.encoders]
        return np.hstack(cols).astype(np.float32)


@dataclass(frozen=True)
class AskModel:
    labels: tuple[str, ...]
    coef: np.ndarray  # (labels, features)
    intercept: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    encoder_ids: tuple[str, ...]
    rule_names: tuple[str, ...]
    data_digest: str
    # fitted by train_asks.fit_thresholds: the probability at which the model's kind is taken for a clause
    # no cue decides (one in a question form, and a statement), and the one at which it overrules the kind
    # a clause's single cue reads
    min_probability: float = MIN_PROBABILITY
    statement_probability: float = NEVER
    override_probability: float = NEVER

    def features(self, texts: Sequence[str], embeddings: np.ndarray) -> np.ndarray:
        rules = np.vstack([rule_features(t) for t in texts]) if texts else np.zeros((0, len(self.rule_names)))
        return np.hstack([embeddings, rules]).astype(np.float32)

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        z = ((x - self.mean) / self.scale) @ self.coef.T + self.intercept
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def read(self, texts: Sequence[str], encoders: ClauseEncoders) -> list[dict[str, float]]:
        """Each clause's probability per label."""
        if not texts:
            return []
        p = self.probabilities(self.features(texts, encoders.embed(texts)))
        return [dict(zip(self.labels, map(float, row))) for row in p]


def save_model(path: Path, model: AskModel) -> None:
    np.savez_compressed(path, labels=np.array(model.labels), coef=model.coef.astype(np.float32),
                        intercept=model.intercept.astype(np.float32), mean=model.mean.astype(np.float32),
                        scale=model.scale.astype(np.float32), encoder_ids=np.array(model.encoder_ids),
                        rule_names=np.array(model.rule_names), data_digest=np.array(model.data_digest),
                        thresholds=np.array([model.min_probability, model.statement_probability,
                                             model.override_probability], dtype=np.float64))


@lru_cache(maxsize=4)
def load_model(path: Path = MODEL_PATH, names: Callable[[], tuple[str, ...]] = rule_feature_names) -> AskModel | None:
    """The stored model, or None when there is none or its rule features are not today's (`names`:
    the target reader, target_model.py, is stored in this form with features of its own)."""
    if not path.exists():
        return None
    with np.load(path, allow_pickle=False) as d:
        thresholds = tuple(float(x) for x in d["thresholds"]) if "thresholds" in d.files else (MIN_PROBABILITY, NEVER, NEVER)
        model = AskModel(tuple(str(x) for x in d["labels"]), d["coef"], d["intercept"], d["mean"], d["scale"],
                         tuple(str(x) for x in d["encoder_ids"]), tuple(str(x) for x in d["rule_names"]),
                         str(d["data_digest"]), *thresholds)
    if model.rule_names != names():
        return None  # the rule features changed since it was fitted: retrain (a test says so)
    return model


@dataclass(frozen=True)
class ClauseReader:
    """The stored model reading clauses with the encoders it was fitted on: called with the clauses of
    a question (one batch), each clause's probability per label; its fitted thresholds go with it."""
    model: AskModel
    encoders: ClauseEncoders

    def __call__(self, texts: Sequence[str]) -> list[dict[str, float]]:
        return self.model.read(texts, self.encoders)

    @property
    def min_probability(self) -> float:
        return self.model.min_probability

    @property
    def statement_probability(self) -> float:
        return self.model.statement_probability

    @property
    def override_probability(self) -> float:
        return self.model.override_probability


def clause_reader(encoders: ClauseEncoders | None) -> ClauseReader | None:
    """What asks.detect_asks calls for the clauses of a question; None without a model or with
    encoders other than the ones it was fitted on."""
    model = load_model()
    mine = fitted_encoders(encoders, model.encoder_ids) if model is not None else None
    return ClauseReader(model, mine) if mine is not None else None


def fitted_encoders(encoders: ClauseEncoders | None, ids: tuple[str, ...]) -> ClauseEncoders | None:
    """The encoders a stored model was fitted on, in that order (a subset of the retriever's); None
    when one of them is not loaded."""
    if encoders is None:
        return None
    by_id = {e.model_id: e for e in encoders.encoders}
    if not all(i in by_id for i in ids):
        return None
    return ClauseEncoders(tuple(by_id[i] for i in ids), encoders.expand)
