"""Any OpenAI-compatible chat endpoint: streamed through llama-index's `OpenAILike`, or one whole
reply with `tools` (function calling, `chat`) over httpx, read under a byte cap and the caller's clock.

Errors are folded into `LLMError` with a short kind (timeout, connection, http, stream, too_long,
empty, other; `no_tools` when the server refuses the `tools` field, `no_tools_now` when a 500 names
tools: the single-shot prompt this once) so the engine can fall back to the offline answer with a
one-line notice that leaks nothing. The HTTP transport under the client
holds every response to the total deadline by the clock and to a byte cap (`BoundedTransport`):
httpx's read timeout restarts with every byte, so an endpoint that sends only `: ping` keep-alives,
or endless deltas, would otherwise never stop.
"""
from __future__ import annotations

import json
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Iterator, Sequence

import httpx

# An answer of max_tokens 900 streams about 0.2 MB of SSE (one JSON chunk per token); 20x that is
# a runaway endpoint, not an answer, and holding it would only grow the process.
MAX_STREAM_BYTES = 4 << 20


class LLMError(RuntimeError):
    def __init__(self, kind: str, detail: str = ""):
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind


def classify(exc: BaseException) -> LLMError:
    """Map client/transport exceptions to an LLMError kind (no URLs or keys in the result)."""
    if isinstance(exc, LLMError):
        return exc
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


class _BoundedStream(httpx.SyncByteStream):
    """A response body read until `deadline` (time.monotonic) and at most `max_bytes`. At the deadline
    a timer shuts the socket down, so a read blocked on a silent or trickling server returns at once."""

    def __init__(self, inner: httpx.SyncByteStream, deadline: float, max_bytes: int, sock: socket.socket | None):
        self._inner, self._deadline, self._max_bytes, self._sock = inner, deadline, max_bytes, sock
        self._cut = False

    def _cut_off(self) -> None:
        self._cut = True
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __iter__(self) -> Iterator[bytes]:
        timer = threading.Timer(max(0.0, self._deadline - time.monotonic()), self._cut_off)
        timer.daemon = True
        timer.start()
        got = 0
        try:
            for chunk in self._inner:
                got += len(chunk)
                if got > self._max_bytes:
                    raise LLMError("too_long", f"the stream passed {self._max_bytes} bytes")
                if self._cut or time.monotonic() > self._deadline:
                    raise LLMError("timeout", "total answer time exceeded")
                yield chunk
            if self._cut:
                raise LLMError("timeout", "total answer time exceeded")
        except LLMError:
            self._inner.close()
            raise
        except Exception as exc:
            if self._cut:  # the read failed because the deadline shut the socket
                self._inner.close()
                raise LLMError("timeout", "total answer time exceeded") from exc
            raise
        finally:
            timer.cancel()

    def close(self) -> None:
        self._inner.close()


