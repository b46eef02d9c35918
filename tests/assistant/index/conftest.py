"""Fixtures for the shared index layer: the two encoders, loaded once per session."""
from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def minilm():
    from assistant.index.encoders import load_encoder

    return load_encoder("minilm", Path(os.environ["MESHWISE_MODEL_CACHE_DIR"]))  # set by tests/conftest.py


@pytest.fixture(scope="session")
def use_multilingual():
    from assistant.index.encoders import load_encoder

    return load_encoder("use-multilingual")
