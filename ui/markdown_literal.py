"""Arithmetic and identifiers in an answer's prose, shown exactly by any Markdown renderer.

`tp_size*cp_size*pp_size (3*1*1 = 3)` is the validator's arithmetic; rendered as Markdown its stars
become emphasis ("tp_size*cp_size*pp_size" -> tp_size<em>cp_size</em>pp_size, "(311 = 3)"). Products
and snake_case identifiers are put in code spans, which every renderer (CommonMark, GFM, Slack mrkdwn)
shows literally. Code blocks, code spans, links, URLs and HTML tags are left as they are.
"""
from __future__ import annotations

import re

from assistant.compose.gate.markdown_blocks import code_blocks, source_lines

# What must not be touched inside a line: code spans, HTML tags, link targets, bare URLs.
_KEEP = re.compile(r"(`+)[^`]*?\1|<[^>\n]*>|\]\([^)\n]*\)|https?://\S+")
_LITERAL = re.compile(
    r"(?<![\w*`\\])\w+(?:\*\w+)+(?![\w*`])"  # a product: tp*cp*pp, 3*1*1, tp_size*cp_size
    r"|(?<![\w`/.\\-])(?:_*[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+_*|__[A-Za-z0-9]+__)(?![\w`/-])"  # snake_case, __init__
)


def _protect_line(line: str) -> str:
    out, at = [], 0
    for m in _KEEP.finditer(line):
        out.append(_LITERAL.sub(lambda x: f"`{x.group(0)}`", line[at:m.start()]))
        out.append(m.group(0))
        at = m.end()
    out.append(_LITERAL.sub(lambda x: f"`{x.group(0)}`", line[at:]))
    return "".join(out)


def protect_literals(markdown: str) -> str:
    """`markdown` with its prose products and identifiers in code spans; code blocks unchanged."""
    markdown = markdown.replace("\r\n", "\n").replace("\r", "\n")
    lines = source_lines(markdown)
    in_code = [False] * len(lines)
    for block in code_blocks(markdown):
        for i in range(block.start, min(block.end, len(lines))):
            in_code[i] = True
    return "".join(line if code else _protect_line(line) for line, code in zip(lines, in_code))
