"""Answer and report -> Slack mrkdwn messages that respect Slack's size limits."""
from __future__ import annotations

import re
from dataclasses import dataclass

from assistant.answer import Answer
from assistant.validator.report import ValidationReport
from ui.markdown_literal import protect_literals
from ui.slack.phrases import say

# Slack's limits for one message: 50 blocks, 3,000 characters of text per section block; clients
# truncate a long `text` fallback around 4,000. MESSAGE_CHARS keeps one message readable.
SECTION_CHARS = 3000
MAX_BLOCKS = 50
MESSAGE_CHARS = 12000
TEXT_CHARS = 3900

_FENCE = re.compile(r"^```")
_HEADING = re.compile(r"^#{1,6}\s+(.*)$")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)")


def to_mrkdwn(markdown: str) -> str:
    """Markdown as the composer writes it -> Slack mrkdwn. Code blocks pass through untouched; arithmetic
    and identifiers go in code spans (`tp*cp*pp` would turn bold in mrkdwn)."""
    out, in_code = [], False
    for line in protect_literals(markdown).splitlines():
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


def _fit(unit: str, limit: int) -> tuple[str, bool]:
    """A unit cut to `limit` characters: a code block keeps its first lines and stays one block."""
    if len(unit) <= limit:
        return unit, False
    if unit.startswith("```"):
        kept, size = [], len("```\n…\n```")
        for line in unit.splitlines()[1:-1]:
            if size + len(line) + 1 > limit:
                break
            kept.append(line)
            size += len(line) + 1
        return "```\n" + "\n".join(kept + ["…"]) + "\n```", True
    cut = unit[: limit - 2]
    return (cut[: cut.rfind(" ")] if " " in cut[limit // 2:] else cut) + " …", True


def _pack(units: list[str], budget: int, max_sections: int) -> tuple[list[str], bool]:
    """Units into sections of at most SECTION_CHARS, within `budget` characters; True when cut."""
    sections, cur, total, cut = [], "", 0, False
    for unit in units:
        unit, shortened = _fit(unit, SECTION_CHARS)
        cut |= shortened
        joined = f"{cur}\n\n{unit}" if cur else unit
        fits = len(joined) <= SECTION_CHARS
        if total + len(unit) > budget or len(sections) + (1 if fits else 2) > max_sections:
            cut = True
            break
        total += len(unit) + 2
        if fits:
            cur = joined
        else:
            sections.append(cur)
            cur = unit
    if cur:
        sections.append(cur)
    return sections, cut


@dataclass(frozen=True)
class SlackMessage:
    """One Slack message: the blocks readers see, and `text`, the fallback for notifications."""
    text: str
    blocks: list[dict]


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


def render_answer(answer: Answer) -> SlackMessage:
    """The whole reply as ONE message: answer, verdict line, short source list, notices. A long answer
    is shortened, with a note, to fit Slack's limits; it is never split into a chain of messages."""
    lang = answer.language
    tail = []
    verdict = verdict_line(answer.validation, lang)
    if verdict:
        tail.append(verdict)
    if answer.sources:
        head = "*来源*" if lang == "zh" else "*Sources*"
        lines = [f"[{i}] {h.title} (`{h.path}`)" for i, h in enumerate(answer.sources, 1)]
        tail.append(head + "\n" + "\n".join(lines))
    tail += [f"_{notice}_" for notice in answer.notices]
    tail_sections, _ = _pack(tail, MESSAGE_CHARS // 3, 4)
    room = MESSAGE_CHARS - sum(len(s) for s in tail_sections)
    body, cut = _pack(_blocks(to_mrkdwn(answer.text)), room, MAX_BLOCKS - 1 - len(tail_sections))
    note = say("shortened", lang) if cut else ""
    sections = body + tail_sections
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": s}} for s in sections if s.strip()]
    if note:
        blocks.insert(len(body), {"type": "context", "elements": [{"type": "mrkdwn", "text": note}]})
    text, used = [], len(note)
    for s in sections:  # the fallback: whole sections only, so no code block is left open
        if used + len(s) + 2 > TEXT_CHARS:
            break
        text.append(s)
        used += len(s) + 2
    return SlackMessage("\n\n".join(text + ([note] if note else [])), blocks)


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
