"""Hybrid retrieval: dense channels (FAISS) and BM25, fused with reciprocal rank fusion.

Channels (defaults): MiniLM on the glossary-expanded query, USE-multilingual on the raw query, BM25
on the expanded query. Fusion is per base document (`hsdp.en` and `hsdp.zh` are one document in two
languages): each channel ranks documents by their best chunk, RRF combines those rankings, so a
document found by MiniLM in English and by USE in Chinese gets both votes. Secondary sources (code
anchors, the FAQ, the upstream skill, code) weigh a little less than the kb's own documents and
pitfalls: they restate or point at what the kb explains. Each hit is the document's best chunk, in
the preferred language when that translation also matched.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from assistant.config import Settings, load_settings
from assistant.index.channels import ChannelIndex
from assistant.index.encoders import Encoder, load_encoders
from assistant.index.glossary import Glossary, encoder_view, load_glossary, query_lang
from assistant.index.lexical import LexicalIndex, LexicalTokenizer
from assistant.index.manifest import Manifest
from assistant.index.status import IndexNotReady, index_status
from assistant.retrieve.fusion import rrf
from assistant.retrieve.hit import Hit
from assistant.retrieve.threads import limit_query_threads

# Brings a missing or stale index up to date and returns the version directory to load: the caller's
# (ingest.refresh.refresh_index for the read commands), so retrieval never imports the ingestion side.
Builder = Callable[[Settings, "list[Encoder]"], Path]

QUERY_MAX_CHARS = 2000
# Fused-score factor per chunk kind (1.0 when absent). On evals/retrieval (108 queries) any value in
# 0.8-0.9 lifts MRR from 0.86 to 0.94 (en) and from 0.84 to 0.88 (zh) with recall unchanged: code
# anchors and the FAQ otherwise take first place from the document that explains the answer.
KIND_PRIOR = {"anchor": 0.85, "faq": 0.85, "skill": 0.85, "code": 0.85}
# Candidates taken from each channel before fusion; deep enough that a document ranked well by two
# channels but poorly by the third still surfaces.
CANDIDATES = 40


def base_id(doc_id: str) -> str:
    return doc_id.rsplit(".", 1)[0] if "." in doc_id else doc_id


@dataclass
class ChannelRanking:
    name: str
    query: str
    node_ids: list[str]


class Retriever:
    def __init__(self, *, store, lexical, tokenizer, glossary: Glossary, encoders: list[Encoder],
                 manifest, path: Path):
        self.store = store
        self.lexical = lexical
        self.tokenizer = tokenizer
        self.glossary = glossary
        self.encoders = encoders
        self.manifest = manifest
        self.path = path
        recs = store.records
        self._by_base: dict[str, list[str]] = {}
        for nid in sorted(recs, key=lambda n: recs[n]["fid"]):
            self._by_base.setdefault(base_id(recs[nid]["doc_id"]), []).append(nid)
        self._kinds = sorted({r["kind"] for r in recs.values()})
        self._fids_by_kind = {k: np.asarray(sorted(r["fid"] for r in recs.values() if r["kind"] == k), dtype=np.int64)
                              for k in self._kinds}
        self._row_kinds = np.array([recs[nid]["kind"] for nid in lexical.row_ids], dtype=str)

    # ------------------------------------------------------------ loading
    @classmethod
    def load(cls, settings: Settings | None = None, *, build: Builder | None = None,
             encoders: list[Encoder] | None = None, warm_up: bool = True) -> "Retriever":
        """Load the index under `settings.index_dir`. A missing, stale or incompatible index is
        handed to `build` when given; without it such an index raises IndexNotReady with the command
        to run. A fresh index loads without importing llama-index (the ingestion side); `warm_up`
        runs one search so the first user's query pays no lazy initialisation."""
        settings = settings or load_settings()
        if encoders is None:
            encoders = load_encoders(tuple(settings.embed_models), settings.model_cache_dir)
        limit_query_threads()
        status = index_status(settings, model_ids=[e.model_id for e in encoders])
        if status.fresh and status.path is not None:
            path = status.path
        elif build is not None:
            path = build(settings, encoders)
        else:
            hint = "meshwise ingest --rebuild" if status.state == "incompatible" else "meshwise ingest"
            raise IndexNotReady(f"index {status.state}: {'; '.join(status.reasons)}. Run `{hint}`.")
        store = ChannelIndex.load(path)
        for enc, ch in zip(encoders, store.channels):
            if enc.name != ch.name or enc.dim != ch.dim:
                raise IndexNotReady(f"index channel {ch.name} ({ch.dim} dims) does not match encoder "
                                    f"{enc.name} ({enc.dim} dims). Run `meshwise ingest --rebuild`.")
        glossary = load_glossary(Path(settings.kb_dir) / "glossary.yaml")
        tokenizer = LexicalTokenizer(glossary.zh_terms)
        lexical = LexicalIndex.load(path / "bm25")
        manifest = Manifest.load(path)
        retriever = cls(store=store, lexical=lexical, tokenizer=tokenizer, glossary=glossary, encoders=encoders,
                        manifest=manifest, path=path)
        if warm_up:
            retriever.search("warm up 预热 tp_size", k=1)
        return retriever

    def forget_embeddings(self) -> None:
        """A new question starts: the encoders drop the vectors of the last one."""
        for enc in self.encoders:
            enc.forget()

    @property
    def kinds(self) -> list[str]:
        return list(self._kinds)

    def __len__(self) -> int:
        return len(self.store)

    # ------------------------------------------------------------ search
    def rankings(self, query: str, kinds: Iterable[str] | None = None,
                 candidates: int = CANDIDATES) -> list[ChannelRanking]:
        """Each channel's ranked node ids (dense channels first, BM25 last); also used by benchmarks."""
        query = query[:QUERY_MAX_CHARS]
        expanded = self.glossary.expand(query)
        allowed = None
        mask = None
        if kinds is not None:
            kinds = set(kinds)
            parts = [self._fids_by_kind[k] for k in kinds if k in self._fids_by_kind]
            allowed = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
            mask = np.isin(self._row_kinds, list(kinds)).astype(np.float32)
        out = []
        for i, enc in enumerate(self.encoders):
            q = expanded if enc.english_only else query
            if not self._reads(enc, query):
                out.append(ChannelRanking(enc.name, q, []))
                continue
            vec = enc.embed(q)
            ids = [nid for nid, _ in self.store.search(i, vec, candidates, allowed)]
            out.append(ChannelRanking(enc.name, q, ids))
        rows = self.lexical.search(self.tokenizer(expanded), candidates, mask) if mask is None or mask.any() else []
        out.append(ChannelRanking("bm25", expanded, [self.lexical.row_ids[r] for r, _ in rows]))
        return out

    def _reads(self, enc: Encoder, query: str) -> bool:
        # Chinese without a glossary term or identifier: nothing an English-only channel can read.
        return not enc.english_only or bool(encoder_view(query, True, self.glossary).strip())

    def prefetch(self, query: str) -> None:
        """Start the English-only channels' embedding of what `search(query)` will embed, on the
        encoders' worker thread (Encoder.prefetch): MiniLM, the costliest step of a search, then
        overlaps the rest of understanding (the ask model's USE batch)."""
        if not query or not query.strip():
            return
        query = query[:QUERY_MAX_CHARS]
        for enc in self.encoders:
            if enc.english_only and self._reads(enc, query):
                enc.prefetch((self.glossary.expand(query),))

    def search(self, query: str, k: int = 5, kinds: Sequence[str] | None = None, lang: str | None = None,
               per_doc: int = 1) -> list[Hit]:
        """Top `k` hits for `query`, at most `per_doc` chunks per base document.

        kinds: only these chunk kinds (doc, pitfall, anchor, example, faq, skill, code).
        lang: preferred language of the returned chunk when both translations of a document matched;
        None means the query's own language (a Chinese question gets the Chinese chunk).
        """
        if not query or not query.strip() or k <= 0:
            return []
        prefer = lang or query_lang(query)
        rankings = [r.node_ids for r in self.rankings(query, kinds)]
        recs = self.store.records
        doc_of = {nid: base_id(recs[nid]["doc_id"]) for ids in rankings for nid in ids}
        # Document level: each channel ranks documents by their best chunk.
        doc_lists = [list(dict.fromkeys(doc_of[nid] for nid in ids)) for ids in rankings]
        kind_of = {}
        for ids in rankings:
            for nid in ids:
                kind_of.setdefault(doc_of[nid], recs[nid]["kind"])
        docs = sorted(((b, sc * KIND_PRIOR.get(kind_of[b], 1.0)) for b, sc in rrf(doc_lists)), key=lambda x: -x[1])
        # Chunk level, to choose what to show of each document.
        chunks: dict[str, list[str]] = {}
        for nid, _ in rrf(rankings):
            chunks.setdefault(doc_of[nid], []).append(nid)
        hits: list[Hit] = []
        for b, doc_score in docs[:k]:
            members = chunks[b]
            preferred = [n for n in members if recs[n]["lang"] == prefer]
            others = [n for n in members if recs[n]["lang"] != prefer]
            for nid in (preferred + others)[:per_doc]:
                hits.append(self._hit(nid, doc_score))
        return hits

    def doc_chunks(self, base: str, lang: str | None = None) -> list[Hit]:
        """Every chunk of one document (base id), in document order; with `lang`, that translation
        first. For callers that know which document states a fact and need no search."""
        nids = self._by_base.get(base, [])
        if lang is not None:
            nids = [n for n in nids if self.store.records[n]["lang"] == lang] + \
                   [n for n in nids if self.store.records[n]["lang"] != lang]
        return [self._hit(n, 0.0) for n in nids]

    def _hit(self, nid: str, score: float) -> Hit:
        r = self.store.records[nid]
        return Hit(id=nid, doc_id=r["doc_id"], title=r.get("title") or "", path=r.get("path") or "",
                   heading=r.get("heading") or "", kind=r["kind"], lang=r["lang"], score=float(score),
                   text=r["text"])