class BoundedTransport(httpx.BaseTransport):
    """httpx's transport with each response held to `total_s` from the request and `max_bytes`."""

    def __init__(self, total_s: float, max_bytes: int = MAX_STREAM_BYTES, inner: httpx.BaseTransport | None = None):
        self.total_s, self.max_bytes = total_s, max_bytes
        self._inner = inner or httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        deadline = time.monotonic() + self.total_s
        # no single wait (connect, the headers) may outlast the whole answer either
        given = request.extensions.get("timeout") or {}
        request.extensions["timeout"] = {k: min(given.get(k) or self.total_s, self.total_s)
                                         for k in ("connect", "read", "write", "pool")}
        response = self._inner.handle_request(request)
        net = response.extensions.get("network_stream")
        sock = net.get_extra_info("socket") if net is not None else None
        response.stream = _BoundedStream(response.stream, deadline, self.max_bytes, sock)
        return response

    def close(self) -> None:
        self._inner.close()


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
    tools: bool = True  # offer tools (function calling); False: the single-shot prompt only
    max_reply_bytes: int = 1 << 20  # one non-streamed reply; a tool call or an answer is far smaller
    max_stream_bytes: int = MAX_STREAM_BYTES
    _llm: object = field(default=None, init=False, repr=False)

    @property
    def total_s(self) -> float:
        return self.total_timeout_s or 4 * self.timeout_s

    def warm(self) -> None:
        """Build the llama-index client now: its import takes seconds, which belong to start-up, not
        to the first answer's deadline."""
        self._client()

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
                http_client=httpx.Client(transport=BoundedTransport(self.total_s, self.max_stream_bytes)),
            )
        return self._llm

    def stream(self, messages: Sequence[tuple[str, str]]) -> Iterator[str]:
        """Text deltas; raises LLMError on any failure, including a stream that ends empty."""
        from llama_index.core.llms import ChatMessage

        deadline = time.monotonic() + self.total_s
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

    def chat(self, messages: Sequence[dict], *, tools: Sequence[dict] | None = None,
             tool_choice: str | None = None, deadline: float | None = None) -> dict:
        """One non-streamed reply: the `message` of the first choice (`content`, `tool_calls`).
        `deadline` is a `time.monotonic()` value the whole reply must arrive by."""
        body: dict = {"model": self.model, "messages": list(messages), "stream": False,
                      "temperature": self.temperature, "max_tokens": self.max_tokens}
        if tools:
            body["tools"] = list(tools)
            body["tool_choice"] = tool_choice or "auto"
        deadline = deadline if deadline is not None else time.monotonic() + (self.total_timeout_s or 4 * self.timeout_s)
        left = deadline - time.monotonic()
        if left <= 0:
            raise LLMError("timeout", "total answer time exceeded")
        headers = {"Authorization": f"Bearer {self.api_key or 'unused'}", "Content-Type": "application/json"}
        timeout = httpx.Timeout(min(self.timeout_s, left), connect=min(self.timeout_s, left))
        try:
            # the same clock deadline and byte cap as the stream: a silent or trickling server ends at `deadline`
            with httpx.Client(timeout=timeout, transport=BoundedTransport(left, self.max_reply_bytes)) as client:
                with client.stream("POST", self.base_url.rstrip("/") + "/chat/completions", json=body,
                                   headers=headers) as resp:
                    raw = bytearray()
                    for piece in resp.iter_bytes():
                        raw += piece
                        if len(raw) > self.max_reply_bytes:
                            raise LLMError("stream", f"reply larger than {self.max_reply_bytes} bytes")
                        if time.monotonic() > deadline:
                            raise LLMError("timeout", "total answer time exceeded")
                    status = resp.status_code
        except LLMError:
            raise
        except httpx.TimeoutException as exc:
            raise LLMError("timeout", type(exc).__name__) from exc
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            raise LLMError("stream", type(exc).__name__) from exc
        except httpx.HTTPError as exc:
            raise LLMError("connection", type(exc).__name__) from exc
        if status >= 400:
            if tools and status in (400, 404, 422, 501) and _refuses_tools(bytes(raw)):
                raise LLMError("no_tools", str(status))
            if tools and status == 500 and _refuses_tools(bytes(raw)):
                # a 500 naming tools is a refusal on some builds but also a fault while handling one
                # call: the single-shot prompt this time, tools offered again on the next question
                raise LLMError("no_tools_now", str(status))
            raise LLMError("http", str(status))
        try:
            message = json.loads(raw)["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMError("stream", type(exc).__name__) from exc
        if not isinstance(message, dict):
            raise LLMError("stream", "message is not an object")
        return message


# What servers answer when a model or build has no function calling: vLLM without
# --enable-auto-tool-choice ("auto" tool choice requires ...), Ollama ("does not support tools"),
# llama.cpp without --jinja ("tools param requires --jinja"), NIM ("tool" in a 400 detail).
_NO_TOOLS = re.compile(rb"tool", re.IGNORECASE)


def _refuses_tools(body: bytes) -> bool:
    return bool(_NO_TOOLS.search(body[:4096]))


def _finish_reason(raw) -> str | None:
    choices = getattr(raw, "choices", None)
    if choices is None and isinstance(raw, dict):
        choices = raw.get("choices")
    if not choices:
        return None
    c = choices[0]
    return getattr(c, "finish_reason", None) if not isinstance(c, dict) else c.get("finish_reason")
