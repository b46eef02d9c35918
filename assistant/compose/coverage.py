"""Every ask covered: after an ask's module has written, the ask must have a direct statement in the
lead, a sentence that speaks about what the ask asks (its quantity's target, the field or size it
names), not merely some lead. When it has none (or the ask is `unknown`: no kind read with
confidence), the answer says plainly what Meshwise cannot tell from its sources and cites the closest
kb section, instead of letting a neighbouring answer stand in for it.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from assistant.compose.citations import with_citation
from assistant.compose.writer import Writer
from assistant.datafile import read_yaml
from assistant.retrieve.hit import Hit
from assistant.understand.cues import same_clause
from assistant.validator.fields import field_table

_SECTION_KINDS = ("doc", "pitfall", "faq")
_MAX_CLAUSE = 120
_TERMS_PATH = Path(__file__).with_name("coverage.yaml")
# a target that names the field it is about: "values:pp_size" (its allowed values), "solve:local_batch_size"
_FIELD_PREFIXES = ("values:", "solve:")


@lru_cache(maxsize=1)
def _target_terms() -> dict[str, tuple[str, ...]]:
    return {k: tuple(str(t).lower() for t in v or ()) for k, v in read_yaml(_TERMS_PATH)["targets"].items()}


def ask_terms(ask) -> tuple[str, ...]:
    """The words a lead sentence about this ask names: its quantity target's (coverage.yaml), the field
    a `values:`/`solve:` target or a fact's or verdict's identifier names, the size keys of a layout it
    is asked on (`ep_size=16`); () when the ask names nothing a lead could be checked against."""
    target = ask.target or getattr(ask, "borrowed", None) or ""
    for prefix in _FIELD_PREFIXES:
        if target.startswith(prefix):
            return (target[len(prefix):].lower(),)
    if ask.kind == "quantity":
        return _target_terms().get(target, ())
    if "=" in target:  # a verdict on other sizes: "ep_size=16,pp_size=2"
        return tuple(dict.fromkeys(part.split("=")[0].strip().lower() for part in target.split(",") if "=" in part))
    if target and "_" in target and " " not in target and target != "advice":
        # a field the fact or verdict is about; "ep_shard_size" is stated as ep_shard
        key = target.lower()
        stem = key.removesuffix("_size")
        return (key,) + ((stem,) if stem != key and "_" in stem else ())
    return ()


def speaks_about(sentence: str, terms: Sequence[str]) -> bool:
    """The lead sentence names one of the ask's words, or one of the option fields among them by any of
    its spellings ("激活检查点" is activation_checkpointing); any sentence does when the ask names none."""
    text = sentence.lower()
    if not terms or any(t in text for t in terms):
        return True
    return any(r.key.lower() in terms for r in field_table().mentioned(sentence))


def closest_section(sources: list[Hit], lang: str) -> Hit | None:
    """The best-ranked kb section retrieved for the question, in the answer's language first."""
    kb = [h for h in sources if h.kind in _SECTION_KINDS]
    return next((h for h in kb if h.lang == lang), None) or (kb[0] if kb else None)


def cannot_tell(w: Writer, clause: str) -> None:
    """The plain "cannot tell" lead for one ask, with the closest section cited."""
    clause = " ".join(clause.split())
    if len(clause) > _MAX_CLAUSE:
        clause = clause[:_MAX_CLAUSE].rstrip() + "…"
    hit = closest_section(w.citer.sources, w.lang)
    if hit is None:
        w.answer(w.say("cannot_tell", clause=clause))
        return
    n = w.citer.add(hit) + 1
    w.citer.cited.add(n)
    section = hit.heading or hit.title
    w.answer(with_citation(w.say("cannot_tell_closest", clause=clause, section=section), [n]))


# a failing start-up check as the leads state it: on a layout that does not start, the number asked does
# not exist, and the failure is the answer ("40 GPUs, tp 8 pp 2: what's dp_size?")
_FAILED_CHECK = re.compile(r"`MW-E-[A-Z0-9-]+`")
# the kinds whose answer is the body their module writes (the config, the recommended layout and its
# fields), under a lead another ask may have given
_BODY_KINDS = frozenset({"config", "recommendation"})


def covered(before: tuple[int, int], w: Writer, ask, earlier: Sequence = ()) -> bool:
    """Whether the ask just written has a direct statement in the lead: a lead sentence its own module
    put there that speaks about it (a number's must name the number asked), or, for an ask that names a
    target, any lead sentence that names it ("what are dp_size and ep_shard?" is two quantities, and the
    first one's module may state both). Never merely some lead: a lead another ask of the same clause
    wrote covers an ask that is no number ("moe 子配置有哪些字段, 什么时候生效"), a number only by naming
    it or by a failing check that leaves it undefined. An `unknown` ask is never covered by a module.
    A diagnosis is the look every pasted config, log or quoted error gets, asked or not: its findings
    are the body, under whatever lead judged the same text, so any lead speaks for it; so does any lead
    for a verdict on the user's own layout, and for a config or recommendation whose module wrote its
    config into the body."""
    if ask.kind == "unknown":
        return False
    leads, lines = before
    terms = ask_terms(ask)
    own = w.leads[leads:]
    if any(ask.kind != "quantity" or speaks_about(s, terms) for s in own):
        return True
    if ask.kind != "quantity" and w.ask_index in w.answered:
        return True  # its lead is one an earlier ask already wrote, word for word
    if ask.kind == "diagnosis" or ask.kind == "verdict" and not ask.target:
        # a verdict on the user's own layout writes nothing only when that layout was judged already
        # ("Why does this fail?" over a pasted error: the diagnosis's lead judged it)
        return bool(w.leads)
    if ask.kind in _BODY_KINDS and w.leads and len(w.lines) > lines:
        return True
    if ask.kind != "quantity" and w.leads and any(same_clause(ask, e) for e in earlier):
        return True
    if ask.kind == "quantity" and any(_FAILED_CHECK.search(s) for s in w.leads):
        return True
    return bool(terms) and any(speaks_about(s, terms) for s in w.leads[:leads])
