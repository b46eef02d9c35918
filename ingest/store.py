"""llama-index's vector-store interface over `assistant.index.channels.ChannelIndex`, so the
`IngestionPipeline` can upsert into our multi-channel FAISS index.

It is llama-index's `FaissVectorStore` extended to several channels and to deletes: the pipeline hands
over nodes whose embedding is the concatenation of every channel's vector (in channel order), the
index cuts it back into channels. (The base class cannot delete, and llama-index's map variant reuses
ids after a delete.) The query path reads `ChannelIndex` directly and never imports llama-index.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, List, Sequence

import numpy as np
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.schema import BaseNode
from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryResult
from llama_index.vector_stores.faiss import FaissVectorStore

from assistant.index.channels import RECORD_FIELDS, Channel, ChannelIndex

__all__ = ["Channel", "ChannelStore"]


class ChannelStore(FaissVectorStore):
    stores_text: bool = True
    is_embedding_query: bool = True

    _data: ChannelIndex = PrivateAttr()

    def __init__(self, channels: Sequence[Channel] | None = None, *, data: ChannelIndex | None = None) -> None:
        data = data if data is not None else ChannelIndex(channels or ())
        super().__init__(faiss_index=data.indexes[0])
        self._data = data

    # ---- llama-index vector store interface ----
    @property
    def client(self) -> Any:
        return self._data.indexes

    def add(self, nodes: List[BaseNode], **kwargs: Any) -> List[str]:
        if not nodes:
            return []
        rows = []
        for node in nodes:
            rec = {f: node.metadata.get(f) for f in RECORD_FIELDS if f != "text"}
            rec["text"] = node.get_content()
            rows.append((node.node_id, node.ref_doc_id or rec["doc_id"], rec))
        self._data.add(rows, np.asarray([n.get_embedding() for n in nodes], dtype=np.float32))
        return [n.node_id for n in nodes]

    def persist(self, persist_path: str, fs=None) -> None:
        self.save(Path(persist_path))

    def delete(self, ref_doc_id: str, **kwargs: Any) -> None:
        self._data.delete_doc(ref_doc_id)

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """First channel only; the retriever searches channels one by one with `search`."""
        if query.filters is not None:
            raise ValueError("metadata filters are not supported; filter the hits instead")
        vec = np.asarray(query.query_embedding, dtype=np.float32)[: self._data.channels[0].dim]
        hits = self.search(0, vec, query.similarity_top_k)
        return VectorStoreQueryResult(ids=[h[0] for h in hits], similarities=[h[1] for h in hits])

    # ---- what ingest reads back ----
    @property
    def data(self) -> ChannelIndex:
        return self._data

    @property
    def channels(self) -> list[Channel]:
        return list(self._data.channels)

    @property
    def records(self) -> dict[str, dict]:
        return self._data.records

    def doc_ids(self) -> list[str]:
        return self._data.doc_ids()

    def __len__(self) -> int:
        return len(self._data)

    def search(self, channel: int, vec: np.ndarray, k: int, allowed_fids: np.ndarray | None = None
               ) -> list[tuple[str, float]]:
        return self._data.search(channel, vec, k, allowed_fids)

    def save(self, directory: Path) -> None:
        self._data.save(directory)

    @classmethod
    def load(cls, directory: Path) -> "ChannelStore":
        return cls(data=ChannelIndex.load(directory))
