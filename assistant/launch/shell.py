"""The little shell a launch line needs: words (shlex, POSIX rules, line continuations joined) and
`$VAR` / `${VAR}` / `${VAR:-default}` / `${VAR-default}` expansion from a given mapping."""
from __future__ import annotations

import re
import shlex
from typing import Mapping

from assistant.launch.types import LaunchError

MAX_LINE = 64 * 1024  # a launch line is well under a KiB; a script's command a few
_SUBST = re.compile(r"\$\([^()]*\)")  # a command substitution with no parentheses inside
_HELD = re.compile("\0(\\d+)\0")
_MAX_NESTING = 8
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")


def words(line: str) -> list[str]:
    if not isinstance(line, str):
        raise LaunchError("the launch line must be text", "启动命令必须是文本")
    if len(line) > MAX_LINE:
        raise LaunchError(f"the launch line is longer than {MAX_LINE} characters", f"启动命令超过 {MAX_LINE} 个字符")
    if "\0" in line:  # never in a shell line; here it marks a held command substitution
        raise LaunchError("the launch line contains a NUL character", "启动命令中含有 NUL 字符")
    joined = re.sub(r"\\\r?\n", " ", line)
    # `$(...)` is replaced by its command's output, one word where it stands: kept whole (innermost first),
    # so `--nproc-per-node $(nvidia-smi -L | wc -l)` is one option with an unknowable value, not six words
    held: list[str] = []

    def hold(m: re.Match[str]) -> str:
        held.append(m.group(0))
        return f"\0{len(held) - 1}\0"

    for _ in range(_MAX_NESTING):
        joined, n = _SUBST.subn(hold, joined)
        if not n:
            break
    try:
        out = shlex.split(joined, comments=True, posix=True)
    except ValueError as exc:
        raise LaunchError(f"the launch line cannot be split into shell words: {exc}",
                          f"启动命令无法按 shell 规则拆分：{exc}") from None
    for _ in range(_MAX_NESTING + 1):
        if not any("\0" in w for w in out):
            break
        out = [_HELD.sub(lambda m: held[int(m.group(1))], w) for w in out]
    return out


def expand(text: str, env: Mapping[str, str]) -> str:
    """Expand the variables `env` knows, and defaults of those it does not; others stay as written."""
    def one(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(4)
        if name in env and (env[name] != "" or m.group(2) != ":-"):
            return env[name]
        if m.group(2) is not None:
            return m.group(3)
        return m.group(0)

    return _VAR.sub(one, text)
