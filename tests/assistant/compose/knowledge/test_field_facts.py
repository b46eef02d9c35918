"""Fact answers about named fields: the asked fact leads, rendered from the field reference."""
from __future__ import annotations

import re

import pytest

from assistant.compose.knowledge.field_facts import field_fact_lines
from assistant.understand.field_question import FieldQuestion
from assistant.validator.fields import field_table

T = field_table()


def answer(question: str, lang: str = "en") -> list[str]:
    return field_fact_lines(T.mentioned(question), FieldQuestion(question), lang)


def test_no_refs_no_lines():
    assert field_fact_lines([], FieldQuestion("what is the weather"), "en") == []


def test_default_in_the_named_block_leads():
    lines = answer("What does `reshard_after_forward` default to in `moe:`?")
    assert lines[0] == "`distributed.moe.reshard_after_forward` defaults to `false`."
    # the moe: block's own rule follows (CODE-FACTS 5), and the upstream file
    assert any("`ep_size > 1`" in l for l in lines[1:])
    assert lines[-1] == "Upstream: `components/distributed/config.py MoEParallelizerConfig`."


def test_a_key_in_two_blocks_gives_both_defaults():
    lead = answer("reshard_after_forward 默认是多少？", "zh")[0]
    assert "`distributed.reshard_after_forward` 默认 `null`" in lead
    assert "`distributed.moe.reshard_after_forward` 默认 `false`" in lead


def test_code_facts_defaults():
    assert answer("What is the default of enable_fsdp2_prefetch?")[0] == \
        "`distributed.enable_fsdp2_prefetch` defaults to `false`."
    lead = answer("what does mp_policy default to in fsdp2?")[0]
    assert "param_dtype: bfloat16, reduce_dtype: float32, output_dtype: bfloat16" in lead
    assert answer("ignore_router_for_ac 默认值？", "zh")[0] == "`distributed.moe.ignore_router_for_ac` 的默认值是 `true`。"


@pytest.mark.parametrize("question,lang,lead", [
    ("Are `megatron-fsdp` and `mfsdp` different strategies?", "en",
     "`megatron-fsdp` and `mfsdp` are the same strategy: each selects `MegatronFSDPConfig`, as `megatron_fsdp` does."),
    ("megatron-fsdp 和 mfsdp 一样吗？", "zh",
     "`megatron-fsdp` 和 `mfsdp` 是同一个策略：都对应 `MegatronFSDPConfig`，与 `megatron_fsdp` 相同。"),
])
def test_aliases_are_the_same_strategy(question, lang, lead):
    assert answer(question, lang)[0] == lead


def test_different_strategies_are_called_different():
    lead = answer("What's the difference between fsdp2 and megatron_fsdp?")[0]
    assert lead.startswith("`fsdp2` and `megatron_fsdp` are different strategies")


@pytest.mark.parametrize("question,lang,start", [
    ("If ep_size is 1, is my `moe:` block read?", "en", "No: `moe:` is read only when `ep_size > 1`, and yours is 1."),
    ("ep_size 设为 1 的时候 moe: 还会读取吗？", "zh", "不会：只有 `ep_size > 1` 时才读取 `moe:`"),
    ("With pp_size 4, is the `pipeline:` block used?", "en", "Yes: with `pp_size` 4 (above 1) the `pipeline:` block is read."),
    ("Is the moe: block read?", "en", "`moe:` is read only when `ep_size > 1`."),
    # the block named in words; a size written null is upstream's default (ep_size 1)
    ("Is the moe block read at all with ep_size 1?", "en", "No: `moe:` is read only when `ep_size > 1`, and yours is 1."),
    ("yaml 里 ep_size 写的 null，这个 moe 块到底生效没？", "zh", "不会：只有 `ep_size > 1` 时才读取 `moe:`，而你的 `ep_size` 是 1"),
])
def test_is_a_block_read(question, lang, start):
    assert answer(question, lang)[0].startswith(start)


