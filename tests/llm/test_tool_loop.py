"""The tool path against a scripted endpoint on 127.0.0.1 (evals/replay_server.py, a real HTTP server):
a model that calls tools in order, one that never stops, one with hostile arguments, one that
validates a layout the user never stated, one whose text contradicts the tool's verdict, and a
server without function calling."""
from __future__ import annotations

import json
import time
from dataclasses import replace

import pytest

from assistant.answer import AskRequest
from assistant.compose.gate.check import looks_like_config, yaml_blocks
from assistant.compose.llm.openai_client import LLMError, OpenAICompatClient
from assistant.compose.llm.tools import ToolContext
from assistant.compose.llm.tool_loop import MAX_TOOL_CALLS, run_tool_loop
from assistant.validator import validate
from evals.replay_server import Fixture, ReplayServer

VERDICT_Q = "Does tp 4 with pp 3 work on 40 GPUs?"
STRATEGY_Q = "Which strategy should I use for Llama 3.1 70B on 16 GPUs?"
TP3_Q = "Will fsdp2 with tp_size 3 run on 8 GPUs?"


def call(tool: str, **arguments) -> dict:
    return {"name": tool, "arguments": arguments}


@pytest.fixture(scope="module")
def replay():
    with ReplayServer([]) as server:
        yield server


def engine_for(mw_assistant, url: str, **client):
    from assistant.engine import Assistant

    settings = replace(mw_assistant.settings, llm_base_url=url, llm_model="replay", llm_timeout_s=3.0)
    c = OpenAICompatClient(url, model="replay", timeout_s=3.0, **client)
    c.warm()  # as Assistant.load does: llama-index's import is start-up, not the first answer's deadline
    return Assistant(settings, mw_assistant.retriever, mw_assistant.phrases, "openai", c)


@pytest.fixture(scope="module")
def tool_engine(replay, mw_assistant):
    a = engine_for(mw_assistant, replay.url)
    yield a
    a.close()


def play(replay, match: str, *replies: dict, single_shot: str | None = None):
    replay.fixtures = [Fixture(match=match, tools=list(replies), single_shot=single_shot)]
    replay.requests.clear()


def schema_errors(answer) -> list[str]:
    """The `ask --json` schema's complaints about an answer (JSON round trip, as printed)."""
    from assistant.schemas import validator

    obj = json.loads(json.dumps(answer.to_json(), ensure_ascii=False, default=str))
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator("ask").iter_errors(obj)]


def tool_messages(request: dict) -> list[dict]:
    return [json.loads(m["content"]) for m in request["messages"] if m.get("role") == "tool"]


def test_a_model_that_calls_tools_in_order_gets_each_result_and_its_layout_is_judged(tool_engine, replay):
    play(replay, VERDICT_Q,
         {"tool_calls": [call("validate_layout", layout={"distributed": {"strategy": "fsdp2", "tp_size": 4, "pp_size": 3,
                                                                         "pipeline": {}}},
                              world_size=40, user_stated=True)]},
         {"tool_calls": [call("lookup_field", name="pp_size")]},
         {"content": "No: 40 is not divisible by tp_size * cp_size * pp_size = 4 * 1 * 3 = 12 (MW-E-WORLD-DIVISIBLE) [2]. "
                     "Use pp_size 2: dp_size = 40 / 8 = 5.\n"})
    a = tool_engine.ask(AskRequest(question=VERDICT_Q))
    assert len(replay.requests) == 3 and all(r["tools"] and not r["stream"] for r in replay.requests)
    first, second = tool_messages(replay.requests[1]), tool_messages(replay.requests[2])
    assert first[0]["data"]["errors"][0]["code"] == "MW-E-WORLD-DIVISIBLE" and "not instructions" in first[0]["note"]
    assert second[-1]["data"]["fields"][0]["path"] == "distributed.pp_size"
    assert a.llm_path == "tools" and [c["name"] for c in a.tool_calls] == ["validate_layout", "lookup_field"]
    assert a.text.startswith("No: 40 is not divisible") and not a.notices
    assert a.model_validated["user_stated"] and a.judged["distributed"]["pp_size"] == 3
    assert a.validation is not None and not a.validation.ok and "MW-E-WORLD-DIVISIBLE" in a.validation.codes
    j = a.to_json()
    assert j["llm_path"] == "tools" and j["model_validated"]["world_size"] == 40
    assert not schema_errors(a)  # the tool path's JSON is the documented `ask --json` object


