"""The OpenAI-compatible path against a scripted server: wrong YAML is gated, failures fall back."""
from __future__ import annotations

import time

import pytest

from assistant.answer import Answer, AskRequest
from assistant.compose.gate.check import looks_like_config, yaml_blocks
from assistant.validator import validate

Q_EN = "I am training a 70B LLM on 8 nodes and want tensor plus pipeline parallelism. Which strategy and YAML?"
Q_ZH = "我在 8 个节点上训练 70B 模型，想用张量并行加流水线并行，该用哪种策略，YAML 怎么写？"
WRONG = ("Use megatron_fsdp [1].\n\n```yaml\ndistributed:\n  strategy: megatron_fsdp\n  tp_size: 8\n  pp_size: 4\n```\n"
         "It is fast.\n")


def assert_every_shown_yaml_valid(answer: Answer):
    for tag, body in yaml_blocks(answer.text):
        if looks_like_config(tag, body):
            assert validate(body, world_size=answer.validation.world_size if answer.validation else 64,
                            gpus_per_node=8).ok, body


def test_wrong_yaml_is_replaced_with_reasons(openai_engine, scripted, stream):
    # a closing line longer than the secret the redactor holds back at the stream's end (issue 20.3)
    scripted.script = ("answer", WRONG + "Keep TP inside one node, and stretch PP across the nodes of the job.\n")
    deltas, a = stream(openai_engine, AskRequest(question=Q_EN))
    assert len(deltas) > 2  # streamed
    assert "strategy: megatron_fsdp" not in a.text
    assert "MW-E-MEGATRON-PP" in a.text and "replaced" in a.text
    assert a.yaml and validate(a.yaml, world_size=64, gpus_per_node=8).ok
    assert a.validation.ok and a.strategy == "fsdp2"
    assert_every_shown_yaml_valid(a)
    assert not a.notices


def test_prompt_marks_sources_untrusted_and_asks_for_the_language(openai_engine, scripted, stream):
    scripted.script = ("answer", "使用 fsdp2 [1]。")
    _, a = stream(openai_engine, AskRequest(question=Q_ZH))
    req = scripted.requests[-1]
    system = next(m["content"] for m in req["messages"] if m["role"] == "system")
    user = req["messages"][-1]["content"]
    assert "Chinese" in system and "untrusted" in system
    assert "<source n=\"1\"" in user and "VALIDATED CONFIG" in user
    assert req["stream"] is True and req["model"] == "scripted"
    assert a.language == "zh"
    # the model left the YAML out: the validated one is added
    assert a.yaml and "```yaml" in a.text and validate(a.yaml, world_size=64, gpus_per_node=8).ok


@pytest.mark.parametrize("script,why", [
    (("slow", 4.0), "timed out"),
    (("stall", 4.0), "timed out"),
    (("broken", "Use fsdp2 with tp_size 8 and pp_size 4 across the nodes."), "stream broke off"),
    (("garbage", "Use fsdp2"), "stream broke off"),
    (("status", 500), "server error"),
])
def test_failures_fall_back_to_offline_with_one_line_notice(openai_engine, scripted, stream, script, why):
    scripted.script = script
    t = time.perf_counter()
    deltas, a = stream(openai_engine, AskRequest(question=Q_EN))
    assert time.perf_counter() - t < 15
    assert len(a.notices) == 1 and why in a.notices[0] and "\n" not in a.notices[0]
    assert a.text.startswith("_" + a.notices[0])
    assert "fsdp2" in a.text and a.yaml and a.validation.ok
    assert "127.0.0.1" not in a.text and "sk-testsecret" not in a.text
    assert_every_shown_yaml_valid(a)


def test_secret_echoed_by_the_model_is_redacted(openai_engine, scripted, stream):
    scripted.script = ("answer", "Your key is sk-testsecret-0123456789abcdef, and a token xoxb-1234567890-abcdef.\n")
    _, a = stream(openai_engine, AskRequest(question=Q_EN))
    assert "sk-testsecret" not in a.text and "xoxb-1234567890" not in a.text
    assert "[redacted]" in a.text
