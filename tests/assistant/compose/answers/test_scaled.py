"""A change of cluster size is answered by what it changes: dp before and after, grad-acc, re-checks."""
from __future__ import annotations

from answer_checks import shown_configs
from tests.assistant.compose.answers.conftest import lead


def test_more_nodes_same_tp_leads_with_dp_before_and_after(ask):
    # 1 node -> 4 nodes of 8, tp 4: dp = 8/4 = 2 -> 32/4 = 8 (mesh_utils); nothing else changes
    a = ask("What do I need to change to go from 1 node to 4 nodes with the same tp_size 4?")
    first = lead(a.text)
    assert "dp_size goes from 2 to 8" in first and "32 / (4 × 1 × 1)" in first
    assert "Nothing else in `distributed:` has to change" in first
    assert a.asks == ["quantity"] and a.validation.world_size == 32 and a.judged["distributed"]["tp_size"] == 4
    assert shown_configs(a.text) == []


def test_doubling_with_batch_sizes_gives_grad_acc_before_and_after(ask):
    # 16 -> 32 GPUs, tp 4: dp 4 -> 8; grad-acc 128/(4*4) = 8 -> 128/(4*8) = 4
    a = ask("Right now: 16 GPUs, tp 4, global_batch_size 128, local_batch_size 4. If I double the GPUs, "
            "what happens to dp and to gradient accumulation?")
    first = lead(a.text)
    assert "dp_size goes from 4 to 8" in first and "Gradient accumulation goes from 8 to 4" in first
    assert first.count("dp_size = 8") == 0  # the plain dp line is not repeated after the change line


def test_chinese_change_keeps_tp_pp_and_says_dp_explicit_must_change(ask):
    a = ask("从 2 机扩到 8 机，tp 8 pp 2 不变，要改什么？")
    first = lead(a.text)
    assert "dp_size 从 1 变为 4" in first and "64 / (8 × 2 × 1)" in first
    assert a.judged["distributed"]["tp_size"] == 8 and a.judged["distributed"]["pp_size"] == 2
    b = ask("I have tp_size 4 and dp_size 4 set explicitly on 16 GPUs. What should I change when going from 2 nodes to 4 nodes?")
    assert "change it to 8, or remove it" in lead(b.text)


def test_a_follow_up_change_is_answered_as_a_change(ask):
    from assistant.answer import Turn
    a = ask("now make it 8 nodes", history=(Turn(role="user", content="2 nodes of 8 GPUs with tp 4 and pp 2, what is dp?"),))
    assert "Going from 16 to 64 GPUs, dp_size goes from 2 to 8" in lead(a.text)


def test_a_story_that_changes_sizes_too_is_not_called_a_world_only_change(ask):
    # the earlier run had tp 2; the run asked about has tp 4: "only the world size changed" would be false
    a = ask("之前 64 卡 tp 2 的时候 global_batch_size 512、local_batch_size 2。现在缩到 32 卡、tp 改成 4，"
            "gbs 和 lbs 都不变，梯度累积几步？", lang="zh")
    assert "变的只有 world_size" not in a.text and "梯度累积步数 = 32" in lead(a.text)
