"""The answer's length budget: each ask's direct statement always stays; what supports it goes first
when the body is longer than the asks warrant (issue 18: long real-user messages got answers that
buried the direct answers under every retrieved paragraph, pitfall and config).

The budget and the order in which roles are trimmed are data (budget.yaml); this module only measures
and drops. It runs after every ask is written and before the text is rendered, so coverage (each ask
has its lead) is decided on what was written, and a trimmed lead is never an ask's first. Citation
numbers are untouched: every `[n]` left in the text still points at the same source.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import yaml

from assistant.compose.writer import Segment, Writer
from assistant.understand.cues import read, read_prose, words
from assistant.understand.query import SIZE_KEYS

BUDGET_PATH = Path(__file__).with_name("budget.yaml")
YAML_UNASKED = "yaml_unasked"
_EVERYWHERE = frozenset({"strategy", "fsdp2"})


@dataclass(frozen=True)
class Budget:
    base: dict[str, int]
    per_ask: dict[str, dict[str, int]]
    yaml_asked_kinds: frozenset[str]
    trim: tuple[str, ...]
    later: dict[str, dict[str, int]] = field(default_factory=dict)
    min_shared: int = 3
    min_share: dict[str, float] = field(default_factory=lambda: {"en": 0.5, "zh": 0.5})
    stopwords: frozenset[str] = frozenset()
    keep_items: dict[str, int] = field(default_factory=dict)
    min_asks: dict[str, int] = field(default_factory=dict)
    later_share: float = 1.0
    lead_max: dict[str, int] = field(default_factory=dict)
    min_asks_mixed: dict[str, int] = field(default_factory=dict)
    lead_parts: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path = BUDGET_PATH) -> "Budget":
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        rel = raw.get("relevance") or {}
        return cls(raw["base"], raw["per_ask"], frozenset(raw["yaml_asked_kinds"]), tuple(raw["trim"]),
                   raw.get("later") or {}, int(rel.get("min_shared", 3)),
                   {k: float(v) for k, v in (rel.get("min_share") or {"en": 0.5, "zh": 0.5}).items()},
                   frozenset(str(w).lower() for w in rel.get("stopwords", ())), dict(raw.get("keep_items") or {}),
                   dict(raw.get("min_asks") or {}), float(raw.get("later_share", 1.0)),
                   {k: int(v) for k, v in (raw.get("lead_max") or {}).items()},
                   dict(raw.get("min_asks_mixed") or {}),
                   {k: {lang: tuple(str(x) for x in m) for lang, m in v.items()} for k, v in (raw.get("lead_parts") or {}).items()})

    def allowance(self, asks: Sequence, lang: str) -> int:
        """Characters the body may take for these asks (before any YAML that stays). Asks read from
        one clause ("what are dp_size and ep_shard?" is two quantities) share that clause's allowance:
        the largest of their kinds'."""
        lang = lang if lang in self.base else "en"
        fallback = self.per_ask["unknown"]
        by_clause: dict[str, int] = {}
        for i, a in enumerate(asks):
            table = self.later if i and a.kind in self.later else self.per_ask
            n = table.get(a.kind, fallback)[lang]
            by_clause[a.text] = max(n, by_clause.get(a.text, 0))
        first, *rest = list(by_clause.values()) or [0]
        return int(self.base[lang] + first + self.later_share * sum(rest))


@lru_cache(maxsize=1)
def budget() -> Budget:
    return Budget.load()


def role(seg: Segment, asks: Sequence, b: Budget) -> str:
    """What a body segment is, in budget.yaml's `trim` vocabulary."""
    if seg.shape == "code":
        ask = asks[seg.ask] if 0 <= seg.ask < len(asks) else None
        # a recommendation after a verdict is the replacement for the judged layout: its config is the fix
        replaces = seg.kind == "recommendation" and any(a.kind == "verdict" for a in asks[:max(seg.ask, 0)])
        asked = seg.kind in b.yaml_asked_kinds or seg.ask == 0 or replaces or (ask is not None and read(ask).requests_yaml)
        return "yaml_asked" if asked else YAML_UNASKED
    return seg.section or f"{seg.shape}.{seg.kind}"


