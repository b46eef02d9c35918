"""The dense store: one FAISS index per encoder (their dimensions differ) plus the chunk records.

It is llama-index's `FaissVectorStore` extended to several channels and to deletes, so the
`IngestionPipeline` can upsert into it: the pipeline hands over nodes whose embedding is the
concatenation of every channel's vector (in channel order), the store cuts it back into channels.
Each FAISS index is an `IndexIDMap2` over an exact inner-product index (vectors are normalised, so
scores are cosines); ids are never reused, so deleting a document and adding another cannot alias.
(The base class cannot delete, and llama-index's map variant reuses ids after a delete.)
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, List, Sequence

import numpy as np
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.schema import BaseNode
from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryResult
from llama_index.vector_stores.faiss import FaissVectorStore

RECORD_FIELDS = ("doc_id", "title", "path", "heading", "context", "kind", "lang", "line", "text")


@dataclass(frozen=True)
class Channel:
    name: str
    dim: int


def _new_index(dim: int):
    import faiss

    return faiss.IndexIDMap2(faiss.IndexFlatIP(dim))


class ChannelStore(FaissVectorStore):
    stores_text: bool = True
    is_embedding_query: bool = True

    _channels: list = PrivateAttr()
    _indexes: list = PrivateAttr()
    _records: dict = PrivateAttr()  # node id -> record (RECORD_FIELDS + "fid")
    _by_fid: dict = PrivateAttr()  # faiss id -> node id
    _by_doc: dict = PrivateAttr()  # doc id -> [node id]
    _next_fid: int = PrivateAttr()

    def __init__(self, channels: Sequence[Channel]) -> None:
        if not channels:
            raise ValueError("a store needs at least one channel")
        indexes = [_new_index(c.dim) for c in channels]
        super().__init__(faiss_index=indexes[0])
        self._channels = list(channels)
        self._indexes = indexes
        self._records = {}
        self._by_fid = {}
        self._by_doc = {}
        self._next_fid = 0

    # ---- llama-index vector store interface ----
    @property
    def client(self) -> Any:
        return self._indexes

    def add(self, nodes: List[BaseNode], **kwargs: Any) -> List[str]:
        if not nodes:
            return []
        total = sum(c.dim for c in self._channels)
        vecs = np.asarray([n.get_embedding() for n in nodes], dtype=np.float32)
        if vecs.shape[1] != total:
            raise ValueError(f"embedding has {vecs.shape[1]} dims, channels {self.channels} need {total}")
        fids = np.arange(self._next_fid, self._next_fid + len(nodes), dtype=np.int64)
        self._next_fid += len(nodes)
        start = 0
        for ch, index in zip(self._channels, self._indexes):
            index.add_with_ids(np.ascontiguousarray(vecs[:, start:start + ch.dim]), fids)
            start += ch.dim
        for node, fid in zip(nodes, fids):
            if node.node_id in self._records:  # re-added without a delete: drop the old vectors
                self._remove_nodes([node.node_id])
            meta = node.metadata
            rec = {f: meta.get(f) for f in RECORD_FIELDS if f != "text"}
            rec["text"] = node.get_content()
            rec["fid"] = int(fid)
            self._records[node.node_id] = rec
            self._by_fid[int(fid)] = node.node_id
            members = self._by_doc.setdefault(node.ref_doc_id or rec["doc_id"], [])
            if node.node_id not in members:
                members.append(node.node_id)
        return [n.node_id for n in nodes]

    def persist(self, persist_path: str, fs=None) -> None:
        self.save(Path(persist_path))

    def delete(self, ref_doc_id: str, **kwargs: Any) -> None:
        self._remove_nodes(self._by_doc.pop(ref_doc_id, []))

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """First channel only; the retriever searches channels one by one with `search`."""
        if query.filters is not None:
            raise ValueError("metadata filters are not supported; filter the hits instead")
        vec = np.asarray(query.query_embedding, dtype=np.float32)[: self._channels[0].dim]
        hits = self.search(0, vec, query.similarity_top_k)
        return VectorStoreQueryResult(ids=[h[0] for h in hits], similarities=[h[1] for h in hits])

    # ---- our own interface ----
    @property
    def channels(self) -> list[Channel]:
        return list(self._channels)

    @property
    def records(self) -> dict[str, dict]:
        return self._records

    def doc_ids(self) -> list[str]:
        return list(self._by_doc)

    def __len__(self) -> int:
        return len(self._records)

    def search(self, channel: int, vec: np.ndarray, k: int, allowed_fids: np.ndarray | None = None
               ) -> list[tuple[str, float]]:
        """(node id, cosine) best first; `allowed_fids` restricts the search (kind filters)."""
        import faiss

        index = self._indexes[channel]
        if index.ntotal == 0 or k <= 0:
            return []
        params = None
        if allowed_fids is not None:
            if len(allowed_fids) == 0:
                return []
            params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(np.asarray(allowed_fids, dtype=np.int64)))
        q = np.ascontiguousarray(vec.reshape(1, -1), dtype=np.float32)
        scores, fids = index.search(q, min(k, index.ntotal), params=params)
        return [(self._by_fid[int(f)], float(s)) for f, s in zip(fids[0], scores[0]) if f >= 0]

    def _remove_nodes(self, node_ids: list[str]) -> None:
        fids = [self._records[n]["fid"] for n in node_ids if n in self._records]
        if fids:
            arr = np.asarray(fids, dtype=np.int64)
            for index in self._indexes:
                index.remove_ids(arr)
        for n in node_ids:
            rec = self._records.pop(n, None)
            if rec is not None:
                self._by_fid.pop(rec["fid"], None)

    # ---- persistence ----
    def save(self, directory: Path) -> None:
        import faiss

        directory.mkdir(parents=True, exist_ok=True)
        for i, index in enumerate(self._indexes):
            faiss.write_index(index, str(directory / f"dense-{i}.faiss"))
        state = {
            "channels": [{"name": c.name, "dim": c.dim} for c in self._channels],
            "next_fid": self._next_fid,
            "by_doc": self._by_doc,
            "records": self._records,
        }
        (directory / "chunks.json").write_text(json.dumps(state, ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> "ChannelStore":
        import faiss

        state = json.loads((directory / "chunks.json").read_text(encoding="utf-8"))
        store = cls([Channel(c["name"], int(c["dim"])) for c in state["channels"]])
        store._indexes = [faiss.read_index(str(directory / f"dense-{i}.faiss")) for i in range(len(store._channels))]
        store._faiss_index = store._indexes[0]
        for ch, index in zip(store._channels, store._indexes):
            if index.d != ch.dim:
                raise ValueError(f"{directory}: FAISS index of {ch.name} has {index.d} dims, expected {ch.dim}")
        store._next_fid = int(state["next_fid"])
        store._by_doc = {k: list(v) for k, v in state["by_doc"].items()}
        store._records = state["records"]
        store._by_fid = {int(r["fid"]): nid for nid, r in store._records.items()}
        return store
