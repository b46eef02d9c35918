"""suggested_fix: a passing config, near the input, for each kind of error that has one."""
from __future__ import annotations

import pytest
import yaml

from assistant.validator import validate

CASES = [
    # (input, world, what the fix must contain)
    ({"ep_size": 16}, 8, {"ep_size": 8}),
    ({"tp_size": 2, "ep_size": 3}, 8, {"ep_size": 4}),
    ({"pp_size": 2}, 8, {"pp_size": 2, "pipeline": {"pp_schedule": "1f1b", "pp_microbatch_size": 1}}),
    ({"pp_size": 2, "pipeline": {"pp_schedule": "looped_bfs"}}, 8, {"pipeline": {"pp_schedule": "loopedbfs"}}),
    ({"strategy": "megatron_fsdp", "sequence_parallel": True, "tp_size": 2}, 8, {"strategy": "fsdp2", "sequence_parallel": True}),
    ({"strategy": "megatron_fsdp", "sequence_parallel": False}, 8, {"strategy": "megatron_fsdp"}),
    ({"strategy": "ddp", "tp_size": 2}, 8, {"strategy": "fsdp2", "tp_size": 2}),
    ({"strategy": "megatron_fsdp", "dp_replicate_size": 2}, 16, {}),
    ({"dp_replicate_size": 3}, 8, {}),
    ({"tp_size": 8, "pp_size": 4, "pipeline": {}}, 48, {}),
    ({"tp_size": 2, "dp_size": 2}, 8, {}),
    ({"strategy": "fsdp3"}, 8, {"strategy": "fsdp2"}),
    ({"activation_checkpointing": "fulll"}, 8, {"activation_checkpointing": "full"}),
    ({"sequence_paralel": True}, 8, {"sequence_parallel": True}),
    ({"pp_size": 2, "pipeline": {"pp_microbatch": 2}}, 8, {"pipeline": {"pp_microbatch_size": 2}}),
]


def _contains(big, small) -> bool:
    if isinstance(small, dict):
        return isinstance(big, dict) and all(k in big and _contains(big[k], v) for k, v in small.items())
    return big == small


@pytest.mark.parametrize("cfg, world, expect", CASES, ids=[str(c[0]) for c in CASES])
def test_fix_is_valid_and_near(cfg, world, expect):
    r = validate(cfg, world_size=world)
    assert not r.ok
    assert r.suggested_fix, f"no fix for {cfg}"
    fixed = yaml.safe_load(r.suggested_fix)
    assert validate(r.suggested_fix, world_size=world).ok
    assert _contains(fixed, expect), r.suggested_fix


def test_world_divisible_fix_keeps_tp_inside_a_node():
    r = validate({"tp_size": 8, "pp_size": 4, "pipeline": {}}, world_size=48)
    fixed = yaml.safe_load(r.suggested_fix)
    assert 8 % fixed.get("tp_size", 1) == 0
    assert not validate(fixed, world_size=48).warnings


def test_recipe_fix_covers_batches_and_shows_recipe_sections():
    recipe = {"distributed": {"pp_size": 2, "pipeline": {"pp_microbatch_size": 1}},
              "step_scheduler": {"global_batch_size": 30, "local_batch_size": 1},
              "model": {"pretrained_model_name_or_path": "meta-llama/Llama-3.2-1B"}}
    r = validate(recipe, world_size=8)
    assert {"MW-E-PP-MICROBATCH-COUNT", "MW-E-BATCH-DIVISIBLE"} <= set(r.codes)
    fixed = yaml.safe_load(r.suggested_fix)
    assert set(fixed) == {"distributed", "step_scheduler"}
    assert validate({**recipe, **fixed}, world_size=8).ok


def test_no_fix_when_valid_or_hopeless():
    assert validate({"tp_size": 2}, world_size=8).suggested_fix is None
    assert validate([1, 2], world_size=8).suggested_fix is None
    many = {f"bogus_{i}": i for i in range(40)}
    assert validate(many, world_size=8).suggested_fix is None


def test_fix_can_be_switched_off():
    assert validate({"ep_size": 16}, world_size=8, suggest_fix=False).suggested_fix is None


@pytest.mark.parametrize("dist,lbs,seq,world,model", [
    ({"strategy": "fsdp2"}, 8, 8192, 8, "llama-3.1-8b"),  # micro-batch 8 of 8K tokens, no checkpointing
    ({"strategy": "fsdp2"}, 8, 32768, 8, "llama-3.1-8b"),  # needs two knobs together
    ({"strategy": "ddp"}, 1, 2048, 8, "llama-3.1-8b"),  # replicas of a full 8B: shard instead
])
def test_memory_errors_get_a_fix_that_fits(dist, lbs, seq, world, model):
    recipe = {"distributed": dist, "step_scheduler": {"global_batch_size": 64, "local_batch_size": lbs},
              "dataset": {"seq_len": seq}}
    report = validate(yaml.safe_dump(recipe), world_size=world, model=model, gpu="h100-80gb")
    assert "MW-E-MEMORY" in report.codes and not report.ok
    assert report.suggested_fix
    fixed = validate(report.suggested_fix, world_size=world, model=model, gpu="h100-80gb")
    assert fixed.ok and fixed.memory.total_gib <= fixed.memory.capacity_gib, fixed.codes


def test_a_model_too_big_for_any_single_edit_gets_no_fix():
    recipe = {"distributed": {"strategy": "fsdp2"}, "step_scheduler": {"global_batch_size": 64, "local_batch_size": 1}}
    report = validate(yaml.safe_dump(recipe), world_size=8, model="llama-3.1-405b", gpu="h100-80gb")
    assert "MW-E-MEMORY" in report.codes and report.suggested_fix is None  # 405B of fp32 state on 8 GPUs


def test_the_fix_is_searched_on_first_read_only(monkeypatch):
    from assistant.validator import fix

    calls = []
    real = fix.suggest
    monkeypatch.setattr(fix, "suggest", lambda *a, **k: calls.append(1) or real(*a, **k))
    r = validate({"ep_size": 16}, world_size=8)
    assert not r.ok and calls == []  # the verdict alone never pays for the search
    text = r.suggested_fix
    assert validate(text, world_size=8).ok and calls == [1]
    assert r.suggested_fix == text and calls == [1]  # computed once
    assert r.to_dict()["suggested_fix"] == text
    assert validate({"tp_size": 2}, world_size=8).suggested_fix is None and calls == [1]  # valid: no search
