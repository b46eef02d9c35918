"""Recording what Meshwise asks a model: a client wrapper that stores every request and its reply.

`meshwise eval --llm openai --record DIR` wraps the endpoint's client in `RecordingClient`; each
request (the messages, the tool names offered, the prompt version) and the reply (the message with
its tool calls, or the streamed text) is one JSON line of DIR/exchanges.jsonl. The question of each
exchange is kept as `match`, the key a replay fixture is found by (evals/replay_server.py). Errors are
recorded too, and re-raised unchanged. The key is never recorded.
"""
from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

from assistant.compose.llm.prompts import PROMPT_VERSION

_QUESTION = re.compile(r"(?:^|\n)QUESTION:\n(.*?)(?:\n\n[A-Z][A-Z' ]+(?: \(|:)|\Z)", re.S)
MATCH_CHARS = 160  # a fixture's key: the opening of the user's question, enough to tell cases apart


def question_of(messages: Sequence) -> str:
    """The opening of the QUESTION section of the last prompt message, '' when there is none."""
    for m in reversed(list(messages)):
        role, content = (m.get("role"), m.get("content")) if isinstance(m, dict) else m
        if role == "user" and isinstance(content, str):
            found = _QUESTION.search(content)
            if found:
                return found.group(1).strip()[:MATCH_CHARS]
    return ""


@dataclass
class RecordingClient:
    """Delegates to `inner` (an OpenAICompatClient); every exchange is appended to `directory`."""
    inner: object
    directory: Path
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self):
        self.directory = Path(self.directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / "exchanges.jsonl"

    def __getattr__(self, name):  # context_window, max_tokens, tools, timeouts: the inner client's
        return getattr(self.inner, name)

    def _write(self, kind: str, messages: Sequence, reply, error: str | None = None, **request) -> None:
        msgs = [m if isinstance(m, dict) else {"role": m[0], "content": m[1]} for m in messages]
        row = {"prompt_version": PROMPT_VERSION, "kind": kind, "match": question_of(msgs),
               "request": {"messages": msgs, **request}, "reply": reply, "error": error}
        with self._lock, self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")

    def chat(self, messages: Sequence[dict], *, tools: Sequence[dict] | None = None, tool_choice: str | None = None,
             deadline: float | None = None) -> dict:
        names = [t["function"]["name"] for t in tools or ()]
        try:
            reply = self.inner.chat(messages, tools=tools, tool_choice=tool_choice, deadline=deadline)
        except Exception as exc:
            self._write("tools", messages, None, error=getattr(exc, "kind", type(exc).__name__), tools=names,
                        tool_choice=tool_choice)
            raise
        self._write("tools", messages, reply, tools=names, tool_choice=tool_choice)
        return reply

    def stream(self, messages: Sequence[tuple[str, str]]) -> Iterator[str]:
        got: list[str] = []
        try:
            for delta in self.inner.stream(messages):
                got.append(delta)
                yield delta
        except Exception as exc:
            self._write("single_shot", messages, "".join(got), error=getattr(exc, "kind", type(exc).__name__))
            raise
        self._write("single_shot", messages, "".join(got))

    def complete(self, messages: Sequence[tuple[str, str]]) -> str:
        return "".join(self.stream(messages))
