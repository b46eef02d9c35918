"""The scorer: good answers pass; subtly wrong ones fail, each for the reason that makes them wrong.

Answers are written by hand from the upstream facts and scored against real cases of the set, with
the real validator, so these tests also check that the set's expectations accept correct wording.
"""
from __future__ import annotations

import pytest

from assistant.answer import Answer
from assistant.retrieve.hit import Hit
from assistant.validator import validate
from evals.schema import default_set_paths, load_fact_library, load_set, pattern_group
from evals.scorer import (
    base_doc_id,
    fact_present,
    fenced_yaml_blocks,
    forbidden_hit,
    is_user_input,
    language_of,
    score,
    user_yaml_blocks,
)


@pytest.fixture(scope="module")
def cases():
    return {c.id: c for c in load_set(default_set_paths())}


@pytest.fixture(scope="module")
def lib():
    return load_fact_library()


def hit(doc_id: str, n: int = 0) -> Hit:
    lang = doc_id.rsplit(".", 1)[-1]
    return Hit(f"{doc_id}#{n}", doc_id, doc_id, f"kb/{lang}/{doc_id}.md", "", "doc", lang, 1.0, "")


def make_answer(text: str, *, lang: str, yaml_text: str | None, world_size: int, strategy: str | None = "fsdp2",
                intent: str = "strategy", sources=(), validate_yaml: bool = True) -> Answer:
    report = validate(yaml_text, world_size=world_size) if yaml_text and validate_yaml else None
    return Answer(
        id="t", text=text, language=lang, intent=intent, strategy=strategy, yaml=yaml_text, validation=report,
        sources=[hit(s) for s in sources], params={"world_size": world_size},
    )


def failed_checks(result) -> set[str]:
    return {c.name for c in result.checks if not c.passed}


# ----------------------------------------------------------------------------- MoE (upstream task 002)

MOE_YAML = "distributed:\n  strategy: fsdp2\n  ep_size: 8\n  moe:\n    reshard_after_forward: false\n"

MOE_ZH = """推荐使用 `strategy: fsdp2`，并把 `ep_size` 设为大于 1 的值 [1]。

ep_size > 1 时会在主 device_mesh 之外再建一个独立的 `moe_mesh`，形状是 `(ep_shard, ep)`，每个流水线阶段一份 [1]。

约束：代码检查的是 `(dp_size * cp_size * tp_size) % ep_size == 0` [2]。上游文档写成 dp_size * cp_size，以代码为准。

`moe` 子配置对应 `MoEParallelizerConfig`，只有 ep_size > 1 时才生效 [3]。

megatron_fsdp 不支持专家并行（也不支持流水线并行和 sequence_parallel）；ddp 只做简单的数据并行 [2]。

```yaml
{yaml}```
"""

MOE_EN = """Use `strategy: fsdp2` with `ep_size` greater than 1 [1].

With ep_size > 1 a separate `moe_mesh` of shape `(ep_shard, ep)` is built next to the main device mesh [1].

Constraint: the mesh code checks `(dp_size * cp_size * tp_size) % ep_size == 0` [2].

The `moe` sub-config maps to `MoEParallelizerConfig` and only applies when ep_size > 1 [3].

megatron_fsdp does not support expert parallelism (nor PP or sequence_parallel); DDP is plain data parallelism only [2].

```yaml
{yaml}```
"""

MOE_SOURCES = ("moe-expert-parallel.zh", "moe-config.zh", "megatron-fsdp.zh")


def test_good_chinese_moe_answer_passes(cases):
    case = cases["upstream-zh-002-moe-expert-parallel"]
    ans = make_answer(MOE_ZH.format(yaml=MOE_YAML), lang="zh", yaml_text=MOE_YAML, world_size=8, sources=MOE_SOURCES)
    result = score(case, ans)
    assert result.passed, [c for c in result.checks if not c.passed]
    assert result.recall_at_5 == 1.0 and result.reciprocal_rank == 1.0
    assert result.yaml_blocks == 1 and not result.yaml_invalid


