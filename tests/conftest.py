"""Shared fixtures: one real `Assistant` per test session, on an index built once.

The index lives in `.cache/test-index` (git-ignored) so repeated local runs reuse it; the manifest
rebuilds it when the kb or the embedding models change. CI starts from a clean checkout and builds it
once.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from assistant.config import REPO_ROOT, load_settings

# One thread per pool: the test machine has 2 cores and competing pools cost far more than they give.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

TEST_CACHE = REPO_ROOT / ".cache"
# The ONNX export of MiniLM, made once per checkout; subprocesses (CLI tests) inherit it.
TEST_MODEL_CACHE = Path(os.environ.setdefault("MESHWISE_MODEL_CACHE_DIR", str(TEST_CACHE / "models")))


@pytest.fixture(scope="session")
def mw_settings(tmp_path_factory):
    """Settings isolated from the user's real config and data dirs, on the shared test index."""
    data_dir = tmp_path_factory.mktemp("meshwise-data")
    index_dir = Path(os.environ.get("MESHWISE_TEST_INDEX_DIR", TEST_CACHE / "test-index"))
    return load_settings(env={"MESHWISE_CONFIG": str(data_dir / "none.toml")}, data_dir=data_dir, index_dir=index_dir,
                         model_cache_dir=TEST_MODEL_CACHE)


@pytest.fixture(scope="session")
def mw_assistant(mw_settings):
    """The real engine, offline answerer, loaded once for every test that needs it."""
    from assistant.engine import Assistant

    a = Assistant.load(mw_settings, llm="offline")
    yield a
    close = getattr(a, "close", None)
    if close:
        close()
