"""Location: where a check, a class or an error lives in the upstream code, from the code anchors."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import yaml

from assistant.compose.knowledge.anchors import Anchor, anchor_of
from assistant.compose.answers.base import AnswerKind, ComposeInput, Part
from assistant.compose.citations import with_citation
from assistant.compose.writer import Writer, first_sentence
from assistant.datafile import SAFE_LOADER
from assistant.retrieve.hit import Hit
from assistant.understand.cues import read
from assistant.validator.upstream_errors import UpstreamErrorMatch, match_upstream_error, quoted_rules

_MAX_CODE_ANCHORS = 3
_MAX_CODE_FACTS = 1
_MAX_WHAT_CHARS = 160  # an anchor's summary, to its first sentence: the rest is in the cited chunk


def _chunk_anchor_fields(h: Hit, lang: str) -> tuple[str, list[str], str]:
    """(path, symbols, first sentence) of a code chunk, or of an anchor chunk missing from the table."""
    data = None
    if h.kind == "anchor" and len(h.text) < 16_000:
        try:
            data = yaml.load(h.text, Loader=SAFE_LOADER)  # noqa: S506 - a safe loader
        except yaml.YAMLError:
            data = None
    if isinstance(data, dict) and isinstance(data.get("summary"), str):
        summary = data.get("summary_zh") if lang == "zh" and isinstance(data.get("summary_zh"), str) else data["summary"]
        return str(data.get("path") or h.path), [str(s) for s in data.get("symbols") or []], first_sentence(summary)
    # a chunk's text is not a record: name only what it shows in backticks, say nothing it does not state
    symbols = re.findall(r"`([A-Za-z_][\w.]*(?:\(\))?)`", h.text)[:4] if h.kind == "code" else []
    return h.path, symbols, first_sentence(h.text) if h.kind == "code" else ""


@dataclass(frozen=True)
class CodeEntry:
    hit: Hit
    path: str
    symbols: tuple[str, ...]
    what: str
    anchor: Anchor | None = None


def code_entries(inp: ComposeInput, lang: str) -> list[CodeEntry]:
    """One entry per anchor (a long anchor comes back as several chunks), in retrieval order."""
    out: list[CodeEntry] = []
    seen: set[str] = set()
    for h in inp.anchors:
        if h.kind not in ("anchor", "code"):
            continue
        a = anchor_of(h, inp.code_anchors)
        key = a.id if a else h.doc_id
        if key in seen:
            continue
        seen.add(key)
        if a is not None:
            out.append(CodeEntry(h, a.path, a.symbols, a.what(lang), a))
        else:
            path, symbols, what = _chunk_anchor_fields(h, lang)
            if symbols or what:
                out.append(CodeEntry(h, path, tuple(symbols), what))
    # An anchor that names an identifier from the question ("global_batch_size", "MeshContext") is
    # the answer, whatever its rank; anchors about the question's topics come next, and when there
    # are a few of those the others are noise.
    named = set(read(inp.query).identifiers)
    strategies = {r.key for r in read(inp.query).fields if r.is_strategy_name}
    topics = set(inp.query.topics)
    # a quoted message ("which file raises 'must be >= pp_size'?") is found in the anchor that states it
    quoted = list(read(inp.query).quoted_messages)

    def names(e: CodeEntry) -> int:
        text = (e.anchor.text if e.anchor is not None else " ".join((e.path, *e.symbols, e.what))).lower()
        said = re.sub(r"\s+", " ", text)
        # "which function builds the megatron_fsdp mesh?": a symbol that carries the name is that function
        in_symbol = sum(any(n in s.lower() for s in e.symbols) for n in named | strategies if len(n) > 2)
        return sum(n in text for n in named) + 2 * in_symbol + \
            sum(3 * (q in said) or _shared_operators(q, said) for q in quoted)

    def on_topic(e: CodeEntry) -> bool:
        return names(e) > 0 or (e.anchor is not None and bool(topics & set(e.anchor.topics)))

    out = sorted(out, key=lambda e: -names(e))  # stable: retrieval order otherwise
    relevant = [e for e in out if on_topic(e)]
    if len(relevant) >= 2:
        out = relevant
    return out[:_MAX_CODE_ANCHORS]


def _shared_operators(quoted: str, text: str) -> int:
    """`>= pp_size` from a quoted message inside an anchor's summary: the comparison it states."""
    parts = re.findall(r"[<>=!]=?\s*\w+|\w+_\w+", quoted)
    return 2 if parts and all(p in text for p in parts) else 0


