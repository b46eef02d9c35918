"""Grounding: pick the retrieved chunk that supports a sentence and number it as a citation.

Sources are the retriever's hits for the question, in rank order, followed by chunks fetched for a
specific fact (a targeted search) when no hit already supports it. A citation `[n]` is 1-based into
that list, which becomes `Answer.sources`.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, Iterable, Sequence

from assistant.retrieve.hit import Hit

# (query, doc base ids) -> candidate chunks: the engine answers from the index's chunks of those
# documents when it can, else by a targeted search with the query.
Lookup = Callable[[str, Sequence[str]], Sequence[Hit]]

_CITABLE_KINDS = {"doc", "pitfall", "faq", "example", "skill", "anchor", "code"}
_END_PUNCT = ("。", ".", "!", "?", "！", "？", ":", "：")


def base_id(doc_id: str) -> str:
    """`hsdp.zh` -> `hsdp`; ids without a language suffix stay as they are."""
    head, _, tail = doc_id.rpartition(".")
    return head if head and tail in ("en", "zh") else doc_id


def with_citation(sentence: str, numbers: Iterable[int]) -> str:
    """Put `[n]` markers before the sentence's closing punctuation."""
    marks = "".join(f"[{n}]" for n in dict.fromkeys(numbers))
    if not marks:
        return sentence
    s = sentence.rstrip()
    if s.endswith(_END_PUNCT):
        return f"{s[:-1]} {marks}{s[-1]}"
    return f"{s} {marks}"


class Citer:
    """Chooses, for a claim, the best supporting chunk among the sources (fetching one if needed)."""

    def __init__(self, hits: Sequence[Hit], lang: str, lookup: Lookup | None = None, max_lookups: int = 10):
        self.sources: list[Hit] = []
        self._ids: set[str] = set()
        for h in hits:
            self.add(h)
        self.lang = lang
        self._lookup = lookup
        self._lookups_left = max_lookups
        self.cited: set[int] = set()

    def add(self, hit: Hit) -> int:
        if hit.id in self._ids:
            return next(i for i, h in enumerate(self.sources) if h.id == hit.id)
        self.sources.append(hit)
        self._ids.add(hit.id)
        return len(self.sources) - 1

    def chunks_of(self, doc: str) -> list[Hit]:
        """Every chunk of one kb document in the answer's language, straight from the index (no
        retrieval); [] without a lookup."""
        return list(self._lookup("", [doc])) if self._lookup is not None else []

    def keep_only(self, hits: Sequence[Hit]) -> None:
        """A short answer lists only the chunks it stands on, not every retrieved one."""
        self.sources = list(hits)
        self._ids = {h.id for h in self.sources}
        self.cited = {n for n in self.cited if n <= len(self.sources)}

    def _best(self, pool: Sequence[Hit], docs: Sequence[str], terms: Sequence[str]) -> Hit | None:
        order = {d: i for i, d in enumerate(docs)}
        best, best_key = None, None
        for i, h in enumerate(pool):
            b = base_id(h.doc_id)
            if b not in order or h.kind not in _CITABLE_KINDS:
                continue
            text = h.text.lower()
            key = (h.lang == self.lang, sum(t.lower() in text for t in terms), -order[b], -i)
            if best_key is None or key > best_key:
                best, best_key = h, key
        return best

    def cite(self, docs: Sequence[str], terms: Sequence[str] = (), query: str = "") -> int | None:
        """1-based citation number of the chunk that supports the claim, or None when nothing does."""
        if not docs:
            return None
        hit = self._best(self.sources, docs, terms)
        if self._needs_better(hit, terms) and self._lookup and self._lookups_left > 0:
            self._lookups_left -= 1
            found = self._best(list(self._lookup(query, docs)), docs, terms)
            if found is not None and (hit is None or self._key(found, terms) > self._key(hit, terms)):
                hit = found
        if hit is None:
            return None
        n = self.add(hit) + 1
        self.cited.add(n)
        return n

    def _key(self, h: Hit, terms: Sequence[str]) -> tuple:
        text = h.text.lower()
        return (h.lang == self.lang, sum(t.lower() in text for t in terms))

    def _needs_better(self, hit: Hit | None, terms: Sequence[str]) -> bool:
        """No support yet, support in the other language, or a chunk that names none of the terms."""
        if hit is None or hit.lang != self.lang:
            return True
        return bool(terms) and self._key(hit, terms)[1] == 0

    def cite_by_terms(self, sentence: str, cite_map: dict[str, Sequence[str]]) -> int | None:
        """For computed lines (arithmetic, planner rationale): cite via the identifiers they mention."""
        docs: list[str] = []
        terms: list[str] = []
        for term, term_docs in cite_map.items():
            if _mentions(sentence, term):
                terms.append(term)
                docs.extend(d for d in term_docs if d not in docs)
        if not docs:
            return None
        return self.cite(docs, [t for t in terms if "_" in t], sentence)


def _mentions(sentence: str, term: str) -> bool:
    if not term.isascii():
        return term in sentence
    return _term_pattern(term).search(sentence) is not None


@lru_cache(maxsize=None)
def _term_pattern(term: str) -> re.Pattern:
    """Compiled once per glossary term (a bounded set): built per sentence they thrashed re's cache."""
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(term)}(?![A-Za-z0-9_])")


def source_lines(sources: Sequence[Hit]) -> list[str]:
    """`[n] title — path › heading`; a second chunk under the same heading is marked `(part 2)`."""
    seen: dict[tuple[str, str], int] = {}
    out = []
    for i, h in enumerate(sources, 1):
        key = (h.path, h.heading)
        seen[key] = seen.get(key, 0) + 1
        where = f"`{h.path}`" + (f" › {h.heading}" if h.heading and h.heading != h.title else "")
        if seen[key] > 1:
            where += f" (part {seen[key]})"
        out.append(f"[{i}] {h.title} — {where}")
    return out
