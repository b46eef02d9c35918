"""ingest/sources/skill_folder.py: SKILL.md and the files it references, nothing else."""
from __future__ import annotations

import pytest

from assistant.config import UPSTREAM_SKILL_DIR
from ingest.chunking import MAX_TOKENS, count_tokens
from ingest.sources import chunk_document
from ingest.sources.skill_folder import load_skill_folder


def test_skill_md_references_and_links_inside_the_folder(tmp_path):
    outside = tmp_path / "secret.md"
    outside.write_text("# Secret\nnot part of the skill\n")
    skill = tmp_path / "my-skill"
    (skill / "references").mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: my-skill\n---\n# My skill\nSee [more](extra.md) and [x](../secret.md).\n")
    (skill / "references" / "deep.md").write_text("# Deep\nreference text\n")
    (skill / "extra.md").write_text("# Extra\nlinked text\n")
    (skill / "skill-card.md").write_text("# Card\nbookkeeping\n")
    res = load_skill_folder(skill)
    ids = [d.id_ for d in res.documents]
    assert ids == ["skill:my-skill/SKILL.md", "skill:my-skill/references/deep.md", "skill:my-skill/extra.md"]
    assert all(d.metadata["kind"] == "skill" for d in res.documents)
    assert res.documents[0].metadata["title"] == "My skill"


@pytest.mark.skipif(not (UPSTREAM_SKILL_DIR / "SKILL.md").is_file(), reason="upstream skill folder absent")
def test_upstream_skill_folder_chunks_by_section():
    res = load_skill_folder(UPSTREAM_SKILL_DIR)
    chunks = [c for d in res.documents for c in chunk_document(d)]
    assert len(chunks) > 20
    assert all(count_tokens(c.embed_text) <= MAX_TOKENS for c in chunks)
    assert any("Pipeline Parallelism" in c.heading for c in chunks)
