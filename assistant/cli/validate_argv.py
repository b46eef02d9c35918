"""The files and the override arguments of one `meshwise validate` command line.

argparse sees `--distributed.tp_size` as an unknown option but hands the `2` after it to the file
list, and a file named after an override to the unknown rest: `validate --distributed.tp_size 2
a.yaml` tried to read a file `2`, and `validate a.yaml --distributed.tp_size 2 b.yaml` dropped
b.yaml without a word (upstream's parse_cli_argv skips a bare word). Here the words are grouped
again as parse_cli_argv reads an override (`--key=value`, `--key value` unless the next word starts
with `--`, else a bare flag), around Meshwise's own options; every other bare word is a file.
"""
from __future__ import annotations

import argparse
from typing import Sequence


def _own(parser: argparse.ArgumentParser, word: str) -> argparse.Action | None:
    """The parser's option a word names (exactly, with `=value`, or by an unambiguous prefix, as
    argparse accepts it), or None for an override."""
    name = word.split("=", 1)[0]
    actions = parser._option_string_actions  # noqa: SLF001 - the option table argparse itself matches against
    if name in actions:
        return actions[name]
    if not name.startswith("--") or not parser.allow_abbrev:
        return None
    hits = {actions[o] for o in actions if o.startswith(name)}
    return hits.pop() if len(hits) == 1 else None


def regroup(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: Sequence[str]) -> None:
    """Set args.file and args._extra from the words after the subcommand, in their order."""
    words = list(argv)
    if args.command in words:
        words = words[words.index(args.command) + 1:]
    files: list[str] = []
    extra: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":  # argparse: every word after it is positional
            files.extend(words[i + 1:])
            break
        action = _own(parser, word) if word.startswith("-") and word != "-" else None
        if action is not None:
            takes = 0 if "=" in word or action.nargs == 0 else 1  # Meshwise's options take one value or none
            i += 1 + takes
        elif word.startswith("--"):
            value = "=" not in word and i + 1 < len(words) and not words[i + 1].startswith("--")
            extra.extend(words[i:i + 1 + value])
            i += 1 + value
        elif word.startswith("-") and word != "-":
            extra.append(word)  # a single-dash word: parse_cli_argv's reading (skipped, or -c's path) decides
            i += 1
        else:
            files.append(word)
            i += 1
    args.file = files
    args._extra = extra