@pytest.mark.parametrize("question,start", [
    ("Does ddp accept sequence_parallel?", "No: `ddp` does not accept `sequence_parallel`"),
    ("Does ddp support autocast_dtype?", "Yes: `ddp` accepts `autocast_dtype`."),
    ("Can I use tp_size 2 with ddp?", "No: `ddp` rejects `tp_size` above 1"),
    ("Which strategies accept dp_replicate_size?", "Every strategy reads `dp_replicate_size`, but a value above 1 works only with `fsdp2`"),
    ("Which strategies accept sequence_parallel?", "`sequence_parallel` is accepted only by `fsdp2`"),
    ("Which strategies accept activation_checkpointing?", "Every strategy accepts `distributed.activation_checkpointing`"),
    ("Does megatron_fsdp accept activation_checkpointing: selective?",
     "No: `megatron_fsdp` accepts `activation_checkpointing`, but not `selective`"),
    ("Does ddp accept activation_checkpointing: selective?", "Yes: `ddp` accepts `activation_checkpointing`."),
    ("Can I set dp_size with ddp?", "`ddp` accepts `dp_size` but ignores it."),
])
def test_which_strategies_accept(question, start):
    assert answer(question)[0].startswith(start)


def test_allowed_values():
    assert answer("What values can round_virtual_stages_to_pp_multiple take?")[0] == \
        "`distributed.pipeline.round_virtual_stages_to_pp_multiple` accepts `up`, `down` or `null` (default `null`)."
    zh = answer("activation_checkpointing 可选哪些值？", "zh")[0]
    assert zh == "`distributed.activation_checkpointing` 可取 `true`、`false`、`full` 或 `selective`（默认 `false`）。"


def test_meaning_leads_a_what_is_it_for_question():
    lines = answer("What is `round_virtual_stages_to_pp_multiple` for?")
    assert lines[0].startswith("`distributed.pipeline.round_virtual_stages_to_pp_multiple`: With virtual stages")
    zh = answer("ignore_router_for_ac 是干什么用的？", "zh")
    assert zh[0].startswith("`distributed.moe.ignore_router_for_ac`：") and "CheckpointError" in "".join(zh)


def test_chinese_lines_are_chinese_with_english_identifiers():
    for line in answer("moe: 里的 reshard_after_forward 默认是多少？是干什么用的？", "zh"):
        assert re.search(r"[\u4e00-\u9fff]", line)
        assert "`" in line


def test_lines_are_short_and_unique():
    for q in ("what does mp_policy default to?", "What is the default of enable_fsdp2_prefetch?",
              "Which strategies accept sequence_parallel?"):
        lines = answer(q)
        assert len(lines) == len(set(lines)) and 2 <= len(lines) <= 6
        assert sum(len(l) for l in lines) < 1200


@pytest.mark.parametrize("question,lang,lead", [
    ("activation_checkpointing 能填哪些值？写 partial 可以不", "zh",
     "不行：`distributed.activation_checkpointing` 不接受 `partial`；可取 `true`、`false`、`full` 或 `selective`。"),
    ("Can I set activation_checkpointing to partial?", "en",
     "No: `distributed.activation_checkpointing` does not accept `partial`; it takes `true`, `false`, `full` or `selective`."),
    ("看官方 recipe 里 dp_size: none 这么写，none 是字符串啊，这样不会报错吗？", "zh",
     "可以：`distributed.dp_size` 接受 `none`（会被读成 `null`）（这也是默认值）。"),
    ("pp_schedule 写 1F1B 对吗", "zh", "可以：`distributed.pipeline.pp_schedule` 接受 `1F1B`（这也是默认值）。"),
    ("What's the default pp_schedule, and is interleaved_1f1b a valid name?", "en",
     "No: `distributed.pipeline.pp_schedule` does not accept `interleaved_1f1b`; it takes `1f1b`, `interleaved1f1b`, "
     "`gpipe`, `loopedbfs`, `interleavedzerobubble`, `zbvzerobubble` or `dualpipev`."),
    ("Is `activation_checkpointing: on` valid?", "en", "Yes: `distributed.activation_checkpointing` accepts `on` (read as `true`)."),
    ("Is pp_schedule: interleaved1f1b valid?", "en", "Yes: `distributed.pipeline.pp_schedule` accepts `interleaved1f1b`."),
])
def test_a_value_the_question_names_is_judged(question, lang, lead):
    assert answer(question, lang)[0] == lead


