"""Fit the ask model: `python -m assistant.understand.train_asks` (deterministic; about three minutes
of CPU with the cross-validation and the stability refits, 3 min 4 s measured). Reads the labelled clauses in training/ (the tuning cases' clauses,
reviewed by hand, and hand-written paraphrases), prints cross-validated accuracy per language (and on
the tuning cases' clauses with their whole case held out), fits the reader's thresholds on the
out-of-fold probabilities (fit_thresholds), prints how many of the tuning cases' decisions a refit without
a tenth of the paraphrases changes (ask_stability.py), and writes ask_model.npz with them and the digest of the
data it was fitted on; the advice reader and the target reader (fit_targets: counts per target,
cross-validated accuracy against the patterns where they find no target, one, several) beside it.
"""
from __future__ import annotations

import argparse
import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from assistant.datafile import read_yaml
from assistant.understand.advice import MODEL_PATH as ADVICE_MODEL_PATH, AdviceModel, save_model as save_advice
from assistant.understand.ask_model import MODEL_PATH, NEVER, AskModel, ClauseEncoders, save_model
from assistant.understand.ask_stability import stability
from assistant.understand.asks import _quantity_targets, load_asks
from assistant.understand.clause_features import LABELS, rule_feature_names
from assistant.understand.target_model import MODEL_PATH as TARGET_MODEL_PATH, NONE, target_feature_names
from assistant.understand.target_model import features as target_model_features

TRAINING_DIR = Path(__file__).with_name("training")
CASES_FILE = TRAINING_DIR / "cases_clauses.jsonl"
# verdict clauses asked as advice ("good idea?"), labelled target `advice`: the advice reader's
# positives with the `## advice` lines of paraphrases*.yaml (understand/advice.py)
GOOD_IDEA_FILE = TRAINING_DIR / "good_idea.jsonl"
ADVICE = "advice"
# paraphrases.yaml and any paraphrases_<topic>.yaml beside it: one file per batch of hand-written
# clauses, so batches written side by side merge without touching each other
PARAPHRASES_GLOB = "paraphrases*.yaml"
# inverse L2 strength and encoders, chosen by the cross-validation and the stability count (issue 18;
# cross-validated accuracy / tuning cases' decisions a refit without a tenth of the paraphrases changes,
# mean of 3 draws). On the 3400 clauses before paraphrases_askfit: USE + rules C 0.1 0.845 / 7.3, C 0.3
# 0.831 / 5.3, C 0.03 0.851 / 7.7, class-balanced 0.839 / 5.7, the 50 fold models averaged (bagging)
# 0.845 / 11.0. With it (3555): USE C 0.1 0.838 / 4.7, C 0.03 0.845 / 5.3; + MiniLM 0.853 / 4.7; + hashed
# n-grams (clause_features.ngram_features) 0.842 / 0.7; both 0.855 / 0 (2 draws). MiniLM's fixed
# 128-token rows cost about 100 ms a question of ten clauses on a loaded machine (USE 35 ms); quiet, 8 ms for
# three clauses and 21 ms for ten (USE 3 and 6 ms), against a warm budget of 18 ms a question (issue 21): the
# reader stays on USE + n-grams, the stability MiniLM's extra CV point does not need.
C = 0.03
MODEL_ENCODERS = ("use-multilingual",)
# the advice and target readers stay on the encoder their C was chosen with
READER_ENCODERS = ("use-multilingual",)
FOLDS = 5
ADVICE_C = 0.05  # the advice reader's inverse L2 strength: 0.01 / 0.05 / 0.2 / 1.0 cross-validated, zh advice
# recall 0.86 / 0.80 / 0.77 / 0.75 at accuracy 0.97-0.99; 0.05 keeps en precision (0.968 at 0.01)
# The thresholds the reader applies are fitted on the out-of-fold probabilities of the labelled clauses
GRID = tuple(round(0.30 + 0.01 * i, 2) for i in range(70))  # 0.30 .. 0.99
# fold splits (seeds of the stratified folds) whose net-gain curves are averaged to fit them: one split's
# curve moves with the folds that every data change reshuffles (fit_thresholds). Refitted with one
# paraphrase file dropped at a time (15) or a fifth of the tuning cases (3), the spread (max - min) of
# min / statement / override probability was 0.39 / 0.31 / 0.25 by one split's argmax; by the plateau's
# median of 1 split 0.36 / 0.38 / 0.30, of 5 splits 0.12 / 0.19 / 0.18, of 10 splits 0.07 / 0.14 / 0.12
# (ten: 50 fits, about 10 s)
THRESHOLD_SPLITS = 10


