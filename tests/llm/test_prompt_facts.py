"""LLM mode against the scripted OpenAI-compatible server: the prompt the server RECEIVES carries the
situation, the asks and what Meshwise computed for each; the answer's verdict is Meshwise's; an opening
that buries the verdict gets Meshwise's lead first; the gate still replaces an invalid YAML."""
from __future__ import annotations

from dataclasses import replace

import pytest

from assistant.answer import Turn
from assistant.compose.gate.check import looks_like_config, yaml_blocks
from assistant.compose.llm.prompts import estimate_tokens
from assistant.validator import validate
from tests.llm.conftest import ask_streamed as stream

VERDICT_Q = "Does tp 4 with pp 3 work on 40 GPUs?"
VERDICT_LEAD = "No: world_size (40) must be divisible by tp_size*cp_size*pp_size (4*1*3 = 12) (`MW-E-WORLD-DIVISIBLE`)."
QUANTITY_Q = ("On 32 GPUs I use tp_size 4 and ep_size 8, pp_size 1, cp_size 1. What are dp_size and the ep_shard size, "
              "and how many gradient-accumulation steps with global_batch_size 64 and local_batch_size 2?")
LOG_Q = "Why does this fail?\n```\nAssertionError: pp_batch_size 4 // pp_microbatch_size 1 must be >= pp_size 8\n```"
ZH_Q = "我有 16 张卡，tp_size 4，pp_size 2，cp 是 1，这样能跑吗？dp_size 是多少？"


def received(scripted) -> tuple[str, str]:
    msgs = scripted.requests[-1]["messages"]
    return next(m["content"] for m in msgs if m["role"] == "system"), msgs[-1]["content"]


def block(user: str, label: str) -> str:
    """One labelled data block of the user message (up to the next blank line)."""
    return user.split(label, 1)[1].split("\n\n", 1)[0]


def test_verdict_question_sends_the_users_layout_and_the_validators_no(openai_engine, scripted):
    scripted.script = ("answer", "No: 40 is not divisible by tp_size*pp_size = 12 (MW-E-WORLD-DIVISIBLE). "
                                 "Use pp_size 2 instead [1].\n")
    deltas, a = stream(openai_engine, VERDICT_Q)
    system, user = received(scripted)
    assert "Answer every question the user asked, in their words and in their order" in system and "English" in system
    assert "never contradict it" in system and "Never judge a layout the user did not state" in system
    situation = block(user, "SITUATION")
    assert "world_size: 40 (stated in the question)" in situation and "tp_size 4, pp_size 3" in situation
    asks = block(user, "ASKS (")
    assert "1. verdict" in asks and "COMPUTED ANSWER: " + VERDICT_LEAD in asks
    validator = block(user, "VALIDATOR ON THE USER'S OWN LAYOUT")
    assert '"tp_size": 4, "pp_size": 3' in validator and "FAILS" in validator and "(4*1*3 = 12)" in validator
    assert "pp_size: 2" in user.split("VALIDATED CONFIG (", 1)[1]  # the fix after the "no", validated
    # the answer's verdict is Meshwise's own, on the user's own layout
    assert a.validation is not None and not a.validation.ok and "MW-E-WORLD-DIVISIBLE" in a.validation.codes
    assert a.judged["distributed"]["tp_size"] == 4 and a.judged["distributed"]["pp_size"] == 3
    assert "verdict" in a.asks and not a.notices
    assert a.text.startswith("No: 40 is not divisible")  # the model stated it: nothing put before it
    assert "".join(deltas).startswith("No: 40")


def test_multi_part_quantity_question_sends_every_number(openai_engine, scripted):
    scripted.script = ("answer", "dp_size = 8, ep_shard = 4, and 4 gradient-accumulation steps.\n")
    _, a = stream(openai_engine, QUANTITY_Q)
    _, user = received(scripted)
    situation = block(user, "SITUATION")
    assert "global_batch_size: 64" in situation and "local_batch_size: 2" in situation
    assert "tp_size 4, pp_size 1, cp_size 1, ep_size 8" in situation  # the stated 1s are kept
    asks = block(user, "ASKS (")
    assert asks.index("1. quantity (dp_size)") < asks.index("2. quantity (ep_shard)") < asks.index("3. quantity (grad_acc_steps)")
    assert "dp_size = 8" in asks and "ep_shard = 4" in asks and "Gradient accumulation = 4 step(s)" in asks
    validator = block(user, "VALIDATOR ON THE USER'S OWN LAYOUT")
    assert "dp_size 8" in validator and "ep_shard 4" in validator and "grad_acc_steps 4" in validator
    assert "moe_mesh (ep_shard, ep) = (4, 8)" in validator
    assert "VALIDATED CONFIG: none. Show no YAML." in user  # nobody asked for a config
    assert a.validation.ok and a.validation.derived.dp_size == 8 and a.asks.count("quantity") == 3
    assert a.text.startswith("dp_size = 8, ep_shard = 4") and a.yaml is None


