"""Out-of-scope replies (neighbouring topics with their upstream guides, off-topic questions) and the
keyboard-mash test."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from assistant.compose.knowledge.scope import _scope, scope_reply
from assistant.understand.cues import reading_of
from assistant.understand.off_topic import topic_names


def sentences(text: str) -> int:
    """Sentence ends: a full stop before a capital, or a Chinese full stop (not the dots of a path)."""
    return len([s for s in re.split(r"(?<=\.)\s+(?=[A-Z])|(?<=。)", text) if s.strip()])


@pytest.mark.parametrize("question,lang,topic,guide", [
    ("How do I launch on Slurm with 4 nodes?", "en", "slurm", "docs/launcher/slurm.mdx"),
    ("sbatch script for 2 nodes?", "en", "slurm", "docs/launcher/slurm.mdx"),
    ("Can I run this with SkyPilot on Kubernetes?", "en", "skypilot", "docs/launcher/skypilot.mdx"),
    ("What torchrun command starts a multi-node job?", "en", "launcher", "docs/launcher/overview.mdx"),
    ("How do I resume training from the last checkpoint?", "en", "checkpoints", "docs/guides/checkpointing.mdx"),
    ("How do I add a new model architecture to AutoModel?", "en", "onboarding", "skills/nemo-automodel-model-onboarding/SKILL.md"),
    ("Can I train LoRA adapters?", "en", "peft", "docs/guides/llm/finetune.mdx"),
    ("How do I serve the fine-tuned model with vLLM?", "en", "inference", "docs/guides/llm/finetune.mdx"),
    ("What format should my dataset be in?", "en", "datasets", "docs/guides/dataset-overview.mdx"),
    ("怎么在 slurm 上提交作业？", "zh", "slurm", "docs/launcher/slurm.mdx"),
    ("断点续训怎么配置？", "zh", "checkpoints", "docs/guides/checkpointing.mdx"),
    ("怎么接入一个新模型？", "zh", "onboarding", "skills/nemo-automodel-model-onboarding/SKILL.md"),
    ("torchrun 多机启动命令是什么？", "zh", "launcher", "docs/launcher/overview.mdx"),
    ("学习率怎么设？", "zh", "hyperparameters", "skills/nemo-automodel-recipe-development/SKILL.md"),
    ("Which optimizer should I pick for fine-tuning?", "en", "hyperparameters", "docs/guides/configuration.mdx"),
])
def test_neighbouring_topics_point_to_the_upstream_guide(question, lang, topic, guide):
    assert reading_of(question).neighbour_topic == topic
    reply = scope_reply(reading_of(question), lang)
    assert f"`{guide}`" in reply
    assert sentences(reply) == 2
    if lang == "zh":
        assert "不在 Meshwise 的范围内" in reply and "`distributed:`" in reply
    else:
        assert "outside what Meshwise covers" in reply and "FSDP2, MegatronFSDP, DDP" in reply


@pytest.mark.parametrize("question,lang", [
    ("What's the weather in Paris tomorrow?", "en"),
    ("Recommend a good restaurant near the office", "en"),
    ("write me a poem about GPUs", "en"),
    ("tell me a joke about tensor parallelism", "en"),
    ("Who won the world cup?", "en"),
    ("今天北京天气怎么样？", "zh"),
    ("附近有什么好吃的餐厅？", "zh"),
    ("给我写一首关于显卡的诗", "zh"),
])
def test_off_topic_is_told_plainly(question, lang):
    reply = scope_reply(reading_of(question), lang)
    first = reply.split("。")[0] if lang == "zh" else reply.split(". ")[0]
    assert first in ("That is outside what Meshwise covers", "这个问题不在 Meshwise 的范围内")
    assert sentences(reply) == 2
    assert "```" not in reply and "yaml" not in reply.lower().replace("`distributed:` yaml", "")


@pytest.mark.parametrize("question", [
    "What tp_size for a 70B model on 16 GPUs?",
    "Does activation checkpointing work with megatron_fsdp?",
    "激活检查点和 fsdp2 能一起用吗？",
    "Is the weather of my cluster relevant for 8 GPUs?",  # names the domain: not off-topic by a word
    "What does ckpt_every_steps do with pp_size 2?",
    "Does FSDP2 shard the optimizer state?",  # sharding the optimizer is the domain, choosing one is not
])
def test_questions_in_scope_get_no_reply(question):
    assert scope_reply(reading_of(question), "en") is None


def test_default_gives_the_off_topic_reply_for_anything_unmatched():
    assert scope_reply(reading_of("What is the meaning of life?"), "en") is None
    assert scope_reply(reading_of("What is the meaning of life?"), "en", default=True).startswith("That is outside")


def test_bounded_input():
    assert scope_reply(reading_of("slurm " * 100_000), "en")


UPSTREAM = os.environ.get("MESHWISE_UPSTREAM_SRC")


@pytest.mark.skipif(not UPSTREAM, reason="MESHWISE_UPSTREAM_SRC not set")
def test_every_guide_exists_upstream():
    for topic in _scope().topics.values():
        for guide in topic.guides:
            assert (Path(UPSTREAM) / guide).is_file(), f"{topic.name}: {guide}"


def test_each_topic_read_has_its_reply_and_guides():
    """understand/off_topic.yaml reads the topics, scope.yaml words them: the same names, in both."""
    assert set(topic_names()) == set(_scope().topics)
