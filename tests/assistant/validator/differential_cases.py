"""Random distributed sections, biased towards the corners where upstream's behaviour is subtle."""
from __future__ import annotations

import random

import yaml

SIZE_VALUES = [None, 1, 2, 3, 4, 8, 16, 0, -1, -2, True, False, 2.0, 1.5, float("nan"), float("inf"),
               "2", "4", "none", "None", "null", "abc", "", "2.0", "[2]", "{}", "true", [2], {"a": 1}, 64, 32, 6, 12]
STRATEGIES = ["fsdp2", "FSDP2", "megatron_fsdp", "megatron-fsdp", "mfsdp", "MFSDP", "ddp", "DDP", "fsdp", "zero3",
              None, 5, True, "", "none", ["fsdp2"]]
AC_VALUES = [True, False, None, "full", "selective", "Selective", "on", "off", "yes", "no", "enabled", "disabled",
             "none", "true", "False", "FULL", "partial", 1, 0, 1.0, [], {}, "full-ish", "sel-ective"]
SCOPES = ["all", "language", "vision,audio", "all,vision", "bogus", ["language", "vision"], ["language", 3], 5,
          None, "default", "auto+vision", "", "Language-Vision"]
PIPELINES = [None, {}, {"pp_schedule": "1f1b"}, {"pp_schedule": "interleaved1f1b", "pp_microbatch_size": 2},
             {"pp_schedule": "interleaved_1f1b"}, {"pp_schedule": None}, {"pp_schedule": 5},
             {"pp_microbatch_size": 1, "layers_per_stage": 2, "round_virtual_stages_to_pp_multiple": "up"},
             {"bogus": 1}, {"dtype": "bf16"}, {"dtype": "bfloat17"}, {"dtype": 5}, {"pp_schedule": "GPipe"},
             5, "abc", "", [], [1, 2], True, {"pp_batch_size": 4, "scale_grads_in_schedule": False}]
MOES = [None, {}, {"reshard_after_forward": False}, {"ignore_router_for_ac": False, "wrap_outer_model": True},
        {"bogus": 1}, 5, "abc", "", "mp_policy", [], [1], False, 0, {"lm_head_precision": "float32"},
        {"mp_policy": {"_target_": "torch.distributed.fsdp.MixedPrecisionPolicy", "param_dtype": "bf16"}},
        {"mp_policy": {"_target_": "torch.distributed.fsdp.MixedPrecisionPolicy", "param_dtype": "bf17"}},
        {"mp_policy": {"_target_": "torch.distributed.fsdp.MixedPrecisionPolicy", "bogus": 1}},
        {"mp_policy": {"param_dtype": "bf17"}}]
EXTRA = {
    "sequence_parallel": [True, False, None, "false"],
    "defer_fsdp_grad_sync": [True, False],
    "tp_plan": [None, {}],
    "zero_dp_strategy": [3, 2],
    "overlap_grad_reduce": [True],
    "find_unused_parameters": [True, False],
    "bucket_cap_mb": [25, None],
    "broadcast_buffers": [False],
    "enable_compile": [False],
    "autocast_dtype": ["bfloat16", "bf16", "float32", "fp8", None, 5],
    "mp_policy": [None, {"param_dtype": "bfloat16", "reduce_dtype": "float32"}, {"param_dtype": "bogus"},
                  {"_target_": "torch.distributed.fsdp.MixedPrecisionPolicy", "output_dtype": "float32"},
                  {"bogus": 1}, "bf16"],
    "offload_policy": [None, {}, {"pin_memory": False}, {"bogus": 1},
                       {"_target_": "torch.distributed.fsdp.CPUOffloadPolicy"}],
    "multimodal": [None, {}, {"frozen_sharding": "per_layer"}, {"frozen_sharding": "bogus"},
                   {"frozen_sharding": 5}, {"vision": {"frame_sharding": {"enabled": True, "mesh_dims": ["cp"]}}},
                   {"vision": {"frame_sharding": {"enabled": "yes"}}}, {"vision": None}, {"vision": {}},
                   {"vision": {"frame_sharding": None}}, {"bogus": 1},
                   {"vision": {"frame_sharding": {"min_tokens": -1}}}, {"vision": {"frame_sharding": {"cost_alpha": "auto"}}},
                   {"vision": {"frame_sharding": {"mesh_dims": ["tp"]}}}, "root"],
    "activation_checkpointing_scope": SCOPES,
    "_target_": ["nemo_automodel.components.distributed.fsdp2.FSDP2Manager"],
    "bogus_option": [1],
    "sequence_paralel": [True],
}
SIZE_KEYS = ["tp_size", "pp_size", "cp_size", "ep_size", "dp_size", "dp_replicate_size"]
WORLDS = [1, 2, 4, 8, 16, 24, 32, 48, 64]


