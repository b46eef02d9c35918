"""Long English GitHub-issue posts (issue 18, t9 realen): the story of a fix or a report read elsewhere
states context even where a diagnosis cue ("fix") matches it; a yes/no about one number asks that
number; "is there a way to keep TP?" asks what to use."""
from __future__ import annotations

from tests.assistant.understand.test_asks_realmsg import read  # noqa: F401 - the same module-scoped reader


def test_a_fix_read_about_elsewhere_is_context_not_a_diagnosis(read):
    q = read("Following up on the CP mesh fix I saw merged (dp_shard_cp). Single node, 8 H100, fsdp2, cp_size 2. "
             "What is dp_size here?")
    assert [a.kind for a in q.asks] == ["quantity"]


def test_a_yes_no_about_a_number_asks_the_number(read):
    q = read("8 GPUs, fsdp2, tp_size 1, ep_size 4. What's ep_shard_size then? And does dp_size drop to 2?")
    assert [(a.kind, a.target) for a in q.asks] == [("quantity", "ep_shard"), ("quantity", "dp_size")]


def test_a_way_to_keep_tp_asks_what_to_use(read):
    q = read("Hi! 1 node with 8 GPUs, LoRA on a 7B model. We used strategy ddp and it worked. Now we want tensor "
             "parallel to save memory, so we added tp_size: 2 and got `ValueError: ddp does not support tensor "
             "parallelism`. Is there a way to keep TP without giving up on what we have? What's the dp_size with "
             "tp 2 on 8 GPUs once it runs?")
    assert [a.kind for a in q.asks][:2] == ["recommendation", "quantity"]


def test_the_sizes_a_story_tried_go_with_its_diagnosis(read):
    q = read("16 GPUs.\n\n```yaml\ndistributed:\n  strategy: fsdp2\n  tp_size: 2\n```\n\nWhat's dp_size? I also "
             "tried tp_size 16 and it failed at startup, what am I missing?")
    assert [a.layout for a in q.asks if a.kind == "diagnosis"] == ["tp_size=16"]
