"""Out of scope: say plainly that the question is outside what Meshwise covers, and what it covers."""
from __future__ import annotations

from assistant.compose.answers.base import AnswerKind, ComposeInput, Part
from assistant.compose.citations import with_citation
from assistant.compose.phrases import Phrases
from assistant.compose.writer import Writer


def scope_topic(question: str, phrases: Phrases) -> str | None:
    q = question.lower()
    if "activation checkpoint" in q or "激活检查点" in q:
        q = q.replace("activation checkpoint", "").replace("激活检查点", "")
    for topic, needles in phrases.scope_match.items():
        if any(n in q for n in needles):
            return topic
    return None


def write(w: Writer, inp: ComposeInput, ask) -> Part:
    topic = scope_topic(inp.query.text, w.p)
    label = w.p.text["scope_topics"][topic][w.lang] if topic else w.say("out_of_scope_generic")
    sentence = w.say("out_of_scope", topic=label)
    n = w.citer.cite(("scope",), (), sentence)
    # A short answer lists only the chunk it stands on, not every retrieved one.
    w.citer.keep_only([w.citer.sources[n - 1]] if n else ())
    w.answer(with_citation(sentence, [1]) if n else sentence)
    return Part()


KIND = AnswerKind("out_of_scope", frozenset({"retrieval"}), write)