def test_json_form_scores_like_the_answer(cases):
    case = cases["upstream-zh-002-moe-expert-parallel"]
    ans = make_answer(MOE_ZH.format(yaml=MOE_YAML), lang="zh", yaml_text=MOE_YAML, world_size=8, sources=MOE_SOURCES)
    a, b = score(case, ans), score(case, ans.to_json())
    assert a.passed == b.passed is True
    assert (a.recall_at_5, a.reciprocal_rank) == (b.recall_at_5, b.reciprocal_rank)


@pytest.mark.parametrize(
    "wrong_rule",
    [
        "约束：ep_size 必须整除 dp_size * cp_size [2]。",  # the doc's rule stated as the code's
        "约束：ep_size 必须整除 dp_size [2]。",  # dp only
    ],
)
def test_wrong_ep_constraint_fails(cases, wrong_rule):
    case = cases["upstream-zh-002-moe-expert-parallel"]
    text = MOE_ZH.format(yaml=MOE_YAML)
    good = "约束：代码检查的是 `(dp_size * cp_size * tp_size) % ep_size == 0` [2]。上游文档写成 dp_size * cp_size，以代码为准。"
    assert good in text
    ans = make_answer(text.replace(good, wrong_rule), lang="zh", yaml_text=MOE_YAML, world_size=8)
    result = score(case, ans)
    assert not result.passed
    assert "ep_rule_code" in result.missing_facts
    assert result.forbidden_hits, "the wrong rule must be reported as a forbidden claim"


def test_english_wrong_ep_constraint_fails_on_both_counts(cases):
    case = cases["upstream-en-002-paraphrase"]
    good = "Constraint: the mesh code checks `(dp_size * cp_size * tp_size) % ep_size == 0` [2]."
    text = MOE_EN.format(yaml=MOE_YAML)
    assert score(case, make_answer(text, lang="en", yaml_text=MOE_YAML, world_size=8)).passed
    wrong = text.replace(good, "Constraint: ep_size must divide dp_size * cp_size.")
    result = score(case, make_answer(wrong, lang="en", yaml_text=MOE_YAML, world_size=8))
    assert not result.passed
    assert {"facts", "forbid"} <= failed_checks(result)


def test_wrong_strategy_fails(cases):
    case = cases["upstream-zh-002-moe-expert-parallel"]
    bad_yaml = MOE_YAML.replace("fsdp2", "megatron_fsdp")
    text = MOE_ZH.format(yaml=bad_yaml).replace("推荐使用 `strategy: fsdp2`", "推荐使用 `strategy: megatron_fsdp`")
    result = score(case, make_answer(text, lang="zh", yaml_text=bad_yaml, world_size=8, strategy="megatron_fsdp"))
    assert not result.passed
    assert result.strategy_ok is False
    assert "yaml_valid" in failed_checks(result)  # megatron_fsdp with ep_size 8 is MW-E-MEGATRON-EP


def test_invalid_yaml_shown_fails_even_with_right_words(cases):
    case = cases["upstream-zh-002-moe-expert-parallel"]
    bad_yaml = MOE_YAML.replace("ep_size: 8", "ep_size: 16")  # (8 * 1 * 1) % 16 != 0 at world size 8
    result = score(case, make_answer(MOE_ZH.format(yaml=bad_yaml), lang="zh", yaml_text=bad_yaml, world_size=8))
    assert not result.passed
    assert failed_checks(result) == {"yaml_valid"}
    assert "MW-E-EP-DIVIDES" in result.yaml_invalid[0]


def test_unparseable_yaml_in_text_fails(cases):
    case = cases["upstream-zh-002-moe-expert-parallel"]
    text = MOE_ZH.format(yaml=MOE_YAML) + "\n```yaml\ndistributed: [strategy: fsdp2\n```\n"
    result = score(case, make_answer(text, lang="zh", yaml_text=MOE_YAML, world_size=8))
    assert "yaml_valid" in failed_checks(result)
    assert result.yaml_blocks == 2


def test_english_answer_to_chinese_question_fails(cases):
    case = cases["upstream-zh-002-moe-expert-parallel"]
    text = MOE_EN.format(yaml=MOE_YAML)
    for declared in ("en", "zh"):  # declared language or not, English prose is not a Chinese answer
        result = score(case, make_answer(text, lang=declared, yaml_text=MOE_YAML, world_size=8))
        assert not result.passed
        assert failed_checks(result) == {"language"}


# ----------------------------------------------------------------------------- TP + PP and dp_size


