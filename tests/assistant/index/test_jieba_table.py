"""assistant/index/jieba_table.py: jieba's dictionary as a memory-mapped table, segmenting as jieba does."""
from __future__ import annotations

import jieba
import pytest

from assistant.config import KB_DIR
from assistant.index.jieba_table import FreqTable, write_table
from assistant.index.lexical import _freq_table


@pytest.fixture(scope="module")
def own():
    tok = jieba.Tokenizer()
    tok.initialize()
    return tok


def _zh_lines() -> list[str]:
    lines = [ln.strip() for p in sorted((KB_DIR / "zh").rglob("*.md")) for ln in p.read_text(encoding="utf-8").splitlines()]
    return [ln for ln in lines if ln][:1500]


def test_the_table_holds_jiebas_dictionary_and_segments_the_kb_alike(own, tmp_path):
    write_table(tmp_path / "t.table", own.FREQ, own.total)
    table = FreqTable(tmp_path / "t.table")
    assert table.total == own.total and len(table) == len(own.FREQ)
    tok = jieba.Tokenizer()
    tok.FREQ, tok.total, tok.initialized = table, table.total, True
    ref = jieba.Tokenizer()
    ref.initialize()
    for w in ("张量并行", "流水线并行", "显存"):  # as the glossary's terms are added
        tok.add_word(w)
        ref.add_word(w)
    lines = _zh_lines()
    assert len(lines) > 200
    for line in lines:
        assert list(tok.cut_for_search(line)) == list(ref.cut_for_search(line)), line
        assert list(tok.cut(line)) == list(ref.cut(line)), line
    assert tok.total == ref.total


def test_a_truncated_table_is_refused(own, tmp_path):
    write_table(tmp_path / "t.table", {"张量": 3, "张": 0}, 3)
    data = (tmp_path / "t.table").read_bytes()
    (tmp_path / "t.table").write_bytes(data[:-2])
    with pytest.raises(ValueError):
        FreqTable(tmp_path / "t.table")


def test_the_tokenizer_writes_the_table_once_then_opens_it(tmp_path, monkeypatch):
    from assistant.index import lexical

    monkeypatch.setattr(lexical, "_model_cache_dir", lambda: tmp_path)
    first = _freq_table(jieba.Tokenizer())
    assert isinstance(first, FreqTable) and len(list(tmp_path.glob("jieba-freq-*.table"))) == 1
    calls = []
    monkeypatch.setattr(jieba.Tokenizer, "initialize", lambda self, *a, **k: calls.append(1))
    again = _freq_table(jieba.Tokenizer())
    assert isinstance(again, FreqTable) and calls == []  # jieba's own dictionary is not loaded again
