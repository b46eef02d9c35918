"""assistant/index/glossary.py: glossary parsing, expansion and the English view of Chinese."""
from __future__ import annotations

import pytest

from assistant.index.glossary import Glossary, GlossaryEntry, encoder_view, load_glossary, parse_glossary, query_lang

G = Glossary((
    GlossaryEntry(zh=("张量并行",), en=("tensor parallelism", "tp_size")),
    GlossaryEntry(zh=("并行",), en=("parallelism",)),
    GlossaryEntry(zh=("微批次", "微批"), en=("microbatch", "pp_microbatch_size")),
))


def test_leftmost_longest_match_reads_the_compound_term_once():
    assert G.matches("张量并行怎么设") == [G.entries[0]]
    assert G.matches("数据并行和微批") == [G.entries[1], G.entries[2]]


def test_expand_appends_english_terms_not_already_present():
    assert G.expand("张量并行的 tp_size 怎么设") == "张量并行的 tp_size 怎么设 tensor parallelism"
    assert G.expand("How do I set tp_size?") == "How do I set tp_size?"  # English untouched


def test_english_view_keeps_identifiers_and_canonical_terms_only():
    view = G.to_english("张量并行的 tp_size 怎么设？")
    assert view == "tensor parallelism tp_size"
    assert encoder_view("张量并行", english_only=False, glossary=G) == "张量并行"
    assert G.to_english("完全没有术语") == ""


@pytest.mark.parametrize("data", [
    {"terms": [{"zh": ["流水线并行"], "en": ["pipeline parallelism"]}]},
    {"entries": [{"zh": "流水线并行", "en": "pipeline parallelism"}]},
    [{"zh": ["流水线并行"], "en": ["pipeline parallelism"]}, {"zh": [], "en": ["dropped"]}],
])
def test_glossary_layouts(data):
    g = parse_glossary(data)
    assert len(g.entries) == 1 and g.expand("流水线并行") == "流水线并行 pipeline parallelism"


def test_missing_glossary_means_no_expansion(tmp_path):
    assert load_glossary(tmp_path / "nope.yaml").entries == ()


def test_query_language():
    assert query_lang("tp_size 怎么设") == "zh" and query_lang("tp_size?") == "en"


def test_expand_and_to_english_are_read_once_per_question_and_again_after():
    from assistant import memo

    g = Glossary((GlossaryEntry(zh=("张量并行",), en=("tensor parallel",)),))
    memo.forget()
    first = g.expand("张量并行 怎么开")
    assert g.expand("张量并行 怎么开") is first and first.endswith("tensor parallel")
    other = Glossary((GlossaryEntry(zh=("张量并行",), en=("TP",)),))
    assert other.expand("张量并行 怎么开").endswith("TP")  # another glossary is not served this one's reading
    assert g.to_english("张量并行") == "tensor parallel" and other.to_english("张量并行") == "TP"