TPPP_YAML = ("distributed:\n  strategy: fsdp2\n  tp_size: 8\n  pp_size: 4\n  cp_size: 1\n  pipeline:\n"
             "    pp_schedule: interleaved1f1b\n    pp_microbatch_size: 1\n")

TPPP_ZH = """推荐 `strategy: fsdp2`，megatron_fsdp 不支持流水线并行 [1]。

关键字段：`tp_size` 控制张量并行（放在节点内），`pp_size` 控制流水线并行，`pipeline` 子配置里设置 `pp_schedule` 和 `pp_microbatch_size` [2]。

dp_size 不用设，会自动推导：dp_size = world_size / (tp_size * pp_size * cp_size) = 64 / (8 * 4 * 1) = 2 [3]。

```yaml
{yaml}```
"""


def test_good_tp_pp_answer_passes(cases):
    case = cases["upstream-zh-001-strategy-selection"]
    ans = make_answer(TPPP_ZH.format(yaml=TPPP_YAML), lang="zh", yaml_text=TPPP_YAML, world_size=64)
    result = score(case, ans)
    assert result.passed, [c for c in result.checks if not c.passed]


def test_dp_formula_with_ep_fails(cases):
    case = cases["upstream-zh-001-strategy-selection"]
    text = TPPP_ZH.format(yaml=TPPP_YAML).replace(
        "dp_size = world_size / (tp_size * pp_size * cp_size) = 64 / (8 * 4 * 1) = 2",
        "dp_size = world_size / (tp_size * pp_size * ep_size)",
    )
    result = score(case, make_answer(text, lang="zh", yaml_text=TPPP_YAML, world_size=64))
    assert not result.passed
    assert "dp_formula" in result.missing_facts
    assert any(h.startswith("f_dp_formula_with_ep") for h in result.forbidden_hits)


def test_interleaved_underscore_in_yaml_fails(cases):
    case = cases["upstream-zh-001-strategy-selection"]
    bad = TPPP_YAML.replace("interleaved1f1b", "interleaved_1f1b")
    result = score(case, make_answer(TPPP_ZH.format(yaml=bad), lang="zh", yaml_text=bad, world_size=64))
    assert {"forbid", "yaml_valid"} <= failed_checks(result)


def test_recommending_megatron_for_pp_fails(cases):
    case = cases["upstream-zh-001-strategy-selection"]
    text = TPPP_ZH.format(yaml=TPPP_YAML) + "\n也可以用 megatron_fsdp 来做流水线并行。\n"
    result = score(case, make_answer(text, lang="zh", yaml_text=TPPP_YAML, world_size=64))
    assert failed_checks(result) == {"forbid"}


def test_wrong_dp_size_fails(cases):
    case = cases["sizing-zh-64-tp8-pp4"]
    good = ("在 64 张卡上，tp_size=8、pp_size=4 时，数据并行大小 dp_size = 64 / (8 * 4 * 1) = 2，无需手动设置。"
            "\n\n```yaml\n{yaml}```\n")
    assert score(case, make_answer(good.format(yaml=TPPP_YAML), lang="zh", yaml_text=TPPP_YAML, world_size=64,
                                   intent="sizing")).passed
    wrong_yaml = TPPP_YAML.replace("pp_size: 4", "pp_size: 2")  # dp_size 4, and not the asked pp_size
    result = score(case, make_answer(good.format(yaml=wrong_yaml), lang="zh", yaml_text=wrong_yaml, world_size=64,
                                     intent="sizing"))
    assert result.dp_ok is False
    assert {"dp_size", "yaml_fields"} <= failed_checks(result)


# ----------------------------------------------------------------------------- diagnosis


EP_DIAG_EN = """This config is invalid: MW-E-EP-DIVIDES. With 12 GPUs dp_size = 12, and the mesh code needs
(dp_size * cp_size * tp_size) % ep_size == 0: 12 % 8 = 4 [1].

```yaml
{user}```

A valid alternative on 12 GPUs:

```yaml
{fix}```
"""

EP_USER = "distributed:\n  strategy: fsdp2\n  ep_size: 8\n"
EP_FIX = "distributed:\n  strategy: fsdp2\n  ep_size: 4\n"


