"""Score a directory of replay fixtures on the tool path, the single-shot path and the offline composer.

One engine is loaded; the fixtures are played back by `evals/replay_server.py` on 127.0.0.1 and each
path answers the cases the fixtures name (found in `--set`, default the default eval set), scored like
any eval run. Prints one line per path (pass rate overall and per language, which path actually
wrote each answer, tool calls made) and the cases that fail, so a change to the prompt, the tools or
the gate shows its effect on the same replies:

    python -m evals.replay_score --fixtures evals/llm_fixtures/tuning [--out DIR]

A fixture whose case is not in the set is an error, not a silent skip: the held-out fixtures need
`--set evals/heldout`, which only the lead runs.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

PATHS = ("tools", "single_shot", "offline")


def _engine(base, url: str | None, tools: bool):
    from assistant.compose.llm.openai_client import OpenAICompatClient
    from assistant.engine import Assistant

    if url is None:
        return base
    client = OpenAICompatClient(url, model="replay", timeout_s=base.settings.llm_timeout_s, tools=tools)
    settings = replace(base.settings, llm_base_url=url, llm_model="replay", llm_tools=tools)
    return Assistant(settings, base.retriever, base.phrases, "openai", client)


def score_paths(cases, fixtures, base, paths=PATHS) -> dict[str, dict]:
    """{path: summary} with the answers each path wrote; `base` is a loaded offline Assistant."""
    from evals.replay_server import ReplayServer
    from evals.runner import run

    out: dict[str, dict] = {}
    with ReplayServer(fixtures) as server:
        for path in paths:
            engine = _engine(base, None if path == "offline" else server.url, path == "tools")
            result = run(cases, assistant=engine, llm="offline" if path == "offline" else "openai", progress=False)
            langs: dict[str, list[int]] = {}
            for s in result.scores:
                got = langs.setdefault(s.lang, [0, 0])
                got[0] += s.passed
                got[1] += 1
            wrote: dict[str, int] = {}
            for a in result.answers.values():
                wrote[a.get("llm_path") or "offline"] = wrote.get(a.get("llm_path") or "offline", 0) + 1
            out[path] = {"passed": sum(s.passed for s in result.scores), "cases": len(result.scores),
                         "by_language": {k: {"passed": p, "cases": n} for k, p, n in
                                         sorted((k, v[0], v[1]) for k, v in langs.items())},
                         "answer_paths": wrote,
                         "tool_calls": sum(len(a.get("tool_calls") or ()) for a in result.answers.values()),
                         "failed": {s.id: [c.name for c in s.checks if not c.passed]
                                    for s in sorted(result.scores, key=lambda s: s.id) if not s.passed}}
        out["replay_misses"] = server.misses
    return out


def _line(path: str, s: dict) -> str:
    pct = lambda p, n: f"{p}/{n} = {100 * p / n:.1f}%" if n else "-"  # noqa: E731
    langs = ", ".join(f"{k} {pct(v['passed'], v['cases'])}" for k, v in s["by_language"].items())
    wrote = ", ".join(f"{k} {v}" for k, v in sorted(s["answer_paths"].items()))
    return f"{path}: {pct(s['passed'], s['cases'])} ({langs}); answers by {wrote}; tool calls {s['tool_calls']}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fixtures", type=Path, required=True, help="a directory of replay fixture YAML files")
    ap.add_argument("--set", action="append", type=Path, default=[], dest="sets", metavar="PATH",
                    help="where the fixtures' cases are (default: the default eval set)")
    ap.add_argument("--out", type=Path, default=None, help="write summary.json here")
    args = ap.parse_args(argv)

    from assistant.config import load_settings
    from assistant.engine import Assistant
    from evals.replay_server import load_fixtures
    from evals.schema import default_set_paths, load_set

    fixtures = load_fixtures(args.fixtures)
    wanted = {f.case for f in fixtures}
    cases = [c for c in load_set(args.sets or default_set_paths()) if c.id in wanted]
    missing = sorted(str(x) for x in wanted - {c.id for c in cases})
    if missing or not cases:
        print(f"replay_score: fixtures name cases not in the set: {', '.join(missing) or '(none found)'}", file=sys.stderr)
        return 2
    base = Assistant.load(load_settings(), llm="offline", warm_up=False)
    try:
        summary = score_paths(cases, fixtures, base)
    finally:
        base.close()
    for path in PATHS:
        print(_line(path, summary[path]))
        for cid, checks in summary[path]["failed"].items():
            print(f"  failed: {cid}: {'; '.join(checks)}")
    print(f"replay misses (requests no fixture answered): {summary['replay_misses']}")
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "summary.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
