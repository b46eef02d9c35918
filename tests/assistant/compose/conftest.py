"""A loaded offline engine, shared by the composer tests (index built once under .index/tests)."""
from __future__ import annotations

import pytest

from assistant.config import REPO_ROOT, Settings

TEST_INDEX_DIR = REPO_ROOT / ".index" / "tests"


@pytest.fixture(scope="session")
def engine():
    from assistant.engine import Assistant

    a = Assistant.load(Settings(index_dir=TEST_INDEX_DIR, data_dir=TEST_INDEX_DIR.parent))
    yield a
    a.close()
