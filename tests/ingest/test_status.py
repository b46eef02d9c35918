"""assistant/index/status.py: freshness from the recorded file listing; any difference is stale and
the build that follows decides by content (re-embedding nothing when nothing changed)."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from assistant.index.manifest import Manifest
from assistant.index.status import current_version, index_status, sources_digest
from ingest import pipeline
from ingest.pipeline import build_index
from ingest.sources import Source


def _kb_only(settings):
    return [Source("kb", settings.kb_dir.resolve())]


@pytest.fixture
def no_document_reads(monkeypatch):
    """Fails the test if the slow path (reading every document) runs."""
    def refuse(*a, **k):
        raise AssertionError("documents were read")

    monkeypatch.setattr(pipeline, "load_documents", refuse)


@pytest.fixture
def no_models(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("encoders were loaded")

    monkeypatch.setattr(pipeline, "load_encoders", refuse)


def _settle(settings):
    """The copied index names the template's kb; the settings' kb is the copy: a refresh records it."""
    assert index_status(settings).state == "stale"
    rep = build_index(settings)
    assert rep.chunks_embedded == 0
    assert index_status(settings).state == "fresh"


def test_an_unchanged_listing_is_fresh_without_reading_documents(built_settings, request):
    s = built_settings
    _settle(s)
    request.getfixturevalue("no_document_reads")
    assert index_status(s).state == "fresh"
    assert index_status(s, sources=_kb_only(s)).state == "fresh"


def test_a_touched_file_is_stale_once_and_the_refresh_embeds_nothing(built_settings, no_models):
    s = built_settings
    _settle(s)
    version = current_version(s.index_dir)
    doc = s.kb_dir / "en" / "hsdp.md"
    st = doc.stat()
    os.utime(doc, ns=(st.st_atime_ns, st.st_mtime_ns - 5_000_000_000))
    assert index_status(s).state == "stale"
    rep = build_index(s)  # same bytes: the no-op branch records the listing, no model is loaded
    assert rep.index_path == version and rep.chunks_embedded == 0
    assert index_status(s).state == "fresh"


def test_edits_additions_and_removals_are_stale(built_settings, encoders):
    s = built_settings
    _settle(s)
    doc = s.kb_dir / "en" / "hsdp.md"
    _write_old(doc, doc.read_text() + "\nOne more line.\n")
    assert index_status(s).state == "stale"
    rep = build_index(s, encoders=encoders)
    assert rep.updated == 1 and index_status(s).state == "fresh"
    (s.kb_dir / "zh" / "hsdp.md").unlink()
    assert index_status(s).state == "stale"
    assert build_index(s, encoders=encoders).removed == 1


def test_a_stale_index_is_read_once_on_its_way_to_the_retriever(built_settings, encoders, monkeypatch):
    """The status check decides from `stat` calls; only the build reads the documents (the content
    check that used to run first read every document a second time)."""
    from assistant.retrieve.retriever import Retriever
    from ingest.refresh import refresh_index

    s = built_settings
    _settle(s)
    doc = s.kb_dir / "en" / "hsdp.md"
    _write_old(doc, doc.read_text() + "\nOne more line about replica groups.\n")
    reads = []
    real = pipeline.load_documents
    monkeypatch.setattr(pipeline, "load_documents", lambda *a, **k: reads.append(1) or real(*a, **k))
    r = Retriever.load(s, encoders=encoders, warm_up=False, build=refresh_index)
    assert reads == [1]
    assert any("One more line" in rec["text"] for rec in r.store.records.values())


def test_an_index_without_a_recorded_listing_gets_one(built_settings, request, no_models):
    s = built_settings
    _settle(s)
    version = current_version(s.index_dir)
    m = Manifest.load(version)
    m.sources_digest = ""  # as written before listings were recorded
    m.save(version)
    assert index_status(s).state == "stale"
    assert build_index(s).index_path == version  # nothing changed: the listing is recorded in place
    assert Manifest.load(version).sources_digest == sources_digest(_kb_only(s))
    request.getfixturevalue("no_document_reads")
    assert index_status(s).state == "fresh"


def test_incompatible_is_decided_before_any_listing(built_settings, no_document_reads):
    from dataclasses import replace

    st = index_status(replace(built_settings, embed_models=("use-multilingual",)))
    assert st.state == "incompatible"
    st = index_status(built_settings, model_ids=["onnx:some-other-export", "x"])
    assert st.state == "incompatible" and "now onnx:some-other-export" in st.reasons[0]


def _write_old(path, text):
    """A file written a minute ago: older than the racy window."""
    path.write_text(text)
    past = time.time_ns() - 60_000_000_000
    os.utime(path, ns=(past, past))


def test_digest_sees_files_not_caches(tmp_path):
    (tmp_path / "en").mkdir()
    _write_old(tmp_path / "en" / "a.md", "a")
    src = [Source("kb", tmp_path)]
    d0 = sources_digest(src)
    assert d0
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "x.pyc").write_bytes(b"0")
    assert sources_digest(src) == d0
    _write_old(tmp_path / "en" / "b.md", "b")
    d1 = sources_digest(src)
    assert d1 not in ("", d0)
    (tmp_path / "en" / "b.md").rename(tmp_path / "en" / "c.md")
    assert sources_digest(src) not in ("", d0, d1)


def test_a_file_changed_just_now_gives_no_digest(tmp_path):
    """Racily clean: a same-size edit within one timestamp tick would keep the listing, so a listing
    with a file younger than RACY_S is not recorded and the next check reads content."""
    _write_old(tmp_path / "a.md", "a")
    src = [Source("kb", tmp_path)]
    assert sources_digest(src)
    (tmp_path / "a.md").write_text("b")
    assert sources_digest(src) == ""


def test_loading_a_fresh_index_imports_no_ingestion_or_torch(built_settings):
    """What makes a cold `meshwise ask` take seconds, not 15: the query path stays light."""
    s = built_settings
    _settle(s)
    code = (
        "import sys\n"
        "from dataclasses import replace\n"
        "from pathlib import Path\n"
        "from assistant.config import load_settings\n"
        "from assistant.retrieve.retriever import Retriever\n"
        f"s = replace(load_settings(env={{}}), kb_dir=Path({str(s.kb_dir)!r}), index_dir=Path({str(s.index_dir)!r}),\n"
        f"            model_cache_dir=Path({str(s.model_cache_dir)!r}))\n"
        "r = Retriever.load(s)\n"
        "assert r.search('hsdp replica groups 副本', k=1)\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers', 'llama_index', 'sklearn')\n"
        "             if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"