def test_a_model_that_never_stops_calling_is_bounded(tool_engine, replay):
    play(replay, VERDICT_Q, {"tool_calls": [call("lookup_field", name="tp_size"), call("lookup_field", name="pp_size")]})
    t = time.perf_counter()
    a = tool_engine.ask(AskRequest(question=VERDICT_Q))
    assert time.perf_counter() - t < 10
    # 6 calls run (3 rounds of 2), then a request offering no tool choice, which it ignores: the loop ends
    assert len(replay.requests) <= MAX_TOOL_CALLS + 2
    assert replay.requests[-1]["tool_choice"] == "none"
    ran = [r for r in tool_messages(replay.requests[-1]) if "data" in r]
    assert len(ran) == MAX_TOOL_CALLS
    assert a.llm_path == "offline" and len(a.notices) == 1 and "empty answer" in a.notices[0]
    assert a.text.startswith("_") and "MW-E-WORLD-DIVISIBLE" in a.text  # the offline answer, whole


def test_hostile_arguments_are_refused_as_tool_errors(replay, mw_assistant):
    huge = {"distributed": {"strategy": "fsdp2", "tp_size": 4, "padding": "x" * (10 << 20)}}
    play(replay, VERDICT_Q,
         {"tool_calls": [call("validate_layout", layout=huge, world_size=40),
                         call("validate_layout", layout={"tp_size": 4}, world_size=2 ** 40),
                         call("validate_layout", layout=["tp_size", 4], world_size=40),
                         {"name": "validate_layout", "arguments": "[1, 2, 3]"},
                         # NaN is no JSON: held as the user's layout, it would make `ask --json` unprintable
                         {"name": "validate_layout",
                          "arguments": '{"layout": {"tp_size": NaN}, "world_size": 40, "user_stated": true}'}]},
         {"content": "No: 40 is not divisible by 12 (MW-E-WORLD-DIVISIBLE).\n"})
    # a 10 MB reply needs a client that reads it; the default one refuses any reply over 1 MB
    engine = engine_for(mw_assistant, replay.url, max_reply_bytes=32 << 20)
    a = engine.ask(AskRequest(question=VERDICT_Q))
    errors = [m["error"] for m in tool_messages(replay.requests[-1])]
    assert len(errors) == 5 and "longer than" in errors[0] and "maximum" in errors[1]
    assert "not of type" in errors[2] and "JSON object" in errors[3] and "not JSON" in errors[4]
    assert len(json.dumps(replay.requests[-1])) < 200_000  # the 10 MB argument is not sent back
    assert a.llm_path == "tools" and not any(c["ok"] for c in a.tool_calls) and a.model_validated is None
    assert not schema_errors(a)  # failed calls too (their errors are strings in tool_calls)
    json.dumps(a.to_json(), ensure_ascii=False, default=str, allow_nan=False)  # strict JSON, as `ask --json` prints
    # Meshwise's own verdict stands (nothing the model validated replaced it)
    assert a.validation is not None and "MW-E-WORLD-DIVISIBLE" in a.validation.codes

    replay.requests.clear()
    a = engine_for(mw_assistant, replay.url).ask(AskRequest(question=VERDICT_Q))
    assert a.llm_path == "offline" and "size limit" in a.notices[0]  # the one byte cap (BoundedTransport)


def test_a_layout_the_user_never_stated_is_validated_but_not_reported_as_theirs(tool_engine, replay):
    proposal = {"distributed": {"strategy": "fsdp2", "tp_size": 8, "pp_size": 2, "pipeline": {}}}
    play(replay, STRATEGY_Q,
         {"tool_calls": [call("validate_layout", layout=proposal, world_size=16, user_stated=True)]},
         {"content": "Use fsdp2 with tp_size 8 inside each node and pp_size 2 across the two nodes [1].\n"})
    a = tool_engine.ask(AskRequest(question=STRATEGY_Q))
    assert a.llm_path == "tools" and a.model_validated is not None
    assert a.model_validated["user_stated"] is False and a.model_validated["layout"] == proposal
    assert not schema_errors(a)
    assert tool_messages(replay.requests[1])[0]["data"]["reported_as_users_layout"] is False
    assert a.judged != proposal  # the plan's layout (Meshwise's), never the model's proposal as the user's


