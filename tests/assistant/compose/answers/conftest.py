"""Answer-module tests ask the shared session engine (tests/conftest.py) real questions."""
from __future__ import annotations

import pytest

from assistant.answer import AskRequest


@pytest.fixture(scope="session")
def ask(mw_assistant):
    def _ask(question: str, **kw):
        return mw_assistant.ask(AskRequest(question=question, **kw))

    return _ask


def lead(text: str) -> str:
    """The answer's first paragraph (the eval contract's LEAD), notices dropped."""
    paras = [p for p in text.strip().split("\n\n") if not p.startswith("_")]
    return paras[0] if paras else ""


def body(text: str) -> str:
    return text.split("\n**Sources**")[0].split("\n**来源**")[0]