@dataclass(frozen=True)
class Example:
    text: str
    lang: str
    kind: str
    target: str | None
    group: str  # the tuning case it comes from, or "para:<kind>"


def load_examples() -> list[Example]:
    out: list[Example] = []
    for line in CASES_FILE.read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            out.append(Example(r["text"], r["lang"], r["kind"], r.get("target"), f"case:{r['case']}"))
    for path in sorted(TRAINING_DIR.glob(PARAPHRASES_GLOB)):
        batch = path.stem.partition("_")[2]
        for kind, by_lang in (read_yaml(path) or {}).items():
            for lang, lines in by_lang.items():
                for i, line in enumerate(lines):
                    text, _, target = str(line).partition(" ## ")
                    group = f"para:{batch}:{kind}:{lang}:{i // 5}" if batch else f"para:{kind}:{lang}:{i // 5}"
                    out.append(Example(text.strip(), lang, kind, target.strip() or None, group))
    bad = sorted({e.kind for e in out} - set(LABELS))
    if bad:
        raise ValueError(f"unknown labels in the training data: {bad}")
    return out


def data_digest(examples: list[Example]) -> str:
    """What the stored model was fitted on: the labelled clauses and the rule features' names."""
    h = hashlib.sha256()
    for e in examples:
        h.update(json.dumps([e.text, e.kind], ensure_ascii=False).encode("utf-8"))
    h.update("\0".join(rule_feature_names()).encode())
    return h.hexdigest()[:16]


def default_encoders() -> ClauseEncoders:
    from assistant.config import KB_DIR, Settings
    from assistant.index.encoders import load_encoders
    from assistant.index.glossary import load_glossary

    s = Settings()
    encs = load_encoders(MODEL_ENCODERS, s.model_cache_dir)
    for e in encs:
        e.set_threads(2)
    glossary = load_glossary(KB_DIR / "glossary.yaml")
    return ClauseEncoders(tuple(encs), glossary.expand)


def features(examples: list[Example], encoders: ClauseEncoders) -> np.ndarray:
    from assistant.understand.clause_features import rule_features

    texts = [e.text for e in examples]
    emb = np.vstack([encoders.embed(texts[i:i + 64]) for i in range(0, len(texts), 64)])
    rules = np.vstack([rule_features(t) for t in texts])
    return np.hstack([emb, rules]).astype(np.float32)


def fit(x: np.ndarray, y: list[str], c: float = C) -> tuple:
    from sklearn.linear_model import LogisticRegression

    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-6] = 1.0
    clf = LogisticRegression(C=c, max_iter=3000, solver="lbfgs")
    clf.fit((x - mean) / scale, y)
    return clf, mean, scale


def predict(clf, mean, scale, x: np.ndarray) -> np.ndarray:
    return clf.predict((x - mean) / scale)


