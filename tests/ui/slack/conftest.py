"""A local stand-in for Slack's Web API: records calls and answers them as Slack does."""
from __future__ import annotations

import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BOT_USER = "UBOT"


class FakeSlack:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []
        self._lock = threading.Lock()
        self._ts = 1700000000
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's naming)
                if self.path.startswith("/upload/"):
                    return fake.receive_upload(self)
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode("utf-8")
                ctype = self.headers.get("Content-Type", "")
                if "json" in ctype:
                    params = json.loads(raw or "{}")
                else:
                    params = {k: v[0] for k, v in urllib.parse.parse_qs(raw).items()}
                method = self.path.rsplit("/", 1)[-1]
                body = fake.handle(method, params, self.headers.get("Authorization", ""))
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.socket_url: str | None = None  # what apps.connections.open hands out (Socket Mode tests)
        self.uploads: dict[str, bytes] = {}  # file id -> the bytes posted to its upload URL
        self.upload_error: str | None = None  # e.g. "missing_scope": files.getUploadURLExternal refuses
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/api/"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def handle(self, method: str, params: dict, auth: str) -> dict:
        with self._lock:
            self.calls.append((method, params))
            self._ts += 1
            ts = f"{self._ts}.000100"
        if not auth.startswith("Bearer ") and method != "respond":
            return {"ok": False, "error": "not_authed"}
        if method == "auth.test":
            return {"ok": True, "url": "https://example.slack.com/", "team": "T", "user": "meshwise",
                    "team_id": "T1", "user_id": BOT_USER, "bot_id": "BBOT"}
        if method == "apps.connections.open":
            if not auth.startswith("Bearer xapp-"):
                return {"ok": False, "error": "invalid_auth"}  # Slack wants the app-level token here
            return {"ok": True, "url": self.socket_url} if self.socket_url else {"ok": False, "error": "no_socket"}
        if method == "files.getUploadURLExternal":
            if self.upload_error:
                return {"ok": False, "error": self.upload_error}
            fid = f"F{ts.replace('.', '')}"
            return {"ok": True, "file_id": fid, "upload_url": self.url.replace("/api/", f"/upload/v1/{fid}")}
        if method == "files.completeUploadExternal":
            return {"ok": True, "files": [{"id": f["id"], "title": f.get("title")} for f in json.loads(params.get("files") or "[]")]}
        if method == "chat.postMessage":
            return {"ok": True, "channel": params.get("channel"), "ts": ts, "message": {"text": params.get("text"), "ts": ts}}
        return {"ok": True}

    def receive_upload(self, handler) -> None:
        """Slack's upload URL: raw file bytes in, "OK" out (no token: the URL itself is the credential)."""
        data = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
        with self._lock:
            self.uploads[handler.path.rsplit("/", 1)[-1]] = data
        handler.send_response(200)
        handler.send_header("Content-Type", "text/plain; charset=utf-8")
        handler.send_header("Content-Length", "2")
        handler.end_headers()
        handler.wfile.write(b"OK")

    def posts(self, method: str = "chat.postMessage") -> list[dict]:
        with self._lock:
            return [p for m, p in self.calls if m == method]

    def wait_for(self, count: int, method: str = "chat.postMessage", timeout: float = 60.0) -> list[dict]:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            found = self.posts(method)
            if len(found) >= count:
                return found
            time.sleep(0.05)
        return self.posts(method)

    def wait_threads(self, threads: set[str], timeout: float = 60.0) -> dict[str, list[str]]:
        """Wait until every thread in `threads` has a reply; returns thread -> reply texts."""
        end = time.monotonic() + timeout
        while True:
            got: dict[str, list[str]] = {}
            for p in self.posts():
                got.setdefault(p.get("thread_ts"), []).append(p.get("text", ""))
            if threads <= set(got) or time.monotonic() > end:
                return got
            time.sleep(0.05)

    def __enter__(self) -> "FakeSlack":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


import pytest  # noqa: E402


@pytest.fixture
def fake_slack():
    with FakeSlack() as fake:
        yield fake
