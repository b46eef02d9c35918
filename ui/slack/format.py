"""Answer and report -> Slack mrkdwn messages that respect Slack's size limits."""
from __future__ import annotations

import re

from assistant.answer import Answer
from assistant.validator.report import ValidationReport

# chat.postMessage accepts far more, but Slack truncates long `text` in clients around 4,000
# characters; staying well below keeps every message readable and every code block whole.
MESSAGE_LIMIT = 3500

_FENCE = re.compile(r"^```")
_HEADING = re.compile(r"^#{1,6}\s+(.*)$")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)")


def to_mrkdwn(markdown: str) -> str:
    """Markdown as the composer writes it -> Slack mrkdwn. Code blocks pass through untouched."""
    out, in_code = [], False
    for line in markdown.splitlines():
        if _FENCE.match(line.strip()):
            in_code = not in_code
            out.append("```")  # Slack ignores language tags; a tag would show as text
            continue
        if in_code:
            out.append(line)
            continue
        m = _HEADING.match(line)
        if m:
            line = f"*{m.group(1).strip()}*"
        line = _BOLD.sub(r"*\1*", line)
        line = _LINK.sub(r"<\2|\1>", line)
        out.append(line)
    if in_code:
        out.append("```")
    return "\n".join(out)


def _blocks(text: str) -> list[str]:
    """Paragraphs and whole code blocks: the units a split may never cut through."""
    units, cur, in_code = [], [], False
    for line in text.splitlines():
        if line.strip() == "```":
            if in_code:
                cur.append(line)
                units.append("\n".join(cur))
                cur, in_code = [], False
                continue
            if cur:
                units.append("\n".join(cur))
            cur, in_code = [line], True
            continue
        if not in_code and not line.strip():
            if cur:
                units.append("\n".join(cur))
            cur = []
            continue
        cur.append(line)
    if cur:
        units.append("\n".join(cur))
    return units


def _split_oversized(unit: str, limit: int) -> list[str]:
    """A single unit above the limit: split by lines; a code block is closed and reopened."""
    is_code = unit.startswith("```")
    body = unit.splitlines()[1:-1] if is_code else unit.splitlines()
    wrap = (lambda s: f"```\n{s}\n```") if is_code else (lambda s: s)
    room = limit - (8 if is_code else 0)
    parts, cur, size = [], [], 0
    for line in body:
        while len(line) > room:  # a pathological single line: hard-cut it
            if cur:
                parts.append(wrap("\n".join(cur)))
                cur, size = [], 0
            parts.append(wrap(line[:room]))
            line = line[room:]
        if size + len(line) + 1 > room and cur:
            parts.append(wrap("\n".join(cur)))
            cur, size = [], 0
        cur.append(line)
        size += len(line) + 1
    if cur:
        parts.append(wrap("\n".join(cur)))
    return parts


def split_message(text: str, limit: int = MESSAGE_LIMIT) -> list[str]:
    """Split into messages of at most `limit` characters, between paragraphs or code blocks."""
    messages, cur = [], ""
    for unit in _blocks(text):
        pieces = [unit] if len(unit) <= limit else _split_oversized(unit, limit)
        for piece in pieces:
            candidate = f"{cur}\n\n{piece}" if cur else piece
            if len(candidate) <= limit:
                cur = candidate
            else:
                messages.append(cur)
                cur = piece
    if cur:
        messages.append(cur)
    return messages or [""]


def verdict_line(report: ValidationReport | None, lang: str) -> str:
    if report is None:
        return ""
    d = report.derived
    if report.ok and d is not None:
        mesh = "x".join(str(n) for n in d.mesh_shape)
        if lang == "zh":
            return f":white_check_mark: 校验通过: world_size={d.world_size}, dp_size={d.dp_size}, mesh {mesh}"
        return f":white_check_mark: Valid for world_size={d.world_size}: dp_size={d.dp_size}, mesh {mesh}"
    codes = ", ".join(f.code for f in report.errors) or "?"
    return f":x: 校验未通过: {codes}" if lang == "zh" else f":x: Invalid: {codes}"


def render_answer(answer: Answer) -> list[str]:
    """The whole reply, as one or more messages: answer, verdict line, short source list."""
    lang = answer.language
    parts = [to_mrkdwn(answer.text)]
    verdict = verdict_line(answer.validation, lang)
    if verdict:
        parts.append(verdict)
    if answer.sources:
        head = "*来源*" if lang == "zh" else "*Sources*"
        lines = [f"[{i}] {h.title} (`{h.path}`)" for i, h in enumerate(answer.sources, 1)]
        parts.append(head + "\n" + "\n".join(lines))
    for notice in answer.notices:
        parts.append(f"_{notice}_")
    return split_message("\n\n".join(parts))


def render_report(report: ValidationReport, lang: str) -> str:
    """`/meshwise validate`: the validator's report in the user's language."""
    lines = [verdict_line(report, lang) if report.derived or not report.ok else ""]
    for f in report.errors:
        lines.append(f"• `{f.code}` {f.message_zh if lang == 'zh' else f.message}")
    for f in report.warnings:
        lines.append(f"• :warning: `{f.code}` {f.message_zh if lang == 'zh' else f.message}")
    if report.suggested_fix:
        lines.append(("*建议修改*" if lang == "zh" else "*Suggested fix*") + "\n```\n" + report.suggested_fix.strip() + "\n```")
    return "\n".join(line for line in lines if line)
