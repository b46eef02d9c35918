"""The slack-bolt app: mentions, direct messages, thread follow-ups and `/meshwise`.

Every reply goes through the same `Assistant` (and so the same validator gate) as the web chat and
the CLI. Slack wants an acknowledgement within 3 seconds: bolt acknowledges events at once
(`process_before_response=False`) and answers run on a small pool with a deadline.
"""
from __future__ import annotations

import concurrent.futures as cf
import logging
import re
import threading
import uuid
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import yaml
from slack_bolt import App, BoltResponse
from slack_sdk import WebClient

from assistant.answer import AskRequest
from assistant.config import Settings
from assistant.defaults import DEFAULT_GPUS_PER_NODE
from assistant.understand.language import detect_language
from assistant.validator import UnusableInput, ValidationReport
from ui.slack.attach import Uploads, attach_mesh
from ui.slack.format import render_answer, render_report, split_message
from ui.slack.slash import AskCommand, ValidateCommand, parse_command
from ui.slack.state import RateLimiter, SeenEvents, ThreadSessions

log = logging.getLogger("meshwise.slack")

MAX_QUESTION_CHARS = 4000
MAX_YAML_CHARS = 64 * 1024
_MENTION = re.compile(r"<@[A-Z0-9]+>")


@cache
def _phrases() -> dict:
    return yaml.safe_load((Path(__file__).with_name("phrases.yaml")).read_text(encoding="utf-8"))


def say(key: str, lang: str, **values) -> str:
    return _phrases()[key][lang].format(**values)


@dataclass
class SlackOptions:
    answer_timeout_s: float = 60.0
    workers: int = 2
    limiter: RateLimiter = field(default_factory=RateLimiter)
    sessions: ThreadSessions = field(default_factory=ThreadSessions)
    seen: SeenEvents = field(default_factory=SeenEvents)
    uploads: Uploads = field(default_factory=Uploads)  # mesh pictures, while the token may upload files


class MissingSetting(ValueError):
    """A token or secret the chosen mode needs is not configured."""


def require(settings: Settings, mode: str) -> None:
    needed = [("slack_bot_token", "SLACK_BOT_TOKEN")]
    needed.append(("slack_app_token", "SLACK_APP_TOKEN") if mode == "socket" else ("slack_signing_secret", "SLACK_SIGNING_SECRET"))
    for attr, var in needed:
        if not getattr(settings, attr):
            raise MissingSetting(f"{var} is not set (needed for Slack {mode} mode; set it in the environment or the config file)")


def _retry_num(headers) -> int:
    """The delivery's retry count. Socket Mode sets the header on every envelope, first deliveries
    included ("0"), so only a count above zero is a retry."""
    v = headers.get("x-slack-retry-num")
    v = v[0] if isinstance(v, (list, tuple)) and v else v
    try:
        return int(v or 0)
    except (TypeError, ValueError):
        return 0