def out_of_fold(examples: list[Example], x: np.ndarray, c: float = C, seed: int = 0) -> tuple[np.ndarray, tuple[str, ...]]:
    """Each clause's probability per label from the model fitted on the other folds (stratified,
    deterministic for a `seed`), and the labels in column order."""
    from sklearn.model_selection import StratifiedKFold

    y = np.array([e.kind for e in examples])
    labels = tuple(sorted(set(y)))
    proba = np.zeros((len(y), len(labels)))
    for tr, te in StratifiedKFold(FOLDS, shuffle=True, random_state=seed).split(x, y):
        clf, m, s = fit(x[tr], list(y[tr]), c)
        cols = [labels.index(str(k)) for k in clf.classes_]
        proba[np.ix_(te, cols)] = clf.predict_proba((x[te] - m) / s)
    return proba, labels


def _decisions(group: list[int], rows: list[dict], asked: dict, y: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(taken, worth) of one group of clauses: per GRID threshold and clause whether the model's kind is
    taken (at least the threshold, and more likely than `context`), and per clause +1 / -1 for a right /
    wrong kind taken."""
    p = np.array([rows[i][asked[i]] for i in group])
    over_context = np.array([rows[i][asked[i]] > rows[i].get("context", 0.0) for i in group], bool)
    taken = (p[None, :] >= np.array(GRID)[:, None]) & over_context[None, :]
    return taken, np.array([1 if y[i] == asked[i] else -1 for i in group])


def plateau_threshold(curves: list[tuple[np.ndarray, np.ndarray]]) -> tuple[float, float]:
    """(threshold, mean net) from the net-gain curves over GRID of several fold splits, each given as
    (taken, worth): per threshold and clause whether the model's reading is taken, and per clause what
    taking it is worth (+1 right, -1 wrong, 0 when it changes nothing); NEVER when no threshold gains.

    Not the argmax of one split's curve: that curve is flat (within +-5 of its best over 0.40-0.70 on
    2915 clauses), and its argmax moved 0.31-0.70 when one paraphrase file was dropped, flipping the
    clauses near it between refits. The curves of the splits are averaged; a threshold is as good as
    the best when its mean net is below the best by at most one standard deviation of that difference
    under chance, sqrt(the clauses the two decide differently, a +-1 each); the threshold taken is the
    median of those (measured at THRESHOLD_SPLITS)."""
    nets = np.mean([taken.astype(float) @ worth for taken, worth in curves], axis=0)
    best = int(np.argmax(nets))
    if nets[best] <= 0:
        return NEVER, 0.0
    differ = np.mean([((taken != taken[best][None, :]) & (worth != 0)[None, :]).sum(axis=1)
                      for taken, worth in curves], axis=0)
    near = np.flatnonzero((nets[best] - nets <= np.sqrt(differ)) & (nets > 0))
    mid = int(near[len(near) // 2])
    return GRID[mid], round(float(nets[mid]), 1)


def fit_thresholds(examples: list[Example], probas: list[np.ndarray], labels: tuple[str, ...]) -> dict:
    """The reader's three thresholds, from the out-of-fold probabilities of THRESHOLD_SPLITS fold splits
    (`probas`), as asks.detect_asks uses them; each the median of the near-best plateau of its curve
    (plateau_threshold).

    `min_probability` and `statement_probability`: over the clauses no cue decides, in a question form
    and not, the probability from which taking the model's ask kind (more likely than `context`) is right
    more often than wrong (a right kind counts 1, a wrong one -1, not taking it 0: answering a neighbour
    costs what a right answer gains); NEVER when no threshold gains.
    `override_probability`: over the clauses whose cues read one kind, the probability from which reading
    the model's kind instead gains labels (right overrides minus cues it would have had right); NEVER
    when no threshold gains."""
    from assistant.understand.asks import _CONDITION, _MODEL_KINDS, _OVERRIDE_KINDS, _QUESTION_FORM, cue_kinds

    y = [e.kind for e in examples]
    cues = [{k for _, k in cue_kinds(e.text)} for e in examples]
    free = [i for i, e in enumerate(examples) if not cues[i] and not _CONDITION.match(e.text)]
    question = {i: _QUESTION_FORM.search(examples[i].text) is not None for i in free}
    single = [i for i in range(len(examples)) if len(cues[i]) == 1]
    curves: dict[str, list] = {"question": [], "statement": [], "override": []}
    for proba in probas:
        rows = [dict(zip(labels, map(float, r))) for r in proba]
        asked = {i: max((k for k in rows[i] if k in _MODEL_KINDS), key=rows[i].get) for i in free}
        for form, name in ((True, "question"), (False, "statement")):
            curves[name].append(_decisions([i for i in free if question[i] == form], rows, asked, y))
        best = {i: max((k for k in rows[i] if k in _OVERRIDE_KINDS), key=rows[i].get) for i in single}
        p = np.array([rows[i][best[i]] for i in single])
        differs = np.array([best[i] not in cues[i] for i in single], bool)
        # an override is worth +1 when the model is right, -1 when the cue was, 0 when both are wrong
        curves["override"].append(((p[None, :] >= np.array(GRID)[:, None]) & differs[None, :],
                                   np.array([int(y[i] == best[i]) - int(y[i] in cues[i]) for i in single])))
    fitted = {name: plateau_threshold(c) if c[0][1].size else (NEVER, 0.0) for name, c in curves.items()}
    return {"min_probability": fitted["question"][0], "question_net": fitted["question"][1],
            "question_clauses": sum(question.values()),
            "statement_probability": fitted["statement"][0], "statement_net": fitted["statement"][1],
            "statement_clauses": len(free) - sum(question.values()),
            "override_probability": fitted["override"][0], "override_gain": fitted["override"][1],
            "single_cue_clauses": len(single), "fold_splits": len(probas)}


def fit_ask_model(examples: list[Example], x: np.ndarray, encoder_ids: tuple[str, ...]) -> tuple[AskModel, dict]:
    """The ask model fitted on `examples` (features `x`), with its thresholds fitted on the out-of-fold
    probabilities of THRESHOLD_SPLITS fold splits; and the thresholds' report."""
    splits = [out_of_fold(examples, x, seed=seed) for seed in range(THRESHOLD_SPLITS)]
    thresholds = fit_thresholds(examples, [proba for proba, _ in splits], splits[0][1])
    clf, mean, scale = fit(x, [e.kind for e in examples])
    model = AskModel(tuple(str(c) for c in clf.classes_), clf.coef_.astype(np.float32),
                     clf.intercept_.astype(np.float32), mean.astype(np.float32), scale.astype(np.float32),
                     encoder_ids, rule_feature_names(), data_digest(examples),
                     thresholds["min_probability"], thresholds["statement_probability"],
                     thresholds["override_probability"])
    return model, thresholds