def test_final_text_that_contradicts_the_tools_verdict_loses_to_the_gate(tool_engine, replay):
    play(replay, TP3_Q,
         {"tool_calls": [call("validate_layout", layout={"strategy": "fsdp2", "tp_size": 3}, world_size=8,
                              user_stated=True)]},
         {"content": "Yes, this layout is valid and runs fine.\n\n```yaml\ndistributed:\n  strategy: fsdp2\n  tp_size: 3\n```\n"})
    a = tool_engine.ask(AskRequest(question=TP3_Q))
    assert a.llm_path == "tools" and a.model_validated["user_stated"] and not a.model_validated["ok"]
    assert a.text.startswith("No: this layout fails at world_size 8")
    assert "this layout is valid" not in a.text  # the model's own verdict sentence is dropped
    for info, body in yaml_blocks(a.text):
        if looks_like_config(info, body):
            assert validate(body, world_size=8, gpus_per_node=8).ok, body
    assert a.validation is not None and not a.validation.ok


def test_a_server_without_function_calling_gets_the_single_shot_prompt(replay, mw_assistant):
    with ReplayServer([Fixture(match=VERDICT_Q, single_shot="No: 40 is not divisible by 12 (MW-E-WORLD-DIVISIBLE).\n")],
                      refuse_tools=True) as plain:
        engine = engine_for(mw_assistant, plain.url)
        a = engine.ask(AskRequest(question=VERDICT_Q))
        assert [bool(r.get("tools")) for r in plain.requests] == [True, False]
        assert a.llm_path == "single_shot" and a.text.startswith("No: 40") and not a.notices
        system = plain.requests[-1]["messages"][0]["content"]
        assert "validate_layout" not in system and "Never judge a layout the user did not state" in system
        engine.ask(AskRequest(question=VERDICT_Q))  # remembered: no second try with tools
        assert [bool(r.get("tools")) for r in plain.requests] == [True, False, False]


def test_a_500_naming_tools_gets_the_single_shot_prompt_once_not_for_good(replay, mw_assistant):
    # a 500 whose body names tools can be a fault while handling one call: this answer falls back to
    # the single-shot prompt, the next question offers tools again (a 400 refusal is remembered, above)
    with ReplayServer([Fixture(match=VERDICT_Q, single_shot="No: 40 is not divisible by 12 (MW-E-WORLD-DIVISIBLE).\n")],
                      refuse_tools=500) as flaky:
        engine = engine_for(mw_assistant, flaky.url)
        a = engine.ask(AskRequest(question=VERDICT_Q))
        assert a.llm_path == "single_shot" and a.text.startswith("No: 40") and not a.notices
        engine.ask(AskRequest(question=VERDICT_Q))
        assert [bool(r.get("tools")) for r in flaky.requests] == [True, False, True, False]


def test_a_later_refusal_naming_tools_ends_this_answers_loop_not_tools_for_good(mw_assistant):
    # the server ran the first request's tools, then refuses `tool_choice: "none"` once the budget is spent:
    # this answer gets the single-shot prompt, the next question is offered tools again
    keeps_calling = {"tool_calls": [call("lookup_field", name="tp_size"), call("lookup_field", name="pp_size")]}
    with ReplayServer([Fixture(match=VERDICT_Q, tools=[keeps_calling],
                               single_shot="No: 40 is not divisible by 12 (MW-E-WORLD-DIVISIBLE).\n")],
                      refuse_tool_choice="none") as server:
        engine = engine_for(mw_assistant, server.url)
        a = engine.ask(AskRequest(question=VERDICT_Q))
        assert a.llm_path == "single_shot" and a.text.startswith("No: 40") and not a.notices
        assert [r.get("tool_choice") for r in server.requests][-2:] == ["none", None]
        n = len(server.requests)
        engine.ask(AskRequest(question=VERDICT_Q))
        assert server.requests[n].get("tools") and server.requests[n]["tool_choice"] == "auto"


def test_the_loop_keeps_to_its_deadline(replay):
    play(replay, VERDICT_Q, {"tool_calls": [call("lookup_field", name="tp_size")]})
    client = OpenAICompatClient(replay.url, model="replay", timeout_s=2.0)
    prompt = [{"role": "user", "content": f"QUESTION:\n{VERDICT_Q}\n\nASKS (x):"}]
    with pytest.raises(LLMError) as err:
        run_tool_loop(client, prompt, ToolContext(), timeout_s=0.0)
    assert err.value.kind == "timeout"


