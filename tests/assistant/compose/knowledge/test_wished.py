"""The option values a config request names are read as data (no engine needed)."""
from __future__ import annotations

from assistant.compose.knowledge.wished import wished_options, with_options
from assistant.understand.understand import understand


def test_a_bool_field_turned_off_by_name_or_by_it():
    q = understand("Is sequence_parallel on by default? Write me a config for 16 GPUs, tp 4, with it disabled")
    assert wished_options(q)["sequence_parallel"] is False
    q = understand("16 卡 tp 4 的配置怎么写？把 defer_fsdp_grad_sync 关掉")
    assert wished_options(q) == {"defer_fsdp_grad_sync": False}
    q = understand("What does defer_fsdp_grad_sync do?")
    assert wished_options(q) == {}


def test_activation_checkpointing_wished_and_written_without_overriding_the_user():
    q = understand("4 张 3090，不开 TP，激活检查点要打开，yaml 怎么写")
    assert wished_options(q) == {"activation_checkpointing": True}
    recipe = {"distributed": {"strategy": "fsdp2", "activation_checkpointing": "selective"}}
    out = with_options(recipe, {"activation_checkpointing": True, "mp_policy.param_dtype": "bfloat16"})
    assert out["distributed"] == {"strategy": "fsdp2", "activation_checkpointing": "selective",
                                  "mp_policy": {"param_dtype": "bfloat16"}}
    assert recipe["distributed"] == {"strategy": "fsdp2", "activation_checkpointing": "selective"}


def test_asking_whether_it_is_off_by_default_wishes_nothing():
    # facts2 session 2: "turn on X, and is it off by default?" was written into the config as X: false
    q = understand("With strategy ddp, how do I turn on find_unused_parameters, and is it off by default?")
    assert wished_options(q) == {"find_unused_parameters": True}
