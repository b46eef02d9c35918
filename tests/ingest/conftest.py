"""Fixtures for the ingest tests: a temporary copy of the fixture kb and the encoders, loaded once.

The fixture kb (tests/ingest/fixtures/kb) is a handful of short documents in both languages with a
glossary and anchors; tests that change documents work on their own copy.
"""
from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from assistant.config import load_settings

FIXTURE_KB = Path(__file__).parent / "fixtures" / "kb"


@pytest.fixture(scope="session")
def encoders():
    from assistant.retrieve.embeddings import load_encoders

    return load_encoders(("minilm", "use-multilingual"))


@pytest.fixture
def kb_copy(tmp_path) -> Path:
    dst = tmp_path / "kb"
    shutil.copytree(FIXTURE_KB, dst)
    return dst


@pytest.fixture
def kb_settings(tmp_path, kb_copy):
    """Settings on a private kb copy and index dir, isolated from the user's config."""
    base = load_settings(env={"MESHWISE_CONFIG": str(tmp_path / "none.toml")})
    return replace(base, kb_dir=kb_copy, index_dir=tmp_path / "index", data_dir=tmp_path)
