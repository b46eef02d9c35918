"""The lexical channel: BM25 (bm25s) over a tokenizer made for mixed code/English/Chinese text.

Tokens: lowercase; identifiers stay whole (`tp_size`, `_pp_plan`, `mw-e-ep-divides`,
`distributed.strategy`) and also give their parts, so "pp plan" still meets `_pp_plan`; Chinese runs
are segmented by jieba (search mode, so 张量并行 also yields 张量 and 并行), with the glossary's Chinese
terms added to its dictionary.
"""
from __future__ import annotations

import json
import logging
import os
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Iterable

import numpy as np

from assistant.datafile import read_yaml

# Bumped when tokenisation changes: a BM25 index built with another version is rebuilt.
TOKENIZER_VERSION = "1"
_STOPWORDS_FILE = Path(__file__).with_name("stopwords.yaml")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"[a-z0-9_]+(?:[.\-/][a-z0-9_]+)*")
_PARTS = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    data = read_yaml(_STOPWORDS_FILE) or {}
    return frozenset(str(w) for words in data.values() for w in (words or []))


@lru_cache(maxsize=4)
def _jieba_tokenizer(extra: tuple[str, ...]):
    """One jieba dictionary per word list in the process: the retriever's tokenizer and the sentence
    extractor's read the same glossary. The dictionary is the memory-mapped table in the model cache
    directory (jieba_table.py: 0.6 s of CPU and 50 MB less than jieba's own marshal cache), written
    from jieba's own dictionary the first time; without a cache directory, jieba loads its own."""
    import jieba

    jieba.setLogLevel(logging.WARNING)  # its dictionary loader logs to stderr otherwise
    tok = jieba.Tokenizer()
    table = _freq_table(tok)
    if table is not None:
        tok.FREQ, tok.total, tok.initialized = table, table.total, True
    for w in extra:
        tok.add_word(w)  # initialises jieba's own dictionary when no table was opened
    return tok


def _freq_table(tok):
    """The table for jieba's default dictionary, written from `tok`'s own load when missing; None when
    the cache directory is unusable (jieba then loads its dictionary as it always does)."""
    import jieba

    from assistant.index.jieba_table import FreqTable, table_path, write_table

    cache_dir = _model_cache_dir()
    if cache_dir is None:
        return None
    tok.tmp_dir = str(cache_dir)  # where jieba keeps its marshal cache, if it ever builds one
    path = table_path(cache_dir, Path(jieba.__file__).with_name(jieba.DEFAULT_DICT_NAME), jieba.__version__)
    try:
        return FreqTable(path)
    except (OSError, ValueError):
        pass
    tok.initialize()
    try:
        write_table(path, tok.FREQ, tok.total)
        return FreqTable(path)
    except OSError:
        return None


def _model_cache_dir() -> Path | None:
    from assistant.config import load_settings

    try:
        path = Path(load_settings().model_cache_dir)
        path.mkdir(parents=True, exist_ok=True)
        return path
    except (OSError, ValueError):  # unwritable: jieba's own default (the temp directory) then
        return None


class LexicalTokenizer:
    def __init__(self, extra_words: Iterable[str] = ()):
        self._extra = tuple(w for w in extra_words if _CJK_RUN.fullmatch(w))
        self._jieba_tok = None  # loading jieba's dictionary takes a second: only when Chinese shows up
        self._stop = _stopwords()

    @property
    def _jieba(self):
        if self._jieba_tok is None:
            self._jieba_tok = _jieba_tokenizer(self._extra)
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


def _bm25s():
    """bm25s for scoring a saved index. Importing it also imports scipy.sparse and tqdm (asyncio, ssl)
    when they are installed, about 0.2 s of a quiet cold start (0.7 s under load), though neither is
    used to load an index or score a query (the saved matrix is plain numpy arrays); so the first
    import, when it is for a query, is made with both hidden. Building an index gets scipy back
    (`_bm25s_for_indexing`)."""
    if "bm25s" in sys.modules:
        return sys.modules["bm25s"]
    hide_scipy = "scipy.sparse" not in sys.modules
    tqdm_env = os.environ.get("DISABLE_TQDM")
    try:
        if hide_scipy:
            sys.modules["scipy.sparse"] = None  # `import scipy.sparse` raises ImportError
        os.environ["DISABLE_TQDM"] = "1"
        import bm25s
    finally:
        if hide_scipy:
            sys.modules.pop("scipy.sparse", None)
        if tqdm_env is None:
            os.environ.pop("DISABLE_TQDM", None)
        else:
            os.environ["DISABLE_TQDM"] = tqdm_env
    return bm25s


def _bm25s_for_indexing():
    """bm25s as its own import gives it: scipy's sparse matrix builds the index (ingest's path)."""
    bm25s = _bm25s()
    if not bm25s.SCIPY_AVAILABLE:
        try:
            import scipy.sparse
        except ImportError:  # not installed: bm25s's numpy builder, as its own import would choose
            return bm25s
        bm25s.sp, bm25s.SCIPY_AVAILABLE = scipy.sparse, True
    return bm25s


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
        bm25s = _bm25s_for_indexing()

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
        bm25s = _bm25s()

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
