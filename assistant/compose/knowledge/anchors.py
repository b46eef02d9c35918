"""Code anchors by id, read from the kb data file `kb/anchors.yaml`.

A code-location answer states an anchor's path, symbols and summary. The index holds the same
records as chunk text, but a long anchor is split across chunks, so its facts are read here from the
data file by anchor id (a chunk's doc id is `anchor:<id>`) instead of being re-parsed from a chunk.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import yaml

from assistant.datafile import read_yaml

from assistant.retrieve.hit import Hit


_MAX_BYTES = 1024 * 1024
_SENTENCE_END = re.compile(r"(?<=[.。])\s+(?=[A-Z`\u4e00-\u9fff])")


@dataclass(frozen=True)
class Anchor:
    id: str
    path: str
    symbols: tuple[str, ...]
    summary: str
    summary_zh: str
    topics: tuple[str, ...] = ()
    questions: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """Everything the anchor says, for matching the question's identifiers against it."""
        return " ".join((self.path, *self.symbols, self.summary, *self.questions))

    def what(self, lang: str) -> str:
        """The first sentence of the summary, in the answer's language, without closing punctuation."""
        text = " ".join((self.summary_zh if lang == "zh" and self.summary_zh else self.summary).split())
        first = _SENTENCE_END.split(text, maxsplit=1)[0] if text else ""
        if lang == "zh" and "。" in first:
            first = first.split("。", 1)[0]
        return first.rstrip(".。 ")


# A folded YAML line break becomes a space; Chinese text takes none next to its own punctuation or
# between two Chinese characters.
_CJK_FOLD = re.compile(r"(?<=[\u3000-\u303f\uff00-\uffef])\s+|\s+(?=[\u3000-\u303f\uff00-\uffef])"
                       r"|(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])")


def _text(v) -> str:
    return _CJK_FOLD.sub("", " ".join(str(v).split())) if v is not None else ""


def load_anchors(path: Path) -> dict[str, Anchor]:
    """Anchor id -> Anchor; an absent or unreadable file gives an empty table (answers then fall back
    to the chunk text)."""
    try:
        data = read_yaml(path, max_bytes=_MAX_BYTES)
    except (OSError, ValueError, yaml.YAMLError):
        return {}
    entries = data.get("anchors") if isinstance(data, dict) else data
    out: dict[str, Anchor] = {}
    for e in entries if isinstance(entries, list) else ():
        if not isinstance(e, dict) or not e.get("id") or not e.get("path"):
            continue
        summary = _text(e.get("summary"))
        out[str(e["id"])] = Anchor(
            id=str(e["id"]),
            path=str(e["path"]),
            symbols=tuple(str(s) for s in e.get("symbols") or ()),
            summary=summary,
            summary_zh=_text(e.get("summary_zh")) or summary,
            topics=tuple(str(t) for t in e.get("topics") or ()),
            questions=tuple(str(q) for q in e.get("questions") or ()),
        )
    return out


def anchor_id(hit: Hit) -> str | None:
    """`anchor:fsdp2-device-mesh` (or `anchor:x~3` for a duplicate id) -> `fsdp2-device-mesh`."""
    if not hit.doc_id.startswith("anchor:"):
        return None
    return hit.doc_id[len("anchor:"):].split("~", 1)[0] or None


def anchor_of(hit: Hit, table: Mapping[str, Anchor]) -> Anchor | None:
    aid = anchor_id(hit)
    return table.get(aid) if aid else None
