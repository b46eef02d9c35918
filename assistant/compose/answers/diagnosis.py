"""Diagnosis: a pasted config and/or a pasted upstream error, explained.

A pasted error is matched to the rule that raises it upstream: the lead names the rule and its
arithmetic with the numbers in the error, then how to fix it. A pasted config is judged like any
layout of the user's (the verdict first). A log is never read as a config.
"""
from __future__ import annotations

from assistant.compose.answers.base import AnswerKind, ComposeInput, Part
from assistant.compose.answers.recommendation import pitfalls
from assistant.compose.answers.verdict import judged_body, verdict_line
from assistant.compose.writer import Writer, features_of


def error_lead(w: Writer, match) -> str:
    """`MW-E-...` raised by upstream `file`: the message with the error's own numbers."""
    from assistant.validator.rules import make_finding

    try:
        f = make_finding(match.code, "", **dict(match.values))
        message = (f.message_zh if w.lang == "zh" else f.message).rstrip(" .。")
    except (KeyError, ValueError, IndexError):
        message = match.matched
    return w.say("error_matched", code=match.code, upstream=match.upstream, message=message)


def write(w: Writer, inp: ComposeInput, ask) -> Part:
    for match in inp.errors:
        w.answer(error_lead(w, match))
        w.bullets([w.fact(k, required=True) for k in w.p.rule_facts.get(match.code, ())[:2]], heading="why")
    d = inp.diagnosis
    if d is not None and d.pasted:
        return _pasted(w, inp, d, ask)
    if inp.errors:
        return Part()
    # a problem described in words ("cp_size 4 with SDPBackend.MATH fails, why?"): the facts and
    # pitfalls of what it names
    from assistant.compose.answers import fact

    return fact.howto(w, inp)


def _pasted(w: Writer, inp: ComposeInput, d, ask) -> Part:
    asks = list(inp.asks)
    said = ask in asks and any(getattr(a, "kind", None) == "verdict" for a in asks[:asks.index(ask)])
    if not said:  # a verdict ask before this one already said whether it runs
        w.answer(verdict_line(w, d, getattr(ask, "text", "") or inp.query.text))
    part = judged_body(w, inp, d, sizing=True)
    r = d.report
    if r is not None and r.ok:
        dist = (d.judged or {}).get("distributed")
        pitfalls(w, features_of(dist if isinstance(dist, dict) else {}), r)
    return part


KIND = AnswerKind("diagnosis", frozenset({"validation", "errors", "plan", "retrieval"}), write)
