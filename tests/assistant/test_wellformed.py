"""assistant/wellformed.py: text that is not valid Unicode becomes answerable text."""
from __future__ import annotations

from assistant.answer import AskRequest, Turn
from assistant.wellformed import well_formed, well_formed_request


def test_lone_surrogates_become_replacement_characters_and_pairs_their_character():
    assert well_formed("a\ud800b") == "a\ufffdb"
    assert well_formed("\udfff\ud800") == "\ufffd\ufffd"
    assert well_formed("\ud83d\ude00") == "\U0001F600"  # an escaped pair is one character
    text = "张量并行 tp_size"
    assert well_formed(text) is text


def test_the_engine_answers_a_question_with_a_lone_surrogate(mw_assistant):
    req = well_formed_request(AskRequest(question="x\ud800", history=(Turn("user", "y\udc80"),)))
    assert req.question == "x\ufffd" and req.history[0].content == "y\ufffd"
    a = mw_assistant.ask(AskRequest(question="Which strategy for 70B on 8 nodes with TP and PP? \ud800"))
    assert a.strategy == "fsdp2" and a.text.encode("utf-8")
