"""The YAML gate: every config block an answer shows is validated against the user's numbers first.

Works on a stream: text outside fenced blocks passes through at once, a fenced block is held until it
closes, then shown as is (valid, or not a config), or replaced by the planner's validated YAML with the
validator's reasons. `gate_text` is the same machine fed the whole text, so streamed and final answers
always agree.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

import yaml

from assistant.validator.coerce import load_yaml  # the validator's bounded safe loader

from assistant.validator.report import ValidationReport

_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^\n`]*$")
_CONFIG_TAGS = {"yaml", "yml"}
_OTHER_TAGS_SKIPPED = {"python", "py", "bash", "sh", "shell", "console", "text", "txt", "json", "toml", "diff"}
_CONFIG_KEYS = {"distributed", "strategy", "tp_size", "pp_size", "cp_size", "ep_size", "dp_size",
                "dp_replicate_size", "pipeline", "moe", "step_scheduler"}
_MAX_BLOCK_BYTES = 256 * 1024

# check(body) -> report; raises ValueError (e.g. the validator's UnusableInput) for a non-recipe.
Check = Callable[[str], ValidationReport]


@dataclass
class GateResult:
    """What the gate decided for each config block, in order."""
    shown: list[tuple[str, ValidationReport]] = field(default_factory=list)  # YAML shown and its verdict
    replaced: list[tuple[str, str]] = field(default_factory=list)  # (rejected YAML, reasons)
    exempt: list[str] = field(default_factory=list)  # the user's own YAML, quoted back while diagnosing


@dataclass
class GatePolicy:
    check: Check
    world_size: int | None
    fallback_yaml: str | None  # the planner's validated YAML, or None when there is none
    fallback_report: ValidationReport | None
    lang: str
    replaced_note: Callable[[int | None, str], str]  # (world, reasons) -> sentence
    removed_note: Callable[[int | None, str], str]
    unparseable: str = "not a readable recipe"
    exempt_yaml: str | None = None  # the pasted YAML under diagnosis may be quoted back
    # a later invalid block, once the validated YAML has been shown: a note instead of a second copy
    replaced_again_note: Callable[[int | None, str], str] | None = None


def _norm(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def looks_like_config(info: str, body: str) -> bool:
    tag = info.lower()
    if tag in _CONFIG_TAGS:
        return True
    if tag and tag in _OTHER_TAGS_SKIPPED:
        return False
    if tag:
        return False
    if len(body.encode("utf-8", "replace")) > _MAX_BLOCK_BYTES:
        return True  # an oversized untagged block is not shown unchecked
    try:
        data = load_yaml(body)
    except ValueError:  # UnusableInput: not YAML, too big, too deep
        return False
    return isinstance(data, dict) and bool(_CONFIG_KEYS & {str(k) for k in data})


class StreamGate:
    """Feed text deltas; get back the text that is safe to show so far."""

    def __init__(self, policy: GatePolicy):
        self.policy = policy
        self.result = GateResult()
        self._pending = ""
        self._line_started = False  # part of the current line already went out
        self._in_block = False
        self._opener = ""
        self._fence = ""
        self._info = ""
        self._body: list[str] = []
        self._out: list[str] = []
        self._fallback_shown = False

    @property
    def text(self) -> str:
        return "".join(self._out)

    def feed(self, delta: str) -> str:
        self._pending += delta
        emitted: list[str] = []
        while True:
            nl = self._pending.find("\n")
            if nl < 0:
                break
            line, self._pending = self._pending[: nl + 1], self._pending[nl + 1:]
            emitted.append(self._line(line))
        if not self._in_block and self._pending and not self._could_open(self._pending):
            emitted.append(self._pending)
            self._line_started = True
            self._pending = ""
        out = "".join(emitted)
        self._out.append(out)
        return out

    def close(self) -> str:
        emitted = []
        if self._pending:
            tail, self._pending = self._pending, ""
            emitted.append(self._line(tail))
        if self._in_block:  # an unterminated block is still a block: judge it
            emitted.append(self._finish_block(closer=None))
        out = "".join(emitted)
        self._out.append(out)
        return out

    def _could_open(self, partial: str) -> bool:
        if self._line_started:
            return False
        s = partial.lstrip(" \t")
        return s == "" or s[0] in "`~"

    def _line(self, line: str) -> str:
        started, self._line_started = self._line_started, False
        bare = line.rstrip("\n")
        if self._in_block:
            m = _FENCE.match(bare)
            if m and m.group(1)[0] == self._fence[0] and len(m.group(1)) >= len(self._fence) and not m.group(2):
                return self._finish_block(closer=line)
            self._body.append(line)
            return ""
        m = None if started else _FENCE.match(bare)
        if m:
            self._in_block, self._opener, self._fence, self._info, self._body = True, line, m.group(1), m.group(2), []
            return ""
        return line

    def _finish_block(self, closer: str | None) -> str:
        self._in_block = False
        body = "".join(self._body)
        original = self._opener + body + (closer if closer is not None else self._fence + "\n")
        if not looks_like_config(self._info, body):
            return original
        return self._judge(body, original)

    def _judge(self, body: str, original: str) -> str:
        p = self.policy
        if p.exempt_yaml is not None and _norm(body) == _norm(p.exempt_yaml):
            self.result.exempt.append(body)
            return original
        try:
            report = p.check(body)
            reasons = ", ".join(f.code for f in report.errors)
        except ValueError:
            report, reasons = None, p.unparseable
        if report is not None and report.ok:
            self.result.shown.append((body, report))
            return original
        self.result.replaced.append((body, reasons))
        if p.fallback_yaml and p.fallback_report is not None and p.fallback_report.ok:
            if self._fallback_shown and p.replaced_again_note is not None:
                return f"\n> {p.replaced_again_note(p.world_size, reasons)}\n"
            self._fallback_shown = True
            self.result.shown.append((p.fallback_yaml, p.fallback_report))
            fence = "```"
            return f"\n> {p.replaced_note(p.world_size, reasons)}\n\n{fence}yaml\n{p.fallback_yaml.rstrip()}\n{fence}\n"
        return f"\n> {p.removed_note(p.world_size, reasons)}\n"


def gate_text(text: str, policy: GatePolicy) -> tuple[str, GateResult]:
    g = StreamGate(policy)
    g.feed(text)
    g.close()
    return g.text, g.result


def yaml_blocks(text: str) -> list[tuple[str, str]]:
    """(info, body) of every fenced block, in order: for tests and front ends."""
    out, info, body, fence = [], None, [], ""
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\n")
        m = _FENCE.match(bare)
        if info is None and m:
            info, fence, body = m.group(2), m.group(1), []
        elif info is not None and m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not m.group(2):
            out.append((info, "".join(body)))
            info = None
        elif info is not None:
            body.append(line)
    if info is not None:
        out.append((info, "".join(body)))
    return out