def build_app(assistant, settings: Settings, *, mode: str = "http", options: SlackOptions | None = None) -> App:
    """A ready bolt `App`. `assistant` is a loaded `assistant.engine.Assistant`."""
    require(settings, mode)
    opts = options or SlackOptions()
    pool = cf.ThreadPoolExecutor(max_workers=opts.workers, thread_name_prefix="meshwise-slack")
    client = WebClient(token=settings.slack_bot_token, base_url=_api_url(settings))
    app = App(
        client=client,
        signing_secret=settings.slack_signing_secret or "",
        request_verification_enabled=(mode == "http"),
        process_before_response=False,
        ignoring_self_events_enabled=True,
        logger=log,
    )
    app._meshwise_pool = pool  # closed by `close_app`

    @app.middleware
    def drop_retries(request, next):
        # Slack retries when our ack was slow; the first delivery is already being answered.
        if _retry_num(request.headers) > 0:
            return BoltResponse(status=200, body="")
        return next()

    def answer_in_thread(event: dict, client: WebClient, body: dict) -> None:
        channel, ts = event.get("channel", ""), event.get("ts", "")
        if not opts.seen.first_time(f"msg:{channel}:{ts}") or not opts.seen.first_time(f"evt:{body.get('event_id', ts)}"):
            return
        question = _MENTION.sub(" ", event.get("text") or "").strip()
        lang = detect_language(question)
        thread = event.get("thread_ts") or ts
        key = (channel, thread)

        def post(text: str) -> None:
            client.chat_postMessage(channel=channel, thread_ts=thread, text=text, mrkdwn=True, unfurl_links=False)

        if not question:
            return post(say("empty", lang))
        if len(question) > MAX_QUESTION_CHARS:
            return post(say("too_long", lang, size=len(question), limit=MAX_QUESTION_CHARS))
        if not opts.limiter.allow(event.get("user", "?"), channel):
            return post(say("rate_limited", lang))
        req = AskRequest(question=question, history=opts.sessions.history(key), id=f"slack-{uuid.uuid4().hex[:12]}")
        future = pool.submit(assistant.ask, req)
        try:
            answer = future.result(timeout=opts.answer_timeout_s)
        except cf.TimeoutError:
            future.cancel()
            log.warning("answer %s timed out after %.0fs", req.id, opts.answer_timeout_s)
            return post(say("apology_timeout", lang))
        except Exception:  # one bad question must not take the bot down
            log.exception("answer %s failed", req.id)
            return post(say("apology_error", lang))
        for message in render_answer(answer):
            post(message)
        opts.sessions.add(key, question, answer.text)  # first: a follow-up may arrive while the picture uploads
        attach_mesh(client, opts.uploads, channel=channel, thread_ts=thread, report=answer.validation,
                    lang=answer.language)

    @app.event("app_mention")
    def on_mention(event, client, body):
        answer_in_thread(event, client, body)

    @app.event("message")
    def on_message(event, client, body, context):
        if event.get("subtype") or event.get("bot_id"):
            return  # edits, joins, and every bot's messages, ours included
        bot_user = context.get("bot_user_id") or ""
        if bot_user and f"<@{bot_user}>" in (event.get("text") or ""):
            return  # the app_mention event answers this one
        is_dm = event.get("channel_type") == "im"
        in_our_thread = event.get("thread_ts") and opts.sessions.known((event.get("channel", ""), event["thread_ts"]))
        if is_dm or in_our_thread:
            answer_in_thread(event, client, body)

    @app.command(re.compile(r"^/meshwise"))
    def on_command(ack, command, respond, client):
        text = command.get("text") or ""
        lang = detect_language(text)
        if len(text) > MAX_YAML_CHARS:
            return ack(say("too_long", lang, size=len(text), limit=MAX_YAML_CHARS))
        cmd = parse_command(text)
        if isinstance(cmd, ValidateCommand):
            return _validate_with_picture(assistant, cmd, lang, ack, command, client, opts, pool)
        if not cmd.question:
            return ack(say("ask_usage", lang))
        if not opts.limiter.allow(command.get("user_id", "?"), command.get("channel_id", "?")):
            return ack(say("rate_limited", lang))
        ack(say("thinking", lang))
        # Its own thread, not the pool: it waits on a pool task, and waiting inside the pool could deadlock it.
        threading.Thread(target=_answer_command, args=(assistant, cmd, respond, lang, opts.answer_timeout_s, pool), daemon=True).start()

    return app


def _validate_reply(assistant, cmd: ValidateCommand, lang: str) -> tuple[str, ValidationReport | None]:
    if not cmd.yaml_text or not cmd.world_size:
        return say("validate_usage", lang), None
    try:
        report = assistant.validate(cmd.yaml_text, world_size=cmd.world_size, gpus_per_node=cmd.gpus_per_node or DEFAULT_GPUS_PER_NODE)
    except UnusableInput as exc:
        return f":x: {exc.message_zh if lang == 'zh' else exc.message}", None
    return render_report(report, lang), report


def _validate_with_picture(assistant, cmd: ValidateCommand, lang: str, ack, command: dict, client: WebClient,
                           opts: SlackOptions, pool) -> None:
    """The report as the acknowledgement (within Slack's 3 s); a valid layout's picture follows in the channel.

    Files cannot be ephemeral, so the picture is posted with a comment naming who asked."""
    text, report = _validate_reply(assistant, cmd, lang)
    ack(text)
    if report is None or not report.ok or not opts.uploads.enabled:
        return
    user = command.get("user_id")
    comment = (f"<@{user}> `/meshwise validate`: " if user else "") + text.split("\n", 1)[0]
    pool.submit(attach_mesh, client, opts.uploads, channel=command.get("channel_id", ""), report=report, lang=lang,
                comment=comment)


def _answer_command(assistant, cmd: AskCommand, respond, lang: str, timeout_s: float, pool) -> None:
    future = pool.submit(assistant.ask, AskRequest(question=cmd.question, id=f"slack-{uuid.uuid4().hex[:12]}"))
    try:
        answer = future.result(timeout=timeout_s)
    except cf.TimeoutError:
        return respond(say("apology_timeout", lang), response_type="ephemeral")
    except Exception:
        log.exception("slash answer failed")
        return respond(say("apology_error", lang), response_type="ephemeral")
    for message in render_answer(answer):
        respond(message, response_type="in_channel", replace_original=False)


def _api_url(settings: Settings) -> str:
    url = settings.slack_api_url or "https://slack.com/api/"
    return url if url.endswith("/") else url + "/"


def close_app(app: App) -> None:
    pool = getattr(app, "_meshwise_pool", None)
    if pool:
        pool.shutdown(wait=False, cancel_futures=True)