def cross_validate(examples: list[Example], x: np.ndarray, c: float = C) -> dict:
    """Accuracy per language over stratified folds of all clauses, and over the tuning cases' clauses
    with their whole case held out (paraphrases always train)."""
    from sklearn.model_selection import GroupKFold, StratifiedKFold

    y = np.array([e.kind for e in examples])
    langs = np.array([e.lang for e in examples])
    pred = np.empty(len(y), dtype=object)
    for tr, te in StratifiedKFold(FOLDS, shuffle=True, random_state=0).split(x, y):
        clf, m, s = fit(x[tr], list(y[tr]), c)
        pred[te] = predict(clf, m, s, x[te])
    out = {"all": _accuracy(pred, y, langs)}
    is_case = np.array([e.group.startswith("case:") for e in examples])
    groups = np.array([e.group for e in examples])
    held = np.empty(len(y), dtype=object)
    cases = np.flatnonzero(is_case)
    for tr, te in GroupKFold(FOLDS).split(cases, groups=groups[cases]):
        train = np.concatenate([np.flatnonzero(~is_case), cases[tr]])
        clf, m, s = fit(x[train], list(y[train]), c)
        held[cases[te]] = predict(clf, m, s, x[cases[te]])
    out["case_clauses_held_out"] = _accuracy(held[cases], y[cases], langs[cases])
    return out


