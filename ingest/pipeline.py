"""Build and update the index: sources -> llama-index IngestionPipeline -> FAISS channels + BM25.

The layout of `Settings.index_dir` and the fast freshness check are in `assistant.index.status`. A build works
in memory and writes a new version directory; only a finished build moves `current`, so an
interrupted or failed ingest leaves the previous index serving.

Incremental: the pipeline's docstore keeps each document's hash; an unchanged document is skipped,
a changed one has its chunks deleted from the store and re-embedded, and documents no longer in the
sources are deleted. BM25 is rebuilt from the stored chunks each time (seconds at most).
"""
from __future__ import annotations

import fcntl
import os
import shutil
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.ingestion import DocstoreStrategy, IngestionPipeline
from llama_index.core.schema import BaseNode, Document, NodeRelationship, TextNode, TransformComponent
from llama_index.core.storage.docstore import SimpleDocumentStore
from tqdm.auto import tqdm

from assistant.config import Settings
from assistant.index.encoders import Encoder, load_encoders
from assistant.index.glossary import Glossary, encoder_view, has_cjk, load_glossary
from assistant.index.lexical import TOKENIZER_VERSION, LexicalIndex, LexicalTokenizer
from assistant.index.manifest import (CHUNKER_VERSION, Manifest, content_hash, file_hash, incompatibilities,
                                      library_versions)
from assistant.index.status import CURRENT, current_version, dedupe, missing_sources, planned_sources, sources_digest
from ingest.source_list import SourceChange
from ingest.sources import Source, chunk_document, detect_source, load_source
from ingest.sources.common import LoadResult
from ingest.store import Channel, ChannelStore

__all__ = ["IngestReport", "build_index", "load_documents", "resolve_sources"]

DOCSTORE_NAME = "docstore.json"
BM25_DIR = "bm25"
_DOC_BATCH = 64  # documents per pipeline run: bounds the memory of list-typed node embeddings


@dataclass
class IngestReport:
    index_path: Path
    documents: int = 0
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    chunks: int = 0
    chunks_embedded: int = 0
    seconds: float = 0.0
    full_rebuild: bool = False
    rebuild_reasons: list[str] = field(default_factory=list)
    per_source: dict[str, dict] = field(default_factory=dict)  # "kind:path" -> files, documents, chunks
    warnings: list[str] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)  # what this build was made from


# ---------------------------------------------------------------- sources

def resolve_sources(paths: Sequence[Path]) -> list[Source]:
    """The sources a user names (`meshwise ingest --source`): recorded as added, kept until removed."""
    return [replace(detect_source(Path(p)), added=True) for p in paths]


def load_documents(sources: Sequence[Source], progress: bool = False
                   ) -> tuple[list[Document], dict[str, dict], list[str]]:
    """Every document of the sources (first source wins a duplicate id), per-source counts, warnings."""
    docs: list[Document] = []
    per_source: dict[str, dict] = {}
    warnings: list[str] = []
    seen: set[str] = set()
    for src in sources:
        bar = tqdm(desc=f"read {src.kind} {src.path.name}", unit="file", disable=not progress, leave=False)
        try:
            res: LoadResult = load_source(src, on_file=lambda _p: bar.update(1))
        finally:
            bar.close()
        warnings.extend(res.warnings)
        kept = 0
        for d in res.documents:
            if d.id_ in seen:
                warnings.append(f"{src.kind} {src.path}: document id {d.id_} already loaded from another "
                                "source; skipped")
                continue
            seen.add(d.id_)
            docs.append(d)
            kept += 1
        per_source[f"{src.kind}:{src.path}"] = {"files": res.files_seen, "documents": kept, "chunks": 0}
    return docs, per_source, warnings


# ---------------------------------------------------------------- pipeline components

