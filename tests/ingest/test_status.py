"""ingest/status.py: freshness from the recorded file listing, the content check as the fallback."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from ingest import pipeline
from ingest.manifest import Manifest
from ingest.sources import Source
from ingest.status import current_version, index_status, sources_digest


def _kb_only(settings):
    return [Source("kb", settings.kb_dir.resolve())]


@pytest.fixture
def no_content_check(monkeypatch):
    """Fails the test if the slow path (reading every document) runs."""
    def refuse(*a, **k):
        raise AssertionError("content check ran")

    monkeypatch.setattr(pipeline, "content_status", refuse)


def _settle(settings):
    """First check after copying the index: the kb moved, so the listing differs and is re-recorded."""
    assert index_status(settings).state == "fresh"


def test_an_unchanged_listing_is_fresh_without_reading_documents(built_settings, request):
    s = built_settings
    _settle(s)
    request.getfixturevalue("no_content_check")
    assert index_status(s).state == "fresh"
    assert index_status(s, sources=_kb_only(s)).state == "fresh"


def test_a_touched_file_is_checked_by_content_once_then_by_listing(built_settings, monkeypatch):
    s = built_settings
    _settle(s)
    doc = s.kb_dir / "en" / "hsdp.md"
    st = doc.stat()
    os.utime(doc, ns=(st.st_atime_ns, st.st_mtime_ns - 5_000_000_000))
    calls = []
    real = pipeline.content_status
    monkeypatch.setattr(pipeline, "content_status", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert index_status(s).state == "fresh" and calls == [1]  # same bytes: fresh, listing re-recorded
    assert index_status(s).state == "fresh" and calls == [1]  # decided from stat calls again


def test_edits_additions_and_removals_are_stale(built_settings):
    s = built_settings
    _settle(s)
    doc = s.kb_dir / "en" / "hsdp.md"
    doc.write_text(doc.read_text() + "\nOne more line.\n")
    st = index_status(s)
    assert st.state == "stale" and "hsdp.en" in st.reasons[0]
    (s.kb_dir / "zh" / "hsdp.md").unlink()
    st = index_status(s)
    assert st.state == "stale" and any("removed" in r for r in st.reasons)


def test_an_index_without_a_recorded_listing_gets_one(built_settings, request):
    s = built_settings
    version = current_version(s.index_dir)
    m = Manifest.load(version)
    m.sources_digest = ""  # as written before listings were recorded
    m.save(version)
    assert index_status(s).state == "fresh"  # by content
    assert Manifest.load(version).sources_digest == sources_digest(_kb_only(s))
    request.getfixturevalue("no_content_check")
    assert index_status(s).state == "fresh"  # by listing


def test_incompatible_is_decided_before_any_listing(built_settings, no_content_check):
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
        "r = Retriever.load(s, build=False)\n"
        "assert r.search('hsdp replica groups 副本', k=1)\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers', 'llama_index', 'sklearn')\n"
        "             if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"
