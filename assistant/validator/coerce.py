"""Turn input into the values NeMo AutoModel's config loader would hand to its start-up code.

Two jobs: load YAML safely (byte cap, bounded expansion of anchors/aliases, clean errors), and
mirror `ConfigNode` (components/config/loader.py): every scalar string goes through
`translate_value` ("2" -> 2, "none" -> None, "true" -> True, literal_eval for the rest), `${VAR,default}`
references are resolved (against an empty environment: the validator cannot see the launch
environment), and a non-string key with a scalar value makes the loader fail.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import yaml

from assistant.validator import yaml_text
from assistant.validator.report import UnusableInput

MAX_BYTES = 256 * 1024  # real recipes are a few KiB; anything near this is not a recipe
MAX_NODES = 20_000  # values after expanding every alias: an alias bomb stops here
MAX_DEPTH = 64  # nesting; recursive aliases stop here too
_TRANSLATE_MAX_LEN = 1000  # translate_value leaves longer strings alone

_SPECIAL = {"none": None, "None": None, "true": True, "True": True, "false": False, "False": False}
_INTERNAL_KEYS = frozenset({"raise_on_missing_attr", "_raw_config", "_original_strings"})
ENV_BRACED = re.compile(r"\$\{([^}]+)\}")  # loader.py resolve_yaml_env_vars: braced references first,
ENV_DOLLAR = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)")  # then $VAR / $var.dot.var
_IMMUTABLE = (str, int, float, complex, bool, bytes, type(None))
_SCALARS = frozenset({int, float, bool, type(None)})  # exact types: translate_value leaves them alone


@dataclass
class LoadNotes:
    """What the loader emulation noticed: failures upstream's loader would raise, and env references."""

    load_errors: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    env_unresolved: list[tuple[str, str]] = field(default_factory=list)  # (path, variable)


def _unusable(en: str, zh: str) -> UnusableInput:
    return UnusableInput(en, zh)


def load_yaml(text: str | bytes) -> Any:
    """`yaml.safe_load` under a byte cap; raises UnusableInput for anything that is not one YAML document."""
    if isinstance(text, (bytes, bytearray)):
        if len(text) > MAX_BYTES:
            raise _too_big(len(text))
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _unusable(f"input is not UTF-8 text ({exc.reason} at byte {exc.start})",
                            f"输入不是 UTF-8 文本（第 {exc.start} 字节：{exc.reason}）") from None
    if not isinstance(text, str):
        raise _unusable(f"expected YAML text, got {type(text).__name__}", f"需要 YAML 文本，实际为 {type(text).__name__}")
    if len(text) > MAX_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise _too_big(len(text.encode("utf-8", "surrogatepass")))
    try:
        return yaml_text.load(text)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" (line {where.line + 1}, column {where.column + 1})" if where is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise _unusable(f"input is not valid YAML{at}: {problem}", f"输入不是合法的 YAML{at}：{problem}") from None
    except (RecursionError, MemoryError):
        raise _unusable("input YAML is nested too deeply", "输入的 YAML 嵌套过深") from None
    except (ValueError, TypeError, OverflowError) as exc:  # constructor edge cases (bad timestamps, ...)
        raise _unusable(f"input YAML has a value that cannot be read: {exc}", f"输入 YAML 中有无法读取的值：{exc}") from None


def _too_big(n: int) -> UnusableInput:
    return _unusable(f"input is {n} bytes; the limit is {MAX_BYTES} bytes (a recipe is a few KiB)",
                     f"输入有 {n} 字节，上限为 {MAX_BYTES} 字节（一个 recipe 通常只有几 KiB）")


@lru_cache(maxsize=8192)
def _translate_str(v: str) -> Any:
    try:
        return ast.literal_eval(v)
    except Exception:  # noqa: BLE001 - translate_value falls back to the raw string on any failure
        return v


