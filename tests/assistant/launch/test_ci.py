"""The overrides upstream's CI applies (config_resolver.py layers; ci.local_batch_size / ci.ep_size)."""
from __future__ import annotations

from assistant.launch import apply_overrides
from assistant.launch.ci import ci_overrides


def test_layers_in_order_env_layer_last():
    recipe = {"ci": {"nodes": 2, "ep_size": "8", "local_batch_size": 2,
                     "nightly": {"distributed.ep_size": 4, "distributed.pp_size": 2, "step_scheduler.max_steps": 4}},
              "distributed": {"ep_size": 32, "pp_size": 4}, "step_scheduler": {"local_batch_size": 8, "max_steps": 100}}
    got = ci_overrides(recipe)
    paths = [o.path for o in got]
    assert paths[:3] == ["step_scheduler.max_steps", "step_scheduler.ckpt_every_steps", "step_scheduler.val_every_steps"]
    out = apply_overrides(recipe, got)
    assert out["distributed"] == {"ep_size": 8, "pp_size": 2}  # EP_SIZE comes after ci.nightly, coerced to int
    assert out["step_scheduler"]["local_batch_size"] == 2 and out["step_scheduler"]["max_steps"] == 4
    assert any("EP_SIZE" in o.argument for o in got)


def test_no_ci_section_no_overrides():
    assert ci_overrides({"distributed": {}}) == ()
