"""Where a Markdown text renders code: fences (any info string, backticks or tildes), indented code and
HTML `<pre>`, nested in lists and quotes too. Found by a CommonMark parser (markdown-it-py, with GFM
tables as the web renders them), so what the gate checks is exactly what a renderer would show as code.
`settled` says how much of a growing text no later line can change."""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from functools import cache
from typing import Callable

from markdown_it import MarkdownIt

_PRE = re.compile(r"<(?:pre|code)\b", re.I)
_PRE_START = re.compile(r"<pre\b", re.I)
_PRE_END = re.compile(r"</pre\s*>", re.I)
_TAG = re.compile(r"<[^>]*>")
_BREAK = re.compile(r"<br\s*/?>", re.I)
_CLOSING_FENCE = re.compile(r"^[ \t>]*(`{3,}|~{3,})[ \t]*$")


@dataclass(frozen=True)
class CodeBlock:
    start: int  # first line (0-based) of the block's source lines
    end: int  # one past its last line
    kind: str  # "fence" | "indented" | "html"
    info: str  # the fence's info string ("" for the others)
    body: str  # the code as rendered (container prefixes and HTML tags removed)
    closed: bool  # its end is certain from its own lines (a closing fence, a </pre>)


@cache
def parser(inline: bool = False) -> MarkdownIt:
    # Block structure only unless asked: inline parsing is the slow half and cannot create a code block.
    md = MarkdownIt("commonmark").enable("table")
    return md if inline else md.disable("inline")


_LEAVES = {"paragraph_open", "heading_open", "fence", "code_block", "html_block", "table_open", "hr"}


def source_lines(text: str) -> list[str]:
    """`text` cut into lines as the parser counts them (at \n only, not at \u2028 or \x0c)."""
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


def html_text(source: str) -> str:
    """What a browser shows of an HTML fragment: tags gone, `<br>` a line break, entities decoded."""
    return html.unescape(_TAG.sub("", _BREAK.sub("\n", source)))


def _fence_closed(tok, lines: list[str]) -> bool:
    start, end = tok.map
    last = lines[end - 1] if end - 1 > start and end - 1 < len(lines) else ""
    m = _CLOSING_FENCE.match(last.rstrip("\r\n"))
    return bool(m) and m.group(1)[0] == tok.markup[0] and len(m.group(1)) >= len(tok.markup)


def top_starts(tokens) -> list[int]:
    """The first line of every top-level block and of every item of a top-level list: nothing written
    after one reaches back before it, and the text from one on parses the same alone (an answer that is
    one long list is not re-read from its first item at every line)."""
    return sorted({t.map[0] for t in tokens if t.map and t.nesting >= 0 and (
        t.level == 0 or (t.level == 1 and t.type == "list_item_open"))})


def settled(tokens, lines: list[str], plain_until: Callable[[int, int], int] | None = None) -> int:
    """Lines before this one are final: the last leaf block (paragraph, table, HTML, code...) may still
    grow while nothing ends it (a blank line, a later block, its closing fence), so it starts the rest.
    `plain_until(start, end)`: where a growing paragraph's lines stop being plain prose that no later
    line can turn into anything else; they are final too."""
    last = max((t for t in tokens if t.type in _LEAVES and t.map), key=lambda t: t.map[0], default=None)
    if last is None:
        return len(lines)
    start, end = last.map
    after = lines[end:]
    if any(line.strip() for line in after) or last.type in ("heading_open", "hr") or (
            last.type == "fence" and _fence_closed(last, lines)):
        return len(lines)
    if after and last.type != "code_block":  # a blank line ends every leaf but indented code
        return len(lines)
    return plain_until(start, end) if last.type == "paragraph_open" and plain_until is not None else start


def code_blocks(text: str, tokens=None) -> tuple[CodeBlock, ...]:
    """Every block of `text` that renders as code, in order. Line numbers count \n only: normalise
    \r\n and \r first (the gate does). `tokens`: the text already parsed."""
    lines = source_lines(text)
    out = []
    for tok in tokens if tokens is not None else parser().parse(text):
        if tok.map is None:
            continue
        start, end = tok.map
        if tok.type == "fence":
            out.append(CodeBlock(start, end, "fence", tok.info.strip(), tok.content, _fence_closed(tok, lines)))
        elif tok.type == "code_block":
            out.append(CodeBlock(start, end, "indented", "", tok.content, False))
        elif tok.type in ("html_block", "inline") and _PRE_START.search(tok.content) or (
                tok.type == "html_block" and _PRE.search(tok.content)):
            # a <pre> block, or a <pre> inside a paragraph: a browser shows either as code
            body = html_text(tok.content)
            out.append(CodeBlock(start, end, "html", "", body, bool(_PRE_END.search(tok.content))))
    return tuple(out)