def translate_value(v: Any) -> Any:
    """Mirror of the loader's translate_value: special words, then ast.literal_eval, else the string."""
    if not isinstance(v, str):
        return v
    if v in _SPECIAL:
        return _SPECIAL[v]
    if len(v) > _TRANSLATE_MAX_LEN:
        return v
    if v.isidentifier():  # a bare name never literal_evals (True/False/None handled above)
        return v
    if v.isascii() and v.isdigit() and (len(v) == 1 or v[0] != "0"):
        return int(v)
    out = _translate_str(v)
    if not isinstance(out, _IMMUTABLE):
        # the cache must never hand out a shared mutable value
        try:
            return ast.literal_eval(v)
        except Exception:  # noqa: BLE001
            return v
    return out


def env_reference(inside: str) -> tuple[str, str | None]:
    """(variable, default or None) of the inside of a `${...}` reference, as resolve_yaml_env_vars reads
    it: an `oc.env:` prefix dropped, the default after the first comma, both stripped."""
    expr = inside.strip()
    if expr.startswith("oc.env:"):
        expr = expr[len("oc.env:"):].strip()
    if "," in expr:
        name, default = expr.split(",", 1)
        return name.strip(), default.strip()
    return expr, None


def _resolve_env(value: str) -> tuple[str, list[str]]:
    """${VAR,default} -> default; the environment is taken as empty. Returns (text, missing variables)."""
    missing: list[str] = []

    def braced(m: re.Match[str]) -> str:
        name, default = env_reference(m.group(1))
        if default is not None:
            return default
        missing.append(name)
        return m.group(0)

    out = ENV_BRACED.sub(braced, value)
    for m in ENV_DOLLAR.finditer(out):
        missing.append(m.group(1))
    return out, missing


class _Walk:
    """ConfigNode's recursive wrap, counting as it goes. Paths are built only when a note needs one."""

    __slots__ = ("nodes", "notes", "root", "seen", "measured")

    def __init__(self, notes: LoadNotes, root: Any):
        self.nodes = 0
        self.notes = notes
        self.root = root
        self.seen: set[int] = set()
        self.measured = False

    def tick(self, depth: int) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _too_many()
        if depth > MAX_DEPTH:
            raise _too_deep()

    def enter(self, container: Any, depth: int) -> None:
        self.tick(depth)
        oid = id(container)
        if oid in self.seen and not self.measured:
            # a container met twice is an alias: measure the whole graph once, without expanding it,
            # so an alias bomb is refused now instead of after MAX_NODES steps
            self.measured = True
            check_bounds(self.root)
        self.seen.add(oid)

    def node(self, d: dict, path: str, depth: int) -> dict:
        """A mapping as ConfigNode(d).to_dict() returns it."""
        oid = id(d)
        if oid in self.seen or self.nodes >= MAX_NODES or depth > MAX_DEPTH:
            self.enter(d, depth)  # the checks, with their errors and the alias measurement
        else:
            self.nodes += 1
            self.seen.add(oid)
        out: dict = {}
        for k, v in d.items():
            if k in _INTERNAL_KEYS:
                continue
            if type(v) in _SCALARS and type(k) is str:
                # the common case, inlined: a number, bool or null under a string key passes as it is
                self.nodes += 1
                if self.nodes > MAX_NODES:
                    raise _too_many()
                if depth >= MAX_DEPTH:
                    raise _too_deep()
                out[k] = v
                continue
            if type(v) is str and type(k) is str and "$" not in v and k != "_target_" and not k.endswith("_fn"):
                # the next most common case, inlined: leaf() on a string without an env reference
                self.nodes += 1
                if self.nodes > MAX_NODES:
                    raise _too_many()
                if depth >= MAX_DEPTH:
                    raise _too_deep()
                out[k] = translate_value(v)
                continue
            if isinstance(v, dict):
                out[k] = self.node(v, f"{path}.{k}" if path else str(k), depth + 1)
            elif isinstance(v, list):
                out[k] = self.seq(v, f"{path}.{k}" if path else str(k), depth + 1)
            elif not isinstance(k, str):
                # ConfigNode._wrap calls k.endswith(...) here: AttributeError, the config never loads
                self.tick(depth + 1)
                self.notes.load_errors.append((f"{path}.{k}" if path else str(k), f"key {k!r} is not a string"))
                out[k] = v
            elif k == "_target_" or k.endswith("_fn"):
                self.tick(depth + 1)
                out[k] = v  # upstream imports these; we keep the dotted path as written
            else:
                out[k] = self.leaf(v, path, k, depth + 1)
        return out

    def seq(self, items: list, path: str, depth: int) -> list:
        self.enter(items, depth)
        out = []
        for n, v in enumerate(items):
            if isinstance(v, dict):
                out.append(self.node(v, f"{path}[{n}]", depth + 1))
            elif isinstance(v, list):
                out.append(self.seq(v, f"{path}[{n}]", depth + 1))
            else:
                out.append(self.leaf(v, path, n, depth + 1))
        return out

    def leaf(self, v: Any, path: str, key: Any, depth: int) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _too_many()
        if depth > MAX_DEPTH:
            raise _too_deep()
        if isinstance(v, str):
            if "$" in v:
                resolved, missing = _resolve_env(v)
                if missing:
                    where = f"{path}[{key}]" if isinstance(key, int) else (f"{path}.{key}" if path else str(key))
                    for name in missing:
                        self.notes.env_unresolved.append((where, name))
                    return v
                return translate_value(resolved)
            return translate_value(v)
        if isinstance(v, (set, frozenset, tuple)):
            # only reachable from Python input; bound their size like any other container
            self.enter(v, depth)
            for _ in v:
                self.tick(depth + 1)
        return v


