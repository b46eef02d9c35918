"""A model's verdict on the sizes a sentence names, judged by the validator (gate/prose_verdicts.py)."""
from __future__ import annotations

import pytest

from assistant.compose.gate.check import complete_fragment
from assistant.compose.gate.prose_verdicts import disagreement, polarity
from assistant.datafile import dump_yaml
from assistant.validator import validate


def judge(sentence: str, world: int = 16, before: str = ""):
    check = lambda recipe: validate(dump_yaml(recipe, sort_keys=False), world_size=world, gpus_per_node=8)  # noqa: E731
    return disagreement(sentence, world, check, complete_fragment, (), before=before)


POLARITY = {  # sentence -> what it says of the layout (None: no verdict)
    "tp_size 8 with pp_size 3 works on 16 GPUs.": True, "That layout runs fine.": True,
    "tp 3 won't work here.": False, "tp_size 8 和 pp_size 3 在 16 卡上没问题。": True,
    "tp 3 在 8 卡上跑不起来。": False, "FSDP2 shards the parameters over dp.": None,
}


def test_polarity():
    assert {s: polarity(s) for s in POLARITY} == POLARITY


def test_a_verdict_the_validator_refutes_is_found_with_its_codes():
    d = judge("tp_size 8 with pp_size 3 works on 16 GPUs.")
    assert d is not None and d.positive and d.layout == "tp_size 8, pp_size 3" and d.reasons == "MW-E-WORLD-DIVISIBLE"
    d = judge("tp_size 8 and pp_size 2 will not work on 16 GPUs.")
    assert d is not None and not d.positive and d.reasons == ""
    d = judge("张量并行 tp 8、流水线 pp 3 在 16 卡上没问题。")
    assert d is not None and d.positive and "MW-E-WORLD-DIVISIBLE" in d.reasons


def test_a_verdict_the_validator_gives_or_no_layout_or_another_world_stands():
    assert judge("tp_size 8 with pp_size 2 works on 16 GPUs.") is None
    assert judge("tp 3 won't work on these GPUs.") is None  # 3 does not divide 16: the validator agrees
    assert judge("It works.") is None  # no sizes named, none before it
    assert judge("tp_size 8 with pp_size 3 works on 24 GPUs.") is None  # its own world, not the answer's
    # "that runs fine" after the sizes on the same line is about those sizes
    d = judge("that runs fine on your 16 GPUs.", before="Use fsdp2 with tp_size 8 and pp_size 3;")
    assert d is not None and d.layout == "tp_size 8, pp_size 3"


def judge_over(sentence: str, world: int, *bases: dict):
    check = lambda recipe: validate(dump_yaml(recipe, sort_keys=False), world_size=world, gpus_per_node=8)  # noqa: E731
    return disagreement(sentence, world, check, complete_fragment, bases)


# the user's layout on 8 GPUs: tp 2 x pp 2 resolves, but 2 // 2 = 1 microbatch < pp_size 2 fails at start-up
MICROBATCH = {"distributed": {"strategy": "fsdp2", "tp_size": 2, "pp_size": 2,
                              "pipeline": {"pp_schedule": "1f1b", "pp_microbatch_size": 2}},
              "step_scheduler": {"global_batch_size": 32, "local_batch_size": 2}}


def test_a_verdict_on_the_layout_that_holds_its_sizes_is_judged_on_that_layout():
    # "pp_size 2 ... fails" is about the user's layout (which holds pp_size 2), not a bare pp 2 that passes
    said = "不会卡住：启动时就会报错，local_batch_size 2 // pp_microbatch_size 2 = 1，少于 pp_size 2。"
    assert judge_over(said, 8, MICROBATCH) is None
    fix = {**MICROBATCH, "distributed": {**MICROBATCH["distributed"],
                                         "pipeline": {"pp_schedule": "1f1b", "pp_microbatch_size": 1}}}
    assert judge_over(said, 8, MICROBATCH, fix) is None  # beside its passing fix, which holds pp_size 2 too
    # the same layout called fine is still refuted, with its code
    d = judge_over("pp_size 2 这样没问题。", 8, MICROBATCH)
    assert d is not None and d.positive and "MW-E-PP-MICROBATCH-COUNT" in d.reasons
    # a layout that does not hold the sizes named leaves them to the bare completions, as before
    assert judge_over("pp_size 2 会报错。", 8, {"distributed": {"strategy": "fsdp2", "pp_size": 4}}) is not None


def test_a_size_compared_with_a_bound_states_a_rule_not_a_verdict():
    # tp_size 1 is the choice; "tp > 1 会报错" bounds a range and passes no verdict on tp_size 1
    said = "- tp_size 1：ep_size > 1 时 Qwen3 MoE 没有 TP plan，tp > 1 会报错（MW-E-TP-MOE-PLAN）。"
    assert judge_over(said, 128) is None
    assert judge_over("With tp_size 1 it fails once ep_size >= 2.", 16) is None
    assert judge_over("tp_size 1 会报错。", 128) is not None  # a verdict on the value itself is still judged


_EP16 = {"distributed": {"strategy": "fsdp2", "tp_size": 4, "pp_size": 2, "ep_size": 16}}  # fails at 16: ep 16 > 8
_PP4 = {"distributed": {"strategy": "fsdp2", "pp_size": 4}}


def _microbatch(n: int, local: int) -> dict:
    return {**MICROBATCH, "distributed": {**MICROBATCH["distributed"], "pipeline": {"pp_schedule": "1f1b",
                                                                                    "pp_microbatch_size": n}},
            "step_scheduler": {"global_batch_size": 32, "local_batch_size": local}}


@pytest.mark.parametrize("sentence,world,bases,dropped", [  # written after the fix, labels from the validator
    ("With ep_size 8 you need tp_size 1: tp_size >= 2 raises MW-E-TP-MOE-PLAN.", 16, (), False),
    ("pp_size 2 will fail here: 4 // 4 = 1 microbatch is fewer than pp_size 2.", 8, (_microbatch(4, 4), _microbatch(1, 4)), False),
    ("tp_size 2 and pp_size 2 runs fine on your 8 GPUs.", 8, (_microbatch(2, 2),), True),
    ("你的 tp_size 4、pp_size 2 在 16 卡上会报错：ep_size 16 不能整除 dp × cp × tp = 8。", 16, (_EP16,), False),
    ("tp_size 2 fails on 8 GPUs.", 8, (_PP4,), True),
    ("ep_size 16 doesn't work because dp*cp*tp = 8.", 8, (), False),
    ("pp 大于 1 时 tp_size 4 仍然可行。", 8, (), False),
    ("tp_size 4 和 pp_size 2 在 16 卡上没问题。", 16, (_EP16,), True),
])
def test_fresh_model_sentences(sentence, world, bases, dropped):
    assert (judge_over(sentence, world, *bases) is not None) == dropped