def test_a_rejected_schedule_gets_the_spelling_upstream_accepts():
    lines = answer("pp_schedule 默认是啥？我想用 interleaved 的，写 interleaved_1f1b 对不对", "zh")
    assert lines[0].startswith("不行：`distributed.pipeline.pp_schedule` 不接受 `interleaved_1f1b`")
    assert lines[1] == "上游接受的写法是 `interleaved1f1b`。"
    assert "`distributed.pipeline.pp_schedule` 的默认值是 `1f1b`。" in lines


def test_a_value_named_only_as_a_size_is_not_judged():
    # "ep_size 设为 1" states the condition of a read question; it is not asking whether 1 is valid
    assert answer("ep_size 设为 1 的时候 moe: 还会读取吗？", "zh")[0].startswith("不会")


def test_advice_leads_even_when_asked_second():
    lines = answer("what's ignore_router_for_ac and should I turn it off when I use activation checkpointing?")
    assert lines[0].startswith("`distributed.moe.ignore_router_for_ac`: Keep it true with activation checkpointing")
    assert lines[1].startswith("`distributed.moe.ignore_router_for_ac`: Saves the router's outputs")
    zh = answer("开了 activation_checkpointing 的 MoE，moe 里 ignore_router_for_ac 要不要设成 false？", "zh")
    assert zh[0].startswith("`distributed.moe.ignore_router_for_ac`：开启激活检查点时请保持 true")


def test_options_of_a_strategy_and_of_a_block():
    lines = answer("strategy 是 ddp 的时候能写哪些选项？find_unused_parameters 支持吗", "zh")
    assert lines[0] == "可以：`ddp` 接受 `find_unused_parameters`。"
    assert "`broadcast_buffers`" in lines[1] and "`static_graph`" in lines[1] and "`sequence_parallel`" not in lines[1]
    assert answer("Which options does the `moe:` block take?")[0] == (
        "`moe:` accepts (default in brackets) `ignore_router_for_ac` (`true`), `reshard_after_forward` (`false`),"
        " `lm_head_precision` (`null`), `wrap_outer_model` (`true`) and `mp_policy` (`null`).")


def test_values_asked_are_not_a_strategies_question():
    lead = answer("Which values does distributed.activation_checkpointing accept?")[0]
    assert lead.startswith("`distributed.activation_checkpointing` accepts `true`, `false`, `full` or `selective`")


def test_the_ask_that_comes_first_leads_among_facts():
    zh = answer("round_virtual_stages_to_pp_multiple 是干啥用的？能填啥？", "zh")
    assert zh[0].startswith("`distributed.pipeline.round_virtual_stages_to_pp_multiple`：使用虚拟 stage")
    assert zh[1].startswith("`distributed.pipeline.round_virtual_stages_to_pp_multiple` 可取 `up`、`down` 或 `null`")


def test_a_value_that_is_already_the_default_is_said_so():
    lines = answer("FSDP2 reduces gradients in bf16 by default, so I have to set reduce_dtype: float32 myself, right?")
    assert lines[0] == "No need: `distributed.mp_policy.reduce_dtype` already defaults to `float32`."
    assert not any(l.startswith("`distributed.mp_policy.reduce_dtype` defaults to") for l in lines)  # said once


def test_sizes_with_numbers_are_not_judged_as_values():
    assert not answer("With tp_size: 1 and ep_size 8, what does ignore_router_for_ac default to?")[0].startswith("No need")


