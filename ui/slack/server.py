"""Running the bolt app: HTTP Events API on loopback (uvicorn), or Socket Mode."""
from __future__ import annotations

import json
import time
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from slack_bolt import App
from slack_bolt.adapter.starlette.handler import to_bolt_request, to_starlette_response
from slack_sdk.signature import SignatureVerifier

EVENTS_PATH = "/slack/events"  # slack-bolt's default path, where Slack is configured to post
MAX_BODY_BYTES = 1024 * 1024
MAX_CLOCK_SKEW_S = 5 * 60  # Slack's replay window for a signed request


def _refusal(request: Request) -> Response | None:
    """What the headers alone decide: too large, unsigned, stale or malformed. Nothing read yet."""
    length = request.headers.get("content-length")
    if length is not None:
        if not (length.isascii() and length.isdigit()):
            return PlainTextResponse("bad content-length", status_code=400)
        if int(length) > MAX_BODY_BYTES:
            return PlainTextResponse("request too large", status_code=413)
    ts, sig = request.headers.get("x-slack-request-timestamp"), request.headers.get("x-slack-signature")
    if not ts or not sig:
        return PlainTextResponse("unsigned request", status_code=401)
    if not (ts.isascii() and ts.isdigit()) or len(ts) > 12:
        return PlainTextResponse("bad timestamp", status_code=400)
    if abs(time.time() - int(ts)) > MAX_CLOCK_SKEW_S:
        return PlainTextResponse("stale request", status_code=401)
    return None


async def _bounded_body(request: Request) -> bytes | None:
    """The body, or None once it passes the limit (a chunked body has no length to check up front)."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            return None
    return bytes(body)


def _readable(body: bytes, content_type: str) -> bool:
    """A Slack payload: JSON object, or a form whose `payload` (when present) is a JSON object."""
    try:
        text = body.decode("utf-8")
        if content_type.startswith("application/x-www-form-urlencoded"):
            payload = parse_qs(text, keep_blank_values=True).get("payload")
            return payload is None or isinstance(json.loads(payload[0]), dict)
        return isinstance(json.loads(text), dict)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False


def asgi_app(app: App, signing_secret: str | None = None) -> Starlette:
    verifier = SignatureVerifier(signing_secret or getattr(app, "_meshwise_signing_secret", None) or "-")

    async def events(request: Request) -> Response:
        refused = _refusal(request)
        if refused is not None:
            return refused
        body = await _bounded_body(request)
        if body is None:
            return PlainTextResponse("request too large", status_code=413)
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:  # Slack sends UTF-8 only (and the verifier would raise on it)
            return PlainTextResponse("not a Slack payload", status_code=400)
        if not verifier.is_valid_request(body, request.headers):
            return PlainTextResponse("invalid signature", status_code=401)
        if not _readable(body, request.headers.get("content-type", "")):
            return PlainTextResponse("not a Slack payload", status_code=400)
        # dispatch verifies the signature again, then acks; listeners continue on bolt's own threads.
        bolt_resp = await run_in_threadpool(app.dispatch, to_bolt_request(request, body))
        return to_starlette_response(bolt_resp)

    async def health(_: Request) -> Response:
        return PlainTextResponse("ok")

    return Starlette(routes=[Route(EVENTS_PATH, events, methods=["POST"]), Route("/healthz", health, methods=["GET"])])


def serve_http(app: App, host: str = "127.0.0.1", port: int = 3000) -> None:
    import uvicorn

    uvicorn.run(asgi_app(app), host=host, port=port, log_level="warning")


def socket_handler(app: App, app_token: str):
    """Socket Mode over slack-sdk's built-in WebSocket client; the Web API calls (including
    apps.connections.open, which hands out the socket URL) go through the app's client."""
    from slack_bolt.adapter.socket_mode import SocketModeHandler

    return SocketModeHandler(app, app_token)


def serve_socket(app: App, app_token: str) -> None:
    socket_handler(app, app_token).start()
