"""Sentence selection on what the real retriever returns for the question (the shared test index)."""
from __future__ import annotations

import pytest

from assistant.compose.knowledge.extract import select_sentences
from assistant.understand.cues import reading_of

CASES = [
    ("What does reshard_after_forward default to in moe:?", "en", "`moe.reshard_after_forward` (default false)"),
    ("If ep_size is 1, is my moe: block read?", "en", "dropped"),
    ("Does create_distributed_setup_from_config create the process group?", "en", "does not start the process group"),
    ("How do I set fp16 params with fp32 gradient reduction?", "en", "`param_dtype: float16`"),
    ("moe 里的 reshard_after_forward 默认是什么？", "zh", "`moe.reshard_after_forward`（默认 false）"),
    ("create_distributed_setup_from_config 会创建进程组吗？", "zh", "不会启动进程组"),
    ("怎么设置 fp16 参数、fp32 梯度归约？", "zh", "`param_dtype: float16`"),
    ("Why does training crawl with tp_size 16 on 8-GPU nodes?", "en", "`tp_size: 16`"),
]


@pytest.mark.parametrize("question,lang,expect", CASES)
def test_the_lead_sentence_answers_the_question(engine, question, lang, expect):
    hits = engine.retriever.search(question, k=5, lang=lang)
    picked = select_sentences(reading_of(question), hits, lang, tokenizer=engine.retriever.tokenizer)
    assert picked, [h.id for h in hits]
    assert any(expect in p.sentence for p in picked), [p.sentence for p in picked]
