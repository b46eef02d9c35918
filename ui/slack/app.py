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
from slack_bolt import App, BoltResponse
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from assistant.answer import AskRequest
from assistant.config import Settings
from assistant.defaults import DEFAULT_GPUS_PER_NODE, MAX_GPUS_PER_NODE
from assistant.understand.language import detect_language
from assistant.validator import UnusableInput, ValidationReport
from ui.slack.attach import Uploads, attach_mesh
from ui.slack.format import render_answer, render_report
from ui.slack.phrases import say
from ui.slack.slash import AskCommand, ValidateCommand, parse_command
from ui.slack.state import RateLimiter, SeenEvents, ThreadSessions, ThreadTurns

log = logging.getLogger("meshwise.slack")

MAX_QUESTION_CHARS = 4000
MAX_YAML_CHARS = 64 * 1024
_MENTION = re.compile(r"<@[A-Z0-9]+>")


@dataclass
class SlackOptions:
    answer_timeout_s: float = 60.0
    workers: int = 2
    limiter: RateLimiter = field(default_factory=RateLimiter)
    sessions: ThreadSessions = field(default_factory=ThreadSessions)
    seen: SeenEvents = field(default_factory=SeenEvents)
    turns: ThreadTurns = field(default_factory=ThreadTurns)
    uploads: Uploads = field(default_factory=Uploads)  # mesh pictures, while the token may upload files


class MissingSetting(ValueError):
    """A token or secret the chosen mode needs is not configured."""


def require(settings: Settings, mode: str) -> None:
    needed = [("slack_bot_token", "SLACK_BOT_TOKEN")]
    needed.append(("slack_app_token", "SLACK_APP_TOKEN") if mode == "socket" else ("slack_signing_secret", "SLACK_SIGNING_SECRET"))
    for attr, var in needed:
        if not getattr(settings, attr):
            raise MissingSetting(f"{var} is not set (needed for Slack {mode} mode; set it in the environment or the config file)")


def _thread_key(event: dict, bot_user: str, sessions: ThreadSessions) -> tuple[str, str] | None:
    """The thread an event asks a question in, or None when it is not a question for us."""
    channel, ts = event.get("channel", ""), event.get("ts", "")
    key = (channel, event.get("thread_ts") or ts)
    if event.get("type") == "app_mention":
        return key
    if event.get("type") != "message" or event.get("subtype") or event.get("bot_id"):
        return None  # edits, joins, and every bot's messages, ours included
    if bot_user and f"<@{bot_user}>" in (event.get("text") or ""):
        return None  # the app_mention event answers this one
    if event.get("channel_type") == "im" or (event.get("thread_ts") and sessions.known((channel, event["thread_ts"]))):
        return key
    return None


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
    app._meshwise_signing_secret = settings.slack_signing_secret  # the HTTP endpoint checks before bolt reads

    @app.middleware
    def take_turns(body, context, next):
        # Runs as each delivery arrives, before the ack: duplicates (retries of an event already taken,
        # a redelivered envelope) stop here, and each question takes its turn in its thread, so a
        # follow-up sent before the first answer is posted waits for it instead of being lost.
        event = body.get("event") if isinstance(body, dict) and body.get("type") == "event_callback" else None
        key = _thread_key(event, context.get("bot_user_id") or "", opts.sessions) if isinstance(event, dict) else None
        if key is not None:
            channel, ts = event.get("channel", ""), event.get("ts", "")
            if not opts.seen.first_time(f"evt:{body.get('event_id') or ts}") or not opts.seen.first_time(f"msg:{channel}:{ts}"):
                return BoltResponse(status=200, body="")
            opts.sessions.open(key)
            context["meshwise_turn"] = (key, opts.turns.take(key))
        return next()

    def take_turn(event: dict, client: WebClient, context) -> None:
        taken = context.get("meshwise_turn")
        if taken is None:
            return
        key, turn = taken
        opts.turns.wait(key, turn)
        try:
            answer_in_thread(event, client, key)
        finally:
            opts.turns.finish(key, turn)

    def answer_in_thread(event: dict, client: WebClient, key: tuple[str, str]) -> None:
        channel, thread = key
        user = event.get("user", "?")
        question = _MENTION.sub(" ", event.get("text") or "").strip()
        lang = detect_language(question)

        def post(text: str, blocks: list | None = None) -> None:
            client.chat_postMessage(channel=channel, thread_ts=thread, text=text, blocks=blocks, mrkdwn=True,
                                    unfurl_links=False)

        if not opts.limiter.allow(user, channel):
            if opts.limiter.tell(user):  # once per window, then quiet: a flood must not become our flood
                try:
                    client.chat_postEphemeral(channel=channel, user=user, thread_ts=thread, text=say("rate_limited", lang))
                except SlackApiError:
                    post(say("rate_limited", lang))
            return
        if not question:
            return post(say("empty", lang))
        if len(question) > MAX_QUESTION_CHARS:
            return post(say("too_long", lang, size=len(question), limit=MAX_QUESTION_CHARS))
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
        message = render_answer(answer)
        post(message.text, message.blocks)
        opts.sessions.add(key, question, answer.text)  # first: a follow-up may arrive while the picture uploads
        attach_mesh(client, opts.uploads, channel=channel, thread_ts=thread, report=answer.validation,
                    lang=answer.language)

    @app.event("app_mention")
    def on_mention(event, client, context):
        take_turn(event, client, context)

    @app.event("message")
    def on_message(event, client, context):
        take_turn(event, client, context)  # only questions for us took a turn (`_thread_key`)

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
    if cmd.gpus_per_node is not None and not 1 <= cmd.gpus_per_node <= MAX_GPUS_PER_NODE:
        return f":x: {say('gpus_per_node_range', lang, limit=MAX_GPUS_PER_NODE, got=cmd.gpus_per_node)}", None
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
    message = render_answer(answer)
    respond(message.text, blocks=message.blocks, response_type="in_channel", replace_original=False)


def _api_url(settings: Settings) -> str:
    url = settings.slack_api_url or "https://slack.com/api/"
    return url if url.endswith("/") else url + "/"


def close_app(app: App) -> None:
    pool = getattr(app, "_meshwise_pool", None)
    if pool:
        pool.shutdown(wait=False, cancel_futures=True)
