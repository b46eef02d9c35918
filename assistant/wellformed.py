"""Text that is not well-formed Unicode, made safe to answer: a lone surrogate (JSON's "\\ud800" decodes
to one) cannot be encoded as UTF-8, so every tokenizer, JSON encoder and event stream down the line
would fail on it. It becomes U+FFFD; a properly escaped surrogate pair becomes its character."""
from __future__ import annotations

from dataclasses import replace

from assistant.answer import AskRequest, Turn


def well_formed(text: str) -> str:
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def well_formed_request(req: AskRequest) -> AskRequest:
    """The request with its question and history well-formed (other fields are checked, not text)."""
    if not isinstance(req.question, str):
        return req
    history = tuple(Turn(t.role, well_formed(t.content)) if isinstance(t.content, str) else t for t in req.history)
    return replace(req, question=well_formed(req.question), history=history)
