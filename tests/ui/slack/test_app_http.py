"""The real slack-bolt app over HTTP on 127.0.0.1, signed requests, a local fake Slack Web API."""
from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
import uvicorn

from ui.slack.app import SlackOptions, build_app, close_app
from ui.slack.server import asgi_app

SECRET = "test-signing-secret"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def bot(mw_assistant, mw_settings, fake_slack):
    settings = dataclasses.replace(mw_settings, slack_bot_token="xoxb-test-token", slack_signing_secret=SECRET,
                                   slack_api_url=fake_slack.url)
    app = build_app(mw_assistant, settings, mode="http", options=SlackOptions(answer_timeout_s=60))
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(asgi_app(app), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/slack/events", fake_slack
    server.should_exit = True
    thread.join(10)
    close_app(app)


def send(url: str, body: str, *, content_type="application/json", ts: int | None = None, secret=SECRET,
         headers: dict | None = None) -> tuple[int, str]:
    ts = int(time.time()) if ts is None else ts
    sig = "v0=" + hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    req = urllib.request.Request(url, data=body.encode(), method="POST", headers={
        "Content-Type": content_type, "X-Slack-Request-Timestamp": str(ts), "X-Slack-Signature": sig, **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def event(text: str, *, ts: str, event_id: str, thread_ts: str | None = None, etype="app_mention") -> str:
    ev = {"type": etype, "user": "U123", "text": text, "ts": ts, "channel": "C1", "event_ts": ts}
    if thread_ts:
        ev["thread_ts"] = thread_ts
    return json.dumps({"token": "t", "team_id": "T1", "api_app_id": "A1", "type": "event_callback",
                       "event_id": event_id, "event_time": int(time.time()), "event": ev})


def test_english_and_chinese_mentions_get_one_threaded_reply_each(bot):
    url, slack = bot
    t0 = time.monotonic()
    status, _ = send(url, event("<@UBOT> I train a 70B model on 8 nodes with TP and PP. Which strategy and YAML?",
                                ts="1700000001.000100", event_id="Ev1"))
    assert status == 200 and time.monotonic() - t0 < 3  # acknowledged inside Slack's window
    status, _ = send(url, event("<@UBOT> 70B 模型，8 个节点，要 TP+PP，YAML 怎么写？", ts="1700000002.000100", event_id="Ev2"))
    assert status == 200
    threads = {"1700000001.000100", "1700000002.000100"}
    replies = slack.wait_threads(threads)
    assert set(replies) == threads  # every reply is in the question's thread, none at top level
    en, zh = "\n".join(replies["1700000001.000100"]), "\n".join(replies["1700000002.000100"])
    assert "fsdp2" in en and "```" in en and "pp_size" in en
    assert "fsdp2" in zh and any("\u4e00" <= ch <= "\u9fff" for ch in zh)
    assert all(text.count("```") % 2 == 0 for texts in replies.values() for text in texts)


def test_bad_signature_and_stale_timestamp_get_401_and_no_reply(bot):
    url, slack = bot
    body = event("<@UBOT> hello", ts="1700000003.000100", event_id="Ev3")
    assert send(url, body, secret="wrong-secret")[0] == 401
    assert send(url, body, ts=int(time.time()) - 6 * 60)[0] == 401
    time.sleep(1.0)
    assert slack.posts() == []


def test_retried_and_duplicate_events_get_no_second_reply(bot):
    url, slack = bot
    body = event("<@UBOT> Can megatron_fsdp do pipeline parallelism?", ts="1700000004.000100", event_id="Ev4")
    assert send(url, body)[0] == 200
    assert send(url, body, headers={"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"})[0] == 200
    assert send(url, body)[0] == 200  # same event id delivered again
    slack.wait_threads({"1700000004.000100"})
    first = len(slack.posts())
    time.sleep(1.5)
    assert len(slack.posts()) == first  # one reply (possibly split in parts), never a second one


def test_bots_own_messages_are_ignored(bot):
    url, slack = bot
    payload = json.loads(event("I am a bot", ts="1700000005.000100", event_id="Ev5", etype="message"))
    payload["event"].update({"bot_id": "BOTHER", "channel_type": "im"})
    assert send(url, json.dumps(payload))[0] == 200
    time.sleep(1.0)
    assert slack.posts() == []


def test_slash_validate_returns_the_report(bot):
    url, _ = bot
    form = urllib.parse.urlencode({
        "command": "/meshwise", "user_id": "U123", "channel_id": "C1", "team_id": "T1",
        "text": "validate world_size=8 ```\ndistributed:\n  strategy: fsdp2\n  tp_size: 2\n  ep_size: 16\n```",
        "response_url": "http://127.0.0.1:9/unused", "trigger_id": "x"})
    status, body = send(url, form, content_type="application/x-www-form-urlencoded")
    assert status == 200
    assert "MW-E-EP-DIVIDES" in body


def test_slash_validate_of_a_valid_layout_posts_its_mesh_picture(bot):
    url, slack = bot
    form = urllib.parse.urlencode({
        "command": "/meshwise", "user_id": "U123", "channel_id": "C1", "team_id": "T1",
        "text": "validate world_size=16 ```\ndistributed:\n  strategy: fsdp2\n  tp_size: 2\n  ep_size: 8\n```",
        "response_url": "http://127.0.0.1:9/unused", "trigger_id": "x"})
    t0 = time.monotonic()
    status, body = send(url, form, content_type="application/x-www-form-urlencoded")
    assert status == 200 and time.monotonic() - t0 < 3  # the report is the acknowledgement; the picture follows
    assert "Valid for world_size=16" in body
    [done] = slack.wait_for(1, "files.completeUploadExternal", timeout=30)
    assert done["channel_id"] == "C1" and "<@U123>" in done["initial_comment"]
    [f] = json.loads(done["files"])
    assert slack.uploads[f["id"]].startswith(b"\x89PNG")


def test_a_mention_answer_with_a_valid_layout_gets_the_picture_in_its_thread(bot):
    url, slack = bot
    send(url, event("<@UBOT> 70B model on 4 nodes with TP 8 and PP 4: is that valid?", ts="1700000050.000100",
                    event_id="EvMesh"))
    [done] = slack.wait_for(1, "files.completeUploadExternal", timeout=60)
    assert done["thread_ts"] == "1700000050.000100" and done["channel_id"] == "C1"


def test_thread_follow_up_uses_the_earlier_turns_numbers(bot):
    url, slack = bot
    first = event("<@UBOT> Llama 3.1 70B on 8 nodes x 8 GPUs with TP and PP: which YAML?", ts="1700000010.000100", event_id="Ev10")
    assert send(url, first)[0] == 200
    slack.wait_threads({"1700000010.000100"})
    before = len(slack.posts())
    follow = json.loads(event("What if I only have 4 nodes?", ts="1700000011.000100", event_id="Ev11",
                              thread_ts="1700000010.000100", etype="message"))
    follow["event"]["channel_type"] = "channel"
    assert send(url, json.dumps(follow))[0] == 200
    posts = slack.wait_for(before + 1)
    new = posts[before:]
    assert new and all(p["thread_ts"] == "1700000010.000100" for p in new)
    text = "\n".join(p["text"] for p in new)
    assert "32" in text  # 4 nodes x 8 GPUs: the re-plan uses the new world size
