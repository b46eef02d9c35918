"""Slips of the keyboard are read as the ask words they are one slip from; names and real words are not."""
from __future__ import annotations

import pytest

from assistant.understand.spelling import respelled, zh_respelled


def test_slips_are_read_as_the_ask_words():
    assert respelled("is it valdi? a pipline block, what does it meen") == \
        "is it valid? a pipeline block, what does it mean"


@pytest.mark.parametrize("text", [
    "minimax m2.5 LoRA",                  # a name with its version
    "How do I write the sbatch script",   # a slip keeps the first letter: not "batch"
    "ep ep lorem ipsum",                  # nothing's slip
    "Nemotron Super on Mixtral",
    "what does reshard_after_forward do", # identifiers are words of the kb
])
def test_names_and_real_words_are_left_alone(text):
    assert respelled(text) == text


@pytest.mark.parametrize("text, meant", [
    ("每张卡大概占多少现存", "每张卡大概占多少显存"),
    ("哪个省现存", "哪个省显存"),
    ("梯度规约用的什么精度", "梯度归约用的什么精度"),
])
def test_chinese_homophone_slips_are_read_as_meant(text, meant):
    assert zh_respelled(text) == meant


@pytest.mark.parametrize("text", ["现存的配置还能用吗", "命名规约是什么", "reduce_dtype: float32 现存"[:20]])
def test_chinese_words_that_are_no_slip_are_left_alone(text):
    assert zh_respelled(text) == text


def test_the_words_difflib_could_pick_are_kept_by_the_bounds():
    """Pruning by difflib's own upper bounds (lengths, letters in common) changes no correction: over
    one-slip forms of the pattern words and words of no pattern, get_close_matches gives the same word
    from the kept candidates as from all of them."""
    import difflib
    import random

    from assistant.understand.spelling import _SPELLING_CUTOFF, _candidates, _vocabulary

    trigger = _vocabulary()[1]
    rng = random.Random(21)
    words = ["valdi", "pipline", "meen", "lorem", "ipsum", "zzzz", "qwertyuiop", "aaaaaaaa", "sbatch"]
    for w in rng.sample(trigger, 40):
        i = rng.randrange(len(w) - 1)
        words += [w[:i] + w[i + 1:], w[:i] + w[i + 1] + w[i] + w[i + 2:], w[:i] + rng.choice("etaoinsr") + w[i + 1:]]
    words = [w for w in words if len(w) >= 4]
    kept = 0
    for w in words:
        cands = _candidates(w)
        kept += len(cands)
        assert difflib.get_close_matches(w, cands, n=1, cutoff=_SPELLING_CUTOFF) == \
            difflib.get_close_matches(w, trigger, n=1, cutoff=_SPELLING_CUTOFF), w
    assert kept < len(words) * len(trigger) / 3  # the bounds prune: the point of them


def test_a_word_three_letters_longer_is_no_slip():
    # issue 18 (t10 numbers): "We are thinking about megatron_fsdp" read as "We are thing about ..."
    from assistant.understand.spelling import respelled
    assert respelled("We are thinking about megatron_fsdp") == "We are thinking about megatron_fsdp"