def _accuracy(pred, y, langs) -> dict:
    res = {"n": int(len(y)), "accuracy": round(float(np.mean(pred == y)), 3)}
    for lang in ("en", "zh"):
        m = langs == lang
        res[lang] = {"n": int(m.sum()), "accuracy": round(float(np.mean(pred[m] == y[m])), 3)}
    return res


def advice_examples(examples: list[Example]) -> list[tuple[Example, bool]]:
    """(clause, asks for advice?) for the advice reader: good_idea.jsonl and every `## advice` line are
    advice; every other labelled clause is not, except the verdicts of a paraphrase file that labels
    no advice (paraphrases.yaml was written before advice was labelled, and some of its verdicts ask it)."""
    labelling = {_batch(e) for e in examples if e.target == ADVICE}
    out = [(e, e.target == ADVICE) for e in examples
           if e.target == ADVICE or e.kind != "verdict" or not e.group.startswith("para:") or _batch(e) in labelling]
    for line in GOOD_IDEA_FILE.read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            out.append((Example(r["text"], r["lang"], r["kind"], r.get("target"), "good_idea"), r.get("target") == ADVICE))
    return out


def _batch(e: Example) -> str:
    """The paraphrase file an example comes from ("" for paraphrases.yaml), from its group."""
    parts = e.group.split(":")
    return parts[1] if len(parts) == 5 else ""


def advice_digest(pairs: list[tuple[Example, bool]]) -> str:
    h = hashlib.sha256()
    for e, y in pairs:
        h.update(json.dumps([e.text, y], ensure_ascii=False).encode("utf-8"))
    return h.hexdigest()[:16]


