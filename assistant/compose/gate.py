"""The YAML gate: every config an answer shows is validated against the user's numbers first.

"Shown" means rendered as code by a Markdown renderer: any fence and info string, tildes, indented code,
HTML `<pre>`, in lists and quotes too (`markdown_blocks`), holding YAML, JSON or TOML with a
`distributed` key at any depth (`config_blocks`). A valid config is shown as is; an invalid one is
replaced by the planner's validated YAML with the validator's reasons, or removed when there is none;
the user's own YAML under diagnosis is quoted back only marked invalid. With `strip_claims`, prose that
passes its own verdict ("validated by Meshwise") is dropped: the verdict is the validator's.

Works on a stream: complete lines of prose pass through at once, a code block is held until it ends,
then judged. `gate_text` is the same machine fed the whole text, so streamed and final answers agree.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from assistant.compose.claims import drop_claims, has_claim
from assistant.compose.config_blocks import find_config, is_marked_invalid, mark_invalid
from assistant.compose.markdown_blocks import CodeBlock, code_blocks
from assistant.validator.report import ValidationReport

_REPEAT_MIN_CHARS = 24  # shorter lines ("- yes", "**Why**") may fairly repeat

# check(body) -> report; raises ValueError (e.g. the validator's UnusableInput) for a non-recipe.
Check = Callable[[str], ValidationReport]


@dataclass
class GateResult:
    """What the gate decided for each config block, in order."""
    shown: list[tuple[str, ValidationReport]] = field(default_factory=list)  # YAML shown and its verdict
    replaced: list[tuple[str, str]] = field(default_factory=list)  # (rejected YAML, reasons)
    exempt: list[str] = field(default_factory=list)  # the user's own YAML, quoted back while diagnosing
    marked: list[str] = field(default_factory=list)  # blocks shown under an "invalid" first line
    claims_dropped: int = 0
    echo_dropped: int = 0  # model lines that copied the prompt back or repeated an earlier line


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
    exempt_yaml: str | None = None  # the pasted YAML under diagnosis may be quoted back (marked when invalid)
    # a later invalid block, once the validated YAML has been shown: a note instead of a second copy
    replaced_again_note: Callable[[int | None, str], str] | None = None
    strip_claims: bool = False  # text from a model: its own verdict sentences are dropped
    # text from a model: a line that opens with one of the prompt's section names starts a copy of the
    # prompt, dropped up to the next blank line; a line said before is not said again
    echo: re.Pattern | None = None


def _norm(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def _fenced(body: str, info: str = "yaml") -> str:
    fence = "```"
    while fence in body:
        fence += "`"
    return f"{fence}{info}\n{body.rstrip()}\n{fence}\n"


def looks_like_config(info: str, body: str) -> bool:
    return find_config(info, body) is not None


class StreamGate:
    """Feed text deltas; get back the text that is safe to show so far."""

    def __init__(self, policy: GatePolicy):
        self.policy = policy
        self.result = GateResult()
        self._pending = ""  # the current, incomplete line
        self._lines: list[str] = []  # every complete line so far
        self._done = 0  # lines before this one are decided and emitted
        self._out: list[str] = []
        self._fallback_shown = False
        self._in_echo = False
        self._said: set[str] = set()

    @property
    def text(self) -> str:
        return "".join(self._out)

    def feed(self, delta: str) -> str:
        self._pending += delta
        # CommonMark ends a line at \r\n, \n or a bare \r: one form here, so the line numbers the
        # parser reports are ours (a trailing \r waits: its \n may come in the next delta).
        held = "\r" if self._pending.endswith("\r") else ""
        self._pending = self._pending[: len(self._pending) - len(held)].replace("\r\n", "\n").replace("\r", "\n")
        if "\n" not in self._pending:
            self._pending += held
            return ""
        *complete, self._pending = self._pending.split("\n")
        self._pending += held
        self._lines += [line + "\n" for line in complete]
        return self._emit(self._advance(final=False))

    def close(self) -> str:
        self._pending = self._pending.replace("\r", "\n")
        if "\n" in self._pending:
            *complete, self._pending = self._pending.split("\n")
            self._lines += [line + "\n" for line in complete]
        if self._pending:
            self._lines.append(self._pending)
            self._pending = ""
        return self._emit(self._advance(final=True))

    def _emit(self, out: str) -> str:
        self._out.append(out)
        return out

    def _advance(self, final: bool) -> str:
        lines, i, out = self._lines, self._done, []
        for block in code_blocks("".join(lines)):
            if block.end <= i:
                continue
            out += [self._prose(line) for line in lines[i:block.start]]
            i = max(i, block.start)
            if not (final or block.closed or any(line.strip() for line in lines[block.end:])):
                break  # it may still grow: hold it and everything after it
            out.append(self._judge(block, "".join(lines[i:block.end])))
            i = block.end
        else:
            out += [self._prose(line) for line in lines[i:]]
            i = len(lines)
        self._done = i
        return "".join(out)

    def _prose(self, line: str) -> str:
        if not self.policy.strip_claims:
            return line
        if self._echoed(line):
            self.result.echo_dropped += 1
            return ""
        kept = drop_claims(line)
        if kept != line:
            self.result.claims_dropped += 1
        return kept

    def _echoed(self, line: str) -> bool:
        """A copy of the prompt (a section name opens it, a blank line ends it) or a line said before:
        a 135M model loops on both."""
        said = " ".join(line.split()).lower()
        if not said:
            self._in_echo = False
            return False
        if self._in_echo or (self.policy.echo is not None and self.policy.echo.search(line)):
            self._in_echo = True
            return True
        if len(said) >= _REPEAT_MIN_CHARS:
            if said in self._said:
                return True
            self._said.add(said)
        return False

    def _judge(self, block: CodeBlock, original: str) -> str:
        p = self.policy
        found = find_config(block.info, block.body)
        if found is None:
            return original
        if is_marked_invalid(block.body):
            self.result.marked.append(block.body)
            return original
        try:
            report = p.check(found.text)
            reasons = ", ".join(f.code for f in report.errors)
        except ValueError:
            report, reasons = None, p.unparseable
        if p.exempt_yaml is not None and _norm(block.body) == _norm(p.exempt_yaml):
            self.result.exempt.append(block.body)
            ok = report is not None and report.ok
            return original if ok else _fenced(mark_invalid(block.body, reasons, p.lang), "yaml")
        if report is not None and report.ok:
            self.result.shown.append((found.text, report))
            return original
        self.result.replaced.append((block.body, reasons))
        if p.fallback_yaml and p.fallback_report is not None and p.fallback_report.ok:
            if self._fallback_shown and p.replaced_again_note is not None:
                return f"\n> {p.replaced_again_note(p.world_size, reasons)}\n"
            self._fallback_shown = True
            self.result.shown.append((p.fallback_yaml, p.fallback_report))
            return f"\n> {p.replaced_note(p.world_size, reasons)}\n\n{_fenced(p.fallback_yaml)}"
        return f"\n> {p.removed_note(p.world_size, reasons)}\n"


def gate_text(text: str, policy: GatePolicy) -> tuple[str, GateResult]:
    g = StreamGate(policy)
    g.feed(text)
    g.close()
    return g.text, g.result


def yaml_blocks(text: str) -> list[tuple[str, str]]:
    """(info, body) of every block that renders as code, in order: for tests and front ends."""
    return [(b.info, b.body) for b in code_blocks(text)]


def unchecked_config_or_claim(text: str) -> bool:
    """Retrieved text that shows a config or passes a verdict: front ends mark it as not checked."""
    return has_claim(text) or any(find_config(b.info, b.body) is not None for b in code_blocks(text))