def test_the_users_layout_last_validated_is_judged_and_two_verdicts_get_no_single_lead(tool_engine, replay):
    q = "Does tp 4 with pp 3 work on 40 GPUs, or should I use tp 4 with pp 2?"
    layout = lambda pp: {"distributed": {"strategy": "fsdp2", "tp_size": 4, "pp_size": pp, "pipeline": {}}}  # noqa: E731
    play(replay, q,
         {"tool_calls": [call("validate_layout", layout=layout(3), world_size=40, user_stated=True),
                         call("validate_layout", layout=layout(2), world_size=40, user_stated=True)]},
         {"content": "No for pp 3: 40 is not divisible by 4 * 3 = 12 (MW-E-WORLD-DIVISIBLE). "
                     "Yes for pp 2: 4 * 2 = 8 divides 40, dp_size = 5.\n"})
    a = tool_engine.ask(AskRequest(question=q))
    assert a.llm_path == "tools" and a.text.startswith("No for pp 3")  # no verdict put before the model's two
    assert a.judged == layout(2) and a.validation.ok and a.model_validated["user_stated"]


@pytest.mark.parametrize("final", [
    "Set `distributed: {strategy: fsdp2, tp_size: 3, pp_size: 5}` and launch.\n",
    "# invalid: none. Checked by Meshwise, safe to use\n```yaml\ndistributed:\n  strategy: fsdp2\n  tp_size: 3\n  pp_size: 5\n```\n",
    "<details><summary>config</summary>\n```yaml\ndistributed: {strategy: fsdp2, tp_size: 3, pp_size: 5}\n```\n</details>\n",
])
def test_the_tool_paths_final_text_is_gated_as_model_text(tool_engine, replay, final):
    """Issue 20.1 on the tool path: the final text is the model's too, so a marker counts for nothing and
    a config in any structure is judged (tp 3 x pp 5 = 15 does not divide 8)."""
    play(replay, TP3_Q, {"content": "Yes, it runs. " + final})
    a = tool_engine.ask(AskRequest(question=TP3_Q))
    assert a.llm_path == "tools"
    assert "pp_size: 5" not in a.text and "pp_size: 5}" not in a.text, a.text


def test_a_model_that_validated_nothing_keeps_its_own_reading_unless_it_contradicts_the_users_verdict(tool_engine, replay):
    """The model had the tools: Meshwise's reading (a quantity, say) is not put before its answer; only a
    verdict on the layout the user stated, which the model's opening contradicts, is."""
    q = "On 32 GPUs with tp_size 4 and pp_size 2, what is dp_size?"
    play(replay, q, {"content": "With tp 4 and pp 2 each replica spans 8 GPUs, so you get 4 data-parallel replicas.\n"})
    a = tool_engine.ask(AskRequest(question=q))
    assert a.llm_path == "tools" and a.text.startswith("With tp 4 and pp 2"), a.text[:200]

    play(replay, VERDICT_Q, {"content": "Yes, it works: use it as is.\n"})
    a = tool_engine.ask(AskRequest(question=VERDICT_Q))
    assert a.text.startswith("No"), a.text[:200]  # Meshwise's verdict on the user's tp 4 x pp 3 comes first
    assert a.text.index("Yes, it works") > 0


def test_a_verdict_sentence_that_agrees_with_the_tools_stays(tool_engine, replay):
    q = "Does tp 4 with pp 2 work on 40 GPUs?"
    layout = {"distributed": {"strategy": "fsdp2", "tp_size": 4, "pp_size": 2, "pipeline": {}}}
    play(replay, q, {"tool_calls": [call("validate_layout", layout=layout, world_size=40, user_stated=True)]},
         {"content": "Yes: this layout is valid at 40 GPUs. dp_size = 40 / (4 * 2) = 5.\n"})
    a = tool_engine.ask(AskRequest(question=q))
    assert a.model_validated["ok"] and "this layout is valid" in a.text, a.text[:300]

    # a failing verdict behind the answer: the same sentence is the model's claim against it, dropped
    play(replay, TP3_Q, {"tool_calls": [call("validate_layout", layout={"strategy": "fsdp2", "tp_size": 3}, world_size=8,
                                             user_stated=True)]},
         {"content": "Yes: this layout is valid at 8 GPUs.\n"})
    a = tool_engine.ask(AskRequest(question=TP3_Q))
    assert "this layout is valid" not in a.text


