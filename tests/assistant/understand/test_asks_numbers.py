"""The asks of long real-style messages about numbers (issue 18, t10 numbers): an apostrophe opens no
quote, "if we switch" asks on the strategy named last, another person's run carries its own sizes and
they are not the user's, "写 2 的话" puts a bare value in place of the field named before."""
from __future__ import annotations

import pytest

from assistant.understand import understand


@pytest.fixture(scope="module")
def read(mw_assistant):
    return lambda q: understand(q, encoders=mw_assistant._clause_encoders)


def test_an_apostrophe_inside_a_word_opens_no_quote(read):
    q = read("We're on strategy ddp, 8 GPUs. Added cp_size: 4 and got `ValueError: ddp does not support context "
             "parallelism`. Is there any way to keep CP? What's dp then with cp 4?")
    assert any(a.kind == "quantity" and a.target == "dp_size" for a in q.asks)


def test_if_we_switch_asks_on_the_strategy_named_last(read):
    q = read("```yaml\ndistributed:\n  strategy: fsdp2\n  tp_size: 2\n  cp_size: 4\n```\n\n2 nodes x 8 GPUs. "
             "What dp_size does this give? Does megatron_fsdp support cp_size > 1? And if we switch, does dp_size "
             "stay the same?")
    assert [a.layout for a in q.asks if a.kind == "quantity"] == [None, "strategy=megatron_fsdp"]


def test_another_persons_run_carries_its_sizes_and_they_are_not_the_users(read):
    q = read("Qwen3-30B-A3B, 2 nodes x 8 H100. Can I leave ep_size out and just run fsdp2 on 16 GPUs? "
             "A teammate set ep_size: 32 and it crashed, what would that error be about?")
    assert [a.layout for a in q.asks if a.kind == "diagnosis"] == ["ep_size=32"]
    assert "ep_size" not in q.situation.stated.sizes


def test_a_bare_value_written_in_place_of_the_field_named_before(read):
    q = read("2 机 16 卡，fsdp2，tp 1。dp_replicate_size 写 16 行不行？写 2 的话 dp_shard 是多少？")
    assert ("dp_shard", "dp_replicate_size=2") in [(a.target, a.layout) for a in q.asks if a.kind == "quantity"]
