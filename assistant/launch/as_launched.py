"""A suggested fix said the way the job is launched: as override flags, or as the launch line edited.

Each flag's value text is chosen so that upstream's two translations (parse_args_and_load_config, then
ConfigNode._wrap) give back exactly the fixed value; a value no flag can carry (a key the fix removes:
an override cannot delete a key) is listed by `not_expressible` instead.
"""
from __future__ import annotations

import shlex
from typing import Any, Mapping

from assistant.launch.overrides import upstream_value
from assistant.launch.types import Launch

_MISSING = object()


def _text(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    return repr(value)


def _flag(path: str, value: Any) -> str | None:
    text = _text(value)
    if upstream_value(text, path.rsplit(".", 1)[-1]) != value or type(upstream_value(text, path)) is not type(value):
        text = repr(repr(value)) if isinstance(value, str) else text
        if upstream_value(text, path.rsplit(".", 1)[-1]) != value:
            return None
    return f"--{path} {shlex.quote(text)}"


def _changes(original: Any, fixed: Any, path: str, out: list[tuple[str, Any]], gone: list[str]) -> None:
    if isinstance(fixed, Mapping):
        if not isinstance(original, Mapping):
            if not fixed:
                out.append((path, {}))
                return
            original = {}
        for k, v in fixed.items():
            _changes(original.get(k, _MISSING), v, f"{path}.{k}" if path else str(k), out, gone)
        for k in original:
            if k not in fixed:
                gone.append(f"{path}.{k}" if path else str(k))
        return
    if original is _MISSING or original != fixed or type(original) is not type(fixed):
        out.append((path, fixed))


def fix_as_overrides(original: Mapping, fixed: Mapping) -> list[str]:
    """The override flags that turn `original` into `fixed` (only the sections `fixed` holds are compared)."""
    out: list[tuple[str, Any]] = []
    _changes({k: original.get(k, _MISSING) for k in fixed}, fixed, "", out, [])
    flags = []
    for path, value in out:
        f = _flag(path, value) if not isinstance(value, dict) else f"--{path} '{{}}'"
        if f is not None:
            flags.append(f)
    return flags


def not_expressible(original: Mapping, fixed: Mapping) -> list[str]:
    """Dotted paths the fix removes or sets to a value no flag carries: edit these in the YAML."""
    out: list[tuple[str, Any]] = []
    gone: list[str] = []
    _changes({k: original.get(k, _MISSING) for k in fixed}, fixed, "", out, gone)
    return gone + [p for p, v in out if not isinstance(v, dict) and _flag(p, v) is None]


def edited_line(launch: Launch, flags: list[str]) -> str | None:
    """The launch line with `flags` applied: an override of the same path replaced in place, others appended."""
    if not launch.tokens:
        return None
    toks = list(launch.tokens)
    spans = {o.path: o.span for o in launch.overrides if o.span}
    tail: list[str] = []
    replaced: dict[int, tuple[int, list[str]]] = {}
    for f in flags:
        words = shlex.split(f)
        path = words[0][2:]
        if path in spans:
            s, e = spans[path]
            replaced[s] = (e, words)
        else:
            tail.extend(words)
    out: list[str] = []
    k = 0
    while k < len(toks):
        if k in replaced:
            e, words = replaced[k]
            out.extend(words)
            k = e
            continue
        out.append(toks[k])
        k += 1
    return shlex.join(out + tail)
