"""assistant/index/manifest.py: what makes stored vectors unusable."""
from __future__ import annotations

from assistant.index.manifest import Manifest, content_hash, incompatibilities, library_versions


def _manifest(**kw):
    base = dict(chunker_version="1", tokenizer_version="1",
                channels=[{"name": "minilm", "dim": 384, "model_id": "x"}],
                libraries=library_versions(), sources=[], documents={"a.en": "h1"}, glossary_hash="",
                kb_version="k", chunks=1, created_at="now", build_seconds=1.0)
    base.update(kw)
    return Manifest(**base)


def test_same_models_and_versions_are_compatible():
    assert incompatibilities(_manifest(), ("minilm",), "1", "1") == []


def test_each_kind_of_mismatch_is_reported():
    assert "embedding models" in incompatibilities(_manifest(), ("minilm", "use-multilingual"), "1", "1")[0]
    assert "chunker" in incompatibilities(_manifest(), ("minilm",), "2", "1")[0]
    libs = {**library_versions(), "faiss-cpu": "0.0.1"}
    assert "faiss-cpu" in incompatibilities(_manifest(libraries=libs), ("minilm",), "1", "1")[0]


def test_round_trip_and_unreadable_manifest(tmp_path):
    m = _manifest()
    m.save(tmp_path)
    assert Manifest.load(tmp_path) == m
    (tmp_path / "manifest.json").write_text("{not json")
    assert Manifest.load(tmp_path) is None


def test_content_hash_depends_on_ids_and_hashes_not_order():
    assert content_hash({"a": "1", "b": "2"}) == content_hash({"b": "2", "a": "1"})
    assert content_hash({"a": "1"}) != content_hash({"a": "2"})