class ChunkDocuments(TransformComponent):
    """Documents -> chunk nodes (`<doc id>#<n>`), each linked to its document for upserts."""

    def __call__(self, nodes: Sequence[BaseNode], **kwargs) -> list[BaseNode]:
        out: list[BaseNode] = []
        for doc in nodes:
            meta = doc.metadata
            for i, ch in enumerate(chunk_document(doc)):
                node = TextNode(
                    id_=f"{doc.id_}#{i}",
                    text=ch.text,
                    metadata={
                        "doc_id": meta["doc_id"], "title": meta.get("title", ""), "path": meta.get("path", ""),
                        "heading": ch.heading, "context": ch.context, "kind": ch.kind or meta.get("kind", "doc"),
                        "lang": meta.get("lang", "en"), "line": ch.line,
                    },
                )
                node.relationships[NodeRelationship.SOURCE] = doc.as_related_node_info()
                out.append(node)
        return out


def embed_text(record: dict) -> str:
    """Text the encoders and BM25 see for a chunk record or node metadata + text."""
    return "\n".join(p for p in (record.get("heading"), record.get("context"), record.get("text")) if p)


class EmbedChannels(TransformComponent):
    """Every encoder embeds every chunk; the node's embedding is their concatenation."""

    _get_encoders: Callable[[], list[Encoder]] = PrivateAttr()
    _glossary: Glossary = PrivateAttr()
    _bar = PrivateAttr(default=None)
    _count: int = PrivateAttr(default=0)

    def __init__(self, get_encoders: Callable[[], list[Encoder]], glossary: Glossary, bar=None) -> None:
        super().__init__()
        self._get_encoders = get_encoders
        self._glossary = glossary
        self._bar = bar

    def __call__(self, nodes: Sequence[BaseNode], **kwargs) -> list[BaseNode]:
        if not nodes:
            return list(nodes)
        encoders = self._get_encoders()
        texts = [embed_text({**n.metadata, "text": n.get_content()}) for n in nodes]
        views = [[dense_view(n, t, enc, self._glossary) for n, t in zip(nodes, texts)] for enc in encoders]
        if self._bar is not None:
            self._bar.total = (self._bar.total or 0) + len(texts)
            self._bar.refresh()
        vecs: list[list[np.ndarray]] = [[] for _ in encoders]
        # Groups of 128: the encoders sort each call by length (less padding) and the bar
        # still moves.
        for i in range(0, len(texts), 128):
            for e, enc in enumerate(encoders):
                vecs[e].append(enc.encode(views[e][i:i + 128]))
            if self._bar is not None:
                self._bar.update(len(texts[i:i + 128]))
        parts = [np.concatenate(v) for v in vecs]
        joined = np.concatenate(parts, axis=1)
        for node, vec in zip(nodes, joined):
            node.embedding = vec.tolist()
        self._count += len(nodes)
        return list(nodes)

    @property
    def embedded(self) -> int:
        return self._count


def dense_view(node: BaseNode, text: str, enc: Encoder, glossary: Glossary) -> str:
    """What one dense channel embeds for a chunk. An English-only encoder gets a Chinese chunk as the
    glossary rendering of its heading path and keywords only: the chunk's English counterpart (same
    base id) carries the body for that channel, and MiniLM time is most of a cold ingest."""
    if enc.english_only and node.metadata.get("lang") == "zh":
        head = "\n".join(p for p in (node.metadata.get("heading"), node.metadata.get("context")) if p)
        return glossary.to_english(head)
    return encoder_view(text, enc.english_only, glossary)


def _stamp_glossary(docs: Sequence[Document], glossary_hash: str) -> None:
    """English-only channels read Chinese through the glossary, so a document with Chinese text
    depends on it: the glossary's hash in its metadata makes a glossary edit re-embed it."""
    for d in docs:
        if has_cjk(d.text):
            d.metadata["glossary"] = glossary_hash[:16]


# ---------------------------------------------------------------- index directory

