"""Sentence selection inside retrieved chunks, on the real kb's chunks (chunked as ingest chunks them)."""
from __future__ import annotations

import pytest

from assistant.compose.knowledge.extract import Picked, select_sentences, split_sentences
from assistant.config import KB_DIR
from assistant.retrieve.hit import Hit
from assistant.understand.cues import reading_of
from ingest.sources.markdown import chunk_markdown, split_front_matter


def doc_hits(*names: str) -> list[Hit]:
    """Every chunk of the named kb docs ("en/moe-config"), in document order, as retrieval returns them."""
    out = []
    for name in names:
        lang = name.split("/")[0]
        meta, body = split_front_matter((KB_DIR / f"{name}.md").read_text(encoding="utf-8"))
        for i, c in enumerate(chunk_markdown(body, meta.get("title", ""))):
            out.append(Hit(id=f"{meta['id']}#{i}", doc_id=meta["id"], title=meta.get("title", ""),
                           path=f"kb/{name}.md", heading=c.heading, kind=meta.get("kind", "doc"), lang=lang,
                           score=1.0 / (i + 1), text=c.text))
    return out


def hit(text: str, kind: str = "doc", lang: str = "en", id: str = "t#0") -> Hit:
    return Hit(id=id, doc_id=id.split("#")[0], title="t", path="kb/en/t.md", heading="T", kind=kind, lang=lang,
               score=1.0, text=text)


# ---- Markdown read as prose ------------------------------------------------------------------------

def test_headings_code_tables_and_front_matter_are_not_sentences():
    text = ("---\nid: x.en\n---\n# Title\n\n## Section\n\nFirst sentence here, wrapped\nover two lines. "
            "Second one with `e.g. code.` inside and e.g. an abbreviation.\n\n```yaml\ndistributed:\n  tp_size: 2\n```\n\n"
            "| key | default |\n|---|---|\n| `tp_size` | 1 |\n\n- A list item that is a sentence.\n- `label` (no verb)\n")
    assert split_sentences(text) == [
        "First sentence here, wrapped over two lines.",
        "Second one with `e.g. code.` inside and e.g. an abbreviation.",
        "A list item that is a sentence.",
        "`label` (no verb)",
    ]


def test_chinese_sentences_split_on_full_stops_and_wrapped_lines_join():
    text = "混合分片数据并行把 rank 分成\n若干副本组。副本组的个数由 `dp_replicate_size` 指定。\n"
    assert split_sentences(text) == ["混合分片数据并行把 rank 分成若干副本组。", "副本组的个数由 `dp_replicate_size` 指定。"]


def test_bold_labels_are_dropped():
    assert split_sentences("**Symptom.** The job stops at start-up.") == ["The job stops at start-up."]


def test_a_sentence_may_start_with_a_code_span():
    got = split_sentences("It maps onto `X` (`a/b.py`). `parse` builds it only when `ep_size > 1`.")
    assert got == ["It maps onto `X` (`a/b.py`).", "`parse` builds it only when `ep_size > 1`."]


# ---- selection ------------------------------------------------------------------------------------

def test_nothing_to_pick():
    assert select_sentences(reading_of(""), doc_hits("en/moe-config"), "en") == []
    assert select_sentences(reading_of("What does reshard_after_forward default to?"), [], "en") == []
    assert select_sentences(reading_of("tp_size?"), doc_hits("en/moe-config"), "en", limit=0) == []


def test_skill_and_code_chunks_are_not_quoted():
    hits = [hit("`tp_size` must divide the GPUs per node, the skill says.", kind="skill"),
            hit("def f(tp_size): return tp_size.", kind="code")]
    assert select_sentences(reading_of("Must tp_size divide the GPUs per node?"), hits, "en") == []


def test_identifier_named_in_question_must_be_there():
    hits = [hit("Pipeline parallelism splits the layers into stages across GPUs.")]
    assert select_sentences(reading_of("What does layers_per_stage do in pipeline parallelism?"), hits, "en") == []


@pytest.mark.parametrize("question,lang,docs,expect", [
    ("What does reshard_after_forward default to in moe:?", "en", ["en/moe-config", "en/fsdp2", "en/yaml-reference"],
     "`moe.reshard_after_forward` (default false)"),
    ("If ep_size is 1, is my moe: block read?", "en", ["en/moe-config", "en/sizing-moe", "en/moe-expert-parallel"],
     "with `ep_size` 1 (or unset) a `moe:` block is dropped silently"),
    ("Does create_distributed_setup_from_config create the process group?", "en",
     ["en/python-api", "en/infrastructure-flow", "en/single-gpu"], "It does not start the process group"),
    ("How do I set fp16 params with fp32 gradient reduction?", "en", ["en/mixed-precision", "en/fsdp2", "en/faq"],
     "For fp16 parameters with fp32 gradient reduction, write `param_dtype: float16`"),
    ("moe 里的 reshard_after_forward 默认是什么？", "zh", ["zh/moe-config", "zh/fsdp2", "zh/yaml-reference"],
     "`moe.reshard_after_forward`（默认 false）"),
    ("ep_size 为 1 时 moe: 块会被读取吗？", "zh", ["zh/moe-config", "zh/sizing-moe", "zh/code-vs-docs"],
     "块被丢弃"),
    ("create_distributed_setup_from_config 会创建进程组吗？", "zh", ["zh/python-api", "zh/infrastructure-flow"],
     "它不会启动进程组"),
    ("怎么设置 fp16 参数、fp32 梯度归约？", "zh", ["zh/mixed-precision", "zh/fsdp2", "zh/faq"],
     "要 fp16 参数加 fp32 梯度归约"),
    ("What is HSDP?", "en", ["en/hsdp", "en/fsdp2"], "Hybrid sharded data parallel (HSDP) splits"),
    ("With pp_size 1, is the pipeline block used?", "en", ["en/pipeline-parallel", "en/faq", "en/code-vs-docs"],
     "`pp_size"),
])
def test_the_answering_sentence_is_picked(question, lang, docs, expect):
    picked = select_sentences(reading_of(question), doc_hits(*docs), lang)
    assert picked and all(isinstance(p, Picked) for p in picked)
    assert any(expect in p.sentence for p in picked), [p.sentence for p in picked]
    assert all(p.hit.lang == lang for p in picked)
    assert picked[0].score >= picked[-1].score or picked[0].hit.id == picked[-1].hit.id