def entry_text(w: Writer, e: CodeEntry, *, alone: bool) -> str:
    n = w.citer.add(e.hit) + 1
    w.citer.cited.add(n)
    syms = ", ".join(f"`{s}`" for s in dict.fromkeys(e.symbols[:3]))
    what = first_sentence(e.what, _MAX_WHAT_CHARS) if e.what else ""
    if alone:
        text = w.say("code_item", path=e.path, symbols=(" — " + syms) if syms else "", what=what)
    else:
        text = w.say("code_symbol_item", symbols=syms or f"`{e.path}`", what=what)
    return with_citation(text.rstrip(": ：") if not e.what else text, [n])


def code_lines(w: Writer, entries: Sequence[CodeEntry]) -> list[str]:
    """A file per bullet; when one file holds several of the anchors, its symbols are nested under it."""
    by_path: dict[str, list[CodeEntry]] = {}
    for e in entries:
        by_path.setdefault(e.path, []).append(e)
    lines: list[str] = []
    for path, group in by_path.items():
        if len(group) == 1:
            lines.append(f"- {entry_text(w, group[0], alone=True)}")
        else:
            lines.append(f"- `{path}`")
            lines += [f"  - {entry_text(w, e, alone=False)}" for e in group]
    return lines


def _raising_rule(inp: ComposeInput, ask) -> UpstreamErrorMatch | None:
    """The validator rule whose upstream message the question quotes, with or without its numbers:
    its upstream file and function are where that error is raised (rules_table.yaml, one place)."""
    text = getattr(ask, "text", "") or inp.query.text
    for t in dict.fromkeys((text, inp.query.text)):
        found = match_upstream_error(t) or quoted_rules(t)
        if found:
            return found[0]
    return None


def _raised_here(w: Writer, inp: ComposeInput, rule: UpstreamErrorMatch) -> bool:
    """"Where is 'X' raised?": the file and function first, cited by their code anchor when one was
    retrieved; the other anchors are not the answer and are left out."""
    parts = rule.upstream.split()
    path = parts[0] if parts else ""
    symbol = parts[1].split("(")[0] if len(parts) > 1 and re.match(r"[A-Za-z_][\w.]*$", parts[1]) else ""
    if not path or not symbol:
        return False  # a file alone ("config.py {dataclass}") is less than the anchors can say
    text = w.say("code_raises", path=path, symbol=symbol, code=rule.code)
    entry = next((e for e in code_entries(inp, w.lang) if e.path.endswith(path.removeprefix("nemo_automodel/"))
                  and (not symbol or symbol in e.symbols)), None)
    if entry is not None:
        n = w.citer.add(entry.hit) + 1
        w.citer.cited.add(n)
        what = first_sentence(entry.what, _MAX_WHAT_CHARS) if entry.what else ""
        text = with_citation(text + (w.space + what if what else ""), [n])
    w.answer(text)
    return True


def write(w: Writer, inp: ComposeInput, ask) -> Part:
    rule = _raising_rule(inp, ask)
    if rule is not None and _raised_here(w, inp, rule):
        return Part()
    entries = code_entries(inp, w.lang)
    if entries:
        first, rest = entries[0], entries[1:]
        w.answer(entry_text(w, first, alone=True))
        if rest:
            w.block(code_lines(w, rest) + [""])
    else:
        w.answer(w.say("code_none"))
    topics = inp.query.topics
    defaults = [k for t in topics for k in w.p.code_topic_facts.get(t, ())]
    pool = set(defaults) | {k for t in topics for section in (w.p.topic_facts, w.p.limitations) for k in section.get(t, ())}
    cued = w.p.cued(read(inp.query), pool)
    # what the located code checks, in one fact, when the places themselves leave room for it
    room = _MAX_CODE_FACTS if len(entries) < _MAX_CODE_ANCHORS or cued else 0
    facts = [f for f in (w.fact(k) for k in dict.fromkeys(cued + defaults)) if f][:room]
    w.bullets(facts, heading="background")
    return Part()


KIND = AnswerKind("location", frozenset({"retrieval", "anchors"}), write)
