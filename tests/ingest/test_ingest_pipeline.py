"""ingest/pipeline.py: incremental upserts, removals, staleness and atomic publishing."""
from __future__ import annotations

from dataclasses import replace

import pytest

from assistant.index.manifest import Manifest
from assistant.index.status import current_version, index_status
from ingest import pipeline
from ingest.pipeline import build_index
from ingest.sources import Source
from ingest.store import ChannelStore


def _kb_only(settings):
    return [Source("kb", settings.kb_dir.resolve())]


def _docs(path):
    return {r["doc_id"] for r in ChannelStore.load(path).records.values()}


def test_cold_build_then_incremental_updates_only_what_changed(kb_settings, encoders):
    s = kb_settings
    first = build_index(s, _kb_only(s), encoders=encoders)
    assert first.full_rebuild and first.added == first.documents == 10
    assert first.chunks == first.chunks_embedded > 0
    v1 = current_version(s.index_dir)
    assert (v1 / "manifest.json").is_file() and (v1 / "bm25" / "rows.json").is_file()

    # Nothing changed: nothing embedded, and the models are not even needed.
    again = build_index(s, _kb_only(s), encoders=None)
    assert (again.unchanged, again.chunks_embedded, again.full_rebuild) == (10, 0, False)

    # One document edited: only its chunks are re-embedded, the others keep their vectors.
    doc = s.kb_dir / "en" / "hsdp.md"
    doc.write_text(doc.read_text() + "\n## Extra\n\nA new paragraph about replica groups.\n")
    store_before = ChannelStore.load(current_version(s.index_dir))
    keep = {nid: r["fid"] for nid, r in store_before.records.items() if r["doc_id"] != "hsdp.en"}
    upd = build_index(s, _kb_only(s), encoders=encoders)
    assert (upd.updated, upd.added, upd.removed) == (1, 0, 0)
    store_after = ChannelStore.load(current_version(s.index_dir))
    hsdp_chunks = [r for r in store_after.records.values() if r["doc_id"] == "hsdp.en"]
    assert upd.chunks_embedded == len(hsdp_chunks)
    assert any("replica groups" in r["text"] for r in hsdp_chunks)
    assert {nid: store_after.records[nid]["fid"] for nid in keep} == keep

    # A removed document leaves every channel and the lexical rows.
    (s.kb_dir / "zh" / "pipeline-parallel.md").unlink()
    rem = build_index(s, _kb_only(s), encoders=encoders)
    assert rem.removed == 1
    path = current_version(s.index_dir)
    assert "pipeline-parallel.zh" not in _docs(path)
    assert not any(r.startswith("pipeline-parallel.zh") for r in (path / "bm25" / "rows.json").read_text().split('"'))
    assert "pipeline-parallel.zh" not in Manifest.load(path).documents


def test_status_reports_missing_fresh_stale_and_incompatible(kb_settings, built_settings):
    assert index_status(kb_settings).state == "missing"
    s = built_settings
    build_index(s)  # the copy's kb takes the template's place
    assert index_status(s).state == "fresh"  # the recorded sources, not the defaults, are checked
    (s.kb_dir / "en" / "new-doc.md").write_text("---\nid: new-doc.en\ntitle: New\nlang: en\nkind: doc\n---\n# New\nx\n")
    assert index_status(s).state == "stale"
    other = replace(s, embed_models=("use-multilingual",))
    st = index_status(other)
    assert st.state == "incompatible" and "embedding models" in st.reasons[0]


def test_glossary_edit_makes_chinese_documents_stale_and_re_embeds_them(built_settings, encoders):
    s = built_settings
    g = s.kb_dir / "glossary.yaml"
    build_index(s)
    assert index_status(s).state == "fresh"
    g.write_text(g.read_text() + "  - zh: [上下文并行]\n    en: [context parallelism, cp_size]\n")
    assert index_status(s).state == "stale"
    rep = build_index(s, _kb_only(s), encoders=encoders)
    # The Chinese documents (and the anchors, which quote a Chinese question) are re-embedded.
    assert rep.updated >= 4 and rep.unchanged >= 4


def test_a_model_that_now_embeds_differently_forces_a_full_rebuild(built_settings, encoders, monkeypatch):
    import copy

    s = built_settings
    doc = s.kb_dir / "en" / "hsdp.md"
    doc.write_text(doc.read_text() + "\nOne more line.\n")
    changed = [copy.copy(e) for e in encoders]
    changed[0].model_id += "+other-quantisation"
    monkeypatch.setattr(pipeline, "load_encoders", lambda names, cache_dir=None: changed)  # what the CLI would load
    rep = build_index(s, _kb_only(s))
    assert rep.full_rebuild and rep.chunks_embedded == rep.chunks
    assert "embedding model changed" in rep.rebuild_reasons[0]
    assert Manifest.load(current_version(s.index_dir)).channels[0]["model_id"].endswith("+other-quantisation")


def test_failed_build_leaves_the_previous_index_serving(built_settings, encoders, monkeypatch):
    s = built_settings
    before = current_version(s.index_dir)
    (s.kb_dir / "en" / "hsdp.md").write_text("---\nid: hsdp.en\ntitle: H\nlang: en\nkind: doc\n---\n# H\nchanged\n")

    def boom(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(pipeline.LexicalIndex, "build", boom)
    with pytest.raises(RuntimeError):
        build_index(s, _kb_only(s), encoders=encoders)
    assert current_version(s.index_dir) == before
    assert Manifest.load(before) is not None
    assert not list(s.index_dir.glob(".tmp-*"))


def test_rebuild_flag_re_embeds_everything(built_settings, encoders):
    s = built_settings
    rep = build_index(s, _kb_only(s), rebuild=True, encoders=encoders)
    assert rep.full_rebuild and rep.chunks_embedded == rep.chunks
    # Old versions are cleaned up: at most the current and the previous one remain.
    assert len(list(s.index_dir.glob("v-*"))) <= 2


def test_the_retriever_builds_a_missing_index_once_then_reuses_it(kb_settings, encoders, monkeypatch):
    from assistant.retrieve.retriever import Retriever
    from ingest.refresh import refresh_index

    s = kb_settings
    monkeypatch.setattr("assistant.index.status.default_sources", _kb_only)
    p1 = Retriever.load(s, encoders=encoders, warm_up=False, build=refresh_index).path
    assert p1 == current_version(s.index_dir)
    calls = []
    monkeypatch.setattr(pipeline, "build_index", lambda *a, **k: calls.append(1))
    assert Retriever.load(s, encoders=encoders, warm_up=False, build=refresh_index).path == p1 and calls == []
