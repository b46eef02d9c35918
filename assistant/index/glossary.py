"""Glossary query expansion: a Chinese question gains the English terms of the domain words it uses.

MiniLM and BM25 cannot match 张量并行 against an English chunk about tensor parallelism; appending
"tensor parallelism tp_size" to the query lets them. The glossary (`kb/glossary.yaml`) is data:
entries with a `zh` list and an `en` list.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Iterator

from assistant.datafile import read_yaml
from assistant.memo import per_question

GLOSSARY_MAX_BYTES = 1024 * 1024
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# Chinese characters plus CJK and full-width punctuation: what an English-only encoder cannot read.
_NON_LATIN = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


def query_lang(text: str) -> str:
    """"zh" when the text contains Chinese characters; identifiers alone do not make it English."""
    return "zh" if has_cjk(text) else "en"


@dataclass(frozen=True)
class GlossaryEntry:
    zh: tuple[str, ...]
    en: tuple[str, ...]


@dataclass(frozen=True)
class Glossary:
    entries: tuple[GlossaryEntry, ...] = ()

    @property
    def zh_terms(self) -> list[str]:
        return sorted({t for e in self.entries for t in e.zh})

    @cached_property
    def _by_first_char(self) -> dict[str, list[tuple[str, GlossaryEntry]]]:
        index: dict[str, list[tuple[str, GlossaryEntry]]] = {}
        for e in self.entries:
            for t in e.zh:
                index.setdefault(t[0], []).append((t, e))
        for terms in index.values():
            terms.sort(key=lambda te: -len(te[0]))
        return index

    def _scan(self, text: str) -> Iterator[tuple[int, int, GlossaryEntry | None]]:
        """(start, end, entry) spans: a glossary term (leftmost-longest, non-overlapping, so 张量并行
        is one term and not also 并行) or, with entry None, one character of other text."""
        index = self._by_first_char
        i = 0
        while i < len(text):
            for term, entry in index.get(text[i], ()):
                if text.startswith(term, i):
                    yield i, i + len(term), entry
                    i += len(term)
                    break
            else:
                yield i, i + 1, None
                i += 1

    def matches(self, text: str) -> list[GlossaryEntry]:
        """Entries whose Chinese terms occur in the text, in order of first occurrence."""
        found: list[GlossaryEntry] = []
        for _, _, e in self._scan(text):
            if e is not None and e not in found:
                found.append(e)
        return found

    # Per question (assistant/memo.py): understanding, the MiniLM prefetch and each search expand the
    # same text, and each search asks whether the English-only channel can read it.
    @per_question(key=lambda self, query: (id(self), query))
    def expand(self, query: str) -> str:
        """The query followed by the English terms of the glossary entries it mentions (for BM25)."""
        if not has_cjk(query):
            return query
        extra: list[str] = []
        lowered = query.lower()
        for e in self.matches(query):
            for t in e.en:
                if t.lower() not in lowered and t not in extra:
                    extra.append(t)
        return f"{query} {' '.join(extra)}" if extra else query

    @per_question(key=lambda self, text: (id(self), text))
    def to_english(self, text: str) -> str:
        """Chinese text as an English-only encoder can read it: a glossary term becomes its entry's
        first (canonical) English term, identifiers and other Latin text stay, remaining Chinese
        characters are dropped. Applied alike to queries and to Chinese chunks."""
        if not has_cjk(text):
            return text
        out: list[str] = []
        for start, end, entry in self._scan(text):
            if entry is not None:
                out.append(f" {entry.en[0]} ")
            elif _NON_LATIN.match(text, start):
                if out and out[-1] != " ":
                    out.append(" ")
            else:
                out.append(text[start:end])
        return re.sub(r"[ \t]+", " ", "".join(out)).strip()


def encoder_view(text: str, english_only: bool, glossary: Glossary) -> str:
    """The text a dense channel embeds: English-only channels get Chinese through the glossary."""
    return glossary.to_english(text) if english_only and has_cjk(text) else text


def _as_tuple(v) -> tuple[str, ...]:
    if v is None:
        return ()
    if isinstance(v, str):
        return (v.strip(),) if v.strip() else ()
    if isinstance(v, (list, tuple)):
        return tuple(str(x).strip() for x in v if x is not None and str(x).strip())
    return (str(v),)


def parse_glossary(data) -> Glossary:
    """Accepts a list of entries or a mapping holding one (`entries:`/`terms:`/`glossary:`)."""
    items = data
    if isinstance(data, dict):
        items = next((data[k] for k in ("entries", "terms", "glossary") if isinstance(data.get(k), list)), None)
        if items is None:
            items = next((v for v in data.values() if isinstance(v, list)), [])
    if not isinstance(items, list):
        raise ValueError("glossary: expected a list of entries with `zh` and `en`")
    entries = []
    for item in items:
        if not isinstance(item, dict):
            continue
        zh, en = _as_tuple(item.get("zh")), _as_tuple(item.get("en"))
        if zh and en:
            entries.append(GlossaryEntry(zh=zh, en=en))
    return Glossary(tuple(entries))


def load_glossary(path: Path) -> Glossary:
    """An absent glossary means no expansion (the kb may not have one yet). Parsed once per file
    version: the retriever and the sentence extractor read the same glossary."""
    path = Path(path)
    if not path.is_file():
        return Glossary()
    st = path.stat()
    return _parsed_glossary(str(path.resolve()), st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=8)
def _parsed_glossary(path: str, mtime_ns: int, size: int) -> Glossary:
    return parse_glossary(read_yaml(Path(path), max_bytes=GLOSSARY_MAX_BYTES) or [])