def fit_advice(examples: list[Example], encoders: ClauseEncoders, *, cv: bool = True,
               path: Path = ADVICE_MODEL_PATH) -> dict:
    """Fit and store the advice reader (embedding only: the rule features are the kind model's)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    pairs = advice_examples(examples)
    texts = [e.text for e, _ in pairs]
    x = np.vstack([encoders.embed(texts[i:i + 64]) for i in range(0, len(texts), 64)]).astype(np.float32)
    y = np.array([int(v) for _, v in pairs])
    langs = np.array([e.lang for e, _ in pairs])

    def fitted(xs, ys):
        mean = xs.mean(axis=0)
        scale = xs.std(axis=0)
        scale[scale < 1e-6] = 1.0
        clf = LogisticRegression(C=ADVICE_C, max_iter=3000, solver="lbfgs", class_weight="balanced")
        clf.fit((xs - mean) / scale, ys)
        return clf, mean, scale

    report: dict = {"examples": len(pairs), "advice": int(y.sum())}
    if cv:
        pred = np.empty(len(y), dtype=int)
        for tr, te in StratifiedKFold(FOLDS, shuffle=True, random_state=0).split(x, y):
            clf, m, s = fitted(x[tr], y[tr])
            pred[te] = clf.predict((x[te] - m) / s)
        report["cross_validation"] = {
            lang: {"n": int((langs == lang).sum()), "accuracy": round(float(np.mean(pred[langs == lang] == y[langs == lang])), 3),
                   "advice_recall": round(float(np.mean(pred[(langs == lang) & (y == 1)] == 1)), 3)}
            for lang in ("en", "zh")}
    clf, mean, scale = fitted(x, y)
    save_advice(path, AdviceModel(clf.coef_[0].astype(np.float32), float(clf.intercept_[0]), mean.astype(np.float32),
                                  scale.astype(np.float32), encoders.ids, advice_digest(pairs)))
    return report


def train(path: Path = MODEL_PATH, *, encoders: ClauseEncoders | None = None, cv: bool = True,
          advice_path: Path = ADVICE_MODEL_PATH, target_path: Path | None = None) -> dict:
    examples = load_examples()
    encoders = encoders or default_encoders()
    x = features(examples, encoders)
    y = [e.kind for e in examples]
    report: dict = {"examples": len(examples)}
    counts: dict[str, dict[str, int]] = {}
    for e in examples:
        counts.setdefault(e.lang, {}).setdefault(e.kind, 0)
        counts[e.lang][e.kind] += 1
    report["by_language_and_kind"] = counts
    if cv:
        report["cross_validation"] = cross_validate(examples, x)
    model, report["thresholds"] = fit_ask_model(examples, x, encoders.ids)
    save_model(path, model)
    report["training_accuracy"] = round(float(np.mean(
        np.array(model.labels)[model.probabilities(x).argmax(1)] == np.array(y))), 3)
    if cv:
        # beside the cross-validation: how many of the tuning cases' decisions a batch of other data moves
        report["stability"] = stability([e.text for e in examples], np.array([e.group.startswith("case:") for e in examples]),
                                        x, model, lambda idx: fit_ask_model([examples[i] for i in idx], x[idx], encoders.ids)[0])
    readers = ClauseEncoders(tuple(e for e in encoders.encoders if getattr(e, "name", None) in READER_ENCODERS)
                             or encoders.encoders, encoders.expand)
    report["advice_reader"] = fit_advice(examples, readers, cv=cv, path=advice_path)
    # the target reader is fitted on the same labelled clauses: one refit covers every model
    report["target_reader"] = fit_targets(readers, cv=cv, path=target_path or TARGET_MODEL_PATH, examples=examples)
    return report


# The target reader (understand/target_model.py): which quantity a quantity ask asks, fitted on the
# quantity clauses that carry a target; its threshold on the out-of-fold probabilities.
TARGET_C = 0.1  # the target reader's inverse L2 strength: 0.03 / 0.1 / 0.5 cross-validated 0.845 / 0.848 / 0.845 (0.1 best where no pattern hits)
# The older paraphrase files name a few targets by the field they bound; the answer's names for them
TARGET_ALIASES = {"ep_size/max": "max_ep", "grad_acc": "grad_acc_steps", "local_batch_size/min": "min_local_batch_size"}


def target_examples(examples: list[Example] | None = None) -> list[tuple[Example, str]]:
    """(clause, label) for every quantity clause with a target: an answer target (asks.yaml's
    quantity_targets names, or an alias of one), else `none` (a quantity no target answers: "max tp",
    "minimum GPUs"). A quantity clause labelled with no target says nothing of which it is: left out."""
    known = {name for name, _ in load_asks().quantity_targets}
    out = []
    for e in examples if examples is not None else load_examples():
        if e.kind != "quantity" or not e.target:
            continue
        # "values:pp_size" (which values a field may take) is the allowed_values target of that field
        label = "allowed_values" if e.target.startswith("values:") else TARGET_ALIASES.get(e.target, e.target)
        out.append((e, label if label in known else NONE))
    return out


def target_digest(pairs: list[tuple[Example, str]]) -> str:
    h = hashlib.sha256()
    for e, y in pairs:
        h.update(json.dumps([e.text, y], ensure_ascii=False).encode("utf-8"))
    h.update("\0".join(target_feature_names()).encode())
    return h.hexdigest()[:16]


def targets_out_of_fold(pairs: list[tuple[Example, str]], x: np.ndarray, c: float = TARGET_C,
                        seed: int = 0) -> tuple[np.ndarray, tuple[str, ...]]:
    """The ask model's stratified folds, with the target as the label."""
    return out_of_fold([replace(e, kind=lab) for e, lab in pairs], x, c, seed=seed)


def fit_target_threshold(splits: list[tuple[np.ndarray, np.ndarray]], y: np.ndarray) -> float:
    """The target reader's threshold from the (predicted target, its probability) of several fold splits,
    as the ask model's (plateau_threshold): a target taken is worth +1 when right and -1 when wrong (a
    wrong target answers a neighbour, which costs what a right one gains); a `none` reading takes nothing."""
    grid = np.array(GRID)[:, None]
    curves = [(((pred != NONE)[None, :] & (p[None, :] >= grid)), np.where(pred == NONE, 0, np.where(pred == y, 1, -1)))
              for pred, p in splits]
    return plateau_threshold(curves)[0]


