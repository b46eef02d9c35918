"""Composer tests run on the shared session engine (`mw_assistant`, tests/conftest.py); the answer
checks live in answer_checks.py, registered here so the test modules can import them under
pytest's importlib import mode."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_CHECKS = Path(__file__).with_name("answer_checks.py")
if "answer_checks" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("answer_checks", _CHECKS)
    _mod = importlib.util.module_from_spec(_spec)
    sys.modules["answer_checks"] = _mod
    _spec.loader.exec_module(_mod)


@pytest.fixture(scope="session")
def engine(mw_assistant):
    return mw_assistant
