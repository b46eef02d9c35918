"""ingest/sources/markdown.py: front matter and heading-aware chunks within MiniLM's window."""
from __future__ import annotations

import pytest

from ingest.chunking import MAX_TOKENS, count_tokens
from ingest.sources.markdown import FrontMatterError, chunk_markdown, parse_sections, split_front_matter


def test_front_matter_is_split_from_the_body():
    meta, body = split_front_matter("---\nid: hsdp.en\ntopics: [a, b]\n---\n# Title\ntext\n")
    assert meta == {"id": "hsdp.en", "topics": ["a", "b"]}
    assert body.startswith("# Title")


def test_no_front_matter_gives_empty_mapping():
    assert split_front_matter("# Just a doc\n") == ({}, "# Just a doc\n")


@pytest.mark.parametrize("text", [
    "---\nid: x\nno closing line\n",          # never closed
    "---\n- a list\n- not a mapping\n---\nbody",  # not a mapping
    "---\nkey: [unclosed\n---\nbody",          # invalid YAML
])
def test_bad_front_matter_is_rejected(text):
    with pytest.raises(FrontMatterError):
        split_front_matter(text)


def test_oversized_front_matter_is_rejected():
    with pytest.raises(FrontMatterError):
        split_front_matter("---\nx: '" + "a" * 20000 + "'\n---\nbody")


def test_small_document_is_one_chunk_with_title_as_heading():
    chunks = chunk_markdown("# HSDP\n\nShort intro.\n\n## Config\n\nSet dp_replicate_size.\n", "HSDP doc")
    assert len(chunks) == 1
    assert chunks[0].heading == "HSDP"
    assert "## Config" in chunks[0].text and "Short intro." in chunks[0].text


def _big_section(name: str, n: int) -> str:
    sentences = " ".join(f"Sentence {i} about {name} and tp_size sharding across ranks." for i in range(n))
    return f"## {name}\n\n{sentences}\n"


def test_big_document_is_cut_at_headings_with_heading_paths():
    body = "# Guide\n\nIntro.\n\n" + _big_section("Alpha", 30) + _big_section("Beta", 30)
    chunks = chunk_markdown(body, "Guide")
    headings = {c.heading for c in chunks}
    assert "Guide > Alpha" in headings and "Guide > Beta" in headings
    # No chunk mixes the two sections' sentences.
    assert not any("about Alpha" in c.text and "about Beta" in c.text for c in chunks)


def test_every_chunk_fits_the_encoder_window():
    huge = "# Huge\n\n" + _big_section("One", 200) + "## Two\n\n```yaml\n" + "\n".join(
        f"key_{i}: value_{i}" for i in range(300)) + "\n```\n"
    chunks = chunk_markdown(huge, "Huge", context="tp_size, MW-E-WORLD-DIVISIBLE")
    assert len(chunks) > 5
    for c in chunks:
        assert count_tokens(c.embed_text) <= MAX_TOKENS
        assert c.text.count("```") % 2 == 0  # code fences stay balanced in every piece


def test_chinese_text_is_counted_per_character():
    zh = "# 标题\n\n" + "这是一段关于张量并行的说明。" * 80
    chunks = chunk_markdown(zh, "标题")
    assert len(chunks) >= 4
    assert all(count_tokens(c.embed_text) <= MAX_TOKENS for c in chunks)


def test_headings_inside_code_fences_are_not_sections():
    root = parse_sections("# T\n\n```bash\n# not a heading\necho hi\n```\n\n## Real\n\nx\n", "T")
    assert [c.title for c in root.children] == ["Real"]


def test_small_sibling_sections_are_packed_together():
    body = "# Pitfall\n\n" + "".join(f"## Part {i}\n\nshort text {i}.\n\n" for i in range(4)) + _big_section("Long", 40)
    chunks = chunk_markdown(body, "Pitfall")
    packed = [c for c in chunks if "## Part 0" in c.text]
    assert packed and all(f"## Part {i}" in packed[0].text for i in range(4))


def test_html_comments_are_dropped():
    chunks = chunk_markdown("# T\n\n<!-- editor note -->\nVisible text.\n", "T")
    assert "editor note" not in chunks[0].text and "Visible text." in chunks[0].text
