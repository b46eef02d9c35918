"""The web chat's LLM answerer (ui/web/handlers.py) against the scripted OpenAI-compatible server:
what the browser receives while the model streams, and after."""
from __future__ import annotations

import re

from assistant.validator import validate
from ui.web import handlers as h

Q_EN = "I am training a 70B LLM on 8 nodes and want tensor plus pipeline parallelism. Which strategy and YAML?"
Q_ZH = "我在 8 个节点上训练 70B 模型，想用张量并行加流水线并行，该用哪种策略，YAML 怎么写？"
WRONG = ("Use megatron_fsdp [1].\n\n```yaml\ndistributed:\n  strategy: megatron_fsdp\n  tp_size: 8\n  pp_size: 4\n```\n"
         "It is fast.\n")
YAML_BLOCK = re.compile(r"```yaml\n(.*?)```", re.S)


def web_turn(engine, question):
    opts = h.chat_options(nodes=8, gpus_per_node=8, llm="openai", llm_modes=("offline", "openai"))
    views = list(h.answer_turn(engine, question, None, None, opts))
    return views, h.message_text(views[-1].messages[-1]["content"])


def test_an_invalid_llm_yaml_never_reaches_the_browser(openai_engine, scripted):
    scripted.script = ("answer", WRONG)
    views, final = web_turn(openai_engine, Q_EN)
    assert len(views) >= 2  # the first piece is shown while the model still streams
    # Every view the browser gets, streamed ones included: no unvalidated YAML, ever.
    for v in views:
        text = h.message_text(v.messages[-1]["content"]) if v.messages[-1]["role"] == "assistant" else ""
        assert "strategy: megatron_fsdp" not in text, text
        for block in YAML_BLOCK.findall(text):
            assert validate(block, world_size=64, gpus_per_node=8).ok, block
    assert "MW-E-MEGATRON-PP" in final
    shown = YAML_BLOCK.findall(final)
    assert shown and all(validate(b, world_size=64, gpus_per_node=8).ok for b in shown)
    panel = views[-1].panel
    assert panel.report.ok and panel.report.world_size == 64
    assert views[-1].meta[str(len(views[-1].messages) - 1)]["settings"]["llm"] == "openai"
    assert scripted.requests[-1]["model"] == "scripted"


def test_an_llm_failure_shows_the_notice_and_the_offline_answer(openai_engine, scripted):
    scripted.script = ("status", 500)
    views, final = web_turn(openai_engine, Q_EN)
    assert "server error" in final.splitlines()[0]
    assert "fsdp2" in final and views[-1].panel.report.ok
    assert "127.0.0.1" not in final and "sk-testsecret" not in final


def test_a_chinese_question_through_the_llm_answerer_stays_chinese(openai_engine, scripted):
    scripted.script = ("answer", "建议使用 fsdp2，节点内 TP，跨节点 PP [1]。")
    views, final = web_turn(openai_engine, Q_ZH)
    assert final.startswith("建议使用 fsdp2")
    assert views[-1].panel.lang == "zh" and "校验通过" in views[-1].panel.verdict()
    shown = YAML_BLOCK.findall(final)  # the model wrote none: the validated one is added
    assert shown and validate(shown[0], world_size=64, gpus_per_node=8).ok
