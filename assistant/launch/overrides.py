"""Command-line overrides read exactly as NeMo AutoModel reads them.

`components/config/_arg_parser.py` parse_cli_argv: every leading dash of a `--` token is stripped;
`--key=val`, `--key val` (the next token, unless it starts with `--`), a bare `--flag` is "True";
`--config` / `-c` take the next token as the config path; any other token is skipped. Then
parse_args_and_load_config passes each value through `translate_value`, and `ConfigNode.set_by_dotted`
wraps it, which translates it again: "null" and "~" stay strings, "'2'" becomes 2. set_by_dotted
creates missing parents, replaces a non-mapping parent with a mapping, and a mapping value replaces
the whole subtree; the last override of a path wins. `_target_` / `*_fn` values are kept as strings
(upstream imports them; Meshwise never does).
"""
from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any, Mapping, Sequence

from assistant.launch import codes
from assistant.launch.types import LaunchError, LaunchWarning, Override
from assistant.validator.coerce import translate_value

MAX_OVERRIDES = 1000  # a launch line with more is not a launch line


def upstream_value(raw: str, key: str) -> Any:
    """The value set_by_dotted stores for `--key raw`: translated by parse_args_and_load_config, then by
    ConfigNode._wrap (which keeps `_target_` and `*_fn` for import, and leaves mappings and lists to
    be wrapped element by element)."""
    once = translate_value(raw)
    if key == "_target_" or key.endswith("_fn"):
        return once
    return _wrap(once)


def _wrap(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: v2 if isinstance(k, str) and (k == "_target_" or k.endswith("_fn")) else _wrap(v2)
                for k, v2 in v.items()}
    if isinstance(v, list):
        return [_wrap(x) for x in v]
    return translate_value(v)  # a tuple, like any non-string, is left as it is


def split_argv(argv: Sequence[str], *, offset: int = 0,
               config: str | None = None) -> tuple[str | None, tuple[Override, ...], tuple[LaunchWarning, ...]]:
    """parse_cli_argv over `argv`: (the config path, the overrides in order, warnings).

    `offset` is the position of argv[0] in the whole launch line (for the spans of an edited line)."""
    argv = list(argv)
    if len(argv) > 4 * MAX_OVERRIDES:
        raise LaunchError(f"more than {4 * MAX_OVERRIDES} arguments: not a launch line",
                          f"参数超过 {4 * MAX_OVERRIDES} 个：这不是启动命令")
    out: list[Override] = []
    warnings: list[LaunchWarning] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok in ("--config", "-c"):
            if i + 1 >= len(argv):
                raise LaunchError(f"{tok} needs a path after it (parse_cli_argv: \"Expected a path after --config\")",
                                  f"{tok} 后面需要一个路径（parse_cli_argv：\"Expected a path after --config\"）")
            if config is not None:
                warnings.append(codes.warning("MW-W-LAUNCH-CONFIG-OVERRIDDEN", f"{tok} {argv[i + 1]}", config=argv[i + 1]))
            config = argv[i + 1]
            i += 2
            continue
        if tok.startswith("--"):
            key = tok.lstrip("-")
            if "=" in key:
                path, raw = key.split("=", 1)
                argument, end = tok, i + 1
            elif i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                path, raw = key, argv[i + 1]
                argument, end = f"{tok} {argv[i + 1]}", i + 2
            else:
                path, raw = key, "True"
                argument, end = tok, i + 1
            if "" in path.split("."):
                warnings.append(codes.warning("MW-W-LAUNCH-EMPTY-KEY", argument, path=path))
            out.append(Override(path=path, value=upstream_value(raw, path.rsplit(".", 1)[-1]), argument=argument,
                                index=len(out), raw=raw, span=(offset + i, offset + end)))
            if len(out) > MAX_OVERRIDES:
                raise LaunchError(f"more than {MAX_OVERRIDES} overrides: not a launch line",
                                  f"覆盖参数超过 {MAX_OVERRIDES} 个：这不是启动命令")
            i = end
            continue
        if tok.startswith("-") and len(tok) > 1:
            warnings.append(codes.warning("MW-W-LAUNCH-SKIPPED", tok))
        i += 1
    return config, tuple(out), tuple(warnings)


def parse_overrides(argv: Sequence[str]) -> tuple[tuple[Override, ...], tuple[LaunchWarning, ...]]:
    """The overrides of an argument list, as parse_cli_argv + translate_value read them.

    A `--config`/`-c` pair is consumed as upstream consumes it (it sets no override)."""
    _, overrides, warnings = split_argv(argv)
    return overrides, warnings


def apply_overrides(recipe: Mapping, overrides: Sequence[Override]) -> dict:
    """A new recipe with every override set in order, as ConfigNode.set_by_dotted sets it.

    `recipe` is never modified: the mappings along each override's path are copied (a deep copy of
    the whole recipe cost 60% of a validation in benchmarks/validator_throughput.py), the untouched
    subtrees are shared with it."""
    out = dict(recipe)
    copied: set[int] = {id(out)}
    for o in overrides:
        node = out
        *heads, last = _dotted(o.path)
        for h in heads:
            nxt = node.get(h)
            if not isinstance(nxt, dict):
                nxt = {}
            elif id(nxt) not in copied:
                nxt = dict(nxt)
            copied.add(id(nxt))
            node[h] = nxt
            node = nxt
        # a mutable value is copied so two overrides, or the caller, never share it
        node[last] = o.value if isinstance(o.value, (str, int, float, bool, type(None))) else copy.deepcopy(o.value)
    return out



@lru_cache(maxsize=1024)
def _dotted(path: str) -> tuple[str, ...]:
    # the same launch line is applied to every config it is checked against: split each path once
    return tuple(path.split("."))
