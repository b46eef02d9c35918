"""The real slack-bolt app over HTTP on 127.0.0.1, signed requests, a local fake Slack Web API."""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import hmac
import json
import re
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
from ui.slack.state import RateLimiter

SECRET = "test-signing-secret"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def bot(request, mw_assistant, mw_settings, fake_slack):
    settings = dataclasses.replace(mw_settings, slack_bot_token="xoxb-test-token", slack_signing_secret=SECRET,
                                   slack_api_url=fake_slack.url)
    options = getattr(request, "param", None) or SlackOptions(answer_timeout_s=60)  # indirect parametrize
    with served(build_app(mw_assistant, settings, mode="http", options=options)) as url:
        yield url, fake_slack


@contextlib.contextmanager
def served(app):
    """The app's HTTP endpoint on 127.0.0.1 while the block runs; its events URL."""
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(asgi_app(app), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/slack/events"
    finally:
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


# --- issue 14.3: the endpoint checks before it reads --------------------------------------------------
def _raw(url: str, head: str, body_parts=(), *, wait_s: float = 5.0) -> tuple[int | None, float]:
    """Send `head` (request line + headers), then the body parts, over a raw socket; return the status
    the server answers with (None when it did not answer within `wait_s`) and how long that took."""
    u = urllib.parse.urlsplit(url)
    t0 = time.monotonic()
    with socket.create_connection((u.hostname, u.port), timeout=wait_s) as s:
        s.sendall(head.encode())
        try:
            for part in body_parts:
                s.sendall(part)
        except OSError:  # the server may close before we are done: that is the point
            pass
        try:
            data = s.recv(200)
        except (TimeoutError, socket.timeout):
            return None, time.monotonic() - t0
        except OSError:
            return None, time.monotonic() - t0
    m = re.match(rb"HTTP/1\.[01] (\d{3})", data)
    return (int(m.group(1)) if m else None), time.monotonic() - t0


def _head(url: str, extra: str) -> str:
    path = urllib.parse.urlsplit(url).path
    return f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{extra}\r\n"


def _signed_headers(body: bytes = b"", ts: str | None = None) -> str:
    ts = str(int(time.time())) if ts is None else ts
    sig = "v0=" + hmac.new(SECRET.encode(), f"v0:{ts}:".encode() + body, hashlib.sha256).hexdigest()
    return f"X-Slack-Request-Timestamp: {ts}\r\nX-Slack-Signature: {sig}\r\n"


def test_oversized_content_length_is_refused_before_the_body_is_read(bot):
    url, _ = bot
    status, took = _raw(url, _head(url, _signed_headers() + f"Content-Length: {250 * 1024 * 1024}\r\n"), [b"{" * 1000])
    assert status == 413 and took < 3


def test_chunked_body_is_read_only_up_to_the_limit(bot):
    url, _ = bot
    chunk = b"x" * (64 * 1024)
    parts = [f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"] * 20  # 1.25 MiB, never terminated
    status, took = _raw(url, _head(url, _signed_headers() + "Transfer-Encoding: chunked\r\n"), parts)
    assert status == 413 and took < 3


@pytest.mark.parametrize("headers", ["", "X-Slack-Signature: v0=abc\r\n", "X-Slack-Request-Timestamp: 1700000000\r\n"
                                     "X-Slack-Signature: v0=abc\r\n"], ids=["unsigned", "no-timestamp", "stale"])
def test_unsigned_or_stale_requests_are_refused_before_the_body_is_read(bot, headers):
    url, _ = bot
    status, took = _raw(url, _head(url, headers + "Content-Length: 500000\r\n"), [b"{"])  # body never completes
    assert status == 401 and took < 3


def test_non_numeric_timestamp_is_a_400(bot):
    url, slack = bot
    body = event("<@UBOT> hello", ts="1700000020.000100", event_id="Ev20")
    for ts in ("soon", "12e3", "-", "1.7e9"):
        sig = "v0=" + hmac.new(SECRET.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
        req = urllib.request.Request(url, data=body.encode(), method="POST", headers={
            "Content-Type": "application/json", "X-Slack-Request-Timestamp": ts, "X-Slack-Signature": sig})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=10)
        assert err.value.code == 400, ts
    assert slack.posts() == []


@pytest.mark.parametrize("body,ctype", [("this is not json", "application/json"), ("[1, 2]", "application/json"),
                                        ("payload=%7Bnot-json", "application/x-www-form-urlencoded"),
                                        ("\udcff", "application/json")],
                         ids=["text", "json-list", "form-payload", "bad-utf8"])
def test_signed_body_that_is_not_json_is_a_400(bot, body, ctype):
    url, _ = bot
    raw = body.encode("utf-8", "surrogateescape")
    ts = str(int(time.time()))
    sig = "v0=" + hmac.new(SECRET.encode(), f"v0:{ts}:".encode() + raw, hashlib.sha256).hexdigest()
    req = urllib.request.Request(url, data=raw, method="POST", headers={
        "Content-Type": ctype, "X-Slack-Request-Timestamp": ts, "X-Slack-Signature": sig})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=10)
    assert err.value.code == 400


# --- issue 14.4: nothing lost, no flood, one message per answer -----------------------------------------
def test_a_retry_whose_first_delivery_never_arrived_is_answered(bot):
    url, slack = bot
    body = event("<@UBOT> Can megatron_fsdp do pipeline parallelism?", ts="1700000030.000100", event_id="Ev30")
    assert send(url, body, headers={"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"})[0] == 200
    assert "1700000030.000100" in slack.wait_threads({"1700000030.000100"})


def test_a_follow_up_sent_before_the_first_answer_is_queued_behind_it(bot):
    url, slack = bot
    thread = "1700000040.000100"
    first = event("<@UBOT> Llama 3.1 70B on 8 nodes x 8 GPUs with TP and PP: which YAML?", ts=thread, event_id="Ev40")
    follow = json.loads(event("What if I only have 4 nodes?", ts="1700000041.000100", event_id="Ev41",
                              thread_ts=thread, etype="message"))
    follow["event"]["channel_type"] = "channel"
    assert send(url, first)[0] == 200
    assert send(url, json.dumps(follow))[0] == 200  # at once: the first answer is not posted yet
    posts = slack.wait_for(2)
    assert len(posts) == 2 and all(p["thread_ts"] == thread for p in posts)
    assert "64" in posts[0]["text"] and "32" in posts[1]["text"]  # in order; the follow-up kept the model/GPUs


@pytest.mark.parametrize("bot", [SlackOptions(answer_timeout_s=60, limiter=RateLimiter(per_user=3, per_channel=500))],
                         indirect=True)
def test_a_flooding_user_is_told_once_then_left_quiet(bot):
    url, slack = bot
    t0 = time.monotonic()
    for i in range(100):
        assert send(url, event("<@UBOT> which strategy for 8 GPUs?", ts=f"17000001{i:02d}.000100", event_id=f"EvF{i}"))[0] == 200
    assert time.monotonic() - t0 < 30
    slack.wait_for(3)
    time.sleep(2.0)
    told = slack.posts("chat.postEphemeral")
    assert len(told) == 1 and told[0]["user"] == "U123" and "faster" in told[0]["text"]
    answers = slack.posts()
    assert len(answers) == 3 and not any("faster" in p.get("text", "") for p in answers)


def test_one_answer_is_one_message_with_blocks(bot):
    url, slack = bot
    thread = "1700000050.000100"
    question = ("<@UBOT> Llama 3.1 70B on 8 nodes x 8 GPUs: which strategy, TP and PP sizes, the YAML, "
                "how much memory per GPU on H100, and what breaks if I set ep_size?")
    assert send(url, event(question, ts=thread, event_id="Ev50"))[0] == 200
    slack.wait_threads({thread})
    time.sleep(1.5)
    posts = [p for p in slack.posts() if p.get("thread_ts") == thread]
    assert len(posts) == 1
    blocks = posts[0]["blocks"]
    blocks = json.loads(blocks) if isinstance(blocks, str) else blocks
    assert 0 < len(blocks) <= 50
    texts = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    assert all(len(t) <= 3000 and t.count("```") % 2 == 0 for t in texts)
    assert any("```" in t for t in texts)


@pytest.mark.parametrize("settings,needle", [
    ("world_size=1048576", "MW-E-"),  # 7 digits: read, and validated (the ep_size 16 layout is judged)
    ("world_size=1048577", "1048576"),  # past the limit: the validator's own message names it
    ("world_size=8 gpus_per_node=65", "between 1 and 64"),
])
def test_slash_validate_takes_the_shared_size_limits(bot, settings, needle):
    url, _ = bot
    form = urllib.parse.urlencode({
        "command": "/meshwise", "user_id": "U124", "channel_id": "C1", "team_id": "T1",
        "text": f"validate {settings} ```\ndistributed:\n  strategy: fsdp2\n  ep_size: 3\n```",
        "response_url": "http://127.0.0.1:9/unused", "trigger_id": "x"})
    status, body = send(url, form, content_type="application/x-www-form-urlencoded")
    assert status == 200 and needle in body, body[:500]
