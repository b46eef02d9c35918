"""The option values a request names, read from its prose (understand/wishes.py)."""
from __future__ import annotations

from assistant.understand.cues import read
from assistant.understand.understand import understand
from assistant.understand.wishes import mixed_precision


def test_dtypes_by_role_in_either_order():
    assert mixed_precision("I need fp16 params with fp32 gradient reduction") == {
        "param_dtype": "float16", "reduce_dtype": "float32"}
    assert mixed_precision("参数用 bf16，梯度归约用 float32，输出 bf16") == {
        "param_dtype": "bfloat16", "reduce_dtype": "float32", "output_dtype": "bfloat16"}
    assert mixed_precision("which strategy for 16 GPUs?") == {}


def test_reduce_dtype_named_with_the_other_spelling_and_a_verb_between():
    assert mixed_precision("mp_policy 想用 fp32 做梯度规约, bf16 参数, 怎么配?") == {
        "param_dtype": "bfloat16", "reduce_dtype": "float32"}


def test_the_reading_carries_the_wishes_in_order():
    q = understand("16 卡 tp 4 的配置怎么写？参数用 bf16，把 defer_fsdp_grad_sync 关掉")
    assert read(q).wished == (("mp_policy.param_dtype", "bfloat16"), ("defer_fsdp_grad_sync", False))
