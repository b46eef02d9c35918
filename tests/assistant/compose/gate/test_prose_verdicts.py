"""A model's verdict on the sizes a sentence names, judged by the validator (gate/prose_verdicts.py)."""
from __future__ import annotations

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
