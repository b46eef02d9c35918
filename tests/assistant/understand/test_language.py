"""Chinese vs English by script, with English identifiers inside Chinese questions."""
from __future__ import annotations

import pytest

from assistant.understand.language import detect_language, resolve_language


@pytest.mark.parametrize("q", [
    "megatron_fsdp 支持 pipeline parallelism 吗？",
    "我想用 tensor parallelism 和 pipeline parallelism 训练 70B 模型",
    "tp_size=8, pp_size=4 的时候 dp_size 是多少",
    "什么是 HSDP",
    "64 张 H100",
    "如果只有 4 个节点呢?",
    "```yaml\ndistributed:\n  strategy: fsdp2\n  tp_size: 8\n  pp_size: 4\n```\n这个对吗",
    "ep_size 必须整除 dp_size * cp_size * tp_size 吗",
])
def test_chinese(q):
    assert detect_language(q) == "zh"


@pytest.mark.parametrize("q", [
    "Which strategy should I use for 70B on 64 GPUs?",
    "What does 张量并行 mean in the NeMo docs?",
    "distributed: {strategy: fsdp2}",
    "",
    "tp_size 8",
    "Is 流水线 the same as pipeline parallelism in the Chinese docs you have?",
])
def test_english(q):
    assert detect_language(q) == "en"


def test_explicit_choice_wins():
    assert resolve_language("什么是 HSDP", "en") == "en"
    assert resolve_language("What is HSDP", "zh") == "zh"
    assert resolve_language("What is HSDP", "auto") == "en"
    assert resolve_language("什么是 HSDP", "bogus") == "zh"
