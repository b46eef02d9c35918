"""Rule rendering: a code plus its values becomes a `Finding`, with messages from the rule tables.

One renderer serves every code: ours (`rules_table.yaml`) and the model-aware ones
(`model_rules_table.yaml`, owned by the model checks) when that file exists.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from assistant.validator.report import Finding

_HERE = Path(__file__).resolve().parent
_TABLE_FILES = ("rules_table.yaml", "model_rules_table.yaml")


@dataclass(frozen=True)
class Rule:
    code: str
    severity: str
    upstream: str
    en: str
    zh: str


def _load_rules() -> dict[str, Rule]:
    rules: dict[str, Rule] = {}
    for name in _TABLE_FILES:
        path = _HERE / name
        if not path.is_file():
            continue
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for code, entry in data.items():
            if code in rules:
                raise ValueError(f"rule {code} defined twice ({name})")
            rules[code] = Rule(code, entry["severity"], entry["upstream"], entry["en"], entry["zh"])
    return rules


RULES: dict[str, Rule] = _load_rules()


class _Blank(dict):
    # A template field the caller did not supply renders as empty, never as a KeyError.
    def __missing__(self, key: str) -> str:
        return ""


def make_finding(code: str, path: str, **values) -> Finding:
    rule = RULES[code]
    v = _Blank(values)
    return Finding(
        code=code,
        severity=rule.severity,  # type: ignore[arg-type]
        message=rule.en.format_map(v),
        message_zh=rule.zh.format_map(v),
        path=path,
        upstream=rule.upstream.format_map(v),
    )