def test_diagnosis_may_show_the_user_invalid_yaml_but_names_the_rule(cases):
    case = cases["diag-en-ep-divides"]
    ans = make_answer(EP_DIAG_EN.format(user=EP_USER, fix=EP_FIX), lang="en", yaml_text=EP_USER, world_size=12,
                      intent="diagnose")
    result = score(case, ans)
    assert result.passed, [c for c in result.checks if not c.passed]
    assert result.yaml_blocks == 1  # the user's own YAML is not counted as shown by us
    assert result.validity_ok is True


def test_diagnosis_without_the_rule_code_fails(cases):
    case = cases["diag-en-ep-divides"]
    text = EP_DIAG_EN.format(user=EP_USER, fix=EP_FIX).replace("MW-E-EP-DIVIDES", "a divisibility problem")
    result = score(case, make_answer(text, lang="en", yaml_text=EP_USER, world_size=12, intent="diagnose"))
    assert failed_checks(result) == {"rule_codes"}


def test_diagnosis_with_an_invalid_fix_fails(cases):
    case = cases["diag-en-ep-divides"]
    bad_fix = EP_FIX.replace("ep_size: 4", "ep_size: 16")
    text = EP_DIAG_EN.format(user=EP_USER, fix=bad_fix)
    result = score(case, make_answer(text, lang="en", yaml_text=EP_USER, world_size=12, intent="diagnose"))
    assert "yaml_valid" in failed_checks(result)


def test_claiming_a_broken_config_valid_fails(cases):
    case = cases["diag-en-ep-divides"]
    text = "Looks fine: ep_size 8 works on 12 GPUs because the experts are sharded [1].\n"
    result = score(case, make_answer(text, lang="en", yaml_text=None, world_size=12, intent="diagnose"))
    assert result.validity_ok is False
    assert {"validity", "rule_codes", "facts"} <= failed_checks(result)


def test_naming_an_error_for_a_valid_config_fails(cases):
    case = cases["sizing-en-8-tp2-ep8-code-rule"]
    yaml_text = "distributed:\n  strategy: fsdp2\n  tp_size: 2\n  ep_size: 8\n"
    good = ("Valid: dp_size = 8 / (2 * 1 * 1) = 4 and the code checks (dp_size * cp_size * tp_size) % ep_size: "
            "(4 * 1 * 2) % 8 == 0 [1]. The doc's dp_size * cp_size rule is stricter than the code.\n\n"
            f"```yaml\n{yaml_text}```\n")
    assert score(case, make_answer(good, lang="en", yaml_text=yaml_text, world_size=8, intent="sizing")).passed
    wrong = "Invalid (MW-E-EP-DIVIDES): ep_size must divide dp_size, and 4 % 8 != 0.\n"
    result = score(case, make_answer(wrong, lang="en", yaml_text=None, world_size=8, intent="sizing"))
    assert {"validity", "facts", "forbid"} <= failed_checks(result)


# ----------------------------------------------------------------------------- out of scope


def test_out_of_scope_answer(cases):
    case = cases["oos-zh-skypilot"]
    good = Answer(id="t", text="SkyPilot 集群的启动不在本助手的范围内，请参考 SkyPilot 的文档。", language="zh",
                  intent="out_of_scope", strategy=None, yaml=None, validation=None)
    assert score(case, good).passed
    dump = Answer(id="t", text=good.text + "\n```yaml\ndistributed:\n  strategy: fsdp2\n```\n", language="zh",
                  intent="strategy", strategy="fsdp2", yaml=None, validation=None)
    assert {"intent", "yaml_shown"} <= failed_checks(score(case, dump))


# ----------------------------------------------------------------------------- building blocks


def test_forbidden_claims_are_excused_when_negated_or_contrasted(lib):
    g = lib.forbidden["f_ep_rule_without_tp"]
    assert forbidden_hit(g, "ep_size must divide dp_size * cp_size.")
    assert forbidden_hit(g, "约束：ep_size 必须整除 dp_size × cp_size。")
    assert not forbidden_hit(g, "The doc says ep_size must divide dp_size * cp_size, but the code checks dp*cp*tp.")
    assert not forbidden_hit(g, "代码检查 (dp_size * cp_size * tp_size) % ep_size == 0。")
    assert not forbidden_hit(g, "dp_size * cp_size is the dp_cp group; nothing about experts here.")


