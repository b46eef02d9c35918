"""The little shell a launch line needs: words (shlex, POSIX rules, line continuations joined) and
`$VAR` / `${VAR}` / `${VAR:-default}` / `${VAR-default}` expansion from a given mapping."""
from __future__ import annotations

import re
import shlex
from typing import Mapping

from assistant.launch.types import LaunchError

MAX_LINE = 64 * 1024  # a launch line is well under a KiB; a script's command a few
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")


def words(line: str) -> list[str]:
    if not isinstance(line, str):
        raise LaunchError("the launch line must be text", "启动命令必须是文本")
    if len(line) > MAX_LINE:
        raise LaunchError(f"the launch line is longer than {MAX_LINE} characters", f"启动命令超过 {MAX_LINE} 个字符")
    joined = re.sub(r"\\\r?\n", " ", line)
    try:
        return shlex.split(joined, comments=True, posix=True)
    except ValueError as exc:
        raise LaunchError(f"the launch line cannot be split into shell words: {exc}",
                          f"启动命令无法按 shell 规则拆分：{exc}") from None


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
