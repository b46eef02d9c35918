"""ui/web/limits.py: the request-body cap, as an ASGI middleware around a stand-in app."""
from __future__ import annotations

import asyncio
import threading

from ui.web.limits import BodySizeLimit


def _in_thread(coro) -> None:
    """asyncio.run on a thread of its own: independent of any loop the test session already runs."""
    errors = []

    def target():
        try:
            asyncio.run(coro)
        except BaseException as exc:  # noqa: BLE001 - re-raised below on the test's thread
            errors.append(exc)

    th = threading.Thread(target=target)
    th.start()
    th.join(30)
    if errors:
        raise errors[0]


def _run(middleware, headers, chunks):
    """Drive one HTTP request through `middleware`; returns (status, whether the inner app finished)."""
    sent, done = [], []
    queue = [{"type": "http.request", "body": c, "more_body": i < len(chunks) - 1} for i, c in enumerate(chunks)]

    async def receive():
        return queue.pop(0) if queue else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    async def inner(scope, receive, send):
        while True:  # read the whole body, like a JSON route
            m = await receive()
            if m["type"] != "http.request" or not m.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})
        done.append(True)

    scope = {"type": "http", "method": "POST", "path": "/x", "headers": headers}
    _in_thread(BodySizeLimit(inner, max_bytes=middleware)(scope, receive, send))
    return sent[0]["status"], bool(done)


def test_declared_length_over_the_cap_is_refused_unread():
    assert _run(100, [(b"content-length", b"101")], [b"x" * 101]) == (413, False)


def test_bad_content_length_is_refused():
    assert _run(100, [(b"content-length", b"-5")], [b""]) == (413, False)


def test_streamed_body_over_the_cap_is_refused():
    assert _run(100, [], [b"x" * 60, b"x" * 60]) == (413, False)


def test_bodies_within_the_cap_pass():
    assert _run(100, [(b"content-length", b"100")], [b"x" * 100]) == (200, True)
    assert _run(100, [], [b"x" * 50, b"x" * 50]) == (200, True)


def test_non_http_scopes_pass_through():
    seen = []

    async def inner(scope, receive, send):
        seen.append(scope["type"])

    _in_thread(BodySizeLimit(inner, max_bytes=1)({"type": "websocket"}, None, None))
    assert seen == ["websocket"]
