"""A verdict a sentence of model text passes on a layout it names in prose, checked by the validator.

The rule the prompt states (a layout the user did not state is never judged without a tool call) is a
request to the model; this is where it holds. A sentence that names sizes ("tp_size 8 and pp_size 3",
read by understand/'s own reader, extract_params) and passes a verdict on them (claims.yaml
`layout_verdicts`) is judged at the answer's world size: the sizes completed over each layout the answer
is about, as a prose fragment is (check.complete_fragment). It stands when the validator agrees (a
positive verdict passes on one completion, a negative one fails on all) and is dropped otherwise, with
the validator's codes. A sentence that names its own world size other than the answer's is left alone:
the gate's check is at the answer's numbers.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Callable, Iterable

from assistant.compose.gate.claims import CLAIMS_PATH
from assistant.datafile import read_yaml
from assistant.validator.report import ValidationReport

_SIZE_KEYS = ("tp_size", "pp_size", "cp_size", "ep_size", "dp_size", "dp_replicate_size")


@dataclass(frozen=True)
class Disagreement:
    layout: str  # the sizes as the validator read them, "tp_size 8, pp_size 3"
    positive: bool  # the sentence said it works
    reasons: str  # the validator's error codes (a positive verdict), "" for a negative one it refutes


@cache
def _cues() -> tuple[tuple[re.Pattern, ...], tuple[re.Pattern, ...]]:
    table = read_yaml(CLAIMS_PATH)["layout_verdicts"]
    return (tuple(re.compile(p, re.I) for p in table["negative"]), tuple(re.compile(p, re.I) for p in table["positive"]))


def polarity(sentence: str) -> bool | None:
    """True for a sentence that says a layout works, False for one that says it fails, None for neither."""
    negative, positive = _cues()
    if any(p.search(sentence) for p in negative):
        return False
    if any(p.search(sentence) for p in positive):
        return True
    return None


def _sizes(text: str):
    from assistant.understand.params import extract_params

    p = extract_params(text)
    return p, {k: getattr(p, k) for k in _SIZE_KEYS if isinstance(getattr(p, k, None), int)}


def disagreement(sentence: str, world_size: int | None, check: Callable[[dict], ValidationReport],
                 complete: Callable[[dict, dict | None], dict], bases: Iterable[dict],
                 before: str = "") -> Disagreement | None:
    """How the validator disagrees with the sentence's verdict on the sizes it names, or None (it agrees,
    or the sentence passes no verdict on a layout). A verdict that names no sizes ("that runs fine")
    is on the sizes of the text `before` it on the same line ("Use tp_size 8 and pp_size 3; ...")."""
    said = polarity(sentence)
    if said is None or world_size is None:
        return None
    p, sizes = _sizes(sentence)
    if not sizes and before.strip():
        p, sizes = _sizes(f"{before} {sentence}")
    if not sizes or (p.world_size and p.world_size != world_size):
        return None
    fragment = {**({"strategy": p.strategy} if p.strategy else {}), **sizes}
    reports = []
    for base in (*bases, None):
        try:
            reports.append(check(complete(fragment, base)))
        except (ValueError, TypeError):
            continue
    if not reports:
        return None
    passes = any(r.ok for r in reports)
    if passes == said:
        return None
    failed = next((r for r in reports if not r.ok), None)
    reasons = ", ".join(dict.fromkeys(f.code for f in failed.errors)) if said and failed is not None else ""
    return Disagreement(", ".join(f"{k} {v}" for k, v in sizes.items()), said, reasons)
