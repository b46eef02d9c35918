"""Slips of the keyboard are read as the ask words they are one slip from; names and real words are not."""
from __future__ import annotations

import pytest

from assistant.understand.spelling import respelled


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
