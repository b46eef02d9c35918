"""LLM-path fixtures: a scripted OpenAI-compatible HTTP server (stdlib, 127.0.0.1, free port) that
plays the answers a real model will not produce on demand, and engines wired to it."""
from __future__ import annotations

import json
import threading
import time
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from assistant.answer import Answer, AskRequest


def ask_streamed(engine, question: str, **kw) -> tuple[list[str], Answer]:
    """The streamed deltas and the final Answer of one question."""
    deltas, answer = [], None
    for item in engine.ask_stream(AskRequest(question=question, **kw)):
        if isinstance(item, Answer):
            answer = item
        else:
            deltas.append(item)
    return deltas, answer


def sse_chunk(content: str | None, finish: str | None = None) -> bytes:
    delta = {"content": content} if content is not None else {}
    obj = {"id": "cmpl-1", "object": "chat.completion.chunk", "created": 0, "model": "scripted",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


class ScriptedOpenAI:
    """Answers /v1/chat/completions according to `self.script`, one of:
    ("answer", text)   stream `text` in small pieces, then [DONE]
    ("pieces", [text]) stream exactly these deltas, then [DONE]
    ("stall", seconds) send headers and one piece, then go silent (a read timeout)
    ("slow", seconds)  wait before any response at all
    ("broken", text)   stream part of `text`, then cut the connection mid chunk
    ("garbage", text)  stream a piece, then a line that is not JSON
    ("status", code)   an HTTP error
    ("ping", seconds)  send only SSE keep-alive comments, one a second, for `seconds`
    ("flood", seconds) send 64 KB content deltas as fast as the client reads, for `seconds`
    Every request body is kept in `self.requests`.
    """

    def __init__(self):
        self.script: tuple = ("answer", "ok")
        self.requests: list[dict] = []
        self.served = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):  # keep test output clean
                pass

            def do_GET(self):
                body = json.dumps({"object": "list", "data": [{"id": "scripted", "object": "model"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _chunk(self, data: bytes):
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                outer.requests.append(json.loads(self.rfile.read(n) or b"{}"))
                kind, arg = outer.script
                if kind == "status":
                    body = b'{"error": {"message": "scripted failure"}}'
                    self.send_response(arg)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                if kind == "slow":
                    time.sleep(arg)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                text = arg if isinstance(arg, str) else "partial answer "
                pieces = [text[i:i + 7] for i in range(0, len(text), 7)] or [""]
                if kind == "pieces":
                    pieces = list(arg)
                try:
                    if kind == "stall":
                        self._chunk(sse_chunk(pieces[0]))
                        time.sleep(arg)
                        return
                    if kind == "broken":
                        for p in pieces[: max(1, len(pieces) // 2)]:
                            self._chunk(sse_chunk(p))
                        self.wfile.write(b"ff\r\ndata: {\"trunc")  # a chunk that never ends
                        self.wfile.flush()
                        self.close_connection = True
                        self.connection.shutdown(2)
                        return
                    if kind in ("ping", "flood"):
                        outer.served = 0  # bytes of the body written: how far the client read
                        big = sse_chunk("x" * 65536)
                        end = time.monotonic() + arg
                        while time.monotonic() < end:
                            data = b": ping\n\n" if kind == "ping" else big
                            self._chunk(data)
                            outer.served += len(data)
                            if kind == "ping":
                                time.sleep(1.0)
                        return
                    if kind == "garbage":
                        self._chunk(sse_chunk(pieces[0]))
                        self._chunk(b"data: {this is not json\n\n")
                        self._chunk(b"")
                        return
                    for p in pieces:
                        self._chunk(sse_chunk(p))
                    self._chunk(sse_chunk(None, finish="stop"))
                    self._chunk(b"data: [DONE]\n\n")
                    self._chunk(b"")
                except (BrokenPipeError, ConnectionResetError, OSError):
                    pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):  # cut connections are the point here
                pass

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="session")
def scripted():
    server = ScriptedOpenAI()
    yield server
    server.close()


@pytest.fixture(scope="session")
def openai_engine(scripted, mw_assistant):
    """The session engine's index and retriever, answering through the scripted endpoint (the same
    client `Assistant.load(llm="openai")` builds from these settings), on the single-shot path
    (`llm_tools` off): the scripted server streams; the tool path is tests/llm/test_tool_loop.py's."""
    from assistant.compose.llm.openai_client import OpenAICompatClient
    from assistant.engine import Assistant

    settings = replace(mw_assistant.settings, llm_base_url=scripted.url, llm_model="scripted",
                       llm_api_key="sk-testsecret-0123456789abcdef", llm_timeout_s=1.5, llm_tools=False)
    client = OpenAICompatClient(settings.llm_base_url, model=settings.llm_model, api_key=settings.llm_api_key,
                                timeout_s=settings.llm_timeout_s, tools=settings.llm_tools)
    a = Assistant(settings, mw_assistant.retriever, mw_assistant.phrases, "openai", client)
    yield a
    a.close()


@pytest.fixture(scope="session")
def stream():
    """stream(engine, req) -> (text deltas, final Answer) of one `ask_stream` call."""
    from assistant.answer import Answer

    def run(engine, req):
        deltas, answer = [], None
        for item in engine.ask_stream(req):
            if isinstance(item, Answer):
                answer = item
            else:
                deltas.append(item)
        return deltas, answer

    return run
