"""Wrong claims from the docs are found in the question and corrected from the code (data rows and the
field reference); a claim the code agrees with, or a plain question, gets no correction."""
from __future__ import annotations

import pytest

from assistant.compose.knowledge.corrections import corrections, covers, first_sentence_of, without_answer_word
from assistant.understand.cues import reading_of


def keys(text: str, lang: str = "en") -> list[str]:
    return [c.key for c in corrections(reading_of(text), lang)]


@pytest.mark.parametrize("question, key", [
    ("The FSDP2Config docstring says enable_fsdp2_prefetch defaults to True, so I get prefetching?",
     "default:distributed.enable_fsdp2_prefetch"),
    ("文档的例子里 ignore_router_for_ac 写的 false，那它默认就是 false 吧？", "default:distributed.moe.ignore_router_for_ac"),
    ("Isn't activation_checkpointing on by default?", "default:distributed.activation_checkpointing"),
    ("AutoModel 里 ep_size 是不是也必须等于 dp_size？", "ep-equals-dp"),
    ("The skill doc says ep_size has to divide dp_size * cp_size, so tp 2 ep 8 on 8 GPUs is rejected, right?",
     "ep-divides-dp-cp"),
    ("MoE 的 moe_mesh 是 (pp, ep_shard, ep) 三维的，对吧？", "moe-mesh-3d"),
    ("so gradients are all-reduced in bf16 by default with FSDP2 mixed precision?", "reduce-bf16"),
    ("the docs use pp_schedule: interleaved_1f1b, so that is the name?", "doc-schedule-names"),
    ("开了 packing 的话 local_batch_size 就必须设成 1 吧？", "packing-lbs-1"),
    ("packed_sequence_size 必须能被 cp_size 整除吧？", "packing-cp-divisible"),
    ("tp_size has to divide the GPUs per node, otherwise it errors at start-up, right?", "tp-node-enforced"),
    ("megatron_fsdp 下我写的是 sequence_parallel: false，关掉也不行？", "megatron-sp-false"),
])
def test_a_wrong_claim_gets_its_correction(question, key):
    assert key in keys(question)


@pytest.mark.parametrize("question", [
    "What does enable_fsdp2_prefetch default to?",       # asks, claims no value
    "ignore_router_for_ac defaults to true, right?",      # the code agrees
    "ep_size must divide dp_size * cp_size * tp_size, right?",  # the code's own rule
    "How many GPUs do I need for Llama 70B?",
    "ep_size 8 on 16 GPUs with tp 2, what is ep_shard?",
    "",
])
def test_no_correction_without_a_wrong_claim(question):
    assert keys(question) == []


def test_a_key_in_two_blocks_is_not_corrected_when_one_block_agrees():
    # reshard_after_forward: FSDP2Config leaves it to fully_shard (None), moe: defaults to false
    assert not [k for k in keys("reshard_after_forward defaults to true, right?") if k.startswith("default:")]
    assert "default:distributed.moe.reshard_after_forward" in keys("in moe:, reshard_after_forward defaults to true?")


def test_the_default_correction_says_the_code_default_and_file():
    c = corrections(reading_of("enable_fsdp2_prefetch defaults to True, so prefetching is on?"), "en")[0]
    assert c.en.startswith("No: `distributed.enable_fsdp2_prefetch` defaults to `false`")
    assert "components/distributed/config.py" in c.en and "不是" in c.zh


def test_the_schedule_correction_names_what_the_user_wrote():
    c = corrections(reading_of("so looped_bfs is a valid pp_schedule?"), "en")[0]
    assert "`looped_bfs`" in c.en and "loopedbfs" in c.en


def test_a_clause_is_covered_by_the_claim_it_states():
    c = corrections(reading_of("ep_size 必须等于 dp_size 对吧？另外 tp 多大合适？"), "zh")[0]
    assert covers(c, reading_of("ep_size 必须等于 dp_size 对吧")) and not covers(c, reading_of("另外 tp 多大合适"))


def test_next_to_a_verdict_the_correction_loses_its_yes_no_and_keeps_one_sentence():
    assert without_answer_word("No: TP counts in the rule. The mesh code checks it.") == \
        "TP counts in the rule. The mesh code checks it."
    assert without_answer_word("不是：`ep_size` 不必等于 `dp_size`。") == "`ep_size` 不必等于 `dp_size`。"
    assert first_sentence_of("TP counts (see `mesh_utils.py`). The mesh code checks it.") == \
        "TP counts (see `mesh_utils.py`)."
    assert first_sentence_of("专家并行里 TP 也算。代码检查 `(dp*cp*tp) % ep`。") == "专家并行里 TP 也算。"


def test_any_input_is_total():
    for text in ("", "x" * 100_000, "默认", "defaults to", "`` defaults to ``?"):
        assert isinstance(corrections(reading_of(text), "en"), list)


@pytest.mark.parametrize("question, key", [
    ("tp_size 写成 2.0 也一样吧？", "float-size-fine"),
    ('sizes in quotes like tp_size: "2" will fail, correct?', "string-size-fails"),
    ("pp_schedule: null falls back to the default 1f1b?", "schedule-null-default"),
    ("PP works fine with tie_word_embeddings, right?", "pp-tied-embeddings"),
    ("I copied the finetune guide's dp_size: 1 and pp_size: 4 to 16 GPUs, that's fine?", "guide-dp1-pp4"),
    ("tp 不整除每台机器的卡数的话启动就会报错吧？", "tp-node-enforced"),
    ("文档说 reduce 也是 bf16，对吗？", "reduce-bf16"),
    ("单卡训练可以不写 distributed 段吧？", "single-gpu-no-section"),
    ("路由专家数不能被 ep 整除只是警告吧？", "experts-advice"),
    ("With cp_size 2 the global_batch_size has to be a multiple of local_batch_size * dp_size * cp, right?",
     "batch-dp-with-cp"),
    ("activation_checkpointing 只能写 true 或 false 吧？", "ac-bool-only"),
    ("DDPConfig only has activation_checkpointing as an option, correct?", "ddp-only-ac"),
    ("CP with packing works fine on SDPA, right?", "cp-packing-sdpa"),
])
def test_more_claims_from_the_code_facts_in_both_languages(question, key):
    assert key in keys(question, "zh")


def test_a_how_to_naming_a_value_is_no_claim():
    assert keys("How do I set reduce_dtype to bf16?") == []


def test_a_question_between_two_values_or_about_a_crash_is_no_claim():
    assert keys("moe 里面那个 reshard_after_forward 默认是 true 还是 false", "zh") == []
    assert keys("Does enable_fsdp2_prefetch default to true or false?") == []
    assert keys("My recipe has no distributed section and it crashes even on a single GPU. Why?") == []


def test_an_a_not_a_question_about_a_default_claims_no_default():
    # "默认开不开" asks the default; it was read as the claim "默认开" and rebutted with "不是"
    for q in ("sequence_parallel 默认开不开？", "sequence_parallel 默认是开还是关", "sequence_parallel 默认开启不开启"):
        assert not [k for k in keys(q) if k.startswith("default:")], q
    assert "default:distributed.sequence_parallel" in keys("sequence_parallel 默认是开的吧")
