"""The real slack-bolt app in Socket Mode: slack-sdk's WebSocket client against a local stand-in for
Slack's socket endpoint (aiohttp on 127.0.0.1), handed out by the fake Web API's apps.connections.open.
Envelopes are acknowledged on the socket; the answer is posted in the thread through the Web API."""
from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
import time

import pytest
from aiohttp import WSMsgType, web

from ui.slack.app import SlackOptions, build_app, close_app
from ui.slack.server import socket_handler

MENTION_TS = "1700000100.000200"


def envelope(envelope_id: str, event: dict) -> dict:
    return {
        "envelope_id": envelope_id, "type": "events_api", "accepts_response_payload": False, "retry_attempt": 0,
        "payload": {"token": "unused-in-socket-mode", "team_id": "T1", "api_app_id": "A1", "type": "event_callback",
                    "event_id": f"Ev-{envelope_id}", "event_time": 1700000100, "event": event},
    }


class FakeSocket:
    """Sends `hello` and the queued envelopes to whoever connects; records what comes back."""

    def __init__(self, envelopes: list[dict]) -> None:
        self.envelopes = envelopes
        self.received: list[dict] = []
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self.url = asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(10)

    async def _start(self) -> str:
        app = web.Application()
        app.router.add_get("/link", self._ws)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        return f"ws://127.0.0.1:{port}/link"

    async def _ws(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_json({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A1"},
                            "debug_info": {"host": "fake", "approximate_connection_time": 3600}})
        for env in self.envelopes:
            await ws.send_json(env)
        async for msg in ws:
            if msg.type == WSMsgType.TEXT:
                self.received.append(json.loads(msg.data))
        return ws

    def acks(self) -> set[str]:
        return {m["envelope_id"] for m in self.received if "envelope_id" in m}

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)


@pytest.fixture
def socket_bot(mw_assistant, mw_settings, fake_slack):
    def start(envelopes: list[dict]):
        sock = FakeSocket(envelopes)
        fake_slack.socket_url = sock.url
        settings = dataclasses.replace(mw_settings, slack_bot_token="xoxb-test-token", slack_app_token="xapp-test-token",
                                       slack_api_url=fake_slack.url)
        app = build_app(mw_assistant, settings, mode="socket", options=SlackOptions(answer_timeout_s=60))
        handler = socket_handler(app, settings.slack_app_token)
        handler.connect()
        started.append((sock, app, handler))
        return sock

    started: list = []
    yield start
    for sock, app, handler in started:
        handler.close()
        close_app(app)
        sock.close()


def test_a_mention_over_the_socket_is_acked_and_answered_in_its_thread(socket_bot, fake_slack):
    sock = socket_bot([envelope("env-1", {
        "type": "app_mention", "user": "U1", "channel": "C1", "ts": MENTION_TS, "event_ts": MENTION_TS,
        "text": "<@UBOT> 70B 模型，8 个节点，要 TP+PP，YAML 怎么写？"})])
    replies = fake_slack.wait_threads({MENTION_TS}, timeout=60)
    assert MENTION_TS in replies
    text = "\n".join(replies[MENTION_TS])
    assert "```" in text and "tp_size" in text and "fsdp2" in text and "校验" in text
    opened = [p for m, p in fake_slack.calls if m == "apps.connections.open"]
    assert opened  # the socket URL came from the Web API, with the app-level token
    deadline = time.monotonic() + 10
    while "env-1" not in sock.acks() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "env-1" in sock.acks()


def test_the_bots_own_messages_over_the_socket_get_no_reply(socket_bot, fake_slack):
    sock = socket_bot([envelope("env-2", {
        "type": "message", "channel_type": "im", "user": "UBOT", "bot_id": "BBOT", "channel": "D1",
        "ts": "1700000200.000100", "text": "an answer the bot posted itself"})])
    deadline = time.monotonic() + 10
    while "env-2" not in sock.acks() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "env-2" in sock.acks()  # acknowledged, so Slack does not redeliver it
    time.sleep(1.0)
    assert fake_slack.posts() == []


def test_a_redelivered_envelope_is_acked_but_not_answered_twice(socket_bot, fake_slack):
    """Socket Mode marks every envelope with a retry count, first deliveries with 0 (a count of 0 once
    made the bot drop every Socket Mode event as a retry)."""
    first = envelope("env-3", {"type": "app_mention", "user": "U1", "channel": "C3", "ts": "1700000300.000100",
                               "event_ts": "1700000300.000100", "text": "<@UBOT> can megatron_fsdp do PP?"})
    again = dict(first, envelope_id="env-4", retry_attempt=1, retry_reason="timeout")
    sock = socket_bot([first, again])
    replies = fake_slack.wait_threads({"1700000300.000100"}, timeout=60)
    assert "1700000300.000100" in replies
    time.sleep(1.0)
    assert len([p for p in fake_slack.posts() if p.get("thread_ts") == "1700000300.000100"]) == len(
        replies["1700000300.000100"])  # no second answer arrived for the retry
    assert {"env-3", "env-4"} <= sock.acks()