def _body_len(w: Writer) -> int:
    return len(w.render(sources=False).rstrip())


def _matches(entry: str, seg: Segment, asks: Sequence, b: Budget) -> bool:
    """A `trim` entry names a role, a role as one kind wrote it, or a role as a later ask wrote it."""
    r = role(seg, asks, b)
    return entry in (r, f"{r}.{seg.kind}") or (entry == f"{r}.later" and seg.ask > 0)


def dropped_code(w: Writer) -> str:
    """The code blocks the budget took out, as one text (to tell whether a config left the answer)."""
    return "\n".join("\n".join(s.lines) for s in w.segments if s.dropped and s.shape == "code")


def named_fields(query) -> frozenset[str]:
    """The option fields and strategies the user's own prose names (`sequence_parallel`, `megatron_fsdp`):
    a supporting sentence about one of them answers what was asked, so the budget keeps it. Sizes are
    answered by the leads' arithmetic, and `strategy` and the default `fsdp2` are named by nearly every
    message; none of them counts."""
    if query is None:
        return frozenset()
    return frozenset(r.key for r in read_prose(query).fields
                     if r.key not in SIZE_KEYS and r.key not in _EVERYWHERE)


def _protected(text: str, keys: frozenset[str], clauses: Sequence[frozenset[str]], b: Budget, lang: str) -> bool:
    """A named field or strategy, or enough of one ask clause's words (budget.yaml `relevance`)."""
    if any(k in text for k in keys):
        return True
    mine = words(text) - b.stopwords
    share = b.min_share.get(lang, b.min_share.get("en", 0.5))
    for c in clauses:
        shared = len(mine & c)
        if shared >= b.min_shared and shared >= share * len(c):
            return True
    return False


# a validator rule code as the answers write it: `MW-W-CP-PACKING-SDPA`
_RULE_CODE = re.compile(r"`(MW-[EW]-[A-Z0-9-]+)`")
RESTATED = "restated"
LEAD_PART = "lead."  # a trim entry "lead.<part>" cuts that part out of a lead sentence (budget.yaml lead_parts)


def _mesh_sentence(w: Writer) -> re.Pattern[str]:
    """The lead that states only the device mesh ("The device mesh is (pp, ...) = (...)."), as a pattern
    of the phrase itself, the mesh text its one group."""
    template = re.escape(w.say("q_mesh", mesh="\x00")).replace(re.escape("\x00"), "(?P<mesh>.+)")
    return re.compile(rf"{template}(?:\s*\[\d+(?:,\s*\d+)*\])?")


def drop_repeated_mesh(w: Writer) -> int:
    """Drop each lead sentence that only states a device mesh another lead sentence already states (a
    verdict's "mesh (pp, ...) = (1, 1, 16, 1, 1)" and a quantity's "The device mesh is ..." say the same
    tuple); never an ask's first lead. Returns how many went."""
    pattern = _mesh_sentence(w)
    keep: list[int] = []
    for i, lead in enumerate(w.leads):
        m = pattern.fullmatch(lead)
        first_of_its_ask = w.lead_asks[i] not in w.lead_asks[:i]
        said_elsewhere = m is not None and any(m.group("mesh") in other for j, other in enumerate(w.leads)
                                               if j != i and (j in keep or j > i))
        if first_of_its_ask or not said_elsewhere:
            keep.append(i)
    gone = len(w.leads) - len(keep)
    w.keep_leads(keep)
    return gone


def fit_lead(w: Writer, b: Budget) -> list[str]:
    """When several asks share the lead paragraph and it is longer than `lead_max`, the device mesh a
    number's module states beside it ("The device mesh is ...", never an ask's first statement) moves,
    the earliest first, to a paragraph opening the body, until the lead fits: it is context for the
    numbers, and it pushed the later asks' direct statements down. Nothing is lost, and the moved
    paragraph is never trimmed. Returns the sentences moved."""
    limit = b.lead_max.get(w.lang, b.lead_max.get("en", 0))
    if not limit or len(set(w.lead_asks)) < 2:
        return []
    pattern = _mesh_sentence(w)
    extra = [i for i, a in enumerate(w.lead_asks) if a in w.lead_asks[:i] and pattern.fullmatch(w.leads[i])]
    moved: set[int] = set()
    for i in extra:
        if len("\n".join(s for j, s in enumerate(w.leads) if j not in moved)) <= limit:
            break
        moved.add(i)
    if not moved:
        return []
    out = [w.leads[i] for i in sorted(moved)]
    w.segments.insert(0, Segment(["\n".join(out), ""], shape="para", ask=w.lead_asks[min(moved)], kind="lead"))
    w.keep_leads([i for i in range(len(w.leads)) if i not in moved])
    return out


