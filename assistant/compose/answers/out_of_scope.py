"""Out of scope: say plainly that the question is outside what Meshwise covers, where upstream
documents a neighbouring topic, and what Meshwise does cover (compose/knowledge/scope.py, scope.yaml)."""
from __future__ import annotations

import re

from assistant.compose.answers.base import AnswerKind, ComposeInput, Part
from assistant.compose.citations import with_citation
from assistant.compose.knowledge.scope import scope_reply
from assistant.compose.writer import Writer
from assistant.understand.cues import read

_SENTENCE_END = re.compile(r"(?<=[.。])\s*(?=[A-Z\u3400-\u9fff])")


def write(w: Writer, inp: ComposeInput, ask) -> Part:
    reply = scope_reply(read(ask, inp.query), w.lang, default=True)
    alone = not any(a.kind not in ("out_of_scope", "nonsense") for a in inp.asks)
    if not alone:
        # after the answers to what is in scope, one sentence: where the rest is documented
        reply = _SENTENCE_END.split(reply, maxsplit=1)[0]
    n = w.citer.cite(("scope",), (), reply)
    if alone:
        # a short answer lists only the chunk it stands on, not every retrieved one
        w.citer.keep_only([w.citer.sources[n - 1]] if n else ())
        n = 1 if n else None
    w.answer(with_citation(reply, [n]) if n else reply)
    return Part()


KIND = AnswerKind("out_of_scope", frozenset({"retrieval"}), write)
