"""Which code blocks hold a training config, and the config inside: YAML, JSON or TOML that parses to a
mapping with a `distributed` key at any depth (`recipe: distributed: ...`), or a bare `distributed:` body.
Text shown as prose (a code span, a bare line, an HTML cell) is held to a stricter shape (`find_prose_config`).
Only Meshwise marks a config invalid (`# invalid: <code>` / `# 无效：<code>`): a model's marker is removed
(`strip_model_marker`), never trusted."""
from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from typing import Any

import yaml

from assistant.datafile import dump_yaml
from assistant.validator.coerce import load_yaml  # the validator's bounded safe loader

MAX_BLOCK_BYTES = 256 * 1024
_MAX_DEPTH = 8
_CONFIG_TAGS = {"yaml", "yml"}
# Keys that make an untagged top-level mapping a `distributed:` body written without its parent key.
_CONFIG_KEYS = {"distributed", "strategy", "tp_size", "pp_size", "cp_size", "ep_size", "dp_size",
                "dp_replicate_size", "pipeline", "moe", "step_scheduler"}
INVALID_MARK = {"en": "# invalid: {codes}", "zh": "# 无效：{codes}"}
# What Meshwise's mark looks like, wherever a model writes it: as a comment, after a quote marker or a tag.
_MARK_SHAPE = re.compile(r"(?:^|(?<=[\s>]))[#＃][ \t]*(?:invalid[ \t]*[:：]|无效[ \t]*[：:]).*$", re.I)


@dataclass(frozen=True)
class FoundConfig:
    text: str  # what the validator reads: the recipe mapping holding `distributed:`, as YAML


def language(info: str) -> str:
    """`yaml:recipe.yaml`, `{.yaml}`, `YAML title="x"` -> `yaml`."""
    head = re.split(r"[\s:,{}]", info.strip().lstrip("{.").lower(), maxsplit=1)[0] if info.strip() else ""
    return head.lstrip(".")


def strip_model_marker(line: str) -> str | None:
    """A model's line without a marker shaped like Meshwise's; None when nothing else was on it."""
    end = line[len(line.rstrip("\r\n")):]
    kept, n = _MARK_SHAPE.subn("", line.rstrip("\r\n"))
    if not n:
        return line
    return kept + end if kept.strip() else None


def mark_invalid(body: str, codes: str, lang: str) -> str:
    return INVALID_MARK.get(lang, INVALID_MARK["en"]).format(codes=codes) + "\n" + body


def _recipe_in(data: Any, depth: int = 0) -> dict | None:
    if depth > _MAX_DEPTH:
        return None
    if isinstance(data, dict):
        if "distributed" in data:
            return data
        children = list(data.values())
    elif isinstance(data, list):
        children = data
    else:
        return None
    for child in children:
        found = _recipe_in(child, depth + 1)
        if found is not None:
            return found
    return None


def _parsed(body: str):
    try:
        yield "yaml", load_yaml(body)
    except ValueError:
        pass
    for name, load in (("json", json.loads), ("toml", tomllib.loads)):
        try:
            yield name, load(body)
        except (ValueError, RecursionError, TypeError):  # JSONDecodeError and TOMLDecodeError are ValueErrors
            continue


def find_config(info: str, body: str) -> FoundConfig | None:
    """The config a code block holds, or None when it holds none. A YAML-tagged block is always a
    config (an unreadable one is judged unreadable); so is an oversized block of any kind."""
    if len(body.encode("utf-8", "surrogatepass")) > MAX_BLOCK_BYTES:
        return FoundConfig(body)
    for fmt, data in _parsed(body):
        recipe = _recipe_in(data)
        if recipe is not None:
            if fmt == "yaml" and recipe is data:
                return FoundConfig(body)
            try:
                return FoundConfig(dump_yaml(recipe, sort_keys=False, allow_unicode=True))
            except yaml.YAMLError:  # e.g. a TOML datetime: still a config, judged unreadable
                return FoundConfig(body)
        if fmt == "yaml" and isinstance(data, dict) and _CONFIG_KEYS & {str(k) for k in data}:
            return FoundConfig(body)
    if language(info) in _CONFIG_TAGS:
        return FoundConfig(body)
    return None


def _is_value(value) -> bool:
    if isinstance(value, str):
        return bool(value.strip()) and " " not in value.strip()
    return value is not None


def _set_as_values(data: dict) -> bool:
    """Config keys given values, not words: `tp_size: 3`, `strategy: fsdp2`, not `strategy: use fsdp2 here`."""
    return any(str(key) in _CONFIG_KEYS and _is_value(value) for key, value in data.items())


def _prose_parses(body: str):
    yield from _parsed(body)
    line = body.strip()
    if "\n" not in line and ", " in line and not line.startswith(("{", "[")):
        yield from _parsed("{" + line + "}")  # `tp_size: 3, pp_size: 5` written as one flow mapping


def find_prose_config(body: str) -> FoundConfig | None:
    """The config in text a model showed outside a code block, or None: a `distributed` mapping at any
    depth, or config keys set to values at the top. An oversized piece is a config (judged unreadable)."""
    if len(body.encode("utf-8", "surrogatepass")) > MAX_BLOCK_BYTES:
        return FoundConfig(body)
    for _, data in _prose_parses(body):
        recipe = _recipe_in(data)
        if recipe is not None and isinstance(recipe["distributed"], dict):
            break
        if isinstance(data, dict) and _set_as_values(data):
            recipe = data
            break
    else:
        return None
    try:
        return FoundConfig(yaml.safe_dump(recipe, sort_keys=False, allow_unicode=True))
    except yaml.YAMLError:
        return FoundConfig(body)
