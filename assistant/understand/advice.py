"""The advice reader: is a clause that asks about the user's own layout asking for advice ("good idea?",
"better to keep TP in the node?", "any problem with that?", "靠谱吗", "这主意咋样") rather than only
whether it starts?

A binary logistic regression over the USE-multilingual embedding of the clause (the encoder the ask
model reads with), fitted by train_asks.fit_advice on the labelled clauses in training/: the
`## advice` verdicts of paraphrases*.yaml and good_idea.jsonl against every other labelled clause.
Stored as plain arrays in advice_model.npz with the digest of its data (numpy only here).

An ask the reader calls advice becomes a verdict with aspect `advice` when there is a layout of the
user's to judge, as asks.yaml's stop-gap `advice` cue does: the verdict then weighs the validator's
warnings (answers/verdict.advice_line). A verdict on a stated alternative ("tp 8 instead?") keeps its
target and gains the aspect.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from assistant.understand.ask_model import ClauseEncoders
from assistant.understand.query import Ask

MODEL_PATH = Path(__file__).with_name("advice_model.npz")
MIN_PROBABILITY = 0.5
# the kinds an advice clause replaces (as the cue does): a wish for a layout, a plain verdict, a fact
_REPLACED = frozenset({"recommendation", "verdict", "fact"})

Read = Callable[[Sequence[str]], list[float]]


@dataclass(frozen=True)
class AdviceModel:
    coef: np.ndarray  # (features,)
    intercept: float
    mean: np.ndarray
    scale: np.ndarray
    encoder_ids: tuple[str, ...]
    data_digest: str

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        z = ((x - self.mean) / self.scale) @ self.coef + self.intercept
        return 1.0 / (1.0 + np.exp(-z))


def save_model(path: Path, m: AdviceModel) -> None:
    np.savez_compressed(path, coef=m.coef.astype(np.float32), intercept=np.array(m.intercept, dtype=np.float32),
                        mean=m.mean.astype(np.float32), scale=m.scale.astype(np.float32),
                        encoder_ids=np.array(m.encoder_ids), data_digest=np.array(m.data_digest))


@lru_cache(maxsize=2)
def load_model(path: Path = MODEL_PATH) -> AdviceModel | None:
    if not path.exists():
        return None
    with np.load(path, allow_pickle=False) as d:
        return AdviceModel(d["coef"], float(d["intercept"]), d["mean"], d["scale"],
                           tuple(str(x) for x in d["encoder_ids"]), str(d["data_digest"]))


def advice_reader(encoders: ClauseEncoders | None) -> Read | None:
    """Each clause's probability of asking for advice; None without a model or its encoders."""
    model = load_model()
    if encoders is None or model is None:
        return None
    by_id = {e.model_id: e for e in encoders.encoders}
    if not all(i in by_id for i in model.encoder_ids):
        return None
    mine = ClauseEncoders(tuple(by_id[i] for i in model.encoder_ids), encoders.expand)
    return lambda texts: [float(p) for p in model.probabilities(mine.embed(texts))] if texts else []


_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]?")


def with_advice(asks: tuple[Ask, ...], read: Read | None, *, has_layout: bool,
                split: Callable[[str], list[str]], prose: str = "") -> tuple[Ask, ...]:
    """The asks with each advice clause read as a "good idea?" verdict on the user's layout.

    `split` cuts a text into its clauses (asks.clauses): an ask that stands for the whole question
    ("no cue anywhere") is advice when one of its clauses is. A clause of an asking sentence of
    `prose` (one that ends in a question mark) that no ask covers ("是不是应该节点内 TP，节点之间改用
    PP 或 DP？": the first clause asks, and no cue kept it) becomes the advice verdict when the reader
    says so and no verdict is asked already, in its place among the asks. All clauses are read in one batch."""
    if read is None or not has_layout:
        return asks
    todo = [a for a in asks if a.kind in _REPLACED and a.aspect != "advice" and a.target != "advice"]
    pieces = {a.text: [c for c in split(a.text) if c.strip()] or [a.text] for a in todo}
    # a verdict already asked ("换成 tp8 pp2 行不行") is the one the advice would be: no second one
    have_advice = any(a.kind == "verdict" for a in asks)
    asking = [c for m in _SENTENCE.finditer(prose) if m.group(0).rstrip()[-1:] in "?？"
              for c in split(m.group(0)) if c.strip()]
    loose = [c for c in asking if not any(c in a.text or a.text in c for a in asks)] if not have_advice else []
    flat = list(dict.fromkeys([c for cs in pieces.values() for c in cs] + loose))
    if not flat:
        return asks
    p = dict(zip(flat, read(flat)))
    out: list[Ask] = []
    for a in asks:
        if a in todo and max(p[c] for c in pieces[a.text]) >= MIN_PROBABILITY:
            if a.kind == "verdict" and a.target and "=" in a.target:
                a = replace(a, aspect="advice")  # "tp 8 pp 2 instead, good idea?": that alternative, weighed
            else:
                a = Ask("verdict", a.text, "advice", "advice")
            if a in out:
                continue  # two clauses of one question that both ask it: one verdict
        out.append(a)
    found = next((c for c in loose if p[c] >= MIN_PROBABILITY), None)
    if found is not None and not any(a.kind == "verdict" for a in out):
        at = prose.find(found)
        later = [i for i, a in enumerate(out) if prose.find(a.text) > at]
        out.insert(later[0] if later else len(out), Ask("verdict", found, "advice", "advice"))
    return tuple(out)
