"""The target reader: the stored model is the one fitted on today's labelled clauses, its labels are the
answer's targets, and with_targets gives a quantity ask the patterns left without a target the reader's
(a stand-in reader here, except in the slow test that loads the encoder)."""
from __future__ import annotations

import pytest

from assistant.compose.answers.quantity_lines import quantity_line
from assistant.understand.asks import load_asks
from assistant.understand.query import Ask
from assistant.understand.target_model import MODEL_PATH, NONE, load_model, with_targets
from assistant.understand.train_asks import target_digest, target_examples


def test_the_stored_target_model_was_fitted_on_the_training_data_as_it_is():
    model = load_model(MODEL_PATH)
    assert model is not None, "target_model.npz is missing or stale: run python -m assistant.understand.train_asks"
    assert model.data_digest == target_digest(target_examples()), \
        "the labelled quantity clauses changed since target_model.npz was fitted: run python -m assistant.understand.train_asks"
    assert model.coef.shape == (len(model.labels), model.mean.shape[0])
    assert 0.3 <= model.min_probability <= 1.0


def test_every_label_is_a_target_the_answer_knows_or_none():
    known = {name for name, _ in load_asks().quantity_targets}
    pairs = target_examples()
    labels = {lab for _, lab in pairs}
    assert labels <= known | {NONE}
    # each target has labelled clauses in both languages, from the targets batch at least
    for name in known:
        langs = {e.lang for e, lab in pairs if lab == name}
        assert langs == {"en", "zh"}, name
    # an older file's name for a target is read as the answer's: "ep_size/max" is max_ep
    assert not any(e.target == "ep_size/max" and lab != "max_ep" for e, lab in pairs)


def _reader(words: dict[str, str], p: float = 0.9):
    def read(texts):
        return [next(((t, p) for w, t in words.items() if w in text), (NONE, p)) for text in texts]
    read.min_probability = 0.5
    return read


def test_a_quantity_ask_with_no_target_gets_the_readers():
    ask = Ask("quantity", "16 卡 tp 4, 模型被复制了几份")
    out = with_targets((ask,), _reader({"复制": "dp_size"}), has_layout=True)
    assert out == (Ask("quantity", ask.text, "dp_size"),)


def test_the_patterns_target_none_and_an_unsure_reading_are_kept():
    has = Ask("quantity", "what's dp_size and ep_shard", "ep_shard")
    other = Ask("fact", "does EP need GPUs of its own")
    assert with_targets((has, other), _reader({"": "dp_size"}), has_layout=True) == (has, other)
    free = Ask("quantity", "what's the largest tp for 32 heads")
    assert with_targets((free,), _reader({"tp": NONE}), has_layout=True) == (free,)
    assert with_targets((free,), _reader({"tp": "max_ep"}, p=0.4), has_layout=True) == (free,)
    assert with_targets((free,), None, has_layout=True) == (free,)
    # a size left to us is the clause's own cue's to name; with no layout there is nothing to derive
    assert with_targets((free,), _reader({"tp": "size_choice"}), has_layout=True) == (free,)
    assert with_targets((free,), _reader({"tp": "max_ep"}), has_layout=False) == (free,)


def test_a_target_another_ask_already_asks_is_not_asked_twice():
    dp = Ask("quantity", "what's dp", "dp_size")
    loose = Ask("quantity", "and how many copies is that")
    assert with_targets((dp, loose), _reader({"copies": "dp_size"}), has_layout=True) == (dp, loose)


def test_every_target_the_reader_can_give_is_one_the_answer_writes():
    # quantity_line returns None for a name it does not know: the reader must never give one
    model = load_model(MODEL_PATH)
    assert model is not None
    import inspect
    src = inspect.getsource(quantity_line)
    from assistant.understand.target_model import _CUE_ONLY

    for label in set(model.labels) - {NONE} - _CUE_ONLY:
        assert f'"{label}"' in src, label


@pytest.mark.slow
def test_the_fitted_reader_reads_wordings_no_pattern_holds():
    """Wordings written for this test, in no training file."""
    from assistant.understand.target_model import target_reader
    from assistant.understand.train_asks import default_encoders

    read = target_reader(default_encoders())
    assert read is not None
    said = {"那样的话数据并行一共有几路": "dp_size",
            "will each of the stages hold an equal share of the layers": "layers_per_stage",
            "how many experts does every GPU end up with": "experts_per_rank"}
    got = dict(zip(said, read(list(said))))
    assert {k: v[0] for k, v in got.items()} == said


@pytest.mark.slow
def test_refitting_reproduces_the_stored_target_model(tmp_path):
    from assistant.understand.train_asks import default_encoders, fit_targets, labelled_targets

    enc = default_encoders()
    fit_targets(enc, cv=False, path=tmp_path / "t.npz")
    fresh, stored = load_model(tmp_path / "t.npz"), load_model(MODEL_PATH)
    _, x = labelled_targets(enc)
    assert fresh.data_digest == stored.data_digest
    assert (fresh.probabilities(x).argmax(1) == stored.probabilities(x).argmax(1)).all()
