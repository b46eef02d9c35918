"""`meshwise`: one console command; each subcommand lives in its own module of this package.

Each module exposes `add_parser(subparsers)` and `run(args) -> int`. This file only dispatches, so
the contracts of the subcommands stay where they are implemented.
"""
from __future__ import annotations

import argparse
import importlib
import sys

# name -> module; order is the order shown by --help.
SUBCOMMANDS = ("ingest", "ask", "validate", "eval", "serve", "slack", "feedback")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="meshwise", description="Distributed-training assistant for NeMo AutoModel.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        try:
            mod = importlib.import_module(f"assistant.cli.{name}_cmd")
        except ModuleNotFoundError as exc:
            if exc.name != f"assistant.cli.{name}_cmd":
                raise
            continue  # not built yet
        p = mod.add_parser(sub)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    # a subcommand that reads arguments of its own (validate's config overrides) gets the rest in
    # args._extra; for every other one an unknown argument is the usual usage error
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "_accepts_extra", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args._extra = extra
    if extra and getattr(args, "_regroup", None):
        # the subcommand reads its unknown words itself (validate: overrides as upstream reads them)
        args._regroup(args, sys.argv[1:] if argv is None else argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    from assistant.config import ConfigError

    try:
        return int(args._run(args) or 0)
    except ConfigError as exc:  # a setting that cannot be used: found at start-up, said in one line
        print(f"meshwise {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
