"""Where a Markdown text renders code: fences (any info string, backticks or tildes), indented code and
HTML `<pre>`, nested in lists and quotes too. Found by a CommonMark parser (markdown-it-py), so what the
gate checks is exactly what a renderer would show as code."""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from functools import cache, lru_cache

from markdown_it import MarkdownIt

_PRE = re.compile(r"<(?:pre|code)\b", re.I)
_PRE_START = re.compile(r"<pre\b", re.I)
_PRE_END = re.compile(r"</pre\s*>", re.I)
_TAG = re.compile(r"<[^>]*>")
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
def _parser() -> MarkdownIt:
    # Block structure only: inline parsing is the slow half and cannot create a code block.
    return MarkdownIt("commonmark").disable("inline")


def source_lines(text: str) -> list[str]:
    """`text` cut into lines as the parser counts them (at \n only, not at \u2028 or \x0c)."""
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


@lru_cache(maxsize=8)
def code_blocks(text: str) -> tuple[CodeBlock, ...]:
    """Every block of `text` that renders as code, in order. Line numbers count \n only: normalise
    \r\n and \r first (the gate does). Remembered for a few texts: the gate's feed and close see the
    same answer text, and markdown-it is most of the gate's time."""
    lines = source_lines(text)
    out = []
    for tok in _parser().parse(text):
        if tok.map is None:
            continue
        start, end = tok.map
        if tok.type == "fence":
            last = lines[end - 1] if end - 1 > start and end - 1 < len(lines) else ""
            m = _CLOSING_FENCE.match(last.rstrip("\r\n"))
            closed = bool(m) and m.group(1)[0] == tok.markup[0] and len(m.group(1)) >= len(tok.markup)
            out.append(CodeBlock(start, end, "fence", tok.info.strip(), tok.content, closed))
        elif tok.type == "code_block":
            out.append(CodeBlock(start, end, "indented", "", tok.content, False))
        elif tok.type in ("html_block", "inline") and _PRE_START.search(tok.content) or (
                tok.type == "html_block" and _PRE.search(tok.content)):
            # a <pre> block, or a <pre> inside a paragraph: a browser shows either as code
            body = html.unescape(_TAG.sub("", tok.content))
            out.append(CodeBlock(start, end, "html", "", body, bool(_PRE_END.search(tok.content))))
    return tuple(out)
