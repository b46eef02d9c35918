"""Nonsense: no question to answer; a short request to rephrase, never a config."""
from __future__ import annotations

from assistant.compose.answers.base import AnswerKind, ComposeInput, Part
from assistant.compose.writer import Writer


def write(w: Writer, inp: ComposeInput, ask) -> Part:
    w.citer.keep_only(())
    w.answer(w.say("nonsense"))
    return Part()


KIND = AnswerKind("nonsense", frozenset(), write)
