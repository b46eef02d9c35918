"""What every loader returns: llama-index Documents with the metadata the chunker and the hits need."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # llama-index loads in a second; the query path imports this package without it
    from llama_index.core.schema import Document

DOC_MAX_BYTES = 2 * 1024 * 1024

# Metadata keys every Document carries (values are plain strings so the docstore hash is stable).
META_KEYS = ("doc_id", "title", "path", "kind", "lang", "format", "context")


@dataclass
class LoadResult:
    documents: list[Document] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    files_seen: int = 0  # files looked at, including the ones that gave no document

    def extend(self, other: "LoadResult") -> None:
        self.documents.extend(other.documents)
        self.warnings.extend(other.warnings)
        self.files_seen += other.files_seen


def make_document(*, doc_id: str, text: str, title: str, path: str, kind: str, lang: str, fmt: str,
                  context: str = "") -> Document:
    from llama_index.core.schema import Document

    meta = {"doc_id": doc_id, "title": title, "path": path, "kind": kind, "lang": lang, "format": fmt,
            "context": context}
    return Document(id_=doc_id, text=text, metadata=meta)



def outside(path: Path, root: Path, shown: str, result: LoadResult) -> bool:
    """True (with a warning in `result`) for a file that resolves outside its source folder, through a
    symbolic link: a source must not pull in files from elsewhere on the disk, and one such link must
    not stop the ingest either."""
    try:
        inside = path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # a link loop
        inside = False
    if not inside:
        result.warnings.append(f"{shown}: symbolic link to a file outside {root}; skipped")
    return not inside
