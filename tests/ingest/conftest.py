"""Fixtures for the ingest tests: a temporary copy of the fixture kb and the encoders, loaded once.

The fixture kb (tests/ingest/fixtures/kb) is a handful of short documents in both languages with a
glossary and anchors; tests that change documents work on their own copy.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from assistant.config import load_settings

FIXTURE_KB = Path(__file__).parent / "fixtures" / "kb"
TEST_MODEL_CACHE = Path(os.environ["MESHWISE_MODEL_CACHE_DIR"])  # set by tests/conftest.py


@pytest.fixture(scope="session")
def encoders():
    from assistant.index.encoders import load_encoders

    return load_encoders(("minilm", "use-multilingual"), TEST_MODEL_CACHE)


@pytest.fixture
def kb_copy(tmp_path) -> Path:
    dst = tmp_path / "kb"
    shutil.copytree(FIXTURE_KB, dst)
    return dst


def _settings(root: Path, kb: Path):
    base = load_settings(env={"MESHWISE_CONFIG": str(root / "none.toml")})
    return replace(base, kb_dir=kb, index_dir=root / "index", data_dir=root, model_cache_dir=TEST_MODEL_CACHE)


@pytest.fixture
def kb_settings(tmp_path, kb_copy):
    """Settings on a private kb copy and an empty index dir, isolated from the user's config."""
    return _settings(tmp_path, kb_copy)


@pytest.fixture(scope="session")
def template_index(tmp_path_factory, encoders) -> Path:
    """The fixture kb indexed once per session (kb only, not the upstream skill folder)."""
    from ingest.pipeline import build_index
    from ingest.sources import Source

    root = tmp_path_factory.mktemp("mw-template")
    shutil.copytree(FIXTURE_KB, root / "kb")
    build_index(_settings(root, root / "kb"), [Source("kb", root / "kb")], encoders=encoders)
    return root


@pytest.fixture
def built_settings(tmp_path, template_index):
    """Like kb_settings, but starting from a private copy of the session's built index."""
    root = tmp_path / "built"
    shutil.copytree(template_index / "kb", root / "kb")
    shutil.copytree(template_index / "index", root / "index", symlinks=True)
    return _settings(root, root / "kb")
