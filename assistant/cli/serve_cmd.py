"""`meshwise serve`: the Gradio web chat (the main way people use Meshwise)."""
from __future__ import annotations

import argparse
import sys


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("serve", help="run the web chat", description="Open the web chat (Gradio) on the embedded kb.")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=7860, help="port (default 7860)")
    p.add_argument("--llm", choices=("offline", "openai"), default="offline",
                   help="answerer: offline composer (default) or the configured OpenAI-compatible endpoint")
    return p


def run(args) -> int:
    from assistant.config import load_settings

    settings = load_settings()
    if args.llm == "openai" and not settings.llm_configured:
        print("meshwise serve: --llm openai needs MESHWISE_LLM_BASE_URL (and MESHWISE_LLM_MODEL) or a config file", file=sys.stderr)
        return 2
    if not 0 < args.port < 65536:
        print(f"meshwise serve: invalid port {args.port}", file=sys.stderr)
        return 2
    from assistant.engine import Assistant
    from ui.web.app import launch

    print("meshwise serve: loading the index and models (the first start builds the index) ...", file=sys.stderr)
    assistant = Assistant.load(settings, llm=args.llm)
    print(f"meshwise serve: open http://{args.host}:{args.port}", file=sys.stderr)
    try:
        launch(assistant, settings, host=args.host, port=args.port, block=True)
    finally:
        assistant.close()
    return 0
