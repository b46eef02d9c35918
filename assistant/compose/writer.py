"""Markdown with citations, in one language: the pen every answer module writes with.

An answer is a lead (the direct answer to each ask, one short paragraph, first) and a body (the
arithmetic, the config, the reasons), then the sources. Sentences that state a kb fact come from
`phrases.yaml` and carry a citation `[n]`; computed lines carry the user's own numbers.
"""
from __future__ import annotations

import re
from typing import Sequence

from assistant.compose.citations import Citer, source_lines, with_citation
from assistant.compose.phrases import Phrases
from assistant.planner.plan import Step
from assistant.validator.report import Finding, ValidationReport

FENCE = "```"
FEATURE_ORDER = ("tp", "pp", "cp", "ep", "sp", "hsdp", "ac", "packing", "mixed_precision", "grad_sync")


class Writer:
    """One answer being written: its lead sentences, its body lines and the facts already stated."""

    def __init__(self, lang: str, phrases: Phrases, citer: Citer):
        self.lang, self.p, self.citer = lang, phrases, citer
        self.notices: list[str] = []
        self.leads: list[str] = []
        self.lines: list[str] = []
        self.uncited: list[str] = []
        self.stated: set[str] = set()
        self.shown: set[str] = set()  # code blocks already in the answer
        self.written: set[str] = set()  # paragraphs and bullet items already in the body
        self._pending: list[str] = []  # a heading waits for the first new content under it
        # characters of lead and body past which supporting bullets are left out (None: no limit); the
        # composer sets it for a question of several asks, whose direct answers are what was asked for
        self.budget: int | None = None

    # --- sentences -------------------------------------------------------------------------
    def fact(self, key: str, *, required: bool = False, section: str = "facts", **values) -> str | None:
        """The fact as a cited sentence; None when already said, or when unsupported and optional."""
        if f"{section}.{key}" in self.stated:
            return None
        f = getattr(self.p, section)[key]
        text = f.text(self.lang, **values)
        n = self.citer.cite(f.docs, f.terms, f.text(self.lang) if not values else text)
        if n is None:
            if not required:
                return None
            self.uncited.append(f"{section}.{key}")
            return text
        self.stated.add(f"{section}.{key}")
        return with_citation(text, [n])

    def computed(self, sentence: str) -> str:
        """A line computed from the user's numbers: cited to the doc that explains the rule, if any."""
        n = self.citer.cite_by_terms(sentence, self.p.cite_map)
        return with_citation(sentence, [n]) if n else sentence

    def mesh(self, report: ValidationReport) -> str:
        return mesh_text(report, no_mesh=self.say("mesh_none"))

    def step(self, s: Step) -> str:
        return self.computed(s.zh if self.lang == "zh" else s.en)

    def say(self, key: str, **values) -> str:
        return self.p.say(key, self.lang, **values)

    def finding(self, f: Finding) -> str:
        msg = f.message_zh if self.lang == "zh" else f.message
        return self.say("rule_item", code=f.code, path=f.path, message=msg.rstrip())

    @property
    def colon(self) -> str:
        return "：" if self.lang == "zh" else ": "

    @property
    def space(self) -> str:
        return "" if self.lang == "zh" else " "

    # --- the lead --------------------------------------------------------------------------
    def answer(self, sentence: str | None) -> None:
        """A direct answer to one ask: it goes into the lead paragraph, before any body."""
        if sentence and sentence not in self.leads:
            self.leads.append(sentence)

    def notice(self, sentence: str) -> None:
        self.notices.append(sentence)

    # --- blocks ------------------------------------------------------------------------------
    # Two asks of one question can reach the same module (a verdict with nothing to judge writes the
    # recommendation the recommendation ask also writes): what is already in the body is not written
    # again, and a heading is written only when something new comes under it.
    def para(self, text: str | None) -> None:
        if text and text not in self.written:
            self.written.add(text)
            self.block([text, ""])

    def heading(self, key: str, suffix: str = "") -> None:
        self._pending = [f"**{self.p.heading(key, self.lang)}**{suffix}", ""]

    def bullets(self, items: Sequence[str | None], heading: str | None = None) -> None:
        items = list(dict.fromkeys(i for i in items if i and i not in self.written))
        if self.budget is not None:
            # each item while the answer is under its budget: the first ones are the more relevant
            room, kept = self.budget - self.size(), []
            for i in items:
                if room <= 0:
                    break
                kept.append(i)
                room -= len(i) + 3
            items = kept
        if not items:
            return
        if heading:
            self.heading(heading)
        self.written.update(items)
        self.block([f"- {i}" for i in items] + [""])

    def size(self) -> int:
        """Characters of the lead and body written so far."""
        return sum(len(t) + 1 for t in self.leads + self.lines)

    def code(self, text: str, lang: str = "yaml") -> bool:
        """A fenced block, once: a second ask that would show the same config refers to the first."""
        body = text.rstrip("\n")
        if body in self.shown:
            return False
        self.shown.add(body)
        self.block([f"{FENCE}{lang}", body, FENCE, ""])
        return True

    def block(self, lines: list[str]) -> None:
        """Lines as they are (a nested list), after the heading that waits for them."""
        self.lines += self._pending + lines
        self._pending = []

    def render(self, *, sources: bool = True) -> str:
        out = [f"_{n}_" for n in self.notices]
        if out:
            out.append("")
        if self.leads:
            out += ["\n".join(self.leads), ""]
        out += self.lines
        if sources and self.citer.sources:
            out += [f"**{self.p.heading('sources', self.lang)}**", "", *source_lines(self.citer.sources), ""]
        return "\n".join(out).strip() + "\n"


# --- helpers ---------------------------------------------------------------------------------
def size_of(dist: dict, key: str) -> int:
    v = dist.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 1


def features_of(dist: dict) -> list[str]:
    """Features a `distributed:` mapping turns on, in a stable order."""
    on = {f for f, key in (("tp", "tp_size"), ("pp", "pp_size"), ("cp", "cp_size"), ("ep", "ep_size"),
                           ("hsdp", "dp_replicate_size")) if size_of(dist, key) > 1}
    if dist.get("sequence_parallel") is True:
        on.add("sp")
    if dist.get("activation_checkpointing") not in (None, False, "false", "none", "off", "no", "disabled"):
        on.add("ac")
    return [f for f in FEATURE_ORDER if f in on]


def mesh_text(report: ValidationReport, no_mesh: str = "()") -> str:
    """`(pp, dp_replicate, dp_shard, cp, tp) = (2, 1, 4, 1, 4)`; `no_mesh` when the strategy builds none (ddp)."""
    d = report.derived
    if d is None:
        return "?"
    if not d.mesh_shape:
        return no_mesh
    mesh = f"({', '.join(d.mesh_dim_names)}) = ({', '.join(map(str, d.mesh_shape))})"
    if d.moe_mesh_shape:
        mesh += f", moe_mesh (ep_shard, ep) = ({d.moe_mesh_shape[0]}, {d.moe_mesh_shape[1]})"
    return mesh


def first_sentence(text: str, limit: int = 220) -> str:
    body = " ".join(line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith(("#", "---")))
    m = re.search(r"^(.+?[.。])(\s|$)", body)
    s = (m.group(1) if m else body)[:limit]
    return s.rstrip(".。") if s else ""


def yaml_value(v: object) -> str:
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    return str(v)
