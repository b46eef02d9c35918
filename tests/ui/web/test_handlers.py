"""ui/web/handlers.py on the real engine: chat turns, validation, feedback, the settings panel."""
from __future__ import annotations

import json
import re

import pytest

from assistant.validator import validate
from ui.web import handlers as h
from ui.web.feedback import FeedbackStore

ZH_QUESTION = "70B 模型，8 个节点，要 TP+PP，YAML 怎么写？"
EN_QUESTION = "I am training a 70B LLM on 8 nodes and want tensor plus pipeline parallelism. Which strategy and YAML?"
YAML_BLOCK = re.compile(r"```yaml\n(.*?)```", re.S)


class Spy:
    def __init__(self):
        self.calls = 0

    def ask_stream(self, req):
        self.calls += 1
        raise AssertionError("the engine must not be called")


def run_turn(assistant, question, messages=None, meta=None, **opts):
    views = list(h.answer_turn(assistant, question, messages, meta, h.chat_options(**opts)))
    assert views, "a turn yields at least one view"
    return views


def final_text(view) -> str:
    return h.message_text(view.messages[-1]["content"])


@pytest.fixture(scope="module")
def zh_turn(mw_assistant):
    return run_turn(mw_assistant, ZH_QUESTION)


@pytest.fixture(scope="module")
def en_turn(mw_assistant):
    return run_turn(mw_assistant, EN_QUESTION)


def test_chinese_question_gets_chinese_answer_with_validated_yaml(zh_turn):
    last = zh_turn[-1]
    assert [m["role"] for m in last.messages] == ["user", "assistant"]
    text = final_text(last)
    assert re.search(r"[\u4e00-\u9fff]{4}", text)
    shown = YAML_BLOCK.search(text).group(1)
    assert validate(shown, world_size=64, gpus_per_node=8).ok  # the YAML in the chat passes the validator
    assert last.panel.report.ok and last.panel.report.world_size == 64
    verdict = last.panel.verdict()
    assert "在 world_size=64 下校验通过" in verdict and "dp_size **2**" in verdict
    sources = last.panel.sources_md()
    assert sources.startswith("### 来源") and "kb/zh/" in sources
    assert last.clear_question


def test_answer_streams_before_the_final_view(zh_turn):
    assert len(zh_turn) >= 2
    assert all(v.panel is None for v in zh_turn[:-1])
    assert zh_turn[0].clear_question  # the question box empties as soon as the answer starts


def test_english_question_and_its_feedback_row(en_turn):
    last = en_turn[-1]
    text = final_text(last)
    assert "strategy: fsdp2" in YAML_BLOCK.search(text).group(1)
    assert "Valid for world size 64" in last.panel.verdict()
    assert "kb/en/" in last.panel.sources_md()
    row = last.meta["1"]  # keyed by the assistant message's index in the chat
    assert row["question"] == EN_QUESTION and row["answer_id"].startswith("web-")
    assert row["language"] == "en" and row["settings"]["llm"] == "offline"


def test_follow_up_uses_the_conversation(mw_assistant, en_turn):
    first = en_turn[-1]
    follow = run_turn(mw_assistant, "what if only 4 nodes?", first.messages, first.meta)[-1]
    assert len(follow.messages) == 4
    assert follow.panel.report.ok and follow.panel.report.world_size == 32
    assert "Valid for world size 32" in follow.panel.verdict()
    assert follow.meta["3"]["history"] == [EN_QUESTION]
    assert "1" in follow.meta  # the earlier answer can still be voted on


def test_history_accepts_gradio_message_parts_and_cuts_long_turns():
    messages = [{"role": "user", "content": [{"type": "text", "text": "first"}], "metadata": None},
                {"role": "assistant", "content": [{"type": "text", "text": "x" * (h.MAX_TURN_CHARS + 100)}]},
                {"role": "assistant", "content": [{"type": "file", "file": {"path": "a.png"}}]}]
    turns = h.history_turns(messages)
    assert [(t.role, len(t.content)) for t in turns] == [("user", 5), ("assistant", h.MAX_TURN_CHARS)]
    many = [{"role": "user", "content": str(i)} for i in range(100)]
    assert len(h.history_turns(many)) == 2 * h.MAX_HISTORY_TURNS