def test_stated_value_prefers_the_sentence_about_that_case():
    # "ep_size is 1": the sentence about ep_size > 1 without a moe block answers another case
    first = select_sentences(reading_of("If ep_size is 1, is my moe: block read?"), doc_hits("en/moe-config"), "en", limit=1)[0]
    assert "dropped" in first.sentence


def test_falls_back_to_the_other_language_when_no_chunk_is_in_the_question_language():
    picked = select_sentences(reading_of("fp16 参数 fp32 梯度归约 param_dtype 怎么写？"), doc_hits("en/mixed-precision"), "zh")
    assert picked and picked[0].hit.lang == "en" and "param_dtype" in picked[0].sentence


def test_two_sentences_of_one_chunk_keep_their_order():
    picked = select_sentences(reading_of("Does create_distributed_setup_from_config create the process group?"),
                              doc_hits("en/python-api"), "en")
    same = [p for p in picked if p.hit.id == picked[0].hit.id]
    if len(same) == 2:
        text = same[0].hit.text.replace("\n", " ")
        assert text.find(same[0].sentence[:30]) < text.find(same[1].sentence[:30])


def test_bounded_on_huge_input():
    big = hit("`tp_size` divides the world size. " * 5000)
    picked = select_sentences(reading_of("Does tp_size divide the world size? " * 1000), [big], "en")
    assert len(picked) == 1


def test_a_sentence_cut_by_a_chunk_boundary_is_not_quoted():
    hits = [hit("`DDPConfig`); a key the dataclass does not have fails with `Unknown options for strategy`.")]
    assert select_sentences(reading_of("Where does Unknown options for strategy come from?"), hits, "en") == []


def test_rule_codes_do_not_count_as_the_topic():
    hits = [hit("Both strategies reject a `dp_replicate_size` above 1 (`MW-E-HSDP-STRATEGY`).")]
    assert select_sentences(reading_of("What is HSDP?"), hits, "en") == []


def first_pick(question: str, *texts: str) -> int:
    """Which of `texts` (one chunk each, in this order) holds the best sentence for the question."""
    hits = [hit(t, id=f"c{i}#0") for i, t in enumerate(texts)]
    return int(select_sentences(reading_of(question), hits, "en", limit=1)[0].hit.id[1:].split("#")[0])


def test_a_number_question_prefers_the_sentence_with_the_formula_and_plurals_meet():
    assert first_pick("How many microbatches does a pipeline step run?",
                      "A pipeline run works but GPU utilisation is low and tokens per second fall short.",
                      "The pipeline runs `n_microbatches = local_batch_size // pp_microbatch_size` microbatches per step.") == 1


def test_pointer_sentences_answer_nothing():
    assert select_sentences(reading_of("packing with CP?"), [hit("See `context-parallel` and `sequence-packing` for packing with CP.")],
                            "en") == []
    assert select_sentences(reading_of("packing 和 CP 要注意什么？"), [hit("见 `context-parallel` 和 `sequence-packing`。", lang="zh")],
                            "zh") == []


def test_words_of_one_cue_group_meet():
    assert first_pick("What happens if dp_size is bigger than the world size?",
                      "`ddp` ignores `dp_size` completely and uses the world size.",
                      "If the mesh of `dp_size` times the other sizes is larger than the world, `init_device_mesh` fails.") == 1


def test_english_terms_in_a_chinese_question_meet_the_chinese_chunk():
    hits = [hit("增加微批次数可以缩小流水线气泡。", lang="zh", id="a#0"),
            hit("每一步流水线运行 `n_microbatches = local_batch_size // pp_microbatch_size` 个微批次。", lang="zh", id="b#0")]
    first = select_sentences(reading_of("一个 pipeline step 跑几个 microbatch？"), hits, "zh", limit=1)[0]
    assert first.hit.id == "b#0"


def test_a_chinese_sentence_cut_by_a_chunk_boundary_is_not_quoted():
    assert select_sentences(reading_of("moe 的 mesh 是几维的？"), [hit("时 moe_mesh 为 `(2, 8)`，也就是二维 mesh。", lang="zh")], "zh") == []


def test_a_sentence_about_the_excluded_dtype_loses_to_one_about_the_asked_one():
    from assistant.compose.knowledge.extract import _conflicts, _cue_data

    ex = _cue_data().exclusive
    assert _conflicts({"fp16", "param_dtype"}, {"bf16", "reduce"}, ex)
    assert not _conflicts({"bf16", "fp16"}, {"bf16"}, ex)  # names the asked one too
    assert not _conflicts({"fp16"}, {"fp16", "bf16"}, ex)  # the question names both
