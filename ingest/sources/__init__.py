"""Loaders: each turns one kind of source into llama-index Documents; `chunk_document` cuts them.

Source kinds: the project kb (`kb/`), an external skill folder (a directory with `SKILL.md`), and a
Python source checkout (NeMo AutoModel). `detect_source` tells them apart by their layout.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # loading llama-index costs a second; `detect_source` needs none of it
    from llama_index.core.schema import Document

    from ingest.chunking import Chunk
    from ingest.sources.common import LoadResult

from assistant.index.source import Source, is_skill_folder

__all__ = ["Source", "UnknownSource", "chunk_document", "detect_source", "load_source"]


class UnknownSource(ValueError):
    pass


def detect_source(path: Path) -> Source:
    from ingest.sources.python_code import is_python_checkout

    path = Path(path).expanduser().resolve()
    if not path.exists():
        raise UnknownSource(f"source {path} does not exist")
    if not path.is_dir():
        raise UnknownSource(f"source {path} is a file: a source is a folder (a kb, a skill folder or a Python "
                            "checkout)")
    if not os.access(path, os.R_OK | os.X_OK):
        raise UnknownSource(f"source {path} cannot be read (permission denied)")
    if is_skill_folder(path):
        return Source("skill", path)
    if (path / "catalog.yaml").is_file() or (path / "en").is_dir() or (path / "zh").is_dir():
        return Source("kb", path)
    if is_python_checkout(path):
        return Source("code", path)
    raise UnknownSource(
        f"{path}: not a kb (catalog.yaml or en/, zh/), a skill folder (SKILL.md) or a Python checkout")


def load_source(source: Source, on_file: Callable[[Path], None] | None = None) -> LoadResult:
    if source.kind == "kb":
        from ingest.sources.kb_markdown import load_kb

        return load_kb(source.path, shown=str(source.path) if source.added else "kb")
    if source.kind == "skill":
        from ingest.sources.skill_folder import load_skill_folder

        return load_skill_folder(source.path)
    if source.kind == "code":
        from ingest.sources.python_code import load_checkout

        return load_checkout(source.path, on_file=on_file)
    raise UnknownSource(f"unknown source kind {source.kind!r}")


def chunk_document(doc: Document) -> list[Chunk]:
    meta = doc.metadata
    fmt = meta.get("format")
    if fmt == "markdown":
        from ingest.sources.markdown import chunk_markdown

        return chunk_markdown(doc.text, meta.get("title", ""), context=meta.get("context", ""))
    if fmt == "anchor":
        from ingest.sources.anchors import chunk_anchor

        return chunk_anchor(doc.text, meta.get("title", ""))
    if fmt == "python":
        from ingest.sources.python_code import chunk_python

        return chunk_python(doc.text, meta.get("path", ""))
    raise ValueError(f"document {doc.id_}: unknown format {fmt!r}")
