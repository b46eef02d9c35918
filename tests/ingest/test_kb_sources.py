"""ingest/sources/kb_markdown.py and anchors.py: kb documents, their metadata and problems."""
from __future__ import annotations

from ingest.sources import chunk_document, detect_source, load_source
from ingest.sources.anchors import load_anchors
from ingest.sources.kb_markdown import load_kb


def test_fixture_kb_loads_every_document_with_front_matter_metadata(kb_copy):
    res = load_kb(kb_copy)
    by_id = {d.id_: d for d in res.documents}
    assert {"hsdp.en", "hsdp.zh", "pitfall-ep-divisibility.en", "anchor:mesh-build"} <= set(by_id)
    assert res.warnings == []
    zh = by_id["hsdp.zh"].metadata
    assert (zh["lang"], zh["kind"], zh["path"]) == ("zh", "doc", "kb/zh/hsdp.md")
    pit = by_id["pitfall-ep-divisibility.en"].metadata
    assert pit["kind"] == "pitfall" and "MW-E-EP-DIVIDES" in pit["context"]
    # Front matter is metadata, not text.
    assert not by_id["hsdp.en"].text.lstrip().startswith("---")


def test_missing_id_falls_back_to_file_name_with_a_warning(kb_copy):
    (kb_copy / "en" / "extra.md").write_text("---\ntitle: Extra\nlang: en\nkind: doc\n---\n# Extra\ntext\n")
    res = load_kb(kb_copy)
    assert "extra.en" in {d.id_ for d in res.documents}
    assert any("no id" in w for w in res.warnings)


def test_broken_front_matter_skips_the_document_only(kb_copy):
    (kb_copy / "en" / "broken.md").write_text("---\nid: broken.en\ntitle: [oops\n---\nbody\n")
    res = load_kb(kb_copy)
    ids = {d.id_ for d in res.documents}
    assert "broken.en" not in ids and "hsdp.en" in ids
    assert any("broken.md" in w for w in res.warnings)


def test_duplicate_ids_keep_the_first(kb_copy):
    (kb_copy / "en" / "hsdp-copy.md").write_text("---\nid: hsdp.en\ntitle: Copy\nlang: en\nkind: doc\n---\nx\n")
    res = load_kb(kb_copy)
    assert [d.id_ for d in res.documents].count("hsdp.en") == 1
    assert any("duplicate id" in w for w in res.warnings)


def test_anchors_accept_a_plain_list_and_render_every_field(tmp_path):
    p = tmp_path / "anchors.yaml"
    p.write_text("- path: a/b.py\n  symbols: [f, g]\n  questions: ['where is f?']\n- {note: no path}\n")
    res = load_anchors(p, rel_path="kb/anchors.yaml")
    assert [d.id_ for d in res.documents] == ["anchor:a/b.py"]
    assert "where is f?" in res.documents[0].text and "- g" in res.documents[0].text
    assert res.warnings and "neither id nor path" in res.warnings[0]
    chunks = chunk_document(res.documents[0])
    assert len(chunks) == 1 and chunks[0].heading.startswith("Code anchor")


def test_detect_source_tells_kinds_apart(kb_copy, tmp_path):
    assert detect_source(kb_copy).kind == "kb"
    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("# S\n")
    assert detect_source(skill).kind == "skill"
    code = tmp_path / "code"
    (code / "pkg").mkdir(parents=True)
    (code / "pkg" / "__init__.py").write_text("")
    assert detect_source(code).kind == "code"
    assert load_source(detect_source(code)).documents[0].id_ == "code:code/pkg/__init__.py"
