"""Config-shaped text a model writes outside a code block, found as each front end would show it.

The CLI prints lines raw, Slack makes a code block of any ``` line (even inside `<details>`), the web
renders HTML and GFM tables: a config can be shown by any of them without being a CommonMark code block.
The places looked at, each a line range the gate replaces as one:
- inline code spans, in paragraphs, headings and table cells (a cell stands for its whole table);
- the text of HTML blocks and of `<pre>` / `<code>` in a cell or paragraph (`<br>` a line break), and
  any fence or indented code written inside an HTML block;
- runs of bare `key: value` or JSON lines anywhere (prose, list items, quotes, HTML), once their quote
  markers, tags and list bullets are taken off, and `distributed: {...}` / `{"distributed": ...}` written
  in the middle of a sentence.
"""
from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

from assistant.compose.gate.config_blocks import find_prose_config
from assistant.compose.gate.markdown_blocks import code_blocks, html_text, parser, source_lines, top_starts

_HTML_CODE = re.compile(r"<(pre|code)\b[^>]*>(.*?)(?:</\1\s*>|$)", re.I | re.S)
_QUOTE = re.compile(r"^[ \t]{0,3}(?:>[ \t]?)+")
_BULLET = re.compile(r"^([ \t]*)([*+]|\d{1,9}[.)])[ \t]+")  # not "-": a YAML sequence item reads the same
_TAGS = re.compile(r"<[^>\n]*>")
_KEY_LINE = re.compile(r"""^[ \t]*(?:-[ \t]+)?(?:"[^"\n]{1,80}"|'[^'\n]{1,80}'|[A-Za-z_][\w.-]{0,80})[ \t]*:(?:[ \t]|$)""")
_JSON_LINE = re.compile(r"^[ \t]*[\[\]{}]")
_SEQ_LINE = re.compile(r"^[ \t]*-(?:[ \t]|$)")
_MID_LINE = re.compile(r"""(?:\{\s*)?["']?\b(?:distributed|recipe)["']?\s*:\s*\{""")
_OPENERS = re.compile(r"[`<|]")
_CELL = re.compile(r"(?<!\\)\|")
_MAX_RUN_LINES = 400


@dataclass(frozen=True)
class Candidate:
    start: int  # first line (0-based)
    end: int  # one past the last
    kind: str  # "inline" | "html" | "bare"
    body: str


def may_hold_config(line: str) -> bool:
    """A line that may start (or be part of) config-shaped text that later lines complete: a code span
    or HTML tag may close further down, a table row, a bare `key:` or JSON line may go on."""
    return bool(_OPENERS.search(line)) or bool(_KEY_LINE.match(_clean(line)) or _JSON_LINE.match(_clean(line)))


def first_holding(lines: list[str], start: int, end: int) -> int:
    """The first line of lines[start:end] that `may_hold_config`, or `end`."""
    return next((i for i in range(start, min(end, len(lines))) if may_hold_config(lines[i])), end)


def _inline(tokens) -> list[Candidate]:
    out, table = [], None
    for tok in tokens:
        if tok.type == "table_open":
            table = tok.map
        elif tok.type == "table_close":
            table = None
        elif tok.type == "inline" and tok.map:
            start, end = table or tok.map
            for child in tok.children or ():
                if child.type == "code_inline":
                    out.append(Candidate(start, end, "inline", child.content))
            out += [Candidate(start, end, "html", html_text(m.group(2))) for m in _HTML_CODE.finditer(tok.content)]
            if table is not None:  # a cell's plain text: `distributed: {...}` with no backticks
                out.append(Candidate(start, end, "inline", html_text(tok.content)))
    return out


def _html(tokens, depth: int) -> list[Candidate]:
    out = []
    for tok in tokens:
        if tok.type != "html_block" or not tok.map:
            continue
        start, end = tok.map
        text = html_text(tok.content)
        out.append(Candidate(start, end, "html", text))
        out += [Candidate(start, end, "html", html_text(m.group(2))) for m in _HTML_CODE.finditer(tok.content)]
        if depth < 2:  # Markdown written inside the HTML: `<details>` then a fence, with no blank line
            out += [Candidate(start, end, "html", c.body) for c in candidates(text, depth=depth + 1)]
            out += [Candidate(start, end, "html", b.body) for b in code_blocks(text)]
    return out


def _clean(line: str) -> str:
    """A line as YAML would see it: quote markers and tags off, a list bullet turned to indentation."""
    line = _TAGS.sub("", _QUOTE.sub("", line.rstrip("\r\n")))
    return _BULLET.sub(lambda m: m.group(1) + " " * (len(m.group(0)) - len(m.group(1))), line)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _balanced(text: str, start: int) -> str | None:
    """`text[start:]` up to the brace that closes its first `{`, or None when it does not close."""
    depth = 0
    for i in range(text.index("{", start), len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start:i + 1]
    return None


def _bare(lines: list[str], breaks: set[int]) -> list[Candidate]:
    cleaned = [_clean(line) for line in lines]
    out, i, n = [], 0, len(cleaned)
    while i < n:
        line = cleaned[i]
        for m in _MID_LINE.finditer(line):
            piece = _balanced(line, m.start())
            if piece:
                out.append(Candidate(i, i + 1, "bare", piece))
        if "|" in line:  # a table row, parsed as one or not (after a list item it is plain text)
            cells = [c.strip().replace("\\|", "|") for c in _CELL.split(line.strip().strip("|"))]
            out += [Candidate(i, i + 1, "bare", c) for c in cells if _KEY_LINE.match(c) or _JSON_LINE.match(c)]
        if not (_KEY_LINE.match(line) or _JSON_LINE.match(line)):
            i += 1
            continue
        base, j = _indent(line), i + 1
        while j < n and j - i < _MAX_RUN_LINES and j not in breaks and cleaned[j].strip() and _indent(cleaned[j]) >= base and (
                _KEY_LINE.match(cleaned[j]) or _JSON_LINE.match(cleaned[j]) or _SEQ_LINE.match(cleaned[j])
                or _indent(cleaned[j]) > base):
            j += 1
        whole = textwrap.dedent("\n".join(cleaned[i:j])) + "\n"
        out.append(Candidate(i, j, "bare", whole))
        if find_prose_config(whole) is None:
            # each entry at the run's own indentation, and the run up to each: a line of prose shaped
            # `Note: x: y` or a list item after it must not make the YAML unreadable
            starts = [k for k in range(i + 1, j) if _indent(cleaned[k]) <= base]
            pieces = {(a, b) for a, b in zip([i] + starts, starts + [j]) if not _SEQ_LINE.match(cleaned[a])}
            for a, b in sorted(pieces | {(i, k) for k in starts}):
                if (a, b) != (i, j):
                    out.append(Candidate(a, b, "bare", textwrap.dedent("\n".join(cleaned[a:b])) + "\n"))
        i = j
    return out


def candidates(text: str, tokens=None, depth: int = 0) -> list[Candidate]:
    """Every piece of `text` outside code blocks that may be a config, with the lines it stands on. A
    run of bare lines stays inside its top-level block, and a span starts no earlier than the first line
    that may hold one, so the pieces do not depend on where the text was cut before."""
    tokens = tokens if tokens is not None else parser(inline=True).parse(text)
    lines = source_lines(text)
    inline = [Candidate(first_holding(lines, c.start, c.end), c.end, c.kind, c.body) for c in _inline(tokens)]
    return inline + _html(tokens, depth) + _bare(lines, set(top_starts(tokens)))