def test_settings_panel_overrides_the_question(mw_assistant):
    last = run_turn(mw_assistant, EN_QUESTION, nodes=2, gpus_per_node=8)[-1]
    assert last.panel.report.world_size == 16
    assert last.meta["1"]["settings"]["world_size"] == 16


def test_oversize_question_gets_a_friendly_message_without_the_engine():
    spy = Spy()
    views = run_turn(spy, "请" * (h.MAX_QUESTION_CHARS + 1))
    assert spy.calls == 0
    text = final_text(views[-1])
    assert "问题太长" in text and str(h.MAX_QUESTION_CHARS) in text
    assert views[-1].meta == {}  # nothing to vote on


def test_empty_question_changes_nothing():
    spy = Spy()
    [view] = run_turn(spy, "   ", [{"role": "user", "content": "x"}])
    assert spy.calls == 0 and view.messages == [{"role": "user", "content": "x"}] and not view.clear_question


@pytest.mark.parametrize("after_text", [False, True])
def test_engine_exception_becomes_a_chat_message_and_the_next_request_works(mw_assistant, flaky, after_text, caplog):
    flaky = flaky(mw_assistant, after_text=after_text)
    failed = run_turn(flaky, EN_QUESTION)[-1]
    text = final_text(failed)
    assert "this request failed (RuntimeError)" in text and "Partial answer" not in text
    assert failed.panel is None and failed.meta == {}
    assert "boom" not in text  # internals stay in the server log
    assert any("answer failed" in r.getMessage() for r in caplog.records)
    ok = run_turn(flaky, "what if only 4 nodes?", failed.messages, failed.meta)[-1]
    assert ok.panel.report.ok and "strategy: fsdp2" in final_text(ok)


def test_bad_request_shows_its_reason(mw_assistant, flaky):
    from assistant.engine import BadRequest

    flaky = flaky(mw_assistant, exc=BadRequest("world_size must be a positive integer, got 0"))
    text = final_text(run_turn(flaky, "70B 模型怎么配？")[-1])
    assert text.startswith("这个请求无法回答") and "world\\_size must be a positive integer" in text


@pytest.mark.parametrize("kw,key", [({"nodes": -1}, "nodes"), ({"nodes": 2.5}, "nodes"),
                                    ({"gpus_per_node": 65}, "gpus_per_node"), ({"nodes": "many"}, "nodes")])
def test_chat_options_reject_out_of_range(kw, key):
    with pytest.raises(h.BadSetting) as e:
        h.chat_options(**kw)
    assert e.value.key == key


def test_chat_options_defaults_and_llm_modes():
    o = h.chat_options(nodes=0, gpus_per_node=None, gpu="", model="", lang="xx", llm="openai")
    assert (o.nodes, o.gpus_per_node, o.world_size, o.gpu, o.model, o.lang, o.llm) == (None, 8, None, None, None, "auto", "offline")
    assert h.chat_options(nodes=4, gpus_per_node=4.0, llm="openai", llm_modes=("offline", "openai")).world_size == 16
    assert h.chat_options(llm="openai", llm_modes=("offline", "openai")).llm == "openai"


def test_world_text():
    assert h.world_text(0, 8, "en").startswith("World size: read from the question")
    assert h.world_text(2, 8, "zh") == "world_size：**16** 张 GPU（2 × 8）"
    assert "1 到 64" in h.world_text(1, 100, "zh")


def test_interface_lang():
    assert h.interface_lang("zh") == "zh" and h.interface_lang("en", "zh-CN") == "en"
    assert h.interface_lang("auto", "zh-CN,zh;q=0.9,en;q=0.8") == "zh"
    assert h.interface_lang("auto", "en-US,en") == "en" and h.interface_lang(None) == "en"


# --- feedback ----------------------------------------------------------------------------------

