"""Asks the fitted model reads from the labelled clauses of paraphrases_devfix.yaml, and a failure told
of an earlier run diagnosed after the asks about this one."""
from __future__ import annotations

import pytest

from assistant.understand import understand


@pytest.fixture(scope="module")
def read(mw_assistant):
    def _read(q: str, **kw):
        return understand(q, encoders=mw_assistant._clause_encoders, **kw)
    return _read


@pytest.mark.parametrize("question", ["不小心把 tp_size 写成 2.0 了，会咋样？", "8 卡，tp 3。会怎样？"])
def test_what_happens_standing_alone_after_a_layout_is_a_verdict(read, question):
    # "会咋样" alone was `unknown` (and labelled a fact in one case, a verdict in another)
    assert [a.kind for a in read(question, world_size=8).asks][:1] == ["verdict"]


def test_what_would_you_do_instead_asks_for_a_layout(read):
    q = read("Our 70B run uses tp_size 16 across two 8-GPU nodes. Good idea? What would you do instead?")
    assert [a.kind for a in q.asks] == ["verdict", "recommendation"]


def test_which_sizes_would_work_is_a_quantity(read):
    q = read("On 24 GPUs: which pp_size would work with tp 4?")
    assert "quantity" in [a.kind for a in q.asks] and "verdict" not in [a.kind for a in q.asks]


def test_how_to_set_tp_pp_for_a_stated_run_is_a_recommendation(read):
    q = read("手上 2 台 8 卡 A100 80G，想全参微调 Qwen2.5-32B。tp/pp 怎么配比较好？")
    assert [a.kind for a in q.asks] == ["recommendation"]


def test_a_slow_run_told_is_context_not_a_verdict(read):
    q = read("tp16 across 2 boxes of 8 gpus is super slow for our 70b. tp8 + pp2 instead, would that be ok?")
    assert q.asks[0].kind == "verdict" and q.asks[0].target == "tp_size=8,pp_size=2"


def test_a_strategy_capability_asked_in_chinese_is_a_fact(read):
    q = read("4 台 8 卡，fsdp2，dp_replicate_size 设成 4。dp_shard_size 是多少？megatron_fsdp 能不能也用 dp_replicate_size？")
    assert [a.kind for a in q.asks] == ["quantity", "fact"]


def test_the_failure_of_an_earlier_run_is_diagnosed_after_this_runs_asks(read):
    q = read('Coming from Megatron, where a run with tp 1 pp 2 ep 2 on 2 nodes failed with "decoder world_size (4) is '
             'not divisible by expert_tensor_model_pipeline_parallel size (8)". In Automodel (fsdp2) on the same 16 GPUs '
             "with pp_size 2 and ep_size 2: does ep multiply into the GPUs needed, and what ep_shard_size do I get?")
    kinds = [a.kind for a in q.asks]
    assert kinds[0] == "fact" and kinds[-1] == "diagnosis"
