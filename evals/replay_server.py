"""A scripted OpenAI-compatible endpoint on 127.0.0.1 that replays stored replies, tool calls included.

Measuring `--llm openai` without a model: `meshwise eval --llm openai --record DIR` stores every request
Meshwise sends (assistant/compose/llm/record.py); replies a model gave, or a frontier model would give, to
those requests are written as fixtures; this server plays them back, so a change to the prompt, the
tools or the gate shows its effect on the same replies.

A fixture (YAML, one per question, under a fixture directory):

    prompt_version: 2026-12-01.words-first.1   # the prompt it answers (prompts.PROMPT_VERSION)
    case: t4-001                               # the eval case, for the reader
    match: "What is wrong with tp_size 3"      # a piece of the user's question; picks the fixture
    tools:                                     # the tool path: one reply per request, in order
      - tool_calls: [{name: validate_layout, arguments: {layout: {...}, world_size: 8, user_stated: true}}]
      - content: "No: ..."
    single_shot: "No: ..."                     # the reply to the prompt without tools (optional)

The server is stateless: it finds the fixture whose `match` is in the request's prompt message (the
longest match wins) and answers the n-th reply of `tools`, n being the number of assistant turns
after that message (the tool rounds so far). A request with no fixture gets HTTP 404. Streamed
requests (`"stream": true`, the single-shot path) get the reply as server-sent events.

    python -m evals.replay_server --fixtures evals/llm_fixtures/tuning [--port 8765]
"""
from __future__ import annotations

import argparse
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterable

import yaml

MAX_REQUEST_BYTES = 8 << 20
PROMPT_MARK = "QUESTION:"  # the prompt's own section (prompts.user_prompt); earlier turns have none


@dataclass
class Fixture:
    match: str
    tools: list[dict] = field(default_factory=list)
    single_shot: str | None = None
    case: str | None = None
    prompt_version: str | None = None

    @classmethod
    def from_mapping(cls, data: dict) -> "Fixture":
        return cls(match=str(data["match"]), tools=list(data.get("tools") or []), single_shot=data.get("single_shot"),
                   case=data.get("case"), prompt_version=data.get("prompt_version"))


def load_fixtures(directory: Path) -> list[Fixture]:
    return [Fixture.from_mapping(yaml.safe_load(p.read_text(encoding="utf-8")))
            for p in sorted(Path(directory).glob("*.yaml"))]


def _prompt_index(messages: list[dict]) -> int | None:
    """The index of the last user message that is Meshwise's prompt."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.get("role") == "user" and PROMPT_MARK in str(m.get("content") or ""):
            return i
    return None


def wire_message(reply: dict, n: int) -> dict:
    """A fixture reply as a chat-completions message (tool arguments as JSON text)."""
    msg: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
    calls = reply.get("tool_calls") or []
    if calls:
        msg["tool_calls"] = [{"id": c.get("id") or f"call_{n}_{i}", "type": "function",
                              "function": {"name": c["name"],
                                           "arguments": c["arguments"] if isinstance(c.get("arguments"), str)
                                           else json.dumps(c.get("arguments", {}))}}
                             for i, c in enumerate(calls)]
    return msg


class ReplayServer:
    """The endpoint. `requests` keeps every request body; `refuse_tools` answers a request with
    `tools` the way a server without function calling does (HTTP 400 naming tools, or the status
    given: `refuse_tools=500`); `refuse_tool_choice` refuses only a request whose `tool_choice` is that
    value, as a build that runs tools but not `"none"` does; `delay_s` is how
    long each reply takes (a slow model, for the clock deadline)."""

    def __init__(self, fixtures: Iterable[Fixture], *, port: int = 0, refuse_tools: bool | int = False,
                 refuse_tool_choice: str | None = None, delay_s: float = 0.0):
        self.fixtures = list(fixtures)
        self.refuse_tools = refuse_tools
        self.refuse_tool_choice = refuse_tool_choice
        self.delay_s = delay_s
        self.requests: list[dict] = []
        self.misses = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def _send(self, status: int, obj: dict):
                body = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                self._send(200, {"object": "list", "data": [{"id": "replay", "object": "model"}]})

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                if n > MAX_REQUEST_BYTES:
                    self._send(413, {"error": {"message": "request too large"}})
                    return
                try:
                    body = json.loads(self.rfile.read(n) or b"{}")
                except ValueError:
                    self._send(400, {"error": {"message": "not JSON"}})
                    return
                outer.requests.append(body)
                if body.get("tools") and outer.refuse_tool_choice and body.get("tool_choice") == outer.refuse_tool_choice:
                    self._send(400, {"error": {"message": f"tool_choice {outer.refuse_tool_choice!r} is not supported"}})
                    return
                if body.get("tools") and outer.refuse_tools:
                    status = 400 if outer.refuse_tools is True else int(outer.refuse_tools)
                    self._send(status, {"error": {"message": "this model does not support tools"}})
                    return
                reply = outer.reply_for(body)
                if outer.delay_s:
                    time.sleep(outer.delay_s)
                if reply is None:
                    outer.misses += 1
                    self._send(404, {"error": {"message": "no recorded reply for this request"}})
                    return
                if body.get("stream"):
                    self._stream(reply.get("content") or "")
                    return
                self._send(200, {"id": "replay", "object": "chat.completion", "created": 0, "model": "replay",
                                 "choices": [{"index": 0, "message": reply,
                                              "finish_reason": "tool_calls" if reply.get("tool_calls") else "stop"}]})

            def _stream(self, text: str):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()

                def chunk(data: bytes):
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

                def event(content, finish=None):
                    delta = {"content": content} if content is not None else {}
                    obj = {"id": "replay", "object": "chat.completion.chunk", "created": 0, "model": "replay",
                           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
                    return b"data: " + json.dumps(obj).encode() + b"\n\n"

                for i in range(0, len(text), 40):
                    chunk(event(text[i:i + 40]))
                chunk(event(None, "stop"))
                chunk(b"data: [DONE]\n\n")
                chunk(b"")
                self.wfile.flush()

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):  # a client that stops reading (its byte cap)
                pass

        self.httpd = Server(("127.0.0.1", port), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def reply_for(self, body: dict) -> dict | None:
        messages = body.get("messages") or []
        i = _prompt_index(messages)
        if i is None:
            return None
        prompt = str(messages[i].get("content") or "")
        found = [f for f in self.fixtures if f.match and f.match in prompt]
        if not found:
            return None
        fx = max(found, key=lambda f: len(f.match))
        if not body.get("tools"):
            return {"role": "assistant", "content": fx.single_shot} if fx.single_shot else None
        rounds = sum(1 for m in messages[i + 1:] if m.get("role") == "assistant")
        if not fx.tools:
            return None
        # a fixture that ends before the exchange does repeats its last reply (a model that keeps calling)
        return wire_message(fx.tools[min(rounds, len(fx.tools) - 1)], rounds)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> "ReplayServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fixtures", type=Path, required=True, help="a directory of fixture YAML files")
    ap.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    args = ap.parse_args(argv)
    server = ReplayServer(load_fixtures(args.fixtures), port=args.port)
    print(f"replaying {len(server.fixtures)} fixtures at {server.url} (set MESHWISE_LLM_BASE_URL to it); Ctrl-C stops",
          flush=True)
    try:
        server._thread.join()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
