"""Any OpenAI-compatible chat endpoint, through llama-index's `OpenAILike`, streamed.

Errors are folded into `LLMError` with a short kind (timeout, connection, http, stream, empty, other)
so the engine can fall back to the offline answer with a one-line notice that leaks nothing.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Iterator, Sequence


class LLMError(RuntimeError):
    def __init__(self, kind: str, detail: str = ""):
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind


def classify(exc: BaseException) -> LLMError:
    """Map client/transport exceptions to an LLMError kind (no URLs or keys in the result)."""
    if isinstance(exc, LLMError):
        return exc
    import httpx
    import openai

    if isinstance(exc, (openai.APITimeoutError, httpx.TimeoutException, TimeoutError)):
        return LLMError("timeout", type(exc).__name__)
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError, json.JSONDecodeError)):
        return LLMError("stream", type(exc).__name__)
    if isinstance(exc, openai.APIConnectionError):
        # openai wraps mid-stream transport failures as connection errors too; the cause tells them apart
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, (httpx.RemoteProtocolError, httpx.ReadError)):
            return LLMError("stream", type(cause).__name__)
        if isinstance(cause, httpx.TimeoutException):
            return LLMError("timeout", type(cause).__name__)
        return LLMError("connection", type(exc).__name__)
    if isinstance(exc, openai.APIStatusError):
        return LLMError("http", str(exc.status_code))
    if isinstance(exc, (openai.APIResponseValidationError, ValueError, KeyError, IndexError, TypeError)):
        return LLMError("stream", type(exc).__name__)
    return LLMError("other", type(exc).__name__)


@dataclass
class OpenAICompatClient:
    base_url: str
    model: str = "default"
    api_key: str | None = None
    timeout_s: float = 60.0  # connect and per-read timeout
    total_timeout_s: float | None = None  # whole answer; default 4x timeout_s
    max_tokens: int = 900
    temperature: float = 0.2
    context_window: int = 8192
    _llm: object = field(default=None, init=False, repr=False)

    def _client(self):
        if self._llm is None:
            from llama_index.llms.openai_like import OpenAILike

            self._llm = OpenAILike(
                model=self.model,
                api_base=self.base_url,
                api_key=self.api_key or "unused",  # local servers need no key; the client needs a value
                is_chat_model=True,
                timeout=self.timeout_s,
                max_retries=0,
                temperature=self.temperature,
                max_tokens=self.max_tokens,
                context_window=self.context_window,
            )
        return self._llm

    def stream(self, messages: Sequence[tuple[str, str]]) -> Iterator[str]:
        """Text deltas; raises LLMError on any failure, including a stream that ends empty."""
        from llama_index.core.llms import ChatMessage

        deadline = time.monotonic() + (self.total_timeout_s or 4 * self.timeout_s)
        got = finished = False
        try:
            for resp in self._client().stream_chat([ChatMessage(role=r, content=c) for r, c in messages]):
                delta = resp.delta or ""
                if delta:
                    got = True
                    yield delta
                finished = finished or _finish_reason(resp.raw) is not None
                if time.monotonic() > deadline:
                    raise LLMError("timeout", "total answer time exceeded")
        except GeneratorExit:
            raise
        except BaseException as exc:  # noqa: BLE001 - every failure becomes a fallback, never a crash
            if isinstance(exc, KeyboardInterrupt):
                raise
            err = classify(exc)
            if got and err.kind == "connection":  # it answered, then the connection died: a broken stream
                err = LLMError("stream", err.args[0])
            raise err from exc
        if not got:
            raise LLMError("empty")
        if not finished:
            # A connection that just ends is a cut-off answer, not a complete one.
            raise LLMError("stream", "no finish_reason")

    def complete(self, messages: Sequence[tuple[str, str]]) -> str:
        return "".join(self.stream(messages))


def _finish_reason(raw) -> str | None:
    choices = getattr(raw, "choices", None)
    if choices is None and isinstance(raw, dict):
        choices = raw.get("choices")
    if not choices:
        return None
    c = choices[0]
    return getattr(c, "finish_reason", None) if not isinstance(c, dict) else c.get("finish_reason")
