"""Environment variables in recipe values, resolved as `components/config/loader.py` resolve_yaml_env_vars
resolves them: `${VAR}`, `${VAR,default}`, `${oc.env:VAR}` / `${oc.env:VAR,default}` (braced forms
first; `${a.b}` looks up a variable named "a.b"), then `$VAR` / `$var.dot.var`. A reference with no
default to an unset variable is where upstream raises KeyError: here a LaunchError naming every one.

ConfigNode resolves while it wraps the loaded YAML, so keys and `_target_` / `*_fn` values (imported,
not resolved) are left alone by default.
"""
from __future__ import annotations

from typing import Any, Mapping

from assistant.launch.types import LaunchError
from assistant.validator.coerce import ENV_BRACED, ENV_DOLLAR, env_reference

MAX_UNSET_SHOWN = 5


class EnvVarUnset(LaunchError):
    """Values refer to environment variables that are not set and have no default."""

    def __init__(self, missing: list[tuple[str, str, str]]):
        self.missing = tuple(missing)  # (dotted path, variable, token)
        shown = "; ".join(f"{p or '(top level)'}: {tok}" for p, _, tok in missing[:MAX_UNSET_SHOWN])
        more = f" (and {len(missing) - MAX_UNSET_SHOWN} more)" if len(missing) > MAX_UNSET_SHOWN else ""
        names = ", ".join(dict.fromkeys(v for _, v, _ in missing))
        super().__init__(
            f"environment variable {names} is not set and has no default: the loader raises KeyError "
            f"(\"Environment variable '{missing[0][1]}' is not set\") at launch. {shown}{more}. "
            "Set it with --env NAME=VALUE, or give the value a default: ${NAME,default}",
            f"环境变量 {names} 未设置且没有默认值：启动时加载器会抛出 KeyError"
            f"（\"Environment variable '{missing[0][1]}' is not set\"）。{shown}{more}。"
            "请用 --env NAME=VALUE 设置，或写成带默认值的 ${NAME,default}",
        )


def _resolve_str(value: str, env: Mapping[str, str], path: str, missing: list) -> str:
    if "$" not in value:
        return value

    def get(name: str, default: str | None, token: str) -> str:
        if name in env:
            return env[name]
        if default is not None:
            return default
        missing.append((path, name, token))
        return token

    out = ENV_BRACED.sub(lambda m: get(*env_reference(m.group(1)), m.group(0)), value)
    return ENV_DOLLAR.sub(lambda m: get(m.group(1), None, m.group(0)), out)


def resolve_env_vars(recipe: Any, env: Mapping[str, str], *, keep_targets: bool = True) -> Any:
    """A copy of `recipe` with every environment reference in a string value resolved from `env`.

    Raises EnvVarUnset (a LaunchError) for references with no default to variables `env` lacks."""
    missing: list[tuple[str, str, str]] = []

    def walk(v: Any, path: str, key: Any) -> Any:
        if isinstance(v, dict):
            return {k: (v2 if keep_targets and isinstance(k, str) and (k == "_target_" or k.endswith("_fn"))
                        else walk(v2, f"{path}.{k}" if path else str(k), k)) for k, v2 in v.items()}
        if isinstance(v, list):
            return [walk(x, f"{path}[{n}]", n) for n, x in enumerate(v)]
        if isinstance(v, str):
            return _resolve_str(v, env, path, missing)
        return v

    out = walk(recipe, "", None)
    if missing:
        raise EnvVarUnset(missing)
    return out


def parse_env_pairs(pairs: list[str]) -> dict[str, str]:
    """--env KEY=VAL arguments as a mapping (the last of a key wins, like the shell)."""
    env: dict[str, str] = {}
    for p in pairs:
        key, sep, val = p.partition("=")
        if not sep or not key:
            raise LaunchError(f"--env {p!r}: write it as NAME=VALUE", f"--env {p!r}：请写成 NAME=VALUE")
        env[key] = val
    return env