def test_every_field_a_question_lists_gets_its_sentence():
    lines = answer("What do sequence_parallel, tp_plan, defer_fsdp_grad_sync and enable_compile do?")
    for i, key in enumerate(["sequence_parallel", "tp_plan", "defer_fsdp_grad_sync", "enable_compile"]):
        assert lines[i].startswith(f"`distributed.{key}`: ")
    assert any(l.startswith("`distributed.sequence_parallel`: It is an FSDP2-only key") for l in lines)  # names its field
    defaults = answer("What are the defaults of overlap_grad_reduce, overlap_param_gather and zero_dp_strategy?")
    # several defaults asked at once are one sentence, so the lead holds every one of them
    assert defaults[0] == ("`distributed.overlap_grad_reduce` defaults to `true`; `distributed.overlap_param_gather`"
                           " defaults to `true`; `distributed.zero_dp_strategy` defaults to `3`.")


@pytest.mark.parametrize("question,lang,lead", [
    # parse_distributed_section: an explicit null size falls back to the default (1), it does not fail
    ('I saw `pp_size: none` in a recipe. Isn\'t "none" just a string, won\'t that break?', "en",
     "Yes: `distributed.pp_size` accepts `none` (read as `1`) (it is also the default)."),
    ("tp_size 写 null 会报错吗", "zh", "可以：`distributed.tp_size` 接受 `null`（会被读成 `1`）（这也是默认值）。"),
])
def test_a_null_size_falls_back_to_its_default(question, lang, lead):
    assert answer(question, lang)[0] == lead


# ---- session 2 (facts2): every asked fact leads, what runs instead of a default, names in capitals

def facts(question: str, lang: str = "en"):
    from assistant.compose.knowledge.field_facts import field_facts

    return field_facts(T.mentioned(question), FieldQuestion(question), lang)


def test_defaults_of_two_fields_are_one_sentence():
    first = facts("pipeline 里的 patch_inner_model 和 patch_causal_lm_model 默认是啥？", "zh").answer[0]
    assert "patch_inner_model" in first and "patch_causal_lm_model" in first and "true" in first


def test_a_default_the_recipe_replaces_says_what_runs():
    first = facts("what are the defaults of pp_microbatch_size and pp_batch_size?").answer[0]
    assert re.search(r"pp_batch_size[^.]*\.\s.*local_batch_size", first)


@pytest.mark.parametrize("question,lang", [
    ("pipeline 块里的 pp_batch_size 需要我自己填吗？", "zh"),
    ("Where does pp_batch_size get its value at run time?", "en"),
])
def test_do_i_set_it_myself_is_answered_by_the_runtime_value(question, lang):
    first = facts(question, lang).answer[0]
    assert "local_batch_size" in first and re.search(r"no need|不用", first)


@pytest.mark.parametrize("question,lang,name,cls", [
    ("Does strategy: FSDP2 in capitals work, or does it have to be lowercase?", "en", "FSDP2", "FSDP2Config"),
    ("strategy 写成 Megatron_FSDP 这种大小写混着的，会不会报错？", "zh", "Megatron_FSDP", "MegatronFSDPConfig"),
])
def test_strategy_names_are_case_insensitive(question, lang, name, cls):
    first = facts(question, lang).answer[0]
    assert name in first and cls in first and re.match(r"Yes|可以", first)
    assert not re.search(r"No need|不需要", first)  # not read as "the default is already FSDP2"


def test_options_asked_with_take_list_the_dataclass_fields():
    first = facts("Besides activation checkpointing, what options does the ddp strategy take?").answer[0]
    assert "find_unused_parameters" in first and not first.startswith("Yes")


def test_a_part_no_other_ask_took_is_answered_too():
    # "X 默认是几？它能用 Y 吗？": the default of X, and the verdict on Y for the named strategy
    lines = facts("两个问题：megatron_fsdp 的 zero_dp_strategy 默认是几？它能用 activation_checkpointing: selective 吗？",
                  "zh").answer
    assert any("zero_dp_strategy" in l and "`3`" in l for l in lines)
    assert any(l.startswith("不行") and "selective" in l for l in lines)
    assert not any("activation_checkpointing` 默认" in l for l in lines)  # its default was not asked