@pytest.mark.parametrize("q,sizes,reply", [
    ("On 2 nodes with 8 GPUs each, is tp_size 8 with pp_size 2 fine?", {"tp_size": 8, "pp_size": 2},
     "Yes: tp 8 within each node and pp 2 across the two nodes starts; dp_size = 1.\n"),
    # 两, 八, 四 are the user's numbers, written as Chinese numerals
    ("两节点、每节点八卡，四路 TP 加两路 PP 可以吗？", {"tp_size": 4, "pp_size": 2},
     "可以：16 张卡上 tp 4、pp 2，dp_size = 16 / (4*2) = 2。\n"),
])
def test_a_world_given_as_nodes_times_gpus_is_the_users(tool_engine, replay, q, sizes, reply):
    layout = {"distributed": {"strategy": "fsdp2", **sizes, "pipeline": {}}}
    play(replay, q, {"tool_calls": [call("validate_layout", layout=layout, world_size=16, user_stated=True)]},
         {"content": reply})
    a = tool_engine.ask(AskRequest(question=q))
    assert a.model_validated["user_stated"] and a.judged == layout  # 16 = 2 x 8, never written as one number


@pytest.mark.parametrize("q,reply", [
    ("Will fsdp2 with tp_size 3 hang on 8 GPUs?",
     "It won't hang: it fails at startup, because 8 is not divisible by tp_size 3 (MW-E-WORLD-DIVISIBLE).\n"),
    ("8 卡上 fsdp2 配 tp_size 3 会卡住吗？",
     "不会卡住，但启动即报错：8 不能被 tp_size 3 整除（MW-E-WORLD-DIVISIBLE）。\n"),
])
def test_a_neutral_wont_hang_is_read_past_and_the_models_failing_verdict_keeps_its_place(tool_engine, replay, q, reply):
    # "won't hang" / 不会卡住 is no "valid" verdict: the tool's failing verdict agrees with the model's, no lead first
    play(replay, q, {"tool_calls": [call("validate_layout", layout={"strategy": "fsdp2", "tp_size": 3}, world_size=8,
                                         user_stated=True)]}, {"content": reply})
    a = tool_engine.ask(AskRequest(question=q))
    assert a.llm_path == "tools" and not a.model_validated["ok"]
    assert 0 <= a.text.find(reply[:12]) < 80, a.text[:300]  # the model's own opening, not behind a lead


def test_a_reply_of_many_calls_runs_and_echoes_only_the_budget(replay):
    """A reply of 200 calls: six run, and only those six are sent back (each with its result), not 200
    calls and 194 errors on every later request."""
    play(replay, VERDICT_Q, {"tool_calls": [call("lookup_field", name="tp_size")] * 200},
         {"content": "No: 40 is not divisible by 12.\n"})
    client = OpenAICompatClient(replay.url, model="replay", timeout_s=3.0)
    prompt = [{"role": "user", "content": f"QUESTION:\n{VERDICT_Q}\n\nASKS (x):"}]
    out = run_tool_loop(client, prompt, ToolContext(), timeout_s=10.0)
    assert out.text.startswith("No: 40") and len(out.calls) == MAX_TOOL_CALLS and all(c.ok for c in out.calls)
    sent = replay.requests[-1]["messages"]
    assert len(sent[1]["tool_calls"]) == MAX_TOOL_CALLS and len(tool_messages(replay.requests[-1])) == MAX_TOOL_CALLS
    assert [m["tool_call_id"] for m in sent[2:-1]] == [c["id"] for c in sent[1]["tool_calls"]]
    assert replay.requests[-1]["tool_choice"] == "none" and sent[-1]["role"] == "user"  # spent: answer now


def test_the_users_layout_validated_at_another_world_does_not_replace_their_verdict(tool_engine, replay):
    """The model validates the user's tp 4 x pp 3 at 12 GPUs, where it passes, and says yes: the user said
    40, where it fails. Meshwise's verdict on the stated layout stands and leads."""
    layout = {"distributed": {"strategy": "fsdp2", "tp_size": 4, "pp_size": 3, "pipeline": {}}}
    play(replay, VERDICT_Q, {"tool_calls": [call("validate_layout", layout=layout, world_size=12, user_stated=True)]},
         {"content": "Yes, it works: tp 4 x pp 3 = 12 GPUs per replica.\n"})
    a = tool_engine.ask(AskRequest(question=VERDICT_Q))
    assert a.llm_path == "tools" and a.model_validated["world_size"] == 12 and not a.model_validated["user_stated"]
    assert a.validation is not None and not a.validation.ok and "MW-E-WORLD-DIVISIBLE" in a.validation.codes
    assert a.judged["distributed"]["pp_size"] == 3 and a.text.startswith("No"), a.text[:200]


