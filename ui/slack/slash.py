"""`/meshwise` slash-command text: `validate [world_size=N] [gpus_per_node=G] <yaml>` or a question."""
from __future__ import annotations

import html
import re
from dataclasses import dataclass

from assistant.defaults import DEFAULT_GPUS_PER_NODE

_KV = re.compile(r"\b(world_size|gpus_per_node|nodes)\s*=\s*(\d+)\b")
_DIGITS = 12  # past this a number is out of every range; int() of thousands of digits is refused
_FENCE = re.compile(r"```(?:ya?ml)?\s*\n?(.*?)```", re.S)


@dataclass(frozen=True)
class ValidateCommand:
    yaml_text: str
    world_size: int | None
    gpus_per_node: int | None


@dataclass(frozen=True)
class AskCommand:
    question: str


def parse_command(text: str) -> ValidateCommand | AskCommand:
    # Slack escapes &, < and > in command text; YAML needs them back.
    text = html.unescape(text or "").strip()
    head, _, rest = text.partition(" ")
    if head.lower() not in ("validate", "check", "校验", "验证"):
        return AskCommand(text)
    # Slack delivers the command text with its newlines; settings may come before or after the YAML.
    fenced = _FENCE.search(rest)
    body = fenced.group(1) if fenced else rest
    outside = _FENCE.sub(" ", rest) if fenced else rest
    # any length is read (the limits, in assistant/defaults.py, are checked where it is validated)
    kv = {k: int(v) if len(v) <= _DIGITS else 10 ** _DIGITS for k, v in _KV.findall(outside)}
    if not fenced:
        body = _KV.sub("", body)
    world = kv.get("world_size")
    gpn = kv.get("gpus_per_node")
    if world is None and "nodes" in kv:
        world = kv["nodes"] * (gpn or DEFAULT_GPUS_PER_NODE)
    return ValidateCommand(yaml_text=body.strip(), world_size=world, gpus_per_node=gpn)
