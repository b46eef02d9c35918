"""Markdown with optional YAML front matter, cut into heading-aware chunks.

A document that fits the token budget is one chunk. A bigger one is cut along its heading tree: a
section that fits is one chunk; small neighbouring sections are packed together; a section that does
not fit is cut at its subsections, then at paragraphs. Every chunk carries its heading path
("Title > Section > Subsection") as context for the encoders.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import yaml

from ingest.chunking import MAX_TOKENS, TARGET_TOKENS, Chunk, count_tokens, split_to_fit

FRONT_MATTER_MAX_BYTES = 16 * 1024
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_COMMENT = re.compile(r"<!--.*?-->", re.S)


class FrontMatterError(ValueError):
    pass


def split_front_matter(text: str) -> tuple[dict, str]:
    """(metadata, body). No front matter gives an empty mapping."""
    text = text.lstrip("\ufeff")
    if not text.startswith("---"):
        return {}, text
    lines = text.split("\n")
    if lines[0].strip() != "---":
        return {}, text
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            raw = "\n".join(lines[1:i])
            if len(raw.encode("utf-8")) > FRONT_MATTER_MAX_BYTES:
                raise FrontMatterError(f"front matter larger than {FRONT_MATTER_MAX_BYTES} bytes")
            try:
                meta = yaml.safe_load(raw) or {}
            except yaml.YAMLError as exc:
                raise FrontMatterError(f"front matter is not valid YAML: {exc}") from exc
            if not isinstance(meta, dict):
                raise FrontMatterError("front matter is not a mapping")
            return meta, "\n".join(lines[i + 1:])
    raise FrontMatterError("front matter opened with --- but never closed")


@dataclass
class Section:
    level: int
    title: str
    body: list[str] = field(default_factory=list)
    children: list["Section"] = field(default_factory=list)
    _own_tokens: int | None = field(default=None, repr=False)
    _subtree: int = field(default=0, repr=False)

    def tokens(self, with_heading: bool) -> int:
        """Word pieces of `render(with_heading)`: parts meet at newlines, so counts add up and each
        piece of text is tokenised once however deep the tree is cut."""
        if self._own_tokens is None:
            self._own_tokens = count_tokens("\n".join(self.body).strip())
            self._subtree = self._own_tokens + sum(c.tokens(True) for c in self.children)
        head = count_tokens(f"{'#' * self.level} {self.title}") if with_heading and self.title else 0
        return head + self._subtree

    def render(self, with_heading: bool) -> str:
        parts = []
        if with_heading and self.title:
            parts.append(f"{'#' * self.level} {self.title}")
        own = "\n".join(self.body).strip()
        if own:
            parts.append(own)
        parts.extend(c.render(True) for c in self.children)
        return "\n\n".join(parts)


def parse_sections(body: str, title: str) -> Section:
    """The heading tree. A lone top-level heading becomes the root (it is the title)."""
    root = Section(level=0, title=title)
    stack = [root]
    in_fence = False
    for line in body.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        m = None if in_fence else _HEADING.match(line)
        if m:
            sec = Section(level=len(m.group(1)), title=m.group(2).strip())
            while stack[-1].level >= sec.level:
                stack.pop()
            stack[-1].children.append(sec)
            stack.append(sec)
        else:
            stack[-1].body.append(line)
    if not "\n".join(root.body).strip() and len(root.children) == 1:
        only = root.children[0]
        return Section(level=0, title=only.title or title, body=only.body, children=only.children)
    return root


def _join_path(path: list[str]) -> str:
    return " > ".join(p for p in path if p)


def chunk_markdown(body: str, title: str, context: str = "") -> list[Chunk]:
    """Heading-aware chunks; `context` (keywords, rule code) is embedded with every chunk."""
    # HTML comments are notes to editors, not content.
    root = parse_sections(_COMMENT.sub("", body), title)
    root_title = root.title or title
    out: list[Chunk] = []
    _emit(root, [root_title], context, out)
    return [c for c in out if c.text.strip()]


def _emit(sec: Section, path: list[str], context: str, out: list[Chunk]) -> None:
    heading = _join_path(path)
    # Heading, context and text are joined by newlines, where word pieces never span: counts add up.
    overhead = count_tokens(heading) + count_tokens(context)
    if overhead + sec.tokens(with_heading=False) <= MAX_TOKENS:
        out.append(Chunk(text=sec.render(with_heading=False), heading=heading, context=context))
        return
    # Units in document order: the section's own text, then each subsection (with its heading line).
    units: list[tuple[str, Section | None, int]] = []
    own = "\n".join(sec.body).strip()
    if own:
        units.append((own, None, sec._own_tokens if sec._own_tokens is not None else count_tokens(own)))
    for c in sec.children:
        units.append((c.render(with_heading=True), c, c.tokens(with_heading=True)))

    packed: list[str] = []
    packed_tokens = 0

    def flush() -> None:
        nonlocal packed_tokens
        if packed:
            out.append(Chunk(text="\n\n".join(packed), heading=heading, context=context))
            packed.clear()
            packed_tokens = 0

    for text, child, n in units:
        if overhead + packed_tokens + n <= TARGET_TOKENS:
            packed.append(text)
            packed_tokens += n
            continue
        flush()
        if overhead + n <= TARGET_TOKENS:
            packed.append(text)
            packed_tokens = n
        elif child is None:
            for piece in split_to_fit(text, MAX_TOKENS - overhead):
                out.append(Chunk(text=piece, heading=heading, context=context))
        else:
            _emit(child, [*path, child.title], context, out)
    flush()