_CONTAINERS = (dict, list, tuple, set, frozenset)


def _too_many() -> UnusableInput:
    return _unusable(f"input expands to more than {MAX_NODES} values (an alias bomb, or not a recipe)",
                     f"输入展开后超过 {MAX_NODES} 个值（别名炸弹，或根本不是 recipe）")


def _too_deep() -> UnusableInput:
    return _unusable(f"input is nested more than {MAX_DEPTH} levels deep, or refers to itself",
                     f"输入嵌套超过 {MAX_DEPTH} 层，或自我引用")


def check_bounds(value: Any) -> None:
    """Raise UnusableInput when `value`, with every shared (aliased) part expanded, has more than
    MAX_NODES values, nests deeper than MAX_DEPTH, or contains itself.

    Works on the object graph without expanding it (each distinct container is visited once), so an
    alias bomb is refused in time proportional to its text, not to its expansion.
    """
    memo: dict[int, tuple[int, int]] = {}
    active: set[int] = set()
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        obj, done = stack.pop()
        if not isinstance(obj, _CONTAINERS):
            continue
        oid = id(obj)
        children = obj.values() if isinstance(obj, dict) else obj
        if done:
            n, d = 1 + (len(obj) if isinstance(obj, dict) else 0), 1
            for c in children:
                cn, cd = memo[id(c)] if isinstance(c, _CONTAINERS) else (1, 0)
                n += cn
                d = max(d, cd + 1)
            if n > MAX_NODES:
                raise _too_many()
            if d > MAX_DEPTH:
                raise _too_deep()
            memo[oid] = (n, d)
            active.discard(oid)
            continue
        if oid in memo:
            continue
        if oid in active:
            raise _too_deep()
        if len(active) > MAX_DEPTH:
            raise _too_deep()
        active.add(oid)
        stack.append((obj, True))
        for c in children:
            if isinstance(c, _CONTAINERS) and id(c) not in memo:
                stack.append((c, False))


def load_config(raw: dict) -> tuple[dict, LoadNotes]:
    """ConfigNode(raw).to_dict(), with every string translated; bounded in size and depth."""
    notes = LoadNotes()
    return _Walk(notes, raw).node(raw, "", 0), notes


def section_as_dict(value: Any) -> dict:
    """What `dict(cfg.distributed)` gives for a non-ConfigNode value; raises TypeError/ValueError like it."""
    if isinstance(value, dict):
        return dict(value)
    if value is None or isinstance(value, (bool, int, float, complex)):
        raise TypeError(f"'{type(value).__name__}' object is not iterable")
    if isinstance(value, (list, tuple)) and any(isinstance(e, dict) for e in value):
        # a YAML mapping inside a list is a ConfigNode, which is not iterable
        raise TypeError("cannot convert dictionary update sequence element to a sequence")
    return dict(value)
