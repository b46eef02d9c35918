"""How many GPUs a model needs: the smallest whole-node world where the planner's validated layout
fits in memory, from the memory model's lower bound."""
from __future__ import annotations

from assistant.compose.knowledge.world_needed import world_needed
from assistant.understand import understand
from assistant.validator import validate
from assistant.validator.memory import fits


def test_a_big_moe_needs_many_nodes_and_the_layout_is_validated_and_fits():
    q = understand("deepseek v3 671b 多少张卡能训?")
    found = world_needed(q, 8)
    assert found is not None and found.world % 8 == 0 and found.world >= 8 * 16  # 671B x 16 B > 100 H100s
    r = found.plan.report
    assert r.ok and fits(r.memory) and found.gpu_assumed
    assert validate(found.plan.yaml, world_size=found.world, gpus_per_node=8).ok


def test_half_the_world_found_would_not_fit():
    q = understand("How many GPUs do I need to fine-tune Llama 3.1 70B?")
    found = world_needed(q, 8)
    assert found is not None
    from assistant.planner.recommend import plan

    half = plan(q, world_size=found.world // 2, gpus_per_node=8, gpu=found.gpu)
    assert not (half.report.ok and half.report.memory is not None and fits(half.report.memory))


def test_no_model_no_answer():
    assert world_needed(understand("how many GPUs do I need?"), 8) is None


def test_the_answer_leads_with_the_number(mw_assistant):
    from assistant.answer import AskRequest

    a = mw_assistant.ask(AskRequest(question="Llama 3.1 405B 最少要几台机器?"))
    first = a.text.split("\n\n", 1)[0]
    assert first.startswith("大约 ") and "张卡" in first and "个节点" in first
    assert "```" not in a.text
