"""The LLM prompt's computed answers are the offline answer's own: the same leads, split by ask, their
citations numbered into the same sources list (a replay may cite a chunk a later lookup added)."""
from __future__ import annotations

import re

import pytest

from assistant.answer import AskRequest
from assistant.compose.llm.ask_notes import computed_for
from assistant.compose.llm.lead_check import missing_leads

QUESTIONS = [
    "Does tp 4 with pp 3 work on 40 GPUs?",
    "On 32 GPUs I use tp_size 4 and ep_size 8, pp_size 1, cp_size 1. What are dp_size and the ep_shard size, "
    "and how many gradient-accumulation steps with global_batch_size 64 and local_batch_size 2?",
    "Why does this fail?\n```\nAssertionError: pp_batch_size 4 // pp_microbatch_size 1 must be >= pp_size 8\n```",
    "我有 16 张卡，tp_size 4，pp_size 2，cp 是 1，这样能跑吗？dp_size 是多少？",
    "Where is the device mesh built?",
    "What does `reshard_after_forward` default to in `moe:`?",
    "I am training a 70B LLM on 8 nodes and want tensor plus pipeline parallelism. Which strategy and YAML?",
    # a wrong claim: its correction is a note of its own, where the offline answer puts it
    "The FSDP2Config docstring says enable_fsdp2_prefetch defaults to True, so I get prefetching for free?",
    "The skill doc says ep_size must divide dp_size * cp_size, so tp_size 2 with ep_size 8 on 8 GPUs is rejected?",
]


def uncited(text: str) -> str:
    return re.sub(r" ?\[\d+\]", "", text)


@pytest.mark.parametrize("question", QUESTIONS)
def test_notes_are_the_offline_leads_split_by_ask(engine, question):
    prep = engine._prepare(AskRequest(question=question))
    c = prep.composed
    computed = computed_for(prep.inp, prep.sources, engine.phrases, config_yaml=c.yaml, config_report=c.validation)
    assert [n.kind for n in computed.notes] == c.asks
    assert uncited(computed.lead).splitlines() == [uncited(s) for s in dict.fromkeys(c.leads)] and computed.lead
    assert uncited(computed.lead.split("\n", 1)[0]) in uncited(c.text)  # the offline answer opens with it
    cited = [int(n) for note in computed.notes for s in (*note.leads, *note.details) for n in re.findall(r"\[(\d+)\]", s)]
    assert all(1 <= n <= len(prep.sources) for n in cited)
    if c.yaml and (computed.config_report is not None):
        assert computed.config_report.ok and computed.config_yaml == c.yaml


def test_the_fix_after_a_no_is_the_validated_config(engine):
    prep = engine._prepare(AskRequest(question=QUESTIONS[0]))
    c = prep.composed
    computed = computed_for(prep.inp, prep.sources, engine.phrases, config_yaml=c.yaml, config_report=c.validation)
    assert not c.validation.ok  # the answer's verdict: the user's layout fails ...
    assert computed.config_yaml == prep.diagnosis.fix_yaml and computed.config_report.ok  # ... its fix passes
    assert "pp_size: 2" in computed.config_yaml


# Multi-part answers: a verdict or a number asked second is due after the first ask's lines.
MULTI = [
    "16 卡，tp 8，想让两组副本互相复制，报错 dp_replicate_size must be less than dp_size：\n```yaml\ndistributed:\n"
    "  strategy: fsdp2\n  tp_size: 8\n  dp_replicate_size: 2\n```\n",
    "ValueError: global_batch_size (100) must be divisible by local_batch_size * dp_size (4 * 8)\n8 卡纯数据并行，gbs 我就想要 100 左右，咋设\n",
    "pp_size 4，local_batch_size 8，pp_microbatch_size 2，一个 step 切成几个 microbatch？够不够 4 个 stage 用",
    "I'm finetuning NVIDIA-Nemotron-3-Nano-30B-A3B on 4 nodes with 4 GPUs each (94GB), 8k seq length, global_batch_size 32 "
    "and local_batch_size 1. With ep_size 8 and no TP/PP, how many gradient accumulation steps do I get, and is ep 8 "
    "allowed when a node only has 4 GPUs?",
    "8 卡 tp=4 cp=2，dp 是多少？还剩数据并行吗？",
]


@pytest.mark.parametrize("question", QUESTIONS + MULTI)
def test_the_offline_answer_passes_its_own_lead_check(engine, question):
    """What LLM mode holds a model's opening to, the offline answer meets: no lead put first needlessly."""
    prep = engine._prepare(AskRequest(question=question))
    c = prep.composed
    computed = computed_for(prep.inp, prep.sources, engine.phrases, config_yaml=c.yaml, config_report=c.validation)
    assert missing_leads(c.text, computed.notes) == []
