"""A change of cluster size: the target is the situation judged, the world it replaces is kept."""
from __future__ import annotations

import pytest

from assistant.answer import Turn
from assistant.understand.params import extract_params
from assistant.understand.scale import Scale, find_scale
from assistant.understand.understand import understand


@pytest.mark.parametrize("text, scale", [
    ("go from 1 node to 4 nodes", Scale(to_nodes=4, from_nodes=1)),
    ("从 2 机扩到 8 机", Scale(to_nodes=8, from_nodes=2)),
    ("从 16 卡到 64 卡", Scale(to_total=64, from_total=16)),
    ("we're moving to 6 nodes", Scale(to_nodes=6)),
    ("if I change to 3 nodes", Scale(to_nodes=3)),
    ("now make it 8 nodes", Scale(to_nodes=8)),
    ("换成 3 台机器还能跑吗", Scale(to_nodes=3)),
    ("机器减半到 2 机以后", Scale(to_nodes=2)),
    ("if I double the GPUs", Scale(factor=2.0)),
    ("卡数翻倍的话", Scale(factor=2.0)),
])
def test_the_change_is_read(text, scale):
    assert find_scale(text)[1] == scale


@pytest.mark.parametrize("text", ["加 2 张卡行吗", "tp 2 on 8 GPUs", "在 4 台机器上跑", "What if I only have 4 nodes?"])
def test_no_change_is_read_where_none_is_asked(text):
    assert find_scale(text) == (text, None)


@pytest.mark.parametrize("question, world, prior", [
    ("What do I need to change to go from 1 node to 4 nodes with the same tp_size 4?", 32, 8),
    ("We train with tp 2 on 2 nodes of 8 GPUs. We're moving to 6 nodes.", 48, 16),
    ("Right now: 16 GPUs, tp 4. If I double the GPUs, what happens to dp?", 32, 16),
    ("4 机 32 卡，tp 8、pp 2。机器减半到 2 机以后 dp 怎么变？", 16, 32),
    ("从 2 机扩到 8 机，tp 8 pp 2 不变，要改什么？", 64, 16),
])
def test_the_target_world_is_the_one_read_and_the_old_one_is_kept(question, world, prior):
    p = extract_params(question)
    assert (p.world_size, p.prior_world_size) == (world, prior)
    assert extract_params("16 GPUs, tp 4").prior_world_size is None


def test_a_follow_up_change_replaces_the_world_of_the_turns_before():
    q = understand("now make it 8 nodes", history=(Turn(role="user", content="2 nodes of 8 GPUs, tp 4 and pp 2"),))
    assert (q.situation.world_size, q.params.prior_world_size) == (64, 16)
    assert q.params.tp_size == 4 and q.params.pp_size == 2
