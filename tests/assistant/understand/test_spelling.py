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