def test_pasted_log_is_sent_as_error_output_with_its_rule(openai_engine, scripted):
    scripted.script = ("answer", "Your pipeline has 4 microbatches for 8 stages; raise local_batch_size to 8.\n")
    _, a = stream(openai_engine, LOG_Q)
    _, user = received(scripted)
    situation = user.split("SITUATION", 1)[1].split("QUESTION:", 1)[0]
    assert "pasted error output:" in situation and "pasted config" not in situation
    assert "pp_batch_size 4 // pp_microbatch_size 1 must be >= pp_size 8" in situation
    assert block(user, "QUESTION:").strip() == "Why does this fail?"  # the log is not repeated as prose
    errors = block(user, "UPSTREAM ERRORS MATCHED")
    assert "MW-E-PP-MICROBATCH-COUNT" in errors and "train_ft.py" in errors
    asks = block(user, "ASKS (")
    # the computed answer carries the run's arithmetic (error_fixes: 4 // 1 = 4 microbatches < pp_size 8)
    assert "1. diagnosis" in asks and "4 // 1 = 4" in asks and "pp_size 8" in asks
    assert "AssertionError" not in block(user, "VALIDATOR ON THE USER'S OWN LAYOUT")  # never judged as a config
    assert a.validation is not None and "MW-E-PP-MICROBATCH-COUNT" in a.validation.codes


def test_chinese_question_asks_for_chinese_with_the_computed_answers_in_chinese(openai_engine, scripted):
    scripted.script = ("answer", "可以：这个配置能通过校验，dp_size = 2 [1]。\n")
    _, a = stream(openai_engine, ZH_Q)
    system, user = received(scripted)
    assert "Answer in Chinese" in system
    assert user.rstrip().endswith("in Chinese (简体中文). Your first line is the direct answer to the first one.")
    asks = block(user, "ASKS (")
    assert "1. verdict" in asks and "2. quantity (dp_size)" in asks
    assert "COMPUTED ANSWER: 可以：" in asks and "dp_size = 2：world_size / (tp_size × pp_size × cp_size) = 16 / (4 × 2 × 1)" in asks
    assert "tp_size 4, pp_size 2, cp_size 1" in block(user, "SITUATION")
    assert a.language == "zh" and a.validation.ok and a.text.startswith("可以：这个配置")


def test_an_answer_that_buries_the_verdict_gets_the_lead_first(openai_engine, scripted):
    buried = ("Recommendation: use fsdp2 [1]. FSDP2 shards parameters, gradients and optimizer states across the "
              "data-parallel ranks, and TP splits each layer inside a node, which keeps the all-reduce traffic on NVLink. "
              "PP splits the layers into stages, and each stage holds a contiguous block of layers with its own "
              "optimizer shard. On 40 GPUs tp_size 4 with pp_size 3 would not divide evenly.\n")
    assert buried.index("not divide") > 300  # the verdict comes after the opening
    scripted.script = ("answer", buried)
    deltas, a = stream(openai_engine, VERDICT_Q)
    assert a.text.startswith(VERDICT_LEAD)
    assert a.text.index(VERDICT_LEAD) < a.text.index("Recommendation: use fsdp2")
    assert "".join(deltas).startswith(VERDICT_LEAD)  # streamed the same way
    assert not a.validation.ok and a.judged["distributed"]["pp_size"] == 3


def test_a_wrong_verdict_gets_the_computed_one_first(openai_engine, scripted):
    scripted.script = ("answer", "Yes, that layout is valid and runs fine on 40 GPUs.\n")
    _, a = stream(openai_engine, VERDICT_Q)
    assert a.text.startswith(VERDICT_LEAD) and not a.validation.ok


