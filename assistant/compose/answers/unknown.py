"""Unknown: a clause that asks something no kind was read for with confidence. It is kept as an ask
(never dropped) and answered plainly: what Meshwise cannot tell, and the closest kb section."""
from __future__ import annotations

from assistant.compose.answers.base import AnswerKind, ComposeInput, Part
from assistant.compose.writer import Writer


def write(w: Writer, inp: ComposeInput, ask) -> Part:
    return Part()  # the coverage check in offline.compose says what cannot be told, once, for every uncovered ask


KIND = AnswerKind("unknown", frozenset({"retrieval"}), write)
