"""The advice reader: the stored model is the one fitted on today's labelled clauses, and with_advice
turns the asks it reads as advice into "good idea?" verdicts on the user's layout (a stand-in reader
here: no encoder is loaded by these tests)."""
from __future__ import annotations

from assistant.understand.advice import MODEL_PATH, load_model, with_advice
from assistant.understand.asks import clauses
from assistant.understand.query import Ask
from assistant.understand.train_asks import ADVICE, advice_digest, advice_examples, load_examples


def test_the_stored_advice_model_was_fitted_on_the_training_data_as_it_is():
    model = load_model(MODEL_PATH)
    assert model is not None, "advice_model.npz is missing: run python -m assistant.understand.train_asks"
    assert model.data_digest == advice_digest(advice_examples(load_examples())), \
        "the labelled clauses changed since advice_model.npz was fitted: run python -m assistant.understand.train_asks"
    assert model.coef.shape == model.mean.shape


def test_advice_labels_are_read_from_the_quoted_lines_in_both_languages():
    pairs = advice_examples(load_examples())
    advice = [e for e, y in pairs if y]
    assert {e.lang for e in advice} == {"en", "zh"}
    assert len(advice) >= 80
    # the `## advice` label survives YAML (a quoted line; unquoted, ' ##' starts a comment)
    assert any(e.target == ADVICE and e.group.startswith("para:advice:") for e in advice)
    # paraphrases.yaml's own verdicts were written before advice was labelled: neither side
    assert not any(e.group.startswith("para:verdict:") for e, _ in pairs)


def _reader(advice_words):
    return lambda texts: [1.0 if any(w in t for w in advice_words) else 0.0 for t in texts]


def test_a_whole_question_ask_becomes_an_advice_verdict_when_one_clause_asks_advice():
    ask = Ask("recommendation", "4 台机器每台 4 张卡;Qwen3-32B 开 tp_size 8 是个好主意吗?")
    out = with_advice((ask,), _reader(["好主意"]), has_layout=True, split=clauses, prose=ask.text)
    assert out == (Ask("verdict", ask.text, "advice", "advice"),)


def test_nothing_changes_without_a_layout_or_without_advice():
    ask = Ask("recommendation", "suggest tp, pp and ep for Qwen3-235B on 128 GPUs")
    assert with_advice((ask,), _reader(["good idea"]), has_layout=True, split=clauses, prose=ask.text) == (ask,)
    good = Ask("recommendation", "tp 16 on two nodes, good idea?")
    assert with_advice((good,), _reader(["good idea"]), has_layout=False, split=clauses, prose=good.text) == (good,)


def test_an_alternative_keeps_its_target_and_gains_the_aspect():
    alt = Ask("verdict", "tp 8 pp 2 instead, good idea", "tp_size=8,pp_size=2")
    out = with_advice((alt,), _reader(["good idea"]), has_layout=True, split=clauses, prose=alt.text + "?")
    assert out == (Ask("verdict", alt.text, "tp_size=8,pp_size=2", "advice"),)


def test_an_asking_clause_no_ask_kept_becomes_the_advice_verdict_in_its_place():
    prose = "两台 8 卡跑 70B, tp 开到 16, 每步很慢。是不是应该节点内 TP, 节点之间改用 PP 或 DP?"
    dp = Ask("quantity", "节点之间改用 PP 或 DP", "dp_size")
    out = with_advice((dp,), _reader(["是不是应该"]), has_layout=True, split=clauses, prose=prose)
    assert [a.kind for a in out] == ["verdict", "quantity"] and out[0].aspect == "advice"
    # a verdict already asked is the one the advice would be: no second verdict
    alt = Ask("verdict", "换成 tp8 pp2 行不行", "tp_size=8,pp_size=2")
    prose2 = "tp=16 横跨两台机器慢得要死, 换成 tp8 pp2 行不行?"
    assert with_advice((alt,), _reader(["横跨"]), has_layout=True, split=clauses, prose=prose2) == (alt,)