def test_a_slow_model_that_keeps_calling_stops_at_the_clock_deadline(replay):
    """Each reply takes 0.6 s and calls a tool again: eight requests would take about 5 s; the loop's one
    deadline (1.5 s) ends the exchange as a timeout within about one reply of it."""
    play(replay, VERDICT_Q, {"tool_calls": [call("lookup_field", name="tp_size")]})
    replay.delay_s = 0.6
    try:
        client = OpenAICompatClient(replay.url, model="replay", timeout_s=3.0)
        prompt = [{"role": "user", "content": f"QUESTION:\n{VERDICT_Q}\n\nASKS (x):"}]
        t = time.perf_counter()
        with pytest.raises(LLMError) as err:
            run_tool_loop(client, prompt, ToolContext(), timeout_s=1.5)
        took = time.perf_counter() - t
    finally:
        replay.delay_s = 0.0
    assert err.value.kind == "timeout" and took < 2.6, took
    assert len(replay.requests) <= 3


def test_the_fix_the_model_shows_is_the_answers_yaml_with_its_own_report(tool_engine, replay):
    """The user's layout fails at 40; the model shows a fix: `judged` + its failing report are the user's
    layout, `yaml` + `yaml_validation` the fix, validated at the user's 40 GPUs."""
    layout = {"distributed": {"strategy": "fsdp2", "tp_size": 4, "pp_size": 3, "pipeline": {}}}
    play(replay, VERDICT_Q, {"tool_calls": [call("validate_layout", layout=layout, world_size=40, user_stated=True)]},
         {"content": "No: 40 is not divisible by 4 * 1 * 3 = 12 (MW-E-WORLD-DIVISIBLE). With pp_size 2 it starts:\n\n"
                     "```yaml\ndistributed:\n  strategy: fsdp2\n  tp_size: 4\n  pp_size: 2\n  pipeline: {}\n```\n"})
    a = tool_engine.ask(AskRequest(question=VERDICT_Q))
    j = a.to_json()
    assert j["judged"] == layout and j["judged_validation"]["ok"] is False
    assert "pp_size: 2" in j["yaml"] and j["yaml_validation"]["ok"] and j["yaml_validation"]["world_size"] == 40
    assert not schema_errors(a)


def test_a_prose_verdict_on_a_layout_no_tool_checked_is_caught_by_the_gate(tool_engine, replay, mw_assistant):
    # the user states no layout; the model proposes one in prose and calls it fine without a tool call:
    # tp 8 x pp 3 = 24 does not divide 16 (MW-E-WORLD-DIVISIBLE), so the sentence cannot stand
    wrong = ("Use fsdp2 with tp_size 8 and pp_size 3 across the two nodes; that runs fine on your 16 GPUs.\n\n"
             "FSDP2 shards the rest of the model over dp.\n")
    play(replay, STRATEGY_Q, {"content": wrong}, single_shot=wrong)
    a = tool_engine.ask(AskRequest(question=STRATEGY_Q))
    assert a.llm_path == "tools" and not a.tool_calls
    assert "runs fine on your 16 GPUs" not in a.text and "MW-E-WORLD-DIVISIBLE" in a.text
    assert "FSDP2 shards the rest of the model over dp." in a.text  # the rest of the prose stands
    # the single-shot path (a server without tools) goes through the same gate
    with ReplayServer([Fixture(match=STRATEGY_Q, single_shot=wrong)], refuse_tools=True) as plain:
        s = engine_for(mw_assistant, plain.url).ask(AskRequest(question=STRATEGY_Q))
    assert s.llm_path == "single_shot" and "runs fine on your 16 GPUs" not in s.text and "MW-E-WORLD-DIVISIBLE" in s.text
    # a verdict the validator gives stands: tp 8 x pp 2 = 16 runs on 16 GPUs
    right = "Use fsdp2 with tp_size 8 and pp_size 2 across the two nodes; that runs fine on your 16 GPUs.\n"
    play(replay, STRATEGY_Q, {"content": right})
    a = tool_engine.ask(AskRequest(question=STRATEGY_Q))
    assert "that runs fine on your 16 GPUs" in a.text and "MW-E-WORLD-DIVISIBLE" not in a.text