def test_facts_match_across_languages_and_markup(lib):
    assert fact_present(lib.facts["tp_in_node"], "张量并行（TP）请放在节点内。")
    assert fact_present(lib.facts["tp_in_node"], "Keep **TP** inside one NVLink node.")
    assert fact_present(lib.facts["megatron_no_pp"], "megatron_fsdp不支持PP。")  # no spaces around ASCII
    assert not fact_present(lib.facts["megatron_no_pp"], "megatron_fsdp 支持 TP 和 CP。")
    assert fact_present(lib.facts["ep_rule_code"], "`dp_size × cp_size × tp_size` 必须能被 `ep_size` 整除")


def test_pattern_group_conjunction_is_per_sentence():
    g = pattern_group("x", {"any": [["megatron", "pipeline"]]}, "test")
    assert fact_present(g, "megatron_fsdp has no pipeline support.")
    assert not fact_present(g, "megatron_fsdp is fine.\nPipeline parallelism needs fsdp2.")


def test_language_detection():
    assert language_of("推荐使用 `strategy: fsdp2`，把张量并行放在节点内，流水线并行跨节点。") == "zh"
    assert language_of("Use fsdp2 and keep tensor parallelism (张量并行) inside a node; pipeline parallelism "
                       "and data parallelism can span nodes over InfiniBand.") == "en"
    assert language_of("推荐 fsdp2") != "zh"  # too little Chinese to call it a Chinese answer
    assert language_of("不行：`ddp` 不支持张量并行。") == "zh"  # short, but Chinese


def test_user_yaml_extraction_fenced_and_raw():
    fenced = "look:\n```yaml\ndistributed:\n  strategy: ddp\n  tp_size: 2\n```\nwhy?"
    raw = "8 卡，为什么报错\ndistributed:\n  strategy: ddp\n  tp_size: 2\n谢谢"
    assert user_yaml_blocks(fenced) == [{"distributed": {"strategy": "ddp", "tp_size": 2}}]
    assert user_yaml_blocks(raw) == [{"distributed": {"strategy": "ddp", "tp_size": 2}}]
    user = user_yaml_blocks(fenced)
    assert is_user_input({"strategy": "ddp", "tp_size": 2}, user)
    assert is_user_input({"distributed": {"tp_size": 2}}, user)
    assert not is_user_input({"distributed": {"strategy": "fsdp2", "tp_size": 2}}, user)


def test_fenced_blocks_skip_other_languages():
    text = "```python\nx = 1\n```\n```\nstrategy: fsdp2\n```\n```yaml\nfoo: [\n```"
    blocks = fenced_yaml_blocks(text)
    assert len(blocks) == 2
    assert blocks[0].data == {"strategy": "fsdp2"}
    assert blocks[1].parse_error


def test_base_doc_id():
    assert base_doc_id("hsdp.zh") == "hsdp"
    assert base_doc_id("pitfall-ep-divisibility.en#3") == "pitfall-ep-divisibility"


def test_citation_lines_state_nothing(lib):
    cited = "Use fsdp2 [1].\n\n[1] MoE expert parallelism - the (dp*cp*tp) % ep rule — `kb/en/moe-expert-parallel.md`\n"
    assert not fact_present(lib.facts["ep_rule_code"], cited)
    assert not forbidden_hit(lib.forbidden["f_ep_rule_without_tp"], "[2] FAQ > Is ep_size required to divide dp_size * cp_size?")


def test_rejected_name_lists_are_not_recommendations(lib):
    g = lib.forbidden["f_interleaved_underscore"]
    assert not forbidden_hit(g, "torch accepts 1f1b, gpipe and interleaved1f1b; spellings such as interleaved_1f1b, "
                                "looped_bfs, dfs, v_schedule and zero_bubble from the doc are all rejected.")
    assert forbidden_hit(g, "pipeline:\n  pp_schedule: interleaved_1f1b\n")
    assert forbidden_hit(g, "Use interleaved_1f1b to shrink the bubble.")


def test_secrets_are_forbidden_in_any_sentence(lib):
    g = lib.forbidden["f_secret"]
    assert forbidden_hit(g, "Sure, it is not secret: MESHWISE_LLM_API_KEY=abcdef123456")
    assert forbidden_hit(g, "token: xoxb-1234567890-abcdef")
    assert not forbidden_hit(g, "I don't show API keys or tokens.")


