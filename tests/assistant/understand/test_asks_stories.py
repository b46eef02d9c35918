"""Long posts with a story (issue 18, t10 stories): a config pasted beside numbers asked of it, with no
failure told, gets no diagnosis of the whole story; "local" with a change is local_batch_size and re-asks
the numbers asked before it; a clause whose words single out an answering fact is not joined to the
story before it; the prose's packing and SDPA reach the judged layout."""
from __future__ import annotations

import pytest

from assistant.compose.knowledge.judge import judge_user_layout
from assistant.understand import understand

_YAML = ("```yaml\nstep_scheduler:\n  global_batch_size: 128\n  local_batch_size: 2\n"
         "distributed:\n  strategy: fsdp2\n  tp_size: 2\n```\n\n")


@pytest.fixture(scope="module")
def read(mw_assistant):
    return lambda q: understand(q, encoders=mw_assistant._clause_encoders)


def test_numbers_asked_of_a_working_config_get_no_diagnosis(read):
    q = read("之前一直这么跑，2 机 16 卡，没出过问题：\n\n" + _YAML + "dp_size 实际是多少？梯度累积几次？")
    assert [a.kind for a in q.asks] == ["quantity", "quantity"]


def test_a_verdict_alone_on_a_pasted_config_keeps_the_diagnosis(read):
    q = read("16 卡：\n\n" + _YAML + "这样能跑吗？")
    assert "diagnosis" in [a.kind for a in q.asks]


def test_local_changed_re_asks_the_numbers_before_it(read):
    q = read("单机 8 卡，fsdp2，global_batch_size 512，local 现在是 4。梯度累积几步？显存还够，local 改成 8 的话呢")
    assert q.params.local_batch_size == 4
    assert [(a.target, a.layout) for a in q.asks if a.kind == "quantity"][-1] == ("grad_acc_steps", "local_batch_size=8")


def test_an_answering_fact_clause_is_not_joined_to_the_story(read):
    q = read("4 机 32 卡，fsdp2，cp_size 8，想先把账算清楚。序列 131072 的时候每个 cp rank 处理多少 token？")
    facts = [a for a in q.asks if a.kind == "fact"]
    assert facts and facts[0].text.startswith("序列 131072")


def test_prose_packing_and_sdpa_are_judged(read):
    q = read("单机 8 卡，开了 packing，packed 到 4096，attention 用的默认 sdpa，fsdp2 cp_size 2。这样有坑吗？")
    d = judge_user_layout(q, 8)
    assert "MW-W-CP-PACKING-SDPA" in {f.code for f in d.report.warnings}


def test_a_bare_field_to_a_number_re_asks_the_numbers_before_it(read):
    q = read("8 GPUs, plain fsdp2, global_batch_size 128, local is 2 at the moment. How many grad accumulation steps?\n"
             "And local to 4?")
    assert q.params.local_batch_size == 2
    assert [(a.target, a.layout) for a in q.asks if a.kind == "quantity"][-1] == ("grad_acc_steps", "local_batch_size=4")
