"""Keyboard mash is nonsense; real words on any topic are not (those are out of scope, and told so)."""
from __future__ import annotations

import pytest

from assistant.understand.gibberish import looks_like_gibberish


@pytest.mark.parametrize("text", [
    "asdfgh tp", "tp qwpeoi zmxncb", "jkjkjk", "fsdp 啊啊啊", "tp asdkjh lkjhg", "xqzv tp pp",
    "sdfkjh weuiry tp 8 gpus", "ljkasd fjkl tp_size", "哈哈哈哈 tp",
])
def test_keyboard_mash_is_gibberish(text):
    assert looks_like_gibberish(text)


@pytest.mark.parametrize("text", [
    "", "tp", "What is the weather?", "How many GPUs for tp 4?", "dp_replicate_size 2 with hsdp",
    "megatron_fsdp or mfsdp", "Kimi-Linear qwen3 deepseek", "nccl timeout after 10 minutes", "cudnn error on 8 gpus",
    "sbhd layout with cp", "What does rmsnorm do with tp?", "张量并行和流水线并行怎么选？",
    "distributed:\n  strategy: fsdp2\n  tp_size: 2\n  pipeline:\n    pp_schedule: interleaved1f1b\n",
    "AssertionError: pp_batch_size 4 // pp_microbatch_size 1 must be >= pp_size 8",
    'File "/opt/nemo_automodel/recipes/_dist_utils.py", line 212, in parse_distributed_section\n'
    "ValueError: Unknown options for strategy 'megatron_fsdp': ['sequence_parallel']",
])
def test_real_text_is_not_gibberish(text):
    assert not looks_like_gibberish(text)


def test_bounded_input():
    assert looks_like_gibberish("qwpeoi " * 100_000)


@pytest.mark.parametrize("text, soup", [
    ("ep ep ep lorem ipsum ???", True),
    ("fsdp tp pp blah blah foo bar ??? lorem", True),
    ("tp tp 嗯嗯嗯 ep 那个那个 ？？？", True),
    ("tp?", False),            # a terse question, not soup
    ("fsdp2 ddp", False),
    ("tp 4 pp 2", False),      # numbers state a layout
    ("what is tp", False),
])
def test_keyword_soup(text, soup):
    from assistant.understand.gibberish import keyword_soup

    assert keyword_soup(text) is soup