def cut_lead_part(w: Writer, part: Sequence[str]) -> bool:
    """Cut one supporting part out of the lead sentences that carry it: from its opening words (the
    first of `part`) up to, not including, the nearest of the words that may follow it (the rest)
    (budget.yaml `lead_parts`: the memory estimate's basis, its other options). The sentence's
    verdict, numbers, rule code and fix stay. Returns whether any went."""
    start, ends = part[0], part[1:]
    cut = False
    for i, lead in enumerate(w.leads):
        a = lead.find(start)
        found = [b for b in (lead.find(e, a + len(start)) for e in ends) if b > a] if a >= 0 else []
        if found:
            w.leads[i] = lead[:a] + lead[min(found):]
            cut = True
    return cut


def _restated(item: str, lead: str) -> bool:
    """A body item that reports a rule finding the lead already states (the same rule code)."""
    return any(code in lead for code in _RULE_CODE.findall(item))


def trim(w: Writer, asks: Sequence, query=None, b: Budget | None = None) -> list[str]:
    """Drop supporting material in budget order until the body fits; returns the roles trimmed. A lead
    sentence that repeats another's mesh goes whatever the length; a lead of several asks too long for
    `lead_max` moves the mesh lines beside their numbers into the body (fit_lead)."""
    b = b or budget()
    drop_repeated_mesh(w)
    fit_lead(w, b)
    keys = named_fields(query)
    clauses = [c for c in dict.fromkeys(read(a).words - b.stopwords for a in asks) if c]
    limit = b.allowance(asks, w.lang)
    kept_yaml = sum(len("\n".join(s.lines)) for s in w.segments if s.shape == "code"
                    and role(s, asks, b) == "yaml_asked")
    limit += kept_yaml
    if _body_len(w) <= limit:
        return []
    trimmed: list[str] = []
    n_clauses = len({a.text for a in asks})
    lead = "\n".join(w.leads)
    mixed = len({a.kind for a in asks}) > 1
    for r in b.trim:
        if n_clauses < b.min_asks.get(r, 0) and not (mixed and n_clauses >= b.min_asks_mixed.get(r, n_clauses + 1)):
            continue
        if r.startswith(LEAD_PART):
            part = b.lead_parts.get(r[len(LEAD_PART):], {}).get(w.lang)
            if part and cut_lead_part(w, part):
                trimmed.append(r)
                if _body_len(w) <= limit:
                    return trimmed
            continue
        if r == RESTATED:
            # a warning the lead already gives, with its rule code, said again in the body
            for seg in (s for s in w.segments if not s.dropped and s.shape == "bullets"):
                for i in reversed([i for i, item in enumerate(seg.items) if _restated(item, lead)]):
                    del seg.items[i]
                    trimmed.append(r)
                    if _body_len(w) <= limit:
                        return trimmed
            continue
        # the last ask's material first: the first ask is usually the one the message is about
        for seg in sorted((s for s in w.segments if not s.dropped and _matches(r, s, asks, b)),
                          key=lambda s: -s.ask):
            if seg.shape == "bullets":
                keep = b.keep_items.get(r, 0)
                for i in reversed([i for i, item in enumerate(seg.items)
                                   if i >= keep and not _protected(item, keys, clauses, b, w.lang)]):
                    del seg.items[i]
                    trimmed.append(r)
                    if _body_len(w) <= limit:
                        return trimmed
            elif seg.shape == "para" and _protected("\n".join(seg.lines), keys, clauses, b, w.lang):
                continue
            else:
                seg.dropped = True
                trimmed.append(r)
                if _body_len(w) <= limit:
                    return trimmed
    return trimmed