def _size(rng: random.Random, world: int, calm: bool):
    r = rng.random()
    if calm or r < 0.55:  # mostly plausible sizes, so the mesh arithmetic gets exercised
        return rng.choice([1, 1, 1, 2, 2, 4, 8, None, "none", world, 3, 16])
    return rng.choice(SIZE_VALUES)


def random_distributed(rng: random.Random, world: int):
    # half the cases stay plausible so the accept side is well covered; the rest go hostile
    calm = rng.random() < 0.5
    if not calm and rng.random() < 0.05:
        return rng.choice([None, 5, "abc", "", [], [["tp_size", 2]], "{'tp_size': 2}", [1, 2], True])
    d: dict = {}
    if rng.random() < 0.85:
        d["strategy"] = rng.choice(STRATEGIES) if not calm and rng.random() < 0.3 else rng.choice(
            ["fsdp2", "fsdp2", "fsdp2", "megatron_fsdp", "ddp"])
    for k in SIZE_KEYS:
        if rng.random() < (0.3 if calm and k in ("dp_size", "dp_replicate_size") else 0.55):
            d[k] = _size(rng, world, calm and k != "dp_size")
    if rng.random() < 0.45:
        d["pipeline"] = rng.choice(PIPELINES[:4] if calm else PIPELINES)
    if rng.random() < 0.3:
        d["moe"] = rng.choice(MOES[:4] if calm else MOES)
    if rng.random() < 0.3:
        d["activation_checkpointing"] = rng.choice(AC_VALUES[:8] if calm else AC_VALUES)
    for k, vals in EXTRA.items():
        if rng.random() < (0.02 if calm else 0.06):
            d[k] = rng.choice(vals)
    return d


def random_case(rng: random.Random) -> tuple[str, int]:
    world = rng.choice(WORLDS)
    text = yaml.safe_dump({"distributed": random_distributed(rng, world)}, sort_keys=False)
    return text, world


BATCH_VALUES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 3, 6, 12, 24, 48, 96, 0, -8, None, "8", "abc", 2.0, True]


def random_recipe_case(rng: random.Random) -> tuple[str, int]:
    """A distributed section plus, usually, a step scheduler."""
    world = rng.choice(WORLDS)
    recipe: dict = {"distributed": random_distributed(rng, world)}
    r = rng.random()
    if r < 0.4:  # consistent batches (dp divides the world), so the accept side is reached
        lbs = rng.choice([1, 2, 4])
        recipe["step_scheduler"] = {"global_batch_size": lbs * world * rng.choice([1, 2, 4]), "local_batch_size": lbs}
    elif r < 0.8:
        ss: dict = {}
        for key in ("global_batch_size", "local_batch_size"):
            if rng.random() < 0.9:
                ss[key] = rng.choice(BATCH_VALUES[:16]) if rng.random() < 0.85 else rng.choice(BATCH_VALUES)
        if rng.random() < 0.3:
            ss["max_steps"] = 100
        recipe["step_scheduler"] = ss
    elif r < 0.85:
        recipe["step_scheduler"] = rng.choice([None, 5, "", [], "abc"])
    return yaml.safe_dump(recipe, sort_keys=False), world
