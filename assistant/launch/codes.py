"""The launch reader's codes (codes.yaml: one row per code, en + zh + the upstream file) and their rendering:
launch warnings for the line as typed, validator findings for the meshes a launch builds (knowledge
distillation's separate meshes, a generate config with no distributed setup)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from assistant.datafile import read_yaml
from assistant.launch.types import LaunchWarning
from assistant.validator.findings import Rule
from assistant.validator.report import Blank, Finding


def _load() -> dict[str, Rule]:
    table = read_yaml(Path(__file__).resolve().parent / "codes.yaml") or {}
    return {code: Rule(code, e["severity"], e["upstream"], e["en"], e["zh"]) for code, e in table.items()}


CODES: dict[str, Rule] = _load()


def _texts(code: str, values: dict[str, Any]) -> tuple[Rule, str, str]:
    rule = CODES[code]
    v = Blank(values)
    return rule, rule.en.format_map(v), rule.zh.format_map(v)


def warning(code: str, argument: str | None = None, **values: Any) -> LaunchWarning:
    rule, en, zh = _texts(code, {"argument": argument, **values})
    return LaunchWarning(code=code, en=en, zh=zh, argument=argument, upstream=rule.upstream)


def finding(code: str, path: str, **values: Any) -> Finding:
    rule, en, zh = _texts(code, values)
    return Finding(code=code, severity=rule.severity, message=en, message_zh=zh, path=path,  # type: ignore[arg-type]
                   upstream=rule.upstream)


def as_finding(w: LaunchWarning, path: str = "") -> Finding:
    """A launch warning in the report's own finding type, so every front end prints it with the rest."""
    return Finding(code=w.code, severity="warning", message=w.en, message_zh=w.zh, path=path, upstream=w.upstream)