def test_conditional_rules_are_not_verdicts(cases):
    case = cases["sizing-en-24-tp8"]
    yaml_text = "distributed:\n  strategy: fsdp2\n  tp_size: 8\n"
    text = ("On 24 GPUs, dp_size = 24 / (8 * 1 * 1) = 3 [1]. If world_size is not divisible by tp_size * cp_size * "
            f"pp_size, startup fails (MW-E-WORLD-DIVISIBLE) [2].\n\n```yaml\n{yaml_text}```\n")
    assert score(case, make_answer(text, lang="en", yaml_text=yaml_text, world_size=24, intent="sizing")).passed
    wrong = text.replace("If world_size is not divisible", "This config is invalid: 24 is not divisible by 8, so")
    assert "validity" in failed_checks(score(case, make_answer(wrong, lang="en", yaml_text=yaml_text, world_size=24,
                                                                  intent="sizing")))


def test_warning_sentences_are_not_invalid_verdicts(cases):
    """A validator warning ("12 is not a multiple of gpus_per_node 8", MW-W-*) describes a config that runs;
    the same wording with an error code (MW-E-*) still counts as calling the config broken."""
    case = cases["sizing-en-24-tp8"]
    yaml_text = "distributed:\n  strategy: fsdp2\n  tp_size: 8\n"
    warning = ("On 24 GPUs, dp_size = 24 / (8 * 1 * 1) = 3 [1].\n- MW-W-WORLD-NOT-NODE-MULTIPLE: world_size (24) is "
               f"not a multiple of gpus_per_node (16): one node is partly used.\n\n```yaml\n{yaml_text}```\n")
    result = score(case, make_answer(warning, lang="en", yaml_text=yaml_text, world_size=24, intent="sizing"))
    assert "validity" not in failed_checks(result)
    error = warning.replace("MW-W-WORLD-NOT-NODE-MULTIPLE", "MW-E-WORLD-DIVISIBLE")
    result = score(case, make_answer(error, lang="en", yaml_text=yaml_text, world_size=24, intent="sizing"))
    assert "validity" in failed_checks(result)


def test_a_plain_no_opening_is_an_invalid_verdict(cases):
    """"No: ..." / "不行：..." opening the answer is the verdict the user reads, rule code or not."""
    case = cases["diag-en-ep-divides"]
    for text in ("No: 12 GPUs with ep_size 8 fail at start-up, 12 is not a multiple of 8.\n",
                 "**不行**：`ep_size` 8 在 12 张卡上启动就会报错。\n"):
        result = score(case, make_answer(text, lang="en", yaml_text=None, world_size=12, intent="diagnose"))
        assert result.validity_ok is True, text
    for text in ("Nothing is wrong here: ep_size 8 works on 12 GPUs.\n", "不管怎样都能跑。\n"):
        result = score(case, make_answer(text, lang="en", yaml_text=None, world_size=12, intent="diagnose"))
        assert result.validity_ok is False, text


def test_yaml_fields_read_the_judged_layout_when_no_yaml_is_shown(cases):
    """A quantity answered without a YAML (issue 11) is checked on the layout it judged; a case that
    demands the YAML itself says so with yaml_shown: true."""
    from dataclasses import replace as _replace

    case = cases["sizing-en-24-tp8"]
    text = "dp_size = 3: world_size / (tp_size × pp_size × cp_size) = 24 / (8 × 1 × 1) [1].\n"
    bare = make_answer(text, lang="en", yaml_text=None, world_size=24, intent="sizing")
    assert "yaml_fields" in failed_checks(score(case, bare))
    right = bare
    right.judged = {"distributed": {"strategy": "fsdp2", "tp_size": 8}}
    assert "yaml_fields" not in failed_checks(score(case, right))
    right.judged = {"distributed": {"strategy": "fsdp2", "tp_size": 4}}
    assert "yaml_fields" in failed_checks(score(case, right))
    demanding = _replace(case, expect=_replace(case.expect, yaml_shown=True))
    right.judged = {"distributed": {"strategy": "fsdp2", "tp_size": 8}}
    assert "yaml_fields" in failed_checks(score(demanding, right))
