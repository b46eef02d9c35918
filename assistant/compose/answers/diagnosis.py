"""Diagnosis: a pasted config and/or a pasted upstream error, explained.

A pasted error is matched to the rule that raises it upstream: the lead names the rule and its
arithmetic with the numbers in the error, then how to fix it. A pasted config is judged like any
layout of the user's (the verdict first). A log is never read as a config.
"""
from __future__ import annotations

from assistant.compose.answers import fact
from assistant.compose.answers.from_kb import explain_error
from assistant.compose.answers.base import AnswerKind, ComposeInput, Part
from assistant.compose.knowledge.error_fixes import explain
from assistant.compose.knowledge.judge import with_layout
from assistant.compose.answers.quantity_lines import quantity_line
from assistant.compose.answers.recommendation import pitfalls
from assistant.compose.knowledge.field_facts import judges_value
from assistant.compose.answers.verdict import fix_changes, fix_line, judged_body, layout_text, verdict_line
from assistant.compose.writer import Writer, features_of, size_of, sizes_text
from assistant.understand.cues import read


def write(w: Writer, inp: ComposeInput, ask) -> Part:
    d = inp.diagnosis
    if (part := _tried(w, inp, d, ask)) is not None:
        return part
    if d is not None and d.pasted:
        for m in inp.errors:
            w.answer(_matched_line(w, m, m.matched.rstrip(" .")))
            w.answer(explain(m, w.lang, text=inp.query.text, non_pp=_non_pp(d), gpus_per_node=inp.gpus_per_node))
        return _pasted(w, inp, d, ask)
    if inp.errors:
        return _errors(w, inp, d)
    asks = list(inp.asks)
    if ask in asks and asks.index(ask) > 0:
        return Part()  # nothing pasted to look at beyond what the asks before this one answered
    # a problem described in words ("pp_size 2, local_batch_size 4 asserts, why?"): the verdict on the
    # sizes it states when they fail, else the facts and pitfalls of what it names
    if d is not None and d.report is not None and not d.report.ok:
        w.answer(verdict_line(w, d, read(ask, inp.query)))
        return judged_body(w, inp, d)
    sit = inp.query.situation
    told = "\n".join(sit.pasted.errors) or read(inp.query).quoted_error  # pasted, or quoted in the prose
    if told and explain_error(w, inp, told):
        # a runtime error no start-up rule raises ("No tensor-parallel plan is registered ..."): what
        # the kb says about that message leads; a verdict ask on the stated sizes follows it
        return Part()
    if d is not None and d.report is not None and sit.stated.sizes:
        if any(a.kind == "verdict" for a in asks):
            return Part()  # the verdict ask judges the stated layout
        quoted = read(inp.query).quoted_error if d.report.ok else None
        if quoted:
            # "I get 'ep_size must divide ...' but my numbers are ep 16, dp 4, tp 4": those numbers pass, so
            # the run that raised it had other sizes; what usually differs, and where to look
            w.answer(w.say("diag_numbers_pass", layout=layout_text(w, d), world=d.world_size, mesh=w.mesh(d.report),
                           error=quoted.rstrip(" .。")))
            if d.report.derived is not None and d.report.derived.ep_size > 1:
                w.answer(quantity_line(w, "ep_shard", d.report, d.judged))
            w.answer(w.say("diag_numbers_differ"))
            return judged_body(w, inp, d)
        # the stated layout passes start-up: what goes wrong later is a pitfall of what it turns on
        w.answer(verdict_line(w, d, read(ask, inp.query)))
        part = judged_body(w, inp, d)
        dist = (d.judged or {}).get("distributed")
        pitfalls(w, features_of(dist if isinstance(dist, dict) else {}), d.report, limit=3)
        return part
    if judges_value(read(ask, inp.query).field_question):
        # "`cp_size: none` in our recipe, won't that fail?": the field reference's verdict on the value
        part = fact.fields(w, inp, ask)
        if part is not None:
            return part
    if any(a.kind in ("config", "fact") for a in inp.asks if a is not ask):
        # "crashes with the unused-parameters error; how do I turn on X?": the other asks answer it, and
        # a layout of our own beside them would be a second config
        return fact.howto(w, inp, with_config=False) or Part()
    if not sit.stated.any() and not sit.world_size and not sit.model:
        # "卡住不动了 nccl 没反应 咋办": a problem told in words only, no layout to judge or size: what
        # the kb says about it, not a layout of ours
        return fact.howto(w, inp, with_config=False) or Part(handoff="fact")
    return fact.howto(w, inp, with_config=False) or Part(handoff="recommendation")