def test_thumbs_down_writes_one_jsonl_row(tmp_path, en_turn):
    store = FeedbackStore(tmp_path / "feedback.jsonl")
    meta = en_turn[-1].meta
    assert h.record_feedback(store, meta, 1, False, "en") == "Thanks; this answer was recorded for review."
    assert h.record_feedback(store, meta, [1, None], True, "zh") == "感谢反馈。"
    rows = [json.loads(line) for line in store.path.read_text(encoding="utf-8").splitlines()]
    assert [r["liked"] for r in rows] == [False, True]
    assert rows[0]["answer_id"] == meta["1"]["answer_id"] and rows[0]["question"] == EN_QUESTION
    assert rows[0]["settings"]["llm"] == "offline" and rows[0]["intent"]


def test_votes_on_non_answers_are_ignored(tmp_path, en_turn):
    store = FeedbackStore(tmp_path / "feedback.jsonl")
    meta = en_turn[-1].meta
    assert h.record_feedback(store, meta, 0, False, "en") == ""  # the user's own message
    assert h.record_feedback(store, meta, 7, False, "en") == ""  # gone (new conversation)
    assert h.record_feedback(store, meta, 1, "Wrong YAML", "en") == ""  # not a thumbs up/down
    assert h.record_feedback(store, None, None, False, "en") == ""
    assert not store.path.exists()


def test_feedback_write_failure_is_reported_not_raised(tmp_path, en_turn):
    (tmp_path / "feedback.jsonl").mkdir()  # a directory where the file should be
    store = FeedbackStore(tmp_path / "feedback.jsonl")
    assert h.record_feedback(store, en_turn[-1].meta, 1, False, "zh") == "抱歉，反馈未能保存。"


# --- validate tab ------------------------------------------------------------------------------

def test_validate_invalid_yaml_text(mw_assistant):
    v = h.validate_yaml(mw_assistant, "distributed: [unclosed", 16, 8, "", "h100-80gb", "en")
    assert "Unusable input" in v.report and v.ok is None and v.fix == "" and v.figure is None


def test_validate_broken_recipe_shows_codes_and_a_validated_fix(mw_assistant):
    v = h.validate_yaml(mw_assistant, "distributed:\n  strategy: megatron_fsdp\n  tp_size: 2\n  pp_size: 2\n",
                        16, 8, "", "", "zh")
    assert v.ok is False
    assert "`MW-E-MEGATRON-PP`" in v.report and "在 world_size=16 下校验未通过" in v.report
    assert "megatron\\_fsdp does not support pipeline parallelism" in v.report  # English under the Chinese
    assert v.fix and validate(v.fix, world_size=16, gpus_per_node=8).ok
    assert "选择模型和 GPU 型号后可得到单卡显存图" in v.report


def test_validate_with_model_and_gpu_draws_the_memory_chart(mw_assistant):
    v = h.validate_yaml(mw_assistant, "distributed:\n  strategy: fsdp2\n  tp_size: 8\n", 16, 8,
                        "llama-3.1-70b", "h100-80gb", "en")
    assert v.figure is not None and len(v.figure.axes[0].patches) == 4
    assert "MW-E-MEMORY" in v.report and "Per-GPU memory estimate" in v.report
    assert v.details.startswith("<details>")


@pytest.mark.parametrize("text,world,expect", [
    ("", 8, "Paste a recipe"),
    ("a: 1\n" * (h.MAX_YAML_CHARS // 5 + 1), 8, "too long"),
    ("distributed:\n  strategy: fsdp2\n", 0, "must be a whole number"),
    ("distributed:\n  strategy: fsdp2\n", None, "must be a whole number"),
])
def test_validate_input_limits(text, world, expect):
    spy = Spy()
    spy.validate = lambda *a, **kw: (_ for _ in ()).throw(AssertionError("validator must not run"))
    assert expect in h.validate_yaml(spy, text, world, 8, "", "", "en").report


def test_validator_crash_is_an_error_message(mw_assistant):
    class Broken:
        def validate(self, *a, **kw):
            raise KeyError("internal")

    v = h.validate_yaml(Broken(), "distributed: {}\n", 8, 8, "", "", "en")
    assert "this request failed (KeyError)" in v.report and "internal" not in v.report