@pytest.mark.parametrize("question,lang,line", [
    ("how do I turn on find_unused_parameters, and is it off by default?", "en",
     "Set `find_unused_parameters: true` under `distributed:` (a field of `DDPConfig`; default `false`)."),
    ("ddp 下怎么打开 static_graph？", "zh", "在 `distributed:` 下写 `static_graph: true`（`DDPConfig` 的字段，默认 `false`）。"),
])
def test_turning_a_switch_on_names_the_key_and_value(question, lang, line):
    assert facts(question, lang).answer[0] == line


def test_should_i_turn_it_off_is_advice_not_a_key_to_write():
    first = facts("what's ignore_router_for_ac and should I turn it off when I use activation checkpointing?").answer[0]
    assert "false" not in first.lower().split("default")[0]


def test_an_empty_block_is_answered_with_its_fields_defaults():
    # issue 18: "`distributed.moe` defaults to null" answered a question about the block's fields
    from assistant.compose.knowledge.field_facts import field_facts
    from assistant.validator.fields import field_table

    q = "What does an empty `moe: {}` default to?"
    lead = field_facts(field_table().mentioned(q), FieldQuestion(q), "en").answer[0]
    assert "MoEParallelizerConfig" in lead and not lead.startswith("`distributed.moe` defaults to")
    assert "`ignore_router_for_ac` (`true`)" in lead and "`wrap_outer_model` (`true`)" in lead
    assert "every other field defaults to `null`" in lead  # lm_head_precision, mp_policy
    q = "pipeline: {} 里什么都不写，默认用什么？"
    lead = field_facts(field_table().mentioned(q), FieldQuestion(q), "zh").answer[0]
    assert "`pp_schedule`（`1f1b`）" in lead and "`pp_microbatch_size`（`1`）" in lead


def test_a_config_class_name_lists_its_fields_with_defaults():
    from assistant.compose.knowledge.field_facts import field_facts
    from assistant.validator.fields import field_table

    q = "Which options does MegatronFSDPConfig take?"
    refs = field_table().mentioned(q)
    assert [r.key for r in refs] == ["megatron_fsdp"]
    lead = field_facts(refs, FieldQuestion(q), "en").answer[0]
    assert "`zero_dp_strategy` (`3`)" in lead and "`overlap_grad_reduce` (`true`)" in lead


def test_whether_a_block_is_needed_is_when_it_is_read():
    # "需不需要写 pipeline 块": the block's meaning (required when pp_size > 1), not its drop note
    assert "`pp_size > 1` 时必须提供" in answer("32 卡 pp 4，需不需要写 pipeline 块？", "zh")[0]


@pytest.mark.parametrize("question, lang, first", [
    # config/loader.py translate_value: "none" -> None, the same as YAML null
    ("Is there any difference between `dp_size: none` and `dp_size: null`?", "en",
     "No difference: `none` and `null` are both read as `null`"),
    ("dp_size 写 none 和写 null 有区别吗？", "zh", "没有区别：`none` 和 `null` 都会被读成 `null`"),
    # _normalize_activation_checkpointing: a quoted "on" is a value, read as true
    ('Is activation_checkpointing: "on" the same as true?', "en", "Yes, the same: `on` and `true` are both read as `true`"),
])
def test_two_values_compared_by_how_upstream_reads_them(question, lang, first):
    assert answer(question, lang)[0].startswith(first)


def test_a_rejected_value_leads_before_what_the_strategy_accepts():
    lines = answer("Can I set activation_checkpointing: partial with fsdp2?")
    assert lines[0].startswith("No: `distributed.activation_checkpointing` does not accept `partial`")


def test_what_value_a_strategy_uses_is_answered_with_the_value():
    q = "Which precision will fsdp2 use for the gradient reduce by default?"
    assert "reduce_dtype: float32" in answer(q)[0]
