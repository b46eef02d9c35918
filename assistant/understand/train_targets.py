"""Fit the target reader (understand/target_model.py): `python -m assistant.understand.train_targets`
(deterministic; train_asks runs it too, so one refit covers every model). Reads the quantity clauses of
training/ that carry a target, prints the counts per target, the cross-validated accuracy per language
and against the patterns (where they find no target, one, several), fits the reader's threshold on the
out-of-fold probabilities, and writes target_model.npz with it and the digest of its data.
"""
from __future__ import annotations

import argparse
import hashlib
import json
from dataclasses import replace
from pathlib import Path

import numpy as np

from assistant.understand.ask_model import NEVER, AskModel, ClauseEncoders, save_model
from assistant.understand.asks import _quantity_targets, load_asks
from assistant.understand.target_model import MODEL_PATH, NONE, features, target_feature_names
from assistant.understand.train_asks import GRID, Example, fit, load_examples, out_of_fold as _out_of_fold

C = 0.1  # inverse L2 strength: 0.03 / 0.1 / 0.5 cross-validated 0.845 / 0.848 / 0.845 (0.1 best where no pattern hits)
# The older paraphrase files name a few targets by the field they bound; the answer's names for them
ALIASES = {"ep_size/max": "max_ep", "grad_acc": "grad_acc_steps", "local_batch_size/min": "min_local_batch_size"}


def target_examples(examples: list[Example] | None = None) -> list[tuple[Example, str]]:
    """(clause, label) for every quantity clause with a target: an answer target (asks.yaml's
    quantity_targets names, or an alias of one), else `none` (a quantity no target answers: "max tp",
    "minimum GPUs"). A quantity clause labelled with no target says nothing of which it is: left out."""
    known = {name for name, _ in load_asks().quantity_targets}
    out = []
    for e in examples if examples is not None else load_examples():
        if e.kind != "quantity" or not e.target:
            continue
        label = ALIASES.get(e.target, e.target)
        out.append((e, label if label in known else NONE))
    return out


def target_digest(pairs: list[tuple[Example, str]]) -> str:
    h = hashlib.sha256()
    for e, y in pairs:
        h.update(json.dumps([e.text, y], ensure_ascii=False).encode("utf-8"))
    h.update("\0".join(target_feature_names()).encode())
    return h.hexdigest()[:16]


def out_of_fold(pairs: list[tuple[Example, str]], x: np.ndarray, c: float = C) -> tuple[np.ndarray, tuple[str, ...]]:
    """The ask model's stratified folds, with the target as the label."""
    return _out_of_fold([replace(e, kind=lab) for e, lab in pairs], x, c)


def fit_threshold(pred: np.ndarray, p: np.ndarray, y: np.ndarray) -> float:
    """The lowest probability of the widest margin of right over wrong targets taken (a `none` reading
    takes nothing; a wrong target answers a neighbour, which costs what a right one gains)."""
    best, net = NEVER, 0
    for t in GRID:
        taken = (pred != NONE) & (p >= t)
        right = int(np.sum(taken & (pred == y)))
        if right - (int(taken.sum()) - right) > net:
            best, net = t, right - (int(taken.sum()) - right)
    return best


def _acc(mask: np.ndarray, hits: np.ndarray) -> dict:
    return {"n": int(mask.sum()), "accuracy": round(float(hits[mask].mean()), 3) if mask.any() else None}


def cross_validate(pairs: list[tuple[Example, str]], x: np.ndarray, c: float = C) -> dict:
    y = np.array([lab for _, lab in pairs])
    proba, labels = out_of_fold(pairs, x, c)
    pred = np.array([labels[i] for i in proba.argmax(1)])
    right = pred == y
    langs = np.array([e.lang for e, _ in pairs])
    found = [_quantity_targets(e.text) for e, _ in pairs]
    n_found = np.array([len(f) for f in found])
    # the patterns' reading as the answer takes it: their first target, or none
    by_pattern = np.array([(f[0] if f else NONE) == lab for f, (_, lab) in zip(found, pairs)])
    out: dict = {"all": _acc(np.ones(len(y), bool), right),
                 **{lang: _acc(langs == lang, right) for lang in ("en", "zh")}}
    for name, mask in (("no_pattern", n_found == 0), ("one_pattern", n_found == 1), ("several_patterns", n_found > 1)):
        out[name] = {"model": _acc(mask, right), "patterns": _acc(mask, by_pattern)}
    out["threshold"] = fit_threshold(pred, proba.max(1), y)
    return out


def labelled(encoders: ClauseEncoders, examples: list[Example] | None = None) -> tuple[list[tuple[Example, str]], np.ndarray]:
    """The (clause, label) pairs and their features: the clauses embedded 64 at a time, as the ask model's."""
    pairs = target_examples(examples)
    texts = [e.text for e, _ in pairs]
    return pairs, features(texts, np.vstack([encoders.embed(texts[i:i + 64]) for i in range(0, len(texts), 64)]))


def fit_targets(encoders: ClauseEncoders, *, cv: bool = True, path: Path = MODEL_PATH,
                examples: list[Example] | None = None) -> dict:
    pairs, x = labelled(encoders, examples)
    y = np.array([lab for _, lab in pairs])
    counts: dict[str, dict[str, int]] = {}
    for e, lab in pairs:
        counts.setdefault(lab, {"en": 0, "zh": 0})[e.lang] += 1
    report: dict = {"examples": len(pairs), "by_target": dict(sorted(counts.items()))}
    # the threshold comes from the cross-validated probabilities, so it is fitted with or without the report
    cvd = cross_validate(pairs, x)
    if cv:
        report["cross_validation"] = cvd
    clf, mean, scale = fit(x, list(y), C)
    save_model(path, AskModel(tuple(str(k) for k in clf.classes_), clf.coef_.astype(np.float32),
                              clf.intercept_.astype(np.float32), mean.astype(np.float32), scale.astype(np.float32),
                              encoders.ids, target_feature_names(), target_digest(pairs), cvd["threshold"], NEVER, NEVER))
    report["min_probability"] = cvd["threshold"]
    return report


def main(argv: list[str] | None = None) -> int:
    from assistant.understand.train_asks import default_encoders

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=MODEL_PATH)
    ap.add_argument("--no-cv", action="store_true", help="fit only, without the cross-validation report")
    ap.add_argument("--c", type=float, default=C, help="inverse L2 strength (to compare in the cross-validation)")
    args = ap.parse_args(argv)
    enc = default_encoders()
    if args.c != C:
        print(json.dumps(cross_validate(*labelled(enc), args.c), indent=1))
        return 0
    print(json.dumps(fit_targets(enc, cv=not args.no_cv, path=args.out), indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
