"""assistant/index/lexical.py: identifier-preserving, jieba-segmenting BM25."""
from __future__ import annotations

import numpy as np
import pytest

from assistant.index.lexical import LexicalIndex, LexicalTokenizer
from assistant.understand.cues import reading_of


@pytest.fixture(scope="module")
def tok():
    return LexicalTokenizer(extra_words=["张量并行", "流水线并行"])


def test_identifiers_stay_whole_and_also_give_parts(tok):
    out = tok("Set the TP_SIZE and _pp_plan; see MW-E-EP-DIVIDES.")
    for t in ("tp_size", "_pp_plan", "mw-e-ep-divides", "tp", "size", "plan", "divides"):
        assert t in out
    assert "TP_SIZE" not in out  # lowercased
    assert "and" not in out and "the" not in out  # stopwords


def test_chinese_is_segmented_with_glossary_terms_kept(tok):
    out = tok("如何设置张量并行的大小")
    assert "张量并行" in out and "并行" in out and "设置" in out
    assert "的" not in out and "如何" not in out


def test_bm25_ranks_the_chunk_with_the_exact_identifier_first(tok, tmp_path):
    texts = ["pipeline block and pp_microbatch_size", "tp_size must divide heads", "张量并行放在节点内"]
    idx = LexicalIndex.build(dict(zip("abc", texts)), ["a", "b", "c"], tok)
    assert idx.search(tok("what is tp_size"), 3)[0][0] == 1
    assert idx.search(tok("张量并行怎么放"), 3)[0][0] == 2
    idx.save(tmp_path / "bm25")
    again = LexicalIndex.load(tmp_path / "bm25")
    assert again.row_ids == ["a", "b", "c"]
    assert again.search(tok("pp_microbatch_size"), 3)[0][0] == 0
    # A mask removes rows; unknown words find nothing.
    assert all(r != 1 for r, _ in again.search(tok("tp_size"), 3, mask=np.array([1, 0, 1], dtype=np.float32)))
    assert again.search(tok("zzzunknownzzz"), 3) == []
    # Cached token lists are reused as they are: a rebuild tokenises only the rows it lacks.
    cached = LexicalIndex.load_tokens(tmp_path / "bm25")
    cached["a"] = ["marker"]
    rebuilt = LexicalIndex.build(dict(zip("abc", texts)), ["a", "b", "c"], tok, cached=cached)
    assert rebuilt.search(["marker"], 3)[0][0] == 0 and rebuilt.tokens["b"] == tok(texts[1])


def test_empty_index_searches_to_nothing(tok, tmp_path):
    idx = LexicalIndex.build({}, [], tok)
    idx.save(tmp_path / "b")
    assert LexicalIndex.load(tmp_path / "b").search(tok("tp_size"), 5) == []


def test_a_cold_chinese_question_loads_jiebas_dictionary_once(monkeypatch):
    """The retriever's tokenizer and the sentence extractor's default one read the same glossary:
    one dictionary load serves both, whether it is jieba's own (about 0.6 s and 50 MB) or the
    memory-mapped table (jieba_table.py)."""
    import jieba

    from assistant.compose.knowledge import extract
    from assistant.config import KB_DIR
    from assistant.index import jieba_table, lexical
    from assistant.index.glossary import load_glossary

    loads = []
    real = jieba.Tokenizer.initialize
    monkeypatch.setattr(jieba.Tokenizer, "initialize", lambda self, *a, **k: (loads.append(self), real(self, *a, **k))[1])
    real_table = jieba_table.FreqTable.__init__
    monkeypatch.setattr(jieba_table.FreqTable, "__init__", lambda self, *a: (loads.append(self), real_table(self, *a))[1])
    lexical._jieba_tokenizer.cache_clear()
    extract._default_tokenizer.cache_clear()
    retriever_tok = LexicalTokenizer(load_glossary(KB_DIR / "glossary.yaml").zh_terms)  # as Retriever.load makes it
    assert retriever_tok("张量并行怎么配")
    picked = extract.select_sentences(reading_of("张量并行怎么配置？"), [], "zh")  # the extractor's own tokenizer
    assert picked == []
    assert extract._default_tokenizer()("流水线并行")
    assert len(loads) == 1 or (len(loads) == 2 and isinstance(loads[1], jieba_table.FreqTable))  # 2: table written
    assert extract._default_tokenizer()._jieba is retriever_tok._jieba
    extract._default_tokenizer.cache_clear()