def _tried(w: Writer, inp: ComposeInput, d, ask) -> Part | None:
    """"I also tried dp_replicate_size: 8 and got a ValueError, what am I missing?": the layout the story
    tells of (`Ask.layout`, the user's with those sizes) judged at the same numbers; when it fails, its
    verdict with the arithmetic and the fix, labelled with the sizes. None when there is none or it passes."""
    layout = getattr(ask, "layout", None)
    tried = with_layout(inp.query, d, layout) if d is not None and layout else None
    if tried is None or tried.report is None or tried.report.ok:
        return None
    w.answer(w.say("q_layout_with", sizes=sizes_text(layout.split(","))) + verdict_line(w, tried, read(ask, inp.query)))
    return Part(report=tried.report, judged=tried.judged)


def _matched_line(w: Writer, m, message: str) -> str:
    """The line naming the check a pasted error comes from; a rule of ours (upstream "meshwise", the
    memory estimate behind a CUDA OOM) is never called an upstream check."""
    key = "error_matched_own" if m.upstream == "meshwise" else "error_matched"
    return w.say(key, code=m.code, upstream=m.upstream, message=message)


def _errors(w: Writer, inp: ComposeInput, d) -> Part:
    """Each pasted error: the rule that raises it, its arithmetic on the run's own numbers (the layout
    the error reveals, re-validated), and the nearest layout that passes."""
    r = d.report if d is not None else None
    for m in inp.errors:
        f = next((f for f in r.errors if f.code == m.code), None) if r is not None else None
        explained = explain(m, w.lang, text=inp.query.text, non_pp=_non_pp(d), gpus_per_node=inp.gpus_per_node)
        # the explanation carries the numbers: the error is quoted as written, not restated
        message = (f.message_zh if w.lang == "zh" else f.message) if f is not None and not explained else m.matched
        w.answer(_matched_line(w, m, message.rstrip(" .。")))
        w.answer(explained)
        if f is not None and "dp_size" in f.message:
            w.answer(quantity_line(w, "dp_size", r, d.judged))
    if r is None or r.ok:
        keys = [k for m in inp.errors for k in w.p.rule_facts.get(m.code, ())]
        w.bullets([w.fact(k, required=True) for k in list(dict.fromkeys(keys))[:2]], heading="why")
        return Part(report=r, judged=d.judged if d is not None else None)
    changes = fix_changes(w, d)
    w.answer(fix_line(w, d))
    # a fix of a value or two is said in the lead; a config is shown for a bigger change
    return judged_body(w, inp, d, listed={m.code for m in inp.errors}, fix_yaml=len(changes) > 2)


def _non_pp(d) -> int | None:
    """dp * cp * tp of the judged layout (the ranks EP and the experts are split over)."""
    world = d.world_size if d is not None else None
    dist = (d.judged or {}).get("distributed") if d is not None else None
    if not world or not isinstance(dist, dict):
        return world
    return max(1, world // size_of(dist, "pp_size"))


def _pasted(w: Writer, inp: ComposeInput, d, ask) -> Part:
    asks = list(inp.asks)
    said = ask in asks and any(getattr(a, "kind", None) == "verdict" for a in asks[:asks.index(ask)])
    if not said:  # a verdict ask before this one already said whether it runs
        w.answer(verdict_line(w, d, read(ask, inp.query)))
    part = judged_body(w, inp, d, sizing=True)
    r = d.report
    if r is not None and r.ok:
        dist = (d.judged or {}).get("distributed")
        pitfalls(w, features_of(dist if isinstance(dist, dict) else {}), r)
    return part


KIND = AnswerKind("diagnosis", frozenset({"validation", "errors", "plan", "retrieval"}), write)
