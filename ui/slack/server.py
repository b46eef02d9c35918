"""Running the bolt app: HTTP Events API on loopback (uvicorn), or Socket Mode."""
from __future__ import annotations

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from slack_bolt import App
from slack_bolt.adapter.starlette.handler import to_bolt_request, to_starlette_response

EVENTS_PATH = "/slack/events"  # slack-bolt's default path, where Slack is configured to post
MAX_BODY_BYTES = 1024 * 1024


def asgi_app(app: App) -> Starlette:
    async def events(request: Request) -> Response:
        body = await request.body()
        if len(body) > MAX_BODY_BYTES:
            return PlainTextResponse("request too large", status_code=413)
        # dispatch verifies the signature, then acks; listeners continue on bolt's own threads.
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
