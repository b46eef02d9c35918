"""assistant/retrieve/retriever.py on a small fixture index: bilingual hybrid search and its options."""
from __future__ import annotations

from dataclasses import replace

import pytest

from assistant.retrieve.retriever import Retriever, base_id


@pytest.mark.parametrize("query, expected", [
    ("How do I configure HSDP with dp_replicate_size?", "hsdp"),
    ("混合分片数据并行怎么配置？", "hsdp"),
    ("流水线并行的微批次数量有什么要求", "pipeline-parallel"),
    ("MW-E-EP-DIVIDES", "pitfall-ep-divisibility"),
    ("moe_mesh 有哪些维度", "moe-expert-parallel"),
])
def test_first_hit_is_the_right_document(small_retriever, query, expected):
    hits = small_retriever.search(query, k=3)
    assert hits and base_id(hits[0].doc_id) == expected


def test_code_anchors_rank_below_kb_documents_unless_asked_for(small_retriever):
    hits = small_retriever.search("where is the mesh built?", k=3)
    assert "anchor:mesh-build" in [base_id(h.doc_id) for h in hits]
    assert small_retriever.search("where is the mesh built?", k=1, kinds=["anchor"])[0].doc_id == "anchor:mesh-build"
    zh = small_retriever.search("设备网格在哪里创建？", k=1, kinds=["anchor"])
    assert zh[0].doc_id == "anchor:mesh-build"


def test_hits_carry_every_field_and_one_chunk_per_document(small_retriever):
    hits = small_retriever.search("pipeline parallelism requirements", k=5)
    assert len({base_id(h.doc_id) for h in hits}) == len(hits)
    h = hits[0]
    assert h.id.startswith(h.doc_id + "#") and h.title and h.path.startswith("kb/") and h.heading
    assert h.kind in {"doc", "pitfall", "anchor"} and h.lang in {"en", "zh"} and h.score > 0 and h.text
    assert [x.score for x in hits] == sorted((x.score for x in hits), reverse=True)


def test_language_preference_picks_the_translation(small_retriever):
    zh = small_retriever.search("混合分片数据并行怎么配置？", k=1)[0]
    assert zh.doc_id == "hsdp.zh"
    en = small_retriever.search("混合分片数据并行怎么配置？", k=1, lang="en")[0]
    assert en.doc_id == "hsdp.en"
    assert small_retriever.search("How do I configure HSDP?", k=1)[0].lang == "en"


def test_kind_filter_and_per_doc(small_retriever):
    hits = small_retriever.search("ep_size divisibility", k=5, kinds=["pitfall"])
    assert hits and {h.kind for h in hits} == {"pitfall"}
    assert small_retriever.search("ep_size", k=5, kinds=["nope"]) == []
    many = small_retriever.search("HSDP", k=2, per_doc=2)
    assert len(many) <= 4
    assert max(sum(1 for h in many if base_id(h.doc_id) == b) for b in {base_id(h.doc_id) for h in many}) <= 2


def test_doc_chunks_lists_a_document_in_order(small_retriever):
    zh_first = small_retriever.doc_chunks("pipeline-parallel", lang="zh")
    assert zh_first and zh_first[0].doc_id == "pipeline-parallel.zh"
    assert {h.doc_id for h in zh_first} == {"pipeline-parallel.zh", "pipeline-parallel.en"}
    assert small_retriever.doc_chunks("no-such-doc") == []


def test_empty_and_oversized_queries(small_retriever):
    assert small_retriever.search("   ") == []
    assert small_retriever.search("tp_size " * 2000, k=2)  # clipped, not an error


def test_load_without_build_names_the_command(small_settings, tmp_path):
    from assistant.index.status import IndexNotReady

    with pytest.raises(IndexNotReady, match="meshwise ingest"):
        Retriever.load(replace(small_settings, index_dir=tmp_path / "none"))


def test_query_time_pools_use_one_thread(small_retriever):
    import faiss
    import torch
    from threadpoolctl import threadpool_info

    assert torch.get_num_threads() == 1 and faiss.omp_get_max_threads() == 1
    assert all(p["num_threads"] == 1 for p in threadpool_info() if p["user_api"] == "blas")


def test_prefetch_embeds_what_search_embeds_on_the_worker_thread(small_retriever, monkeypatch):
    """Retriever.prefetch starts MiniLM's query vector on the encoders' worker thread; search then reads
    it instead of encoding again, and the hits are the same as without it (issue 21)."""
    import threading

    q = "How do I set tp_size for 8 GPUs? 张量并行"
    small_retriever.forget_embeddings()
    want = small_retriever.search(q)
    minilm = next(e for e in small_retriever.encoders if e.english_only)
    threads: list[str] = []
    real = type(minilm).encode

    def encode(self, texts, batch_size=32):
        threads.append(threading.current_thread().name)
        return real(self, texts, batch_size)

    monkeypatch.setattr(type(minilm), "encode", encode)
    small_retriever.forget_embeddings()
    small_retriever.prefetch(q)
    got = small_retriever.search(q)
    assert [(h.id, h.score) for h in got] == [(h.id, h.score) for h in want]
    mini = [t for t in threads if t.startswith("meshwise-prefetch")]
    assert len(mini) == 1 and len(threads) == 2  # MiniLM on the worker, once; USE on the caller's thread


def test_a_prefetch_nobody_reads_is_finished_before_the_next_question(small_retriever):
    small_retriever.prefetch("pipeline parallelism across nodes")
    minilm = next(e for e in small_retriever.encoders if e.english_only)
    assert minilm._pending
    small_retriever.forget_embeddings()
    assert not minilm._pending and not minilm._memo
