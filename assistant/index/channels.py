"""The dense index on disk and in memory: one FAISS index per encoder (their dimensions differ) plus
the chunk records. No llama-index here: the query path loads and searches this directly, and
`ingest.store.ChannelStore` adapts it to llama-index's vector-store interface for the ingestion
pipeline.

Each FAISS index is an `IndexIDMap2` over an exact inner-product index (vectors are normalised, so
scores are cosines); ids are never reused, so deleting a document and adding another cannot alias.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

RECORD_FIELDS = ("doc_id", "title", "path", "heading", "context", "kind", "lang", "line", "text")
RECORDS_FILE = "chunks.json"


@dataclass(frozen=True)
class Channel:
    name: str
    dim: int


def _new_index(dim: int):
    import faiss

    return faiss.IndexIDMap2(faiss.IndexFlatIP(dim))


class ChannelIndex:
    def __init__(self, channels: Sequence[Channel]) -> None:
        if not channels:
            raise ValueError("a store needs at least one channel")
        self.channels: list[Channel] = list(channels)
        self.indexes = [_new_index(c.dim) for c in channels]
        self.records: dict[str, dict] = {}  # node id -> record (RECORD_FIELDS + "fid")
        self._by_fid: dict[int, str] = {}  # faiss id -> node id
        self._by_doc: dict[str, list[str]] = {}  # doc id -> [node id]
        self._next_fid = 0

    def __len__(self) -> int:
        return len(self.records)

    def doc_ids(self) -> list[str]:
        return list(self._by_doc)

    def add(self, rows: Sequence[tuple[str, str, dict]], vecs: np.ndarray) -> None:
        """rows: (node id, doc id, record); vecs: one row per node, every channel's vector concatenated
        in channel order. A node added again replaces its old vectors."""
        total = sum(c.dim for c in self.channels)
        vecs = np.asarray(vecs, dtype=np.float32)
        if vecs.ndim != 2 or vecs.shape[1] != total:
            raise ValueError(f"embedding has {vecs.shape[-1]} dims, channels {self.channels} need {total}")
        if len(rows) != len(vecs):
            raise ValueError(f"{len(rows)} records for {len(vecs)} vectors")
        fids = np.arange(self._next_fid, self._next_fid + len(rows), dtype=np.int64)
        self._next_fid += len(rows)
        start = 0
        for ch, index in zip(self.channels, self.indexes):
            index.add_with_ids(np.ascontiguousarray(vecs[:, start:start + ch.dim]), fids)
            start += ch.dim
        for (node_id, doc_id, rec), fid in zip(rows, fids):
            if node_id in self.records:
                self.remove_nodes([node_id])
            rec = {f: rec.get(f) for f in RECORD_FIELDS} | {"fid": int(fid)}
            self.records[node_id] = rec
            self._by_fid[int(fid)] = node_id
            members = self._by_doc.setdefault(doc_id, [])
            if node_id not in members:
                members.append(node_id)

    def delete_doc(self, doc_id: str) -> None:
        self.remove_nodes(self._by_doc.pop(doc_id, []))

    def remove_nodes(self, node_ids: list[str]) -> None:
        fids = [self.records[n]["fid"] for n in node_ids if n in self.records]
        if fids:
            arr = np.asarray(fids, dtype=np.int64)
            for index in self.indexes:
                index.remove_ids(arr)
        for n in node_ids:
            rec = self.records.pop(n, None)
            if rec is not None:
                self._by_fid.pop(rec["fid"], None)

    def search(self, channel: int, vec: np.ndarray, k: int, allowed_fids: np.ndarray | None = None
               ) -> list[tuple[str, float]]:
        """(node id, cosine) best first; `allowed_fids` restricts the search (kind filters)."""
        import faiss

        index = self.indexes[channel]
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

    # ---- persistence ----
    def save(self, directory: Path) -> None:
        import faiss

        directory.mkdir(parents=True, exist_ok=True)
        for i, index in enumerate(self.indexes):
            faiss.write_index(index, str(directory / f"dense-{i}.faiss"))
        state = {
            "channels": [{"name": c.name, "dim": c.dim} for c in self.channels],
            "next_fid": self._next_fid,
            "by_doc": self._by_doc,
            "records": self.records,
        }
        (directory / RECORDS_FILE).write_text(json.dumps(state, ensure_ascii=False, allow_nan=False), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> "ChannelIndex":
        import faiss

        state = json.loads((directory / RECORDS_FILE).read_text(encoding="utf-8"))
        store = cls([Channel(c["name"], int(c["dim"])) for c in state["channels"]])
        store.indexes = [faiss.read_index(str(directory / f"dense-{i}.faiss")) for i in range(len(store.channels))]
        for ch, index in zip(store.channels, store.indexes):
            if index.d != ch.dim:
                raise ValueError(f"{directory}: FAISS index of {ch.name} has {index.d} dims, expected {ch.dim}")
        store._next_fid = int(state["next_fid"])
        store._by_doc = {k: list(v) for k, v in state["by_doc"].items()}
        store.records = state["records"]
        store._by_fid = {int(r["fid"]): nid for nid, r in store.records.items()}
        return store
