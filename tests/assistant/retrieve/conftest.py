"""Fixtures for the retrieval tests: one small index per session, built from a temporary copy of the
ingest fixture kb (a few documents in English and Chinese, a glossary and two anchors)."""
from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from assistant.config import REPO_ROOT, load_settings

FIXTURE_KB = REPO_ROOT / "tests" / "ingest" / "fixtures" / "kb"


@pytest.fixture(scope="session")
def small_settings(tmp_path_factory):
    root = tmp_path_factory.mktemp("mw-small")
    kb = root / "kb"
    shutil.copytree(FIXTURE_KB, kb)
    base = load_settings(env={"MESHWISE_CONFIG": str(root / "none.toml")})
    return replace(base, kb_dir=kb, index_dir=root / "index", data_dir=root,
                   model_cache_dir=Path(os.environ["MESHWISE_MODEL_CACHE_DIR"]))  # set by tests/conftest.py


@pytest.fixture(scope="session")
def small_retriever(small_settings):
    from assistant.retrieve.retriever import Retriever
    from ingest.pipeline import build_index
    from ingest.sources import Source

    # kb only (not the upstream skill folder): small and deterministic.
    build_index(small_settings, [Source("kb", Path(small_settings.kb_dir).resolve())])
    return Retriever.load(small_settings)


@pytest.fixture(scope="session")
def minilm(small_retriever):
    return next(e for e in small_retriever.encoders if e.name == "minilm")
