"""The ask model: the stored model is the one fitted on today's training data, it reads clauses no
cue decides, and such a clause is kept as an ask (its kind, or `unknown`), never dropped."""
from __future__ import annotations

import numpy as np
import pytest

from assistant.understand.ask_model import MODEL_PATH, load_model
from assistant.understand.asks import detect_asks, model_kind, overruled_kind
from assistant.understand.clause_features import LABELS, rule_feature_names
from assistant.understand.pasted import split_pasted
from assistant.understand.train_asks import data_digest, load_examples


def test_the_stored_model_was_fitted_on_the_training_data_as_it_is():
    model = load_model(MODEL_PATH)
    assert model is not None, "ask_model.npz is missing or its rule features changed: run train_asks"
    assert model.data_digest == data_digest(load_examples()), \
        "the training data changed since ask_model.npz was fitted: run python -m assistant.understand.train_asks"
    assert model.rule_names == rule_feature_names()
    assert set(model.labels) <= set(LABELS)
    assert model.coef.shape == (len(model.labels), model.mean.shape[0])


def test_training_data_is_large_and_covers_both_languages_and_every_kind():
    examples = load_examples()
    assert len(examples) >= 1500
    for lang in ("en", "zh"):
        kinds = {e.kind for e in examples if e.lang == lang}
        assert kinds == set(LABELS), (lang, set(LABELS) - kinds)


def test_the_model_reads_context_and_asks_with_its_fitted_thresholds():
    sure_fact = {k: 0.01 for k in LABELS} | {"fact": 0.9}
    unsure = {k: 0.1 for k in LABELS}
    # a statement is context unless the model is sure beyond the statement threshold
    assert model_kind(sure_fact, "we have 2 nodes of 8 H100", 0.45) is None
    assert model_kind(sure_fact, "we have 2 nodes of 8 H100", 0.45, statement_probability=0.8) == "fact"
    assert model_kind(sure_fact, "what does it control?", 0.45) == "fact"
    assert model_kind(unsure, "what now?", 0.45) == "unknown"  # an unsure question is kept as `unknown`
    # the model's `context` outweighs the question form: "它管什么" read as a statement is context
    assert model_kind(sure_fact | {"context": 0.95}, "它管什么", 0.45) is None


def test_a_cue_is_overruled_only_past_the_fitted_threshold():
    advice = {k: 0.01 for k in LABELS} | {"recommendation": 0.8, "fact": 0.15}
    assert overruled_kind(advice, "fact", 0.7) == "recommendation"
    assert overruled_kind(advice, "fact", 0.9) is None
    assert overruled_kind(advice, "recommendation", 0.7) is None


def test_the_stored_model_carries_fitted_thresholds():
    model = load_model(MODEL_PATH)
    assert 0.3 <= model.min_probability < 1.0
    assert 0.3 <= model.statement_probability <= 1.01
    assert 0.3 <= model.override_probability <= 1.01


def _asks(question: str, read):
    return detect_asks(question, split_pasted(question), "strategy", has_layout=True, read=read)


def test_a_clause_no_cue_decides_is_kept_as_an_ask_not_dropped():
    question = "tp 4 pp 2 on 16 GPUs, is it valid? and what could the 2 be"
    rules_only = _asks(question, None)
    assert [a.kind for a in rules_only] == ["verdict"]  # the rules alone drop the second ask
    seen: list[list[str]] = []

    def read(texts):
        seen.append(list(texts))
        return [{k: (0.8 if k == "quantity" else 0.02) for k in LABELS} for _ in texts]

    asks = _asks(question, read)
    assert [a.kind for a in asks] == ["verdict", "quantity"]
    assert len(seen) == 1  # one batch per question

    def unsure(texts):
        return [{k: 0.1 for k in LABELS} for _ in texts]

    assert [a.kind for a in _asks(question, unsure)] == ["verdict", "unknown"]


@pytest.mark.slow
def test_refitting_reproduces_the_stored_model(tmp_path):
    """Deterministic training: a re-fit on the same data gives the same predictions."""
    from assistant.understand.ask_model import load_model as load
    from assistant.understand.train_asks import default_encoders, features, train

    enc = default_encoders()
    out = tmp_path / "m.npz"
    train(out, encoders=enc, cv=False)
    fresh, stored = load(out), load(MODEL_PATH)
    x = features(load_examples(), enc)
    assert np.array_equal(fresh.probabilities(x).argmax(1), stored.probabilities(x).argmax(1))


def test_no_target_label_is_lost_in_a_yaml_comment():
    # An unquoted `- clause ## target` reads as the clause plus a YAML comment: the target vanishes
    # without an error, so every ` ## ` in a paraphrase file must reach the loaded examples.
    from assistant.understand.train_asks import PARAPHRASES_GLOB, TRAINING_DIR
    written = 0
    for path in TRAINING_DIR.glob(PARAPHRASES_GLOB):
        written += sum(1 for line in path.read_text(encoding="utf-8").splitlines()
                       if line.lstrip().startswith("- ") and " ## " in line)
    loaded = sum(1 for e in load_examples() if e.group.startswith("para:") and e.target)
    assert loaded == written


def _reader(kinds_by_text, default="context"):
    def read(texts):
        return [{k: (0.9 if k == kinds_by_text.get(t, default) else 0.01) for k in LABELS} for t in texts]
    return read


def test_no_cue_anywhere_the_model_still_reads_every_clause():
    """The model's reading is not thrown away when no clause has a cue (it used to give way to the
    intent): "不行的话换成啥" after a fact about megatron_fsdp is a second ask."""
    question = "megatron_fsdp 支持 pp 吗？不行的话换成啥？"
    read = _reader({"megatron_fsdp 支持 pp 吗": "fact", "不行的话换成啥": "recommendation"})
    asks = detect_asks(question, split_pasted(question), "strategy", has_layout=False, read=read,
                       min_probability=0.5, statement_probability=0.7)
    assert [a.kind for a in asks] == ["fact", "recommendation"]


def test_when_nothing_is_read_with_confidence_the_intent_takes_the_first_and_the_rest_stay_unknown():
    question = "what now? and what else?"

    def unsure(texts):
        return [{k: 0.1 for k in LABELS} for _ in texts]

    asks = detect_asks(question, split_pasted(question), "strategy", has_layout=False, read=unsure)
    assert [a.kind for a in asks][1:] == ["unknown"] and asks[0].kind != "unknown"
