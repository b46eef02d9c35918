"""Off-topic questions are told so plainly; keyboard mash gets a request to rephrase, never a YAML."""
from __future__ import annotations

from answer_checks import shown_configs
from tests.assistant.compose.answers.conftest import body


def test_off_topic_is_out_of_scope_and_short(ask):
    a = ask("what's the weather going to be in Santa Clara tomorrow?")
    assert a.intent == "out_of_scope" and a.asks == ["out_of_scope"] and a.yaml is None
    assert len(body(a.text)) < 600 and a.judged is None


def test_gibberish_with_tp_is_not_a_tp_recommendation(ask):
    # issue 11: gibberish containing "tp" got a TP recommendation with a YAML
    a = ask("tp tp asdkj qwe pp zzz??")
    assert a.asks == ["nonsense"] and shown_configs(a.text) == [] and a.yaml is None
    assert "rephrase" in a.text and len(body(a.text)) < 500
