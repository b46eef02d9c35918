"""`meshwise slack`: the Slack bot, in Socket Mode or HTTP Events API mode."""
from __future__ import annotations

import argparse
import sys


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("slack", help="run the Slack bot", description="Answer Slack mentions, DMs and /meshwise.")
    p.add_argument("--mode", choices=("socket", "http"), default=None,
                   help="socket (needs SLACK_APP_TOKEN) or http (needs SLACK_SIGNING_SECRET); default: socket when SLACK_APP_TOKEN is set")
    p.add_argument("--host", default="127.0.0.1", help="HTTP mode: address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=3000, help="HTTP mode: port (default 3000)")
    p.add_argument("--llm", choices=("offline", "openai", "local"), default="offline")
    return p


def run(args) -> int:
    from assistant.config import load_settings
    from ui.slack.app import MissingSetting, build_app, require

    settings = load_settings()
    mode = args.mode or ("socket" if settings.slack_app_token else "http")
    try:
        require(settings, mode)  # fail in one line before loading any model
    except MissingSetting as exc:
        print(f"meshwise slack: {exc}", file=sys.stderr)
        return 2
    from assistant.engine import Assistant
    from ui.slack.server import serve_http, serve_socket

    assistant = Assistant.load(settings, llm=args.llm)
    try:
        app = build_app(assistant, settings, mode=mode)
        if mode == "socket":
            print("meshwise slack: Socket Mode", file=sys.stderr)
            serve_socket(app, settings.slack_app_token)
        else:
            print(f"meshwise slack: listening on http://{args.host}:{args.port}/slack/events", file=sys.stderr)
            serve_http(app, args.host, args.port)
    finally:
        assistant.close()  # stops a local LLM server, if one was started
    return 0