def test_a_quantity_answer_without_the_number_gets_the_lead_first(openai_engine, scripted):
    scripted.script = ("answer", "The data-parallel size follows from the world size and the other sizes [1].\n")
    _, a = stream(openai_engine, QUANTITY_Q)
    assert a.text.startswith("dp_size = 8: world_size / (tp_size × pp_size × cp_size) = 32 / (4 × 1 × 1)")
    lead = a.text.split("\n\n", 1)[0]
    assert "ep_shard = 4" in lead and "Gradient accumulation = 4 step(s)" in lead


def test_the_gate_still_replaces_an_invalid_yaml(openai_engine, scripted):
    bad = ("No: 40 is not divisible by 12 (MW-E-WORLD-DIVISIBLE).\n\n```yaml\ndistributed:\n  strategy: fsdp2\n"
           "  tp_size: 4\n  pp_size: 3\n```\n")
    scripted.script = ("answer", bad)
    _, a = stream(openai_engine, VERDICT_Q)
    shown = [body for tag, body in yaml_blocks(a.text) if looks_like_config(tag, body)]
    assert shown and all(validate(body, world_size=40, gpus_per_node=8).ok for body in shown)
    assert "pp_size: 3" not in "".join(shown) and "MW-E-WORLD-DIVISIBLE" in a.text
    assert not a.validation.ok and a.judged["distributed"]["pp_size"] == 3  # still the user's own verdict


@pytest.fixture
def small_context_engine(openai_engine):
    """The engine with the local model's limits (4096-token context, 400-token answers)."""
    from assistant.compose.llm.openai_client import OpenAICompatClient
    from assistant.engine import Assistant

    c = openai_engine._llm
    client = OpenAICompatClient(c.base_url, model=c.model, api_key=c.api_key, timeout_s=c.timeout_s,
                                max_tokens=400, context_window=4096, tools=False)
    return Assistant(openai_engine.settings, openai_engine.retriever, openai_engine.phrases, "openai", client)


@pytest.mark.parametrize("question", [ZH_Q, QUANTITY_Q + "\n" + "Some context about my cluster. " * 300])
def test_the_prompt_fits_a_small_context_with_the_computed_facts_whole(small_context_engine, scripted, question):
    scripted.script = ("answer", "dp_size = 2.\n")
    history = [{"role": "user", "content": "earlier question " * 200}, {"role": "assistant", "content": "答" * 1500}]
    _, a = stream(small_context_engine, question, history=[Turn(t["role"], t["content"]) for t in history])
    msgs = scripted.requests[-1]["messages"]
    assert sum(estimate_tokens(m["content"]) + 4 for m in msgs) <= 4096 - 400
    user = msgs[-1]["content"]
    assert "<source n=" in user  # some sources still fit
    assert ("dp_size = 2：" if question == ZH_Q else "Gradient accumulation = 4 step(s)") in user


def test_a_chinese_answer_that_echoes_the_question_gets_the_chinese_lead_first(openai_engine, scripted):
    scripted.script = ("answer", '1. verdict: "我有 16 张卡,tp_size 4,pp_size 2,cp 是 1,这样能跑吗"\n'
                                 "- 张量并行把每层切到 4 张卡上，流水线并行把层切成 2 段。\n")
    _, a = stream(openai_engine, ZH_Q)
    lead = a.text.split("\n\n", 1)[0]
    assert lead.startswith("可以：") and "dp_size = 2：" in lead  # both asks' computed answers, in Chinese
    assert "1. verdict" not in a.text  # the echoed ASKS line is the prompt's own: dropped; the model's own sentence stays


def test_a_model_that_copies_its_prompt_or_loops_is_not_shown_doing_it(openai_engine, scripted):
    # what SmolLM2-135M does on a long prompt: copies a section back and repeats a line
    looping = ("SITUATION (read from the question):\n- world_size: 40 (stated in the question)\n"
               "- stated layout: tp_size 4, pp_size 3\n\n"
               "The next step feeds the mini-batch generator again.\n"
               "The next step feeds the mini-batch generator again.\n"
               "COMPUTED ANSWER: copied\n\nUse pp_size 2 instead [1].\n")
    scripted.script = ("answer", looping)
    deltas, a = stream(openai_engine, VERDICT_Q)
    assert "SITUATION" not in a.text and "world_size: 40 (stated" not in a.text and "COMPUTED" not in a.text
    assert a.text.count("The next step feeds the mini-batch generator again.") == 1
    assert "Use pp_size 2 instead" in a.text
    assert "".join(deltas) == a.text  # what was streamed is the answer, not printed twice
