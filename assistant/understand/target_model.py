"""The target reader: which quantity a quantity ask asks for when asks.yaml's quantity_targets patterns
find none in its clause ("模型被复制了几份" asks dp_size, "层数除不尽" the split of the layers over the
stages, "how are the experts spread over the ranks" the experts per rank).

A multinomial logistic regression over the USE-multilingual embedding of the clause (the encoder the ask
model reads with) and the patterns' own hits (one 0/1 per target: a near miss of one still counts),
fitted by train_asks.fit_targets on the quantity clauses of training/ that carry a target (cases_clauses.jsonl,
`clause ## target` lines of paraphrases*.yaml). Its labels are the targets the answer knows and `none`, a
quantity no target answers ("what's the max tp for 32 heads"): read as `none`, the ask keeps no target.
Stored as plain arrays in target_model.npz with the digest of its data (numpy only here).

Where the patterns find several targets they decide ("dp_size and ep_shard" asks both): the
cross-validation printed by train_asks compares the reader with the patterns' first target there.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from assistant.understand.ask_model import NEVER, AskModel, ClauseEncoders, fitted_encoders, load_model as _load
from assistant.understand.asks import load_asks
from assistant.understand.query import Ask

MODEL_PATH = Path(__file__).with_name("target_model.npz")
NONE = "none"  # a quantity none of the answer's targets is
# a size left to us is answered from the clause's own cue (cues.Reading.size_choice names the size), and
# the allowed values of a field need the field (asks._values_target), so the reader gives neither: they
# are learned only so that they are not read as another target
_CUE_ONLY = frozenset({"size_choice", "allowed_values"})

Read = Callable[[Sequence[str]], list[tuple[str, float]]]


def target_feature_names() -> tuple[str, ...]:
    return tuple(f"pattern_{name}" for name, _ in load_asks().quantity_targets)


def target_features(clause: str) -> np.ndarray:
    """0/1 per asks.yaml quantity target: its pattern matches the clause (the same function serves
    training and query time)."""
    return np.asarray([pat.search(clause) is not None for _, pat in load_asks().quantity_targets], dtype=np.float32)


def features(texts: Sequence[str], embeddings: np.ndarray) -> np.ndarray:
    rules = np.vstack([target_features(t) for t in texts])
    return np.hstack([embeddings, rules]).astype(np.float32)


def load_model(path: Path = MODEL_PATH) -> AskModel | None:
    """The stored reader, in the ask model's form (its `rule_names` the pattern features, its
    `min_probability` the threshold fitted by train_asks.fit_targets); None when there is none or asks.yaml's
    targets changed since it was fitted (a test says so)."""
    return _load(path, target_feature_names)


def target_reader(encoders: ClauseEncoders | None) -> Read | None:
    """Each clause's likeliest label and its probability; None without a model or its encoders."""
    model = load_model()
    mine = fitted_encoders(encoders, model.encoder_ids) if model is not None else None
    if mine is None:
        return None

    def read(texts: Sequence[str]) -> list[tuple[str, float]]:
        if not texts:
            return []
        p = model.probabilities(features(texts, mine.embed(texts)))
        return [(model.labels[int(row.argmax())], float(row.max())) for row in p]

    read.min_probability = model.min_probability  # type: ignore[attr-defined]
    return read


def with_targets(asks: tuple[Ask, ...], read: Read | None, *, has_layout: bool) -> tuple[Ask, ...]:
    """The asks with each quantity ask the patterns gave no target the reader's target, when it reads
    one of the answer's targets (not `none`) with at least its fitted probability and no other ask of
    the question asks that quantity already; else the target it borrowed from the clause before, if any. Only with a layout (sizes, a config, a world size) to
    derive it from: without one a quantity with no target is answered as a fact (compose/offline.py).
    All such clauses are read in one batch."""
    todo = [a for a in asks if a.kind == "quantity" and a.target is None]
    if not todo:
        return asks
    if read is None or not has_layout:
        return tuple(replace(a, target=a.borrowed) if a.borrowed else a for a in asks)
    least = getattr(read, "min_probability", NEVER)  # a reader with no fitted threshold takes nothing
    texts = list(dict.fromkeys(a.text for a in todo))
    found = dict(zip(texts, read(texts)))
    asked = {(a.target, a.layout) for a in asks if a.kind == "quantity"}  # the same number on other sizes is another
    out: list[Ask] = []
    for a in asks:
        if a in todo:
            label, p = found[a.text]
            if label != NONE and label not in _CUE_ONLY and p >= least and (label, a.layout) not in asked:
                asked.add((label, a.layout))
                a = replace(a, target=label)
            elif a.borrowed:
                # nothing of the clause's own: the field the clause before named ("实际会是多少")
                a = replace(a, target=a.borrowed)
        out.append(a)
    return tuple(out)
