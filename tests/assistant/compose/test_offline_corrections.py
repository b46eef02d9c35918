"""The composer puts a claim's correction first, answers only the asks the claim does not cover, and
next to a judged layout says the layout's verdict in words that do not contradict it."""
from __future__ import annotations

from assistant.answer import AskRequest
from tests.assistant.compose.answers.conftest import lead


def ask(mw_assistant, question: str, **kw):
    return mw_assistant.ask(AskRequest(question=question, **kw))


def test_a_default_claimed_from_the_docstring_is_corrected_first(mw_assistant):
    a = ask(mw_assistant, "The FSDP2Config docstring says enable_fsdp2_prefetch defaults to True, so I get "
                          "prefetching without setting anything?")
    assert lead(a.text).startswith("No: `distributed.enable_fsdp2_prefetch` defaults to `false`")
    assert a.judged is None and "```" not in a.text


def test_the_parts_a_claim_does_not_cover_are_still_answered(mw_assistant):
    a = ask(mw_assistant, "cp_size 2 配 packed sequence：1) local_batch_size 是不是必须为 1？2) 注意力后端有要求吗")
    assert lead(a.text).startswith("不是：LLM recipe 并不强制") and "fact" in a.asks
    assert len(a.text.split("\n\n")) > 1  # the attention-backend part has its own answer


def test_a_claim_that_would_reject_a_passing_layout_is_answered_accepted_not_rejected(mw_assistant):
    a = ask(mw_assistant, "The skill doc says ep_size has to divide dp_size * cp_size, so tp_size 2 with ep_size 8 "
                          "on 8 GPUs gets rejected, correct?", world_size=8)
    first = lead(a.text)
    assert first.startswith("It is accepted, not rejected: TP counts") and a.validation.ok
    assert not first.startswith("No")
