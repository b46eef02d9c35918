"""Which code blocks hold a training config, and the config inside: YAML, JSON or TOML that parses to a
mapping with a `distributed` key at any depth (`recipe: distributed: ...`), or a bare `distributed:` body.
A block whose first line marks it invalid (`# invalid: <code>` / `# 无效：<code>`) is shown as such."""
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
_MARKED = re.compile(r"^\s*#\s*(?:invalid\s*:|无效\s*[：:])", re.I)


@dataclass(frozen=True)
class FoundConfig:
    text: str  # what the validator reads: the recipe mapping holding `distributed:`, as YAML


def language(info: str) -> str:
    """`yaml:recipe.yaml`, `{.yaml}`, `YAML title="x"` -> `yaml`."""
    head = re.split(r"[\s:,{}]", info.strip().lstrip("{.").lower(), maxsplit=1)[0] if info.strip() else ""
    return head.lstrip(".")


def is_marked_invalid(body: str) -> bool:
    first = body.lstrip("\n").split("\n", 1)[0]
    return bool(_MARKED.match(first))


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
