"""ingest/store.py: multi-channel FAISS store with deletes that never alias ids."""
from __future__ import annotations

import numpy as np
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode

from ingest.store import Channel, ChannelStore


def _node(doc: str, i: int, vec: np.ndarray) -> TextNode:
    n = TextNode(id_=f"{doc}#{i}", text=f"text {doc} {i}", embedding=vec.tolist(),
                 metadata={"doc_id": doc, "kind": "doc", "lang": "en", "heading": "H", "title": doc})
    n.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=doc)
    return n


def _unit(rng, dim):
    v = rng.normal(size=dim).astype(np.float32)
    return v / np.linalg.norm(v)


def test_add_search_delete_and_persist(tmp_path):
    rng = np.random.default_rng(0)
    store = ChannelStore([Channel("a", 4), Channel("b", 3)])
    vecs = {}
    nodes = []
    for doc in ("d1", "d2"):
        for i in range(2):
            va, vb = _unit(rng, 4), _unit(rng, 3)
            vecs[f"{doc}#{i}"] = (va, vb)
            nodes.append(_node(doc, i, np.concatenate([va, vb])))
    store.add(nodes)
    assert len(store) == 4
    # Each channel finds a node by its own slice of the concatenated vector.
    assert store.search(0, vecs["d2#1"][0], 1)[0][0] == "d2#1"
    assert store.search(1, vecs["d1#0"][1], 1)[0][0] == "d1#0"

    store.delete("d1")
    assert sorted(store.records) == ["d2#0", "d2#1"]
    assert all(nid.startswith("d2") for nid, _ in store.search(0, vecs["d1#0"][0], 10))

    # New vectors after a delete get fresh ids: nothing old resurfaces under a new name.
    va, vb = _unit(rng, 4), _unit(rng, 3)
    store.add([_node("d3", 0, np.concatenate([va, vb]))])
    fids = [r["fid"] for r in store.records.values()]
    assert len(set(fids)) == len(fids) and max(fids) == 4

    store.save(tmp_path)
    again = ChannelStore.load(tmp_path)
    assert sorted(again.records) == sorted(store.records)
    assert again.search(0, va, 1)[0][0] == "d3#0"
    # Kind filters: an allow-list of FAISS ids.
    only = np.asarray([again.records["d2#0"]["fid"]], dtype=np.int64)
    assert [nid for nid, _ in again.search(0, va, 5, only)] == ["d2#0"]


def test_wrong_embedding_width_is_refused():
    store = ChannelStore([Channel("a", 4)])
    import pytest

    with pytest.raises(ValueError):
        store.add([_node("d", 0, np.ones(5, dtype=np.float32))])
