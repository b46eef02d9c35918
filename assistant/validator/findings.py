"""The rule tables and their rendering: one row per code (rules_table.yaml, model_rules_table.yaml),
`make_finding(code, path, **values)` to fill a row's templates, `Findings` to collect them in order."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assistant.datafile import read_yaml
from assistant.validator.report import Blank, Finding

_HERE = Path(__file__).resolve().parent
_TABLE_FILES = ("rules_table.yaml", "model_rules_table.yaml")


@dataclass(frozen=True)
class Rule:
    code: str
    severity: str
    upstream: str
    en: str
    zh: str
    # regexes of the text the upstream code raises for this rule (numbers as named groups); empty
    # for Meshwise's own advice and for rules whose failure upstream never words
    upstream_message: tuple[str, ...] = ()
    # alternative messages for the same code when the same failure has a different cause:
    # name -> {en, zh, optional upstream}
    variants: dict[str, dict[str, str]] = field(default_factory=dict)


def _patterns(entry: dict) -> tuple[str, ...]:
    raw = entry.get("upstream_message")
    if raw is None:
        return ()
    return (raw,) if isinstance(raw, str) else tuple(raw)


def _load_rules() -> dict[str, Rule]:
    rules: dict[str, Rule] = {}
    for name in _TABLE_FILES:
        path = _HERE / name
        if not path.is_file():
            continue
        for code, entry in (read_yaml(path) or {}).items():
            if code in rules:
                raise ValueError(f"rule {code} defined twice ({name})")
            rules[code] = Rule(code, entry["severity"], entry["upstream"], entry["en"], entry["zh"], _patterns(entry),
                               dict(entry.get("variants") or {}))
    return rules


RULES: dict[str, Rule] = _load_rules()


# the value types a deferred message may capture: what the caller passes can never change under it
_FROZEN_VALUES = frozenset({str, int, float, bool, type(None)})


def make_finding(code: str, path: str, variant: str | None = None, **values: Any) -> Finding:
    """The finding for `code` with its templates filled; `variant` picks one of the row's variants.

    The two messages are filled when first read (Finding.deferred), unless a value is mutable."""
    return _finding(code, path, variant, values)


def _finding(code: str, path: str, variant: str | None, values: dict) -> Finding:
    rule = RULES[code]
    if variant is None:
        en, zh, upstream = rule.en, rule.zh, rule.upstream
    else:
        text = rule.variants[variant]
        en, zh, upstream = text.get("en", rule.en), text.get("zh", rule.zh), text.get("upstream", rule.upstream)
    if "{" in upstream:
        upstream = upstream.format_map(Blank(values))
    for v in values.values():
        if type(v) not in _FROZEN_VALUES:
            v = Blank(values)
            return Finding(code, rule.severity, en.format_map(v), zh.format_map(v), path, upstream)  # type: ignore[arg-type]
    return Finding.deferred(code, rule.severity, path, upstream, en, zh, values)  # type: ignore[arg-type]


def describe(value: Any, limit: int = 60) -> str:
    """A short, safe rendering of a user value for messages."""
    if isinstance(value, str):
        text = repr(value)
    elif value is None or isinstance(value, (bool, int, float)):
        text = "null" if value is None else repr(value).lower() if isinstance(value, bool) else repr(value)
    else:
        try:
            text = f"{type(value).__name__} {value!r}"
        except Exception:  # noqa: BLE001 - repr of odd input must never break a report
            text = type(value).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Findings:
    """Collects errors and warnings in the order the checks raise them."""

    __slots__ = ("errors", "warnings")

    def __init__(self) -> None:
        self.errors: list[Finding] = []
        self.warnings: list[Finding] = []

    def add(self, code: str, path: str, variant: str | None = None, **values: Any) -> None:
        f = _finding(code, path, variant, values)
        (self.errors if f.severity == "error" else self.warnings).append(f)

    def extend(self, findings: list[Finding]) -> None:
        for f in findings:
            (self.errors if f.severity == "error" else self.warnings).append(f)
