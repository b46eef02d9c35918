"""A verdict a sentence of model text passes on a layout it names in prose, checked by the validator.

The rule the prompt states (a layout the user did not state is never judged without a tool call) is a
request to the model; this is where it holds. A sentence that names sizes ("tp_size 8 and pp_size 3",
read by understand/'s own reader, extract_params) and passes a verdict on them (claims.yaml
`layout_verdicts`) is judged at the answer's world size: the sizes completed over each layout the answer
is about, as a prose fragment is (check.complete_fragment). It stands when the validator agrees (a
positive verdict passes on one completion, a negative one fails on all) and is dropped otherwise, with
the validator's codes. A sentence that names its own world size other than the answer's is left alone:
the gate's check is at the answer's numbers. A layout the answer is about that already holds every size
the sentence names is the one it speaks of ("少于 pp_size 2 ... 启动就会报错" on the user's failing tp 2 x pp 2
layout, beside its passing fix): the sentence stands when the validator gives its verdict on one of
those, not judged on a bare completion. A size compared with a bound ("tp > 1 会报错")
states a rule over a range, not a verdict on one layout, and is left alone.
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
# a size name followed by a comparison: the sentence bounds a range ("tp > 1", "ep_size >= 2", "pp 大于 1")
_BOUND = re.compile(r"(?<![A-Za-z])(?:tp|pp|cp|ep|dp|dp_replicate|dp_shard)(?:_size)?\s*(?:[<>]=?|[≥≤≠]|!=|大于|小于|超过|不等于)",
                    re.I)


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


def _holds(base: dict, fragment: dict) -> bool:
    """Whether a layout already sets every value the sentence names (a size of 1 may be left unset)."""
    dist = base.get("distributed") if isinstance(base, dict) else None
    if not isinstance(dist, dict):
        return False
    return all(dist.get(k) == v or (v == 1 and k in _SIZE_KEYS and dist.get(k) is None) for k, v in fragment.items())


def disagreement(sentence: str, world_size: int | None, check: Callable[[dict], ValidationReport],
                 complete: Callable[[dict, dict | None], dict], bases: Iterable[dict],
                 before: str = "") -> Disagreement | None:
    """How the validator disagrees with the sentence's verdict on the sizes it names, or None (it agrees,
    or the sentence passes no verdict on a layout). A verdict that names no sizes ("that runs fine")
    is on the sizes of the text `before` it on the same line ("Use tp_size 8 and pp_size 3; ...")."""
    said = polarity(sentence)
    if said is None or world_size is None or _BOUND.search(sentence):
        return None
    p, sizes = _sizes(sentence)
    if not sizes and before.strip():
        p, sizes = _sizes(f"{before} {sentence}")
    if not sizes or (p.world_size and p.world_size != world_size):
        return None
    fragment = {**({"strategy": p.strategy} if p.strategy else {}), **sizes}
    bases = tuple(bases)
    named = tuple(b for b in bases if _holds(b, fragment))
    reports = []
    for base in named or (*bases, None):
        try:
            reports.append(check(complete(fragment, base)))
        except (ValueError, TypeError):
            continue
    if not reports:
        return None
    # on the layouts that hold its sizes, the sentence is about one of them: it stands when the validator
    # gives its verdict on any; on bare completions, a "works" needs one that passes, a "fails" all failing
    if (any(r.ok == said for r in reports) if named else any(r.ok for r in reports) == said):
        return None
    failed = next((r for r in reports if not r.ok), None)
    reasons = ", ".join(dict.fromkeys(f.code for f in failed.errors)) if said and failed is not None else ""
    return Disagreement(", ".join(f"{k} {v}" for k, v in sizes.items()), said, reasons)
