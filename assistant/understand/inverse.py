"""Inverse questions: "which pipeline microbatch size gives 8 microbatches?", "想要梯度累积 4 步，
local_batch_size 要设多少": the value of an input field that makes a derived number come out as asked.

The exact parts only: the output named with its number and the input field named by its key or its
terms (validator/fields.yaml). The ask itself is a quantity as the asks are read; this turns its target
into `solve:<field>` and puts the wanted output in `Ask.layout` (`microbatches=8`), which
compose/answers/quantity.py solves with validator/layout.py's arithmetic.
"""
from __future__ import annotations

import re

from assistant.validator.fields import field_table

# the derived numbers an inverse question fixes, each with its number, and the fields that set it
_OUTPUTS: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
    ("microbatches", re.compile(
        r"(?<![\w.])(?P<n>\d{1,4})\s*(?:个\s*)?(?:pipeline\s+)?(?:micro[\s-]?batch(?:es)?|微批(?:次|量)?)(?!\s*size|_size|\s*大小)"
        r"|\bn_microbatches\s*[=:]?\s*(?P<m>\d{1,4})", re.I), ("pp_microbatch_size", "local_batch_size")),
    ("grad_acc_steps", re.compile(
        r"(?:grad(?:ient)?[\s_-]*acc(?:um(?:ulation)?)?(?:[\s_-]*steps?)?|梯度累(?:积|加)(?:步数)?)\s*(?:of|=|:|：|为|是|到)?\s*"
        r"(?P<n>\d{1,4})(?!\s*[x×*/])"
        r"|(?<![\w.])(?P<m>\d{1,4})\s*(?:(?:grad(?:ient)?[\s-]*)?acc(?:um(?:ulation)?)?[\s-]*steps|步(?:梯度)?累(?:积|加))", re.I),
     ("local_batch_size", "global_batch_size")),
)
# the clause asks for the field's value, not states it: "what local_batch_size", "local_batch_size 要设多少"
_ASKS_VALUE = re.compile(r"\b(?:which|what)\b|要?(?:设|填|取|配|用)(?:成|为)?\s*(?:多少|几|多大)|多少|多大|几\s*$|填几", re.I)


def solve_target(clause: str, before: str = "") -> tuple[str, str] | None:
    """(`solve:<field>`, `<output>=<n>`) for a clause asking which value of a field gives the output a
    number the clause (or the clause before it, "想要梯度累积 4 步，local_batch_size 要设多少") states; None
    when the clause names no such field or states no output number."""
    if not _ASKS_VALUE.search(clause):
        return None
    # a field whose value the clause states is given, not asked ("grad acc with local_batch_size 4")
    named = [r.key for r in field_table().mentioned(clause)
             if not re.search(rf"{re.escape(r.key)}`?\s*[=:：]?\s*\d", clause)]
    for output, pattern, inputs in _OUTPUTS:
        field = next((k for k in named if k in inputs), None)
        if field is None:
            continue
        for text in (clause, before):
            m = pattern.search(_without_field(text, field))
            if m is not None:
                return f"solve:{field}", f"{output}={int(m.group('n') or m.group('m'))}"
    return None


def _without_field(text: str, field: str) -> str:
    """The text without the field's own name, so "pp_microbatch_size" is not read as "microbatch"."""
    return re.sub(rf"`?{re.escape(field)}`?", " ", text or "")
