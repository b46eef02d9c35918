"""Request-size cap for the web server: a body over the limit is refused before anything parses it."""
from __future__ import annotations


class BodySizeLimit:
    """ASGI middleware: 413 for an HTTP request whose body is (or turns out to be) over `max_bytes`."""

    def __init__(self, app, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            await _refuse(send, self.max_bytes)
            return
        seen = 0
        started = False

        async def limited_receive():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise _TooLarge()
            return message

        async def tracking_send(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _TooLarge:
            if not started:
                await _refuse(send, self.max_bytes)


class _TooLarge(Exception):
    pass


async def _refuse(send, max_bytes: int) -> None:
    body = f"request body larger than {max_bytes} bytes".encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class NoUploads:
    """ASGI middleware: the chat takes no files, so Gradio's upload routes answer 404 instead of storing
    (and serving back) whatever an unauthenticated client posts."""

    PATHS = ("/upload", "/gradio_api/upload", "/upload_progress", "/gradio_api/upload_progress")

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope.get("path", "").rstrip("/") in self.PATHS:
            body = b"uploads are not accepted"
            await send({"type": "http.response.start", "status": 404,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)
