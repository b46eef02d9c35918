"""`meshwise feedback export`: thumbs-down answers from the web chat -> draft eval cases."""
from __future__ import annotations

import argparse
import sys

import yaml


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("feedback", help="work with web-chat feedback", description="Turn thumbs-down feedback into draft eval cases.")
    p.add_argument("action", choices=("export", "show"), help="export: draft eval cases (YAML); show: counts")
    p.add_argument("--out", default="-", help="file for the drafts (default: standard output)")
    return p


def run(args) -> int:
    from assistant.config import load_settings
    from ui.web.feedback import FeedbackStore, draft_cases

    settings = load_settings()
    rows = FeedbackStore(settings.data_dir / "feedback.jsonl").read()
    if args.action == "show":
        down = sum(1 for r in rows if not r.get("liked"))
        print(f"{len(rows)} feedback items: {len(rows) - down} up, {down} down ({settings.data_dir / 'feedback.jsonl'})")
        return 0
    text = yaml.safe_dump({"cases": draft_cases(rows)}, allow_unicode=True, sort_keys=False)
    if args.out == "-":
        sys.stdout.write(text)
    else:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {len(draft_cases(rows))} draft cases to {args.out}", file=sys.stderr)
    return 0
