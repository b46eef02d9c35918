"""Markdown with citations, in one language: the pen every answer module writes with.

An answer is a lead (the direct answer to each ask, one short paragraph, first) and a body (the
arithmetic, the config, the reasons), then the sources. Sentences that state a kb fact come from
`phrases.yaml` and carry a citation `[n]`; computed lines carry the user's own numbers.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from assistant.compose.citations import Citer, source_lines, with_citation
from assistant.compose.phrases import Phrases
from assistant.planner.plan import Step
from assistant.understand.query import FEATURES as FEATURE_ORDER  # noqa: F401 - the order answers list features in
from assistant.validator.report import Finding, ValidationReport

FENCE = "```"


@dataclass
class Segment:
    """One block of the body as it was written, so compose/budget.py can drop it whole (or a bullet
    list item by item) when the answer is over its budget: the heading it opened (`section`, its lines in
    `head`), its shape (para, bullets, code, block), the ask it answers (`ask`, an index into the asks)
    and the kind of the module that wrote it (`kind`, after any handoff)."""
    lines: list[str]
    section: str | None = None
    head: list[str] = field(default_factory=list)
    shape: str = "block"
    ask: int = -1
    kind: str = ""
    items: list[str] = field(default_factory=list)  # a bullet list's items, in order
    dropped: bool = False

    def render(self) -> list[str]:
        if self.dropped:
            return []
        if self.shape == "bullets":
            return self.head + [f"- {i}" for i in self.items] + [""] if self.items else []
        return self.head + self.lines


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
        self._pending_key: str | None = None
        # which ask, and which kind's module, is writing now (set by offline.compose and answers.write):
        # each lead and each body segment remembers them, for the budget
        self.ask_index, self.kind = -1, ""
        self.lead_asks: list[int] = []
        self.answered: set[int] = set()  # the asks whose module gave a lead, one already there included
        self.segments: list[Segment] = []

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

    def features(self, keys: Sequence[str]) -> str:
        """Parallelism features by their names in the answer's language, as a list ("TP, CP" / "TP、CP")."""
        return ("、" if self.lang == "zh" else ", ").join(self.p.feature(f, self.lang) for f in keys)

    def keep_leads(self, keep: Sequence[int]) -> None:
        """Only these lead sentences stay (indices, in order), each with the ask it answers."""
        self.leads[:] = [self.leads[i] for i in keep]
        self.lead_asks[:] = [self.lead_asks[i] for i in keep]

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
        if sentence:
            self.answered.add(self.ask_index)  # a second ask answered by the same sentence is answered too
        if sentence and sentence not in self.leads:
            self.leads.append(sentence)
            self.lead_asks.append(self.ask_index)

    def notice(self, sentence: str) -> None:
        self.notices.append(sentence)

    # --- blocks ------------------------------------------------------------------------------
    # Two asks of one question can reach the same module (a verdict with nothing to judge writes the
    # recommendation the recommendation ask also writes): what is already in the body is not written
    # again, and a heading is written only when something new comes under it.
    def para(self, text: str | None) -> None:
        if text and text not in self.written:
            self.written.add(text)
            self.block([text, ""], shape="para")

    def heading(self, key: str, suffix: str = "") -> None:
        self._pending = [f"**{self.p.heading(key, self.lang)}**{suffix}", ""]
        self._pending_key = key

    def bullets(self, items: Sequence[str | None], heading: str | None = None) -> None:
        items = list(dict.fromkeys(i for i in items if i and i not in self.written))
        if not items:
            return
        if heading:
            self.heading(heading)
        self.written.update(items)
        self.block([f"- {i}" for i in items] + [""], shape="bullets", items=items)

    def code(self, text: str, lang: str = "yaml") -> bool:
        """A fenced block, once: a second ask that would show the same config refers to the first."""
        body = text.rstrip("\n")
        if body in self.shown:
            return False
        self.shown.add(body)
        self.block([f"{FENCE}{lang}", body, FENCE, ""], shape="code")
        return True

    def block(self, lines: list[str], *, shape: str = "block", items: Sequence[str] = ()) -> None:
        """Lines as they are (a nested list), after the heading that waits for them."""
        self.lines += self._pending + lines
        self.segments.append(Segment(list(lines), self._pending_key if self._pending else None, self._pending,
                                     shape, self.ask_index, self.kind, list(items)))
        self._pending, self._pending_key = [], None

    def body_lines(self) -> list[str]:
        """The body as it stands after any trimming (compose/budget.py marks segments dropped)."""
        return [line for s in self.segments for line in s.render()]

    def render(self, *, sources: bool = True) -> str:
        out = [f"_{n}_" for n in self.notices]
        if out:
            out.append("")
        if self.leads:
            out += ["\n".join(self.leads), ""]
        out += self.body_lines()
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


def sizes_text(pairs: Sequence[str]) -> str:
    """Sizes an ask puts instead (`Ask.layout` pairs, "tp_size=2") as the answers quote them: `tp_size: 2`, ..."""
    return ", ".join(f"`{kv.replace('=', ': ')}`" for kv in pairs)


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