@contextmanager
def _locked(index_dir: Path) -> Iterator[None]:
    index_dir.mkdir(parents=True, exist_ok=True)
    with open(index_dir / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _publish(index_dir: Path, built: Path) -> Path:
    """Move a finished build into place and point `current` at it in one rename."""
    final = index_dir / f"v-{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
    os.rename(built, final)
    tmp_link = index_dir / f".current-{uuid.uuid4().hex[:8]}"
    os.symlink(final.name, tmp_link)
    os.replace(tmp_link, index_dir / CURRENT)
    _cleanup(index_dir, keep={final.name})
    return final


def _cleanup(index_dir: Path, keep: set[str]) -> None:
    """Drop old versions (the newest older one stays for readers mid-load) and leftovers."""
    versions = sorted((p for p in index_dir.glob("v-*") if p.is_dir() and p.name not in keep),
                      key=lambda p: p.stat().st_mtime, reverse=True)
    for p in versions[1:]:
        shutil.rmtree(p, ignore_errors=True)
    _drop_leftovers(index_dir)


def _drop_leftovers(index_dir: Path) -> None:
    """Build folders and link names of ingests that were killed. Only a build holding the lock
    writes them, so under the lock every one found is garbage."""
    for p in index_dir.glob(".tmp-*"):
        shutil.rmtree(p, ignore_errors=True)
    for p in index_dir.glob(".current-*"):
        p.unlink(missing_ok=True)


def _kb_version(settings: Settings, docs: Sequence[Document]) -> str:
    import yaml

    kb_hash = content_hash({d.id_: d.hash for d in docs if d.metadata.get("path", "").startswith("kb/")})[:12]
    catalog = Path(settings.kb_dir) / "catalog.yaml"
    version = None
    if catalog.is_file() and catalog.stat().st_size < 1024 * 1024:
        try:
            data = yaml.safe_load(catalog.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError:
            data = {}  # the catalog is for people and evals; a typo there must not stop an ingest
        version = data.get("version") if isinstance(data, dict) else None
    return f"{version}+{kb_hash}" if version else kb_hash


# ---------------------------------------------------------------- build

def _refresh_refusals(srcs: Sequence[Source], manifest: Manifest | None) -> list[str]:
    """Why a refresh must keep the current index instead of publishing `srcs` (empty: go ahead): a
    recorded source that is gone, or a list shorter than the recorded one (the settings' kb moved
    onto an added source). Only `meshwise ingest`, told so, may drop a source."""
    if manifest is None:
        return []
    out = [f"source {s.path} is missing: the index keeps its documents (run `meshwise ingest "
           f"--remove-source {s.path}` to drop them)" for s in missing_sources(srcs)]
    if len(srcs) < len(manifest.sources):
        out.append(f"the index was built from {len(manifest.sources)} sources, a refresh would keep "
                   f"{len(srcs)}: the index is kept as it is (run `meshwise ingest` to rebuild it)")
    return out


class _ModelChanged(Exception):
    """Models loaded mid-ingest turned out to differ from the ones the index was built with."""

    def __init__(self, encoders: list[Encoder]):
        super().__init__("embedding model changed")
        self.encoders = encoders


def build_index(settings: Settings, sources: Sequence[Source] | SourceChange | None = None, *, rebuild: bool = False,
                progress: bool = False, encoders: list[Encoder] | None = None,
                threads: int | None = None) -> IngestReport:
    """Ingest `sources` into `settings.index_dir`, incrementally when the current index is compatible,
    and publish the result atomically.

    A SourceChange (what `meshwise ingest` runs) is applied to the manifest read under the lock.
    sources None is a refresh (what read commands run): the sources the index was built from
    (`planned_sources`). A refresh never publishes fewer sources than the current index holds: when a
    recorded source is gone it keeps the current index and says so in `warnings`.

    threads: math-library threads while embedding (default: one, as at query time; the CLI passes
    the core count). Encoders are set back to one thread afterwards."""
    try:
        return _build(settings, sources, rebuild=rebuild, progress=progress, encoders=encoders, threads=threads)
    except _ModelChanged as changed:
        # Same model names, different vectors (e.g. another quantisation): start from scratch.
        report = _build(settings, sources, rebuild=True, progress=progress, encoders=changed.encoders,
                        threads=threads)
        report.rebuild_reasons = ["embedding model changed since the index was built"]
        return report


def _build(settings: Settings, sources: Sequence[Source] | SourceChange | None, *, rebuild: bool, progress: bool,
           encoders: list[Encoder] | None, threads: int | None) -> IngestReport:
    t0 = time.perf_counter()
    index_dir = Path(settings.index_dir)
    with _locked(index_dir):
        previous = current_version(index_dir)
        old_manifest = Manifest.load(previous) if previous else None
        _drop_leftovers(index_dir)
        if isinstance(sources, SourceChange):
            srcs = dedupe(sources.apply(settings, old_manifest))
        else:
            srcs = dedupe(list(sources) if sources is not None else planned_sources(settings, old_manifest))
        report = IngestReport(index_path=index_dir, sources=srcs)
        refused = _refresh_refusals(srcs, old_manifest) if sources is None else []
        if refused:
            report.index_path = previous
            report.warnings = refused
            report.seconds = time.perf_counter() - t0
            return report
        # Before reading: a file edited while this build runs then differs from the recorded listing.
        digest = sources_digest(srcs)
        docs, report.per_source, report.warnings = load_documents(srcs, progress)
        report.documents = len(docs)
        glossary_path = Path(settings.kb_dir) / "glossary.yaml"
        glossary = load_glossary(glossary_path)
        _stamp_glossary(docs, file_hash(glossary_path))

        loaded: list[Encoder] = list(encoders) if encoders is not None else []

        def get_encoders() -> list[Encoder]:
            if not loaded:
                loaded.extend(load_encoders(tuple(settings.embed_models), settings.model_cache_dir))
                if store is not None and not report.full_rebuild and incompatibilities(
                        old_manifest, tuple(settings.embed_models), CHUNKER_VERSION, TOKENIZER_VERSION,
                        [e.model_id for e in loaded]):
                    raise _ModelChanged(loaded)
            for e in loaded:
                e.set_threads(threads or 1)
            return loaded

        store, docstore = None, None
        if old_manifest is not None and not rebuild:
            report.rebuild_reasons = incompatibilities(
                old_manifest, tuple(settings.embed_models), CHUNKER_VERSION, TOKENIZER_VERSION,
                [e.model_id for e in loaded] if loaded else None)
            if not report.rebuild_reasons:
                store = ChannelStore.load(previous)
                docstore = SimpleDocumentStore.from_persist_path(str(previous / DOCSTORE_NAME))
        elif rebuild:
            report.rebuild_reasons = ["--rebuild"]
        elif previous is None:
            report.rebuild_reasons = ["no index yet"]
        if store is None:
            report.full_rebuild = True
            encs = get_encoders()
            store = ChannelStore([Channel(e.name, e.dim) for e in encs])
            docstore = SimpleDocumentStore()

        before = docstore.get_all_document_hashes()  # hash -> doc id
        old_ids = set(before.values())
        old_hash = {v: k for k, v in before.items()}
        for d in docs:
            if d.id_ not in old_ids:
                report.added += 1
            elif old_hash[d.id_] != d.hash:
                report.updated += 1
            else:
                report.unchanged += 1
        glossary_hash = file_hash(glossary_path)
        if (not report.full_rebuild and report.unchanged == len(docs) == len(old_ids)
                and old_manifest.glossary_hash == glossary_hash
                and old_manifest.sources == [s.to_json() for s in srcs]):
            # Nothing to do: the current version already is this index. Its listing may differ (files
            # touched, or an index from before listings were recorded): record it, so the next start
            # is decided from `stat` calls again.
            if digest and old_manifest.sources_digest != digest:
                old_manifest.sources_digest = digest
                old_manifest.save(previous)
            report.chunks = len(store)
            report.per_source = old_manifest.per_source or report.per_source
            report.index_path = previous
            report.seconds = time.perf_counter() - t0
            return report

        doc_bar = tqdm(desc="documents", unit="doc", total=len(docs), disable=not progress, leave=False)
        bar = tqdm(desc="embed", unit="chunk", total=0, disable=not progress, leave=False, position=1)
        embedder = EmbedChannels(get_encoders, glossary, bar=bar)
        pipeline = IngestionPipeline(
            transformations=[ChunkDocuments(), embedder],
            vector_store=store,
            docstore=docstore,
            docstore_strategy=DocstoreStrategy.UPSERTS,
            disable_cache=True,
        )
        try:
            for i in range(0, len(docs), _DOC_BATCH):
                pipeline.run(documents=docs[i:i + _DOC_BATCH], store_doc_text=False)
                doc_bar.update(len(docs[i:i + _DOC_BATCH]))
        finally:
            bar.close()
            doc_bar.close()
            for e in loaded:
                e.set_threads(1)
        # Documents gone from the sources leave the docstore and every channel.
        current_ids = {d.id_ for d in docs}
        for doc_id in sorted(old_ids - current_ids):
            docstore.delete_document(doc_id, raise_error=False)
            store.delete(doc_id)
            report.removed += 1
        report.chunks_embedded = embedder.embedded
        report.chunks = len(store)

        tokenizer = LexicalTokenizer(glossary.zh_terms)
        row_ids = sorted(store.records, key=lambda nid: store.records[nid]["fid"])
        cached: dict[str, list[str]] = {}
        if not report.full_rebuild and old_manifest.glossary_hash == glossary_hash:
            # Unchanged chunks keep their token lists; re-added chunks have new ids' records but the
            # same node ids, so drop the cache entries of every document that was re-embedded.
            cached = LexicalIndex.load_tokens(previous / BM25_DIR)
            touched = {d.id_ for d in docs if old_hash.get(d.id_) != d.hash}
            cached = {nid: toks for nid, toks in cached.items() if nid.rsplit("#", 1)[0] not in touched}
        lexical = LexicalIndex.build({r: embed_text(store.records[r]) for r in row_ids}, row_ids, tokenizer,
                                     cached=cached)

        _count_chunks(report, store, docs)

        channels = [{"name": c.name, "dim": c.dim,
                     "model_id": next((e.model_id for e in loaded if e.name == c.name), None)
                     or _old_model_id(old_manifest, c.name)} for c in store.channels]
        tmp = index_dir / f".tmp-{uuid.uuid4().hex[:8]}"
        try:
            tmp.mkdir(parents=True)
            store.save(tmp)
            docstore.persist(str(tmp / DOCSTORE_NAME))
            lexical.save(tmp / BM25_DIR)
            report.seconds = time.perf_counter() - t0
            Manifest(
                chunker_version=CHUNKER_VERSION, tokenizer_version=TOKENIZER_VERSION, channels=channels,
                libraries=library_versions(), sources=[s.to_json() for s in srcs],
                documents={d.id_: d.hash for d in docs}, glossary_hash=glossary_hash,
                kb_version=_kb_version(settings, docs), chunks=len(store),
                created_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"), build_seconds=round(report.seconds, 3),
                per_source=report.per_source, sources_digest=digest,
            ).save(tmp)
            report.index_path = _publish(index_dir, tmp)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        report.seconds = time.perf_counter() - t0
        return report


def _old_model_id(manifest: Manifest | None, name: str) -> str | None:
    if manifest is None:
        return None
    return next((c.get("model_id") for c in manifest.channels if c["name"] == name), None)


def _count_chunks(report: IngestReport, store: ChannelStore, docs: Sequence[Document]) -> None:
    doc_source: dict[str, str] = {}
    i = 0
    keys = list(report.per_source)
    # Documents were loaded source by source, in order: walk them with the per-source counts.
    for key in keys:
        n = report.per_source[key]["documents"]
        for d in docs[i:i + n]:
            doc_source[d.id_] = key
        i += n
    for rec in store.records.values():
        key = doc_source.get(rec["doc_id"])
        if key is not None:
            report.per_source[key]["chunks"] += 1