def _target_accuracy(mask: np.ndarray, hits: np.ndarray) -> dict:
    return {"n": int(mask.sum()), "accuracy": round(float(hits[mask].mean()), 3) if mask.any() else None}


def cross_validate_targets(pairs: list[tuple[Example, str]], x: np.ndarray, c: float = TARGET_C) -> dict:
    y = np.array([lab for _, lab in pairs])
    proba, labels = targets_out_of_fold(pairs, x, c)
    pred = np.array([labels[i] for i in proba.argmax(1)])
    right = pred == y
    langs = np.array([e.lang for e, _ in pairs])
    found = [_quantity_targets(e.text) for e, _ in pairs]
    n_found = np.array([len(f) for f in found])
    # the patterns' reading as the answer takes it: their first target, or none
    by_pattern = np.array([(f[0] if f else NONE) == lab for f, (_, lab) in zip(found, pairs)])
    out: dict = {"all": _target_accuracy(np.ones(len(y), bool), right),
                 **{lang: _target_accuracy(langs == lang, right) for lang in ("en", "zh")}}
    for name, mask in (("no_pattern", n_found == 0), ("one_pattern", n_found == 1), ("several_patterns", n_found > 1)):
        out[name] = {"model": _target_accuracy(mask, right), "patterns": _target_accuracy(mask, by_pattern)}
    splits = [(pred, proba.max(1))]
    for seed in range(1, THRESHOLD_SPLITS):
        p_s, _ = targets_out_of_fold(pairs, x, c, seed=seed)
        splits.append((np.array([labels[i] for i in p_s.argmax(1)]), p_s.max(1)))
    out["threshold"] = fit_target_threshold(splits, y)
    out["fold_splits"] = len(splits)
    return out


def labelled_targets(encoders: ClauseEncoders, examples: list[Example] | None = None) -> tuple[list[tuple[Example, str]], np.ndarray]:
    """The (clause, label) pairs and their features: the clauses embedded 64 at a time, as the ask model's."""
    pairs = target_examples(examples)
    texts = [e.text for e, _ in pairs]
    return pairs, target_model_features(texts, np.vstack([encoders.embed(texts[i:i + 64]) for i in range(0, len(texts), 64)]))


def fit_targets(encoders: ClauseEncoders, *, cv: bool = True, path: Path = TARGET_MODEL_PATH,
                examples: list[Example] | None = None) -> dict:
    pairs, x = labelled_targets(encoders, examples)
    y = np.array([lab for _, lab in pairs])
    counts: dict[str, dict[str, int]] = {}
    for e, lab in pairs:
        counts.setdefault(lab, {"en": 0, "zh": 0})[e.lang] += 1
    report: dict = {"examples": len(pairs), "by_target": dict(sorted(counts.items()))}
    # the threshold comes from the cross-validated probabilities, so it is fitted with or without the report
    cvd = cross_validate_targets(pairs, x)
    if cv:
        report["cross_validation"] = cvd
    clf, mean, scale = fit(x, list(y), TARGET_C)
    save_model(path, AskModel(tuple(str(k) for k in clf.classes_), clf.coef_.astype(np.float32),
                              clf.intercept_.astype(np.float32), mean.astype(np.float32), scale.astype(np.float32),
                              encoders.ids, target_feature_names(), target_digest(pairs), cvd["threshold"], NEVER, NEVER))
    report["min_probability"] = cvd["threshold"]
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=MODEL_PATH)
    ap.add_argument("--no-cv", action="store_true", help="fit only, without the cross-validation report")
    args = ap.parse_args(argv)
    print(json.dumps(train(args.out, cv=not args.no_cv), indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
