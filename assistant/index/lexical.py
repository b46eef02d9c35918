"""The lexical channel: BM25 (bm25s) over a tokenizer made for mixed code/English/Chinese text.

Tokens: lowercase; identifiers stay whole (`tp_size`, `_pp_plan`, `mw-e-ep-divides`,
`distributed.strategy`) and also give their parts, so "pp plan" still meets `_pp_plan`; Chinese runs
are segmented by jieba (search mode, so 张量并行 also yields 张量 and 并行), with the glossary's Chinese
terms added to its dictionary.
"""
from __future__ import annotations

import json
import logging
import re
from functools import lru_cache
from pathlib import Path
from typing import Iterable

import numpy as np
import yaml

# Bumped when tokenisation changes: a BM25 index built with another version is rebuilt.
TOKENIZER_VERSION = "1"
_STOPWORDS_FILE = Path(__file__).with_name("stopwords.yaml")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"[a-z0-9_]+(?:[.\-/][a-z0-9_]+)*")
_PARTS = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    data = yaml.safe_load(_STOPWORDS_FILE.read_text(encoding="utf-8")) or {}
    return frozenset(str(w) for words in data.values() for w in (words or []))


class LexicalTokenizer:
    def __init__(self, extra_words: Iterable[str] = ()):
        self._extra = [w for w in extra_words if _CJK_RUN.fullmatch(w)]
        self._jieba_tok = None  # loading jieba's dictionary takes a second: only when Chinese shows up
        self._stop = _stopwords()

    @property
    def _jieba(self):
        if self._jieba_tok is None:
            import jieba

            jieba.setLogLevel(logging.WARNING)  # its dictionary loader logs to stderr otherwise
            tok = jieba.Tokenizer()
            tok.initialize()
            for w in self._extra:
                tok.add_word(w)
            self._jieba_tok = tok
        return self._jieba_tok

    def __call__(self, text: str) -> list[str]:
        out: list[str] = []
        text = text.lower()
        pos = 0
        for m in _CJK_RUN.finditer(text):
            self._ascii(text[pos:m.start()], out)
            out.extend(w for w in self._jieba.cut_for_search(m.group(0)) if w.strip() and w not in self._stop)
            pos = m.end()
        self._ascii(text[pos:], out)
        return out

    def _ascii(self, text: str, out: list[str]) -> None:
        for m in _WORD.finditer(text):
            word = m.group(0)
            if word in self._stop:
                continue
            out.append(word)
            parts = _PARTS.findall(word)
            if len(parts) > 1 or (parts and parts[0] != word):
                out.extend(p for p in parts if p not in self._stop)


class LexicalIndex:
    """BM25 over the chunks, row i = chunk `row_ids[i]`. The token lists are kept beside the index so
    an incremental ingest tokenises only new chunks."""

    def __init__(self, bm25, row_ids: list[str], tokens: dict[str, list[str]] | None = None):
        self._bm25 = bm25
        self.row_ids = row_ids
        self.tokens = tokens or {}

    @classmethod
    def build(cls, texts: dict[str, str], row_ids: list[str], tokenizer: LexicalTokenizer,
              cached: dict[str, list[str]] | None = None) -> "LexicalIndex":
        """`texts` maps row id -> text; `cached` row id -> tokens from the previous build (same
        tokenizer and glossary), reused for unchanged chunks."""
        import bm25s

        cached = cached or {}
        tokens = {r: cached[r] if r in cached else tokenizer(texts[r]) for r in row_ids}
        corpus = [tokens[r] or [""] for r in row_ids]
        bm25 = None
        if corpus:
            bm25 = bm25s.BM25()
            bm25.index(corpus, show_progress=False)
        return cls(bm25, row_ids, tokens)

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        if self._bm25 is not None:
            self._bm25.save(str(directory), show_progress=False)
        (directory / "rows.json").write_text(json.dumps(self.row_ids, allow_nan=False), encoding="utf-8")
        (directory / "tokens.json").write_text(json.dumps(self.tokens, ensure_ascii=False, allow_nan=False), encoding="utf-8")

    @staticmethod
    def load_tokens(directory: Path) -> dict[str, list[str]]:
        path = directory / "tokens.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}

    @classmethod
    def load(cls, directory: Path) -> "LexicalIndex":
        import bm25s

        row_ids = json.loads((directory / "rows.json").read_text(encoding="utf-8"))
        bm25 = bm25s.BM25.load(str(directory), show_progress=False) if row_ids else None
        return cls(bm25, row_ids)

    def search(self, tokens: list[str], k: int, mask: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Top rows (index, score) with a positive score; `mask` (0/1 per row) filters rows."""
        if self._bm25 is None:
            return []
        ids = self._bm25.get_tokens_ids(tokens)
        if not ids:
            return []
        scores = self._bm25.get_scores_from_ids(ids)
        if mask is not None:
            scores = scores * mask
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(i), float(scores[i])) for i in top if scores[i] > 0]
