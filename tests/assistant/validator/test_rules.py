"""Every rule, from both sides: a config it rejects (or warns on) and a near one it lets through.

Verdicts follow NeMo AutoModel's start-up code (commit 36044ad3); where that code does something
surprising, the case says so.
"""
from __future__ import annotations

import pytest

from assistant.validator import validate
from assistant.validator.rules import RULES, make_finding

# (id, config, world_size, first error code or None for ok)
PARITY = [
    # distributed must be a mapping
    ("dist-null", {"distributed": None}, 8, "MW-E-DIST-NOT-MAPPING"),
    ("dist-int", {"distributed": 5}, 8, "MW-E-DIST-NOT-MAPPING"),
    ("dist-str", {"distributed": "abc"}, 8, "MW-E-DIST-NOT-MAPPING"),
    ("dist-missing", {"step_scheduler": {"global_batch_size": 8}}, 8, "MW-E-DIST-NOT-MAPPING"),
    ("dist-empty-ok", {"distributed": {}}, 8, None),
    ("dist-empty-string-is-empty-dict", {"distributed": ""}, 8, None),  # dict("") == {}
    ("dist-pairs-list", {"distributed": [["tp_size", 2]]}, 8, None),  # dict([[k, v]]) works upstream too
    # strategy
    ("strategy-unknown", {"strategy": "fsdp"}, 8, "MW-E-STRATEGY-UNKNOWN"),
    ("strategy-null", {"strategy": None}, 8, "MW-E-STRATEGY-UNKNOWN"),  # None.lower(): nulls do not default here
    ("strategy-int", {"strategy": 2}, 8, "MW-E-STRATEGY-UNKNOWN"),
    ("strategy-case", {"strategy": "FSDP2"}, 8, None),
    ("strategy-mfsdp", {"strategy": "MFSDP"}, 8, None),
    ("strategy-megatron-dash", {"strategy": "megatron-fsdp"}, 8, None),
    # strategy options (dataclass field sets)
    ("sp-on-megatron-false", {"strategy": "megatron_fsdp", "sequence_parallel": False}, 8, "MW-E-STRATEGY-OPTION"),
    ("sp-on-ddp", {"strategy": "ddp", "sequence_parallel": True}, 8, "MW-E-STRATEGY-OPTION"),
    ("defer-on-ddp", {"strategy": "ddp", "defer_fsdp_grad_sync": True}, 8, "MW-E-STRATEGY-OPTION"),
    ("sp-on-fsdp2", {"strategy": "fsdp2", "sequence_parallel": True}, 8, None),
    ("ddp-fields", {"strategy": "ddp", "find_unused_parameters": True, "static_graph": True, "bucket_cap_mb": 400,
                    "gradient_as_bucket_view": True, "broadcast_buffers": False, "autocast_dtype": "bfloat16"}, 8, None),
    ("megatron-fields", {"strategy": "megatron_fsdp", "zero_dp_strategy": 3, "overlap_grad_reduce": True}, 8, None),
    ("zero-dp-on-fsdp2", {"strategy": "fsdp2", "zero_dp_strategy": 3}, 8, "MW-E-STRATEGY-OPTION"),
    ("typo-option", {"sequence_paralel": True}, 8, "MW-E-STRATEGY-OPTION"),
    ("hydra-meta-stripped", {"_target_": "nemo_automodel.components.distributed.fsdp2.FSDP2Manager"}, 8, None),
    # strategy values built from YAML
    ("autocast-bad", {"autocast_dtype": "fp8"}, 8, "MW-E-STRATEGY-VALUE"),
    ("autocast-bf16", {"autocast_dtype": "bf16"}, 8, None),
    ("mp-policy-bad-dtype", {"mp_policy": {"param_dtype": "bf17"}}, 8, "MW-E-STRATEGY-VALUE"),
    ("mp-policy-bad-field", {"mp_policy": {"compute_dtype": "bf16"}}, 8, "MW-E-STRATEGY-VALUE"),
    ("mp-policy-ok", {"mp_policy": {"_target_": "torch.distributed.fsdp.MixedPrecisionPolicy",
                                    "param_dtype": "bfloat16", "reduce_dtype": "float32"}}, 8, None),
    ("offload-bad", {"offload_policy": {"pin": True}}, 8, "MW-E-STRATEGY-VALUE"),
    ("offload-ok", {"offload_policy": {"_target_": "torch.distributed.fsdp.CPUOffloadPolicy"}}, 8, None),
    ("multimodal-null-fsdp2", {"multimodal": None}, 8, "MW-E-STRATEGY-VALUE"),  # TypeError in __post_init__
    ("multimodal-bad-sharding", {"multimodal": {"frozen_sharding": "tree"}}, 8, "MW-E-STRATEGY-VALUE"),
    ("multimodal-ok", {"multimodal": {"frozen_sharding": "per-layer",
                                      "vision": {"frame_sharding": {"enabled": True, "mesh_dims": ["cp"]}}}}, 8, None),
    ("frame-sharding-negative", {"multimodal": {"vision": {"frame_sharding": {"min_tokens": -1}}}}, 8, "MW-E-STRATEGY-VALUE"),
    # activation checkpointing
    ("ac-int", {"activation_checkpointing": 1}, 8, "MW-E-AC-VALUE"),  # 1 is not a bool
    ("ac-word", {"activation_checkpointing": "partial"}, 8, "MW-E-AC-VALUE"),
    ("ac-strings", {"activation_checkpointing": "Enabled"}, 8, None),
    ("ac-null", {"activation_checkpointing": None}, 8, None),
    ("ac-selective-megatron", {"strategy": "megatron_fsdp", "activation_checkpointing": "selective"}, 8, "MW-E-AC-SELECTIVE"),
    ("ac-selective-ddp", {"strategy": "ddp", "activation_checkpointing": "selective"}, 8, None),
    ("ac-scope-bad", {"activation_checkpointing_scope": "text"}, 8, "MW-E-AC-SCOPE"),
    ("ac-scope-all-plus", {"activation_checkpointing_scope": "all,vision"}, 8, "MW-E-AC-SCOPE"),
    ("ac-scope-ok", {"activation_checkpointing_scope": "language+vision"}, 8, None),
    ("ac-scope-megatron", {"strategy": "megatron_fsdp", "activation_checkpointing_scope": "all"}, 8, "MW-E-STRATEGY-OPTION"),
    # pipeline block
    ("pp-no-pipeline", {"pp_size": 2}, 8, "MW-E-PP-NO-PIPELINE"),
    ("pp-null-pipeline", {"pp_size": 2, "pipeline": None}, 8, "MW-E-PP-NO-PIPELINE"),
    ("pp-empty-pipeline", {"pp_size": 2, "pipeline": {}}, 8, None),
    ("pp-float-no-pipeline", {"pp_size": 2.0}, 8, "MW-E-PP-NO-PIPELINE"),  # 2.0 > 1, yet the mesh would use 1
    ("pipeline-unknown-field", {"pp_size": 2, "pipeline": {"schedule": "1f1b"}}, 8, "MW-E-PIPELINE-OPTION"),
    ("pipeline-not-mapping", {"pp_size": 2, "pipeline": 5}, 8, "MW-E-PIPELINE-VALUE"),
    ("pipeline-bad-dtype", {"pp_size": 2, "pipeline": {"dtype": "bf17"}}, 8, "MW-E-PIPELINE-VALUE"),
    ("pipeline-dropped-not-validated", {"pp_size": 1, "pipeline": {"bogus": 1}}, 8, None),
    ("pp-string", {"pp_size": "two", "pipeline": {}}, 8, "MW-E-SIZE-VALUE"),
    # moe block
    ("moe-unknown-field", {"ep_size": 8, "moe": {"capacity": 1}}, 8, "MW-E-MOE-OPTION"),
    ("moe-ignored", {"ep_size": 1, "moe": {"capacity": 1}}, 8, None),
    ("moe-not-mapping", {"ep_size": 8, "moe": 5}, 8, "MW-E-MOE-VALUE"),
    ("moe-empty-list", {"ep_size": 8, "moe": []}, 8, None),  # `[] or {}` -> defaults
    ("moe-ok", {"ep_size": 8, "moe": {"reshard_after_forward": False, "ignore_router_for_ac": True}}, 8, None),
    ("ep-empty-string", {"ep_size": ""}, 8, "MW-E-SIZE-VALUE"),  # build compares the raw value
    # strategy limits
    ("hsdp-megatron", {"strategy": "megatron_fsdp", "dp_replicate_size": 2}, 8, "MW-E-HSDP-STRATEGY"),
    ("hsdp-ddp", {"strategy": "ddp", "dp_replicate_size": 2}, 8, "MW-E-HSDP-STRATEGY"),
    ("hsdp-fsdp2", {"dp_replicate_size": 2}, 16, None),
    ("hsdp-float-megatron", {"strategy": "megatron_fsdp", "dp_replicate_size": 2.0}, 8, "MW-E-HSDP-STRATEGY"),
    ("megatron-pp", {"strategy": "megatron_fsdp", "pp_size": 2, "pipeline": {}}, 8, "MW-E-MEGATRON-PP"),
    ("megatron-ep", {"strategy": "megatron_fsdp", "ep_size": 2}, 8, "MW-E-MEGATRON-EP"),
    ("megatron-tp", {"strategy": "megatron_fsdp", "tp_size": 2}, 8, None),
    ("ddp-tp", {"strategy": "ddp", "tp_size": 2}, 8, "MW-E-DDP-PARALLEL"),
    ("ddp-cp", {"strategy": "ddp", "cp_size": 2}, 8, "MW-E-DDP-PARALLEL"),
    ("ddp-ep", {"strategy": "ddp", "ep_size": 2}, 8, "MW-E-DDP-PARALLEL"),
    ("ddp-dp-ignored", {"strategy": "ddp", "dp_size": 3}, 8, None),
    ("ddp-any-world", {"strategy": "ddp"}, 7, None),
    # world divisibility
    ("world-divisible", {"tp_size": 8, "pp_size": 4, "pipeline": {}}, 48, "MW-E-WORLD-DIVISIBLE"),
    ("world-divisible-ok", {"tp_size": 8, "pp_size": 2, "pipeline": {}}, 48, None),
    ("world-megatron-ignores-pp", {"strategy": "megatron_fsdp", "tp_size": 4, "cp_size": 2}, 24, None),
    ("world-megatron", {"strategy": "megatron_fsdp", "tp_size": 4, "cp_size": 4}, 24, "MW-E-WORLD-DIVISIBLE"),
    # dp_replicate
    ("dpr-divides", {"dp_replicate_size": 3}, 8, "MW-E-DP-REPLICATE-DIVIDES"),
    ("dpr-equal-dp", {"dp_replicate_size": 8}, 8, "MW-E-DP-REPLICATE-LT-DP"),
    ("dpr-one-equal-dp", {"dp_replicate_size": 1}, 1, None),
    ("dpr-none-string", {"dp_replicate_size": "none"}, 8, None),
    ("dpr-string", {"dp_replicate_size": "two"}, 8, "MW-E-SIZE-VALUE"),
    # ep divisibility: the code checks dp*cp*tp
    ("ep-divides", {"ep_size": 16}, 8, "MW-E-EP-DIVIDES"),
    ("ep-tp-counts", {"tp_size": 2, "ep_size": 8}, 8, None),  # dp*cp = 4 but dp*cp*tp = 8
    ("ep-non-dividing", {"ep_size": 3}, 8, "MW-E-EP-DIVIDES"),
    # explicit dp_size is honoured
    ("dp-too-big", {"dp_size": 16}, 8, "MW-E-DP-MISMATCH"),
    ("dp-too-small", {"tp_size": 2, "dp_size": 2}, 8, "MW-E-DP-MISMATCH"),
    ("dp-exact", {"tp_size": 2, "dp_size": 4}, 8, None),
    ("dp-none", {"dp_size": "none"}, 8, None),
    ("dp-zero-infers", {"dp_size": 0}, 8, None),
    ("dp-float", {"dp_size": 8.0}, 8, "MW-E-SIZE-VALUE"),
    ("dp-string", {"dp_size": "eight"}, 8, "MW-E-SIZE-VALUE"),
    ("dp-string-number", {"dp_size": "8"}, 8, None),  # translate_value: "8" -> 8
    # sizes that are not positive ints count as 1
    ("tp-float", {"tp_size": 2.0}, 8, None),
    ("tp-negative", {"tp_size": -4}, 8, None),
    ("tp-string", {"tp_size": "abc"}, 8, None),
    ("tp-true", {"tp_size": True}, 8, "MW-E-SIZE-VALUE"),  # _degree(True) is True; torch's layout rejects bools
    ("ep-true", {"ep_size": True}, 8, None),  # never reaches a mesh shape
    ("tp-true-ddp", {"strategy": "ddp", "tp_size": True}, 8, None),  # ddp builds no mesh
]


@pytest.mark.parametrize("cfg, world, code", [c[1:] for c in PARITY], ids=[c[0] for c in PARITY])
def test_parity_verdicts(cfg, world, code):
    report = validate(cfg, world_size=world, suggest_fix=False)
    assert report.ok is (code is None), [f.code + " " + f.message for f in report.errors]
    if code is not None:
        assert report.errors[0].code == code
        assert report.errors[0].severity == "error"


# recipe-level checks: (id, recipe, world, first error or None, grad_acc when ok)
RECIPES = [
    ("batch-ok", {"distributed": {}, "step_scheduler": {"global_batch_size": 64, "local_batch_size": 2}}, 8, None, 4),
    ("batch-defaults", {"distributed": {}, "step_scheduler": {}}, 8, None, 4),  # 32 // (1*8)
    ("batch-divisible", {"distributed": {}, "step_scheduler": {"global_batch_size": 8, "local_batch_size": 4}}, 8,
     "MW-E-BATCH-DIVISIBLE", None),
    ("batch-dp-without-cp", {"distributed": {"cp_size": 2}, "step_scheduler": {"global_batch_size": 8, "local_batch_size": 2}},
     8, None, 1),
    ("batch-ddp-world", {"distributed": {"strategy": "ddp"}, "step_scheduler": {"global_batch_size": 16, "local_batch_size": 1}},
     16, None, 1),
    ("batch-zero", {"distributed": {}, "step_scheduler": {"global_batch_size": 0, "local_batch_size": 1}}, 8,
     "MW-E-BATCH-POSITIVE", None),
    ("batch-null-lbs", {"distributed": {}, "step_scheduler": {"local_batch_size": None}}, 8, "MW-E-BATCH-POSITIVE", None),
    ("batch-string", {"distributed": {}, "step_scheduler": {"global_batch_size": "lots"}}, 8, "MW-E-BATCH-POSITIVE", None),
    ("ss-not-mapping", {"distributed": {}, "step_scheduler": 5}, 8, "MW-E-STEP-SCHEDULER-VALUE", None),
    ("ss-absent", {"distributed": {}, "model": {"pretrained_model_name_or_path": "x"}}, 8, None, None),
    ("pp-microbatch-count", {"distributed": {"pp_size": 4, "pipeline": {"pp_microbatch_size": 2}},
                             "step_scheduler": {"global_batch_size": 8, "local_batch_size": 4}}, 8,
     "MW-E-PP-MICROBATCH-COUNT", None),
    ("pp-microbatch-divides", {"distributed": {"pp_size": 2, "pipeline": {"pp_microbatch_size": 3}},
                               "step_scheduler": {"global_batch_size": 32, "local_batch_size": 8}}, 8,
     "MW-E-PP-MICROBATCH-DIVIDES", None),
    ("pp-microbatch-ok", {"distributed": {"pp_size": 2, "pipeline": {"pp_microbatch_size": 2}},
                          "step_scheduler": {"global_batch_size": 32, "local_batch_size": 4}}, 8, None, 2),
    ("pp-microbatch-zero", {"distributed": {"pp_size": 2, "pipeline": {"pp_microbatch_size": 0}},
                            "step_scheduler": {"global_batch_size": 32, "local_batch_size": 4}}, 8,
     "MW-E-PP-MICROBATCH-COUNT", None),
    ("pp-schedule-misspelt", {"distributed": {"pp_size": 2, "pipeline": {"pp_schedule": "interleaved_1f1b"}}}, 8,
     "MW-E-PP-SCHEDULE", None),
    ("pp-schedule-case", {"distributed": {"pp_size": 2, "pipeline": {"pp_schedule": "Interleaved1F1B"}}}, 8, None, None),
    ("pp-schedule-null", {"distributed": {"pp_size": 2, "pipeline": {"pp_schedule": None}}}, 8, "MW-E-PP-SCHEDULE", None),
    ("pp-schedule-default", {"distributed": {"pp_size": 2, "pipeline": {}}}, 8, None, None),
    ("pp-schedule-ignored-pp1", {"distributed": {"pipeline": {"pp_schedule": "dfs"}}}, 8, None, None),
    ("load-non-string-key", {"distributed": {}, "dataset": {1: "x"}}, 8, "MW-E-CONFIG-LOAD", None),
]


@pytest.mark.parametrize("recipe, world, code, steps", [c[1:] for c in RECIPES], ids=[c[0] for c in RECIPES])
def test_recipe_verdicts(recipe, world, code, steps):
    report = validate(recipe, world_size=world, suggest_fix=False)
    assert report.ok is (code is None), [f.code + " " + f.message for f in report.errors]
    if code is not None:
        assert report.errors[0].code == code
    else:
        assert report.derived.grad_acc_steps == steps


@pytest.mark.parametrize("name, expected", [("interleaved_1f1b", "interleaved1f1b"), ("looped_bfs", "loopedbfs"),
                                            ("dfs", "interleaved1f1b"), ("v_schedule", "zbvzerobubble"),
                                            ("zero_bubble", "interleavedzerobubble"), ("Dual-Pipe-V", "dualpipev")])
def test_skill_doc_schedule_spellings_are_rejected_with_a_suggestion(name, expected):
    r = validate({"pp_size": 2, "pipeline": {"pp_schedule": name}}, world_size=8)
    assert not r.ok and r.errors[0].code == "MW-E-PP-SCHEDULE"
    assert f"did you mean {expected}" in r.errors[0].message
    assert expected in r.errors[0].message_zh
    assert f"pp_schedule: {expected}" in r.suggested_fix


WARNINGS = [
    ("MW-W-SIZE-NOT-INT", {"tp_size": 2.0}, 8, {"tp_size": 2}),
    ("MW-W-SIZE-NOT-INT", {"dp_size": 0}, 8, {"dp_size": None}),
    ("MW-W-PIPELINE-DROPPED", {"pipeline": {"pp_schedule": "1f1b"}}, 8, {"pp_size": 2, "pipeline": {"pp_schedule": "1f1b"}}),
    ("MW-W-MOE-IGNORED", {"moe": {"reshard_after_forward": False}}, 8, {"ep_size": 8, "moe": {"reshard_after_forward": False}}),
    ("MW-W-DDP-DP-SIZE", {"strategy": "ddp", "dp_size": 8}, 8, {"strategy": "ddp"}),
    ("MW-W-TP-CROSS-NODE", {"tp_size": 16}, 16, {"tp_size": 8}),
    ("MW-W-TP-CROSS-NODE", {"tp_size": 3}, 24, {"tp_size": 4}),
    ("MW-W-WORLD-NOT-NODE-MULTIPLE", {}, 12, None),
    ("MW-W-PACKING-CP", {"distributed": {"cp_size": 4}, "packed_sequence": {"packed_sequence_size": 4100}}, 8,
     {"distributed": {"cp_size": 4}, "packed_sequence": {"packed_sequence_size": 4096}}),
    ("MW-W-CP-PACKING-SDPA", {"distributed": {"cp_size": 2}, "packed_sequence": {"packed_sequence_size": 8192},
                              "model": {"attn_implementation": "sdpa"}}, 8,
     {"distributed": {"cp_size": 2}, "packed_sequence": {"packed_sequence_size": 0}, "model": {"attn_implementation": "sdpa"}}),
    ("MW-W-ENV-VAR", {"tp_size": "${TP_SIZE}"}, 8, {"tp_size": "${TP_SIZE,2}"}),
    ("MW-W-PP-SCHEDULE-ABSTRACT", {"pp_size": 2, "pipeline": {"pp_schedule": "PipelineScheduleSingle"}}, 8,
     {"pp_size": 2, "pipeline": {"pp_schedule": "1f1b"}}),
]


@pytest.mark.parametrize("code, cfg, world, clean", WARNINGS, ids=[f"{w[0]}-{i}" for i, w in enumerate(WARNINGS)])
def test_warnings_fire_and_do_not_change_the_verdict(code, cfg, world, clean):
    r = validate(cfg, world_size=world)
    assert r.ok, [f.message for f in r.errors]
    assert code in [w.code for w in r.warnings]
    if clean is not None:
        assert code not in validate(clean, world_size=world).codes


def test_single_partial_node_is_not_warned():
    assert "MW-W-WORLD-NOT-NODE-MULTIPLE" not in validate({}, world_size=4).codes


def test_env_default_is_used():
    r = validate({"tp_size": "${TP_SIZE,2}"}, world_size=8)
    assert r.derived.tp_size == 2 and not r.warnings


def test_messages_carry_the_arithmetic():
    r = validate({"tp_size": 8, "pp_size": 4, "pipeline": {}}, world_size=48)
    assert r.errors[0].message == "world_size (48) must be divisible by tp_size*cp_size*pp_size (8*1*4 = 32)"
    assert "48" in r.errors[0].message_zh and "8*1*4 = 32" in r.errors[0].message_zh
    ep = validate({"ep_size": 16}, world_size=8).errors[0]
    assert "8*1*1 = 8" in ep.message and "8 % 16 = 8" in ep.message
    assert "SKILL.md" in ep.message and "dp*cp*tp" in ep.message and "SKILL.md" in ep.message_zh
    b = validate({"distributed": {}, "step_scheduler": {"global_batch_size": 8, "local_batch_size": 4}}, world_size=8).errors[0]
    assert "4*8 = 32" in b.message and "8 % 32 = 8" in b.message


def test_findings_cite_upstream_and_paths():
    r = validate({"strategy": "megatron_fsdp", "sequence_parallel": False}, world_size=8)
    f = r.errors[0]
    assert f.path == "distributed.sequence_parallel"
    assert f.upstream.startswith("nemo_automodel/components/distributed/config.py")
    assert "fsdp2" in f.message and "false" in f.message
    assert f.message_zh != f.message and "sequence_parallel" in f.message_zh


def test_every_code_renders_in_both_languages():
    for code, rule in RULES.items():
        f = make_finding(code, "distributed.x")
        assert f.code == code and f.message and f.message_zh and f.upstream
        assert f.severity in ("error", "warning")
        assert code.startswith("MW-E-") == (f.severity == "error")


def test_common_codes_are_all_defined():
    ours = """MW-E-DIST-NOT-MAPPING MW-E-STRATEGY-UNKNOWN MW-E-STRATEGY-OPTION MW-E-AC-VALUE MW-E-AC-SELECTIVE
    MW-E-AC-SCOPE MW-E-PP-NO-PIPELINE MW-E-PIPELINE-OPTION MW-E-PIPELINE-VALUE MW-E-MOE-OPTION MW-E-HSDP-STRATEGY
    MW-E-MEGATRON-PP MW-E-MEGATRON-EP MW-E-DDP-PARALLEL MW-E-WORLD-DIVISIBLE MW-E-DP-REPLICATE-DIVIDES
    MW-E-DP-REPLICATE-LT-DP MW-E-EP-DIVIDES MW-E-DP-MISMATCH MW-E-BATCH-POSITIVE MW-E-BATCH-DIVISIBLE
    MW-E-PP-MICROBATCH-COUNT MW-E-PP-MICROBATCH-DIVIDES MW-E-PP-SCHEDULE MW-W-SIZE-NOT-INT MW-W-PIPELINE-DROPPED
    MW-W-MOE-IGNORED MW-W-DDP-DP-SIZE MW-W-TP-CROSS-NODE MW-W-WORLD-NOT-NODE-MULTIPLE MW-W-PACKING-CP""".split()
    assert set(ours) <= set(RULES)


def test_derived_mesh_shapes():
    d = validate({"tp_size": 2, "pp_size": 2, "cp_size": 2, "dp_replicate_size": 2, "ep_size": 4, "pipeline": {}},
                 world_size=32).derived
    assert (d.dp_size, d.dp_shard_size, d.dp_replicate_size) == (4, 2, 2)
    assert d.mesh_dim_names == ("pp", "dp_replicate", "dp_shard", "cp", "tp")
    assert d.mesh_shape == (2, 2, 2, 2, 2)
    assert d.moe_mesh_shape == (4, 4) and d.ep_shard_size == 4  # dp*cp*tp = 16 = ep_shard * ep
    m = validate({"strategy": "mfsdp", "tp_size": 2}, world_size=8).derived
    assert m.strategy == "megatron_fsdp" and m.mesh_dim_names == ("dp", "cp", "tp") and m.mesh_shape == (4, 1, 2)
    assert validate({"strategy": "ddp"}, world_size=8).derived.mesh_shape == ()


def test_distributed_only_mode_skips_recipe_checks():
    recipe = {"distributed": {"pp_size": 2, "pipeline": {"pp_schedule": "dfs"}},
              "step_scheduler": {"global_batch_size": 3, "local_batch_size": 1}}
    assert validate(recipe, world_size=8, recipe_checks=False).ok
    full = validate(recipe, world_size=8)
    assert {"MW-E-PP-SCHEDULE", "MW-E-PP-MICROBATCH-COUNT", "MW-E-BATCH-DIVISIBLE"} <= set(full.codes)


# CODE-FACTS 4: an explicit dp_size is used as is. A bigger mesh is refused by torch at start-up; a smaller one
# passes start-up and its outside ranks fail on first use; an all-ones mesh passes and leaves the rest idle.
@pytest.mark.parametrize("dist, world, en, zh", [
    ({"dp_size": 16}, 8, "init_device_mesh refuses it at start-up", "启动时就会拒绝"),
    ({"dp_size": 2, "tp_size": 2}, 8, "start-up accepts it, but those ranks fail the first time they use the mesh",
     "启动时不会报错"),
    ({"dp_size": 1}, 8, "the other 7 of 8 ranks sit idle", "闲置"),
])
def test_explicit_dp_size_says_what_upstream_does(dist, world, en, zh):
    r = validate(dist, world_size=world, suggest_fix=False)
    assert not r.ok and r.errors[0].code == "MW-E-DP-MISMATCH"  # the run does not work: still an error
    assert en in r.errors[0].message and zh in r.errors[0].message_zh
    assert "torch needs" not in r.errors[0].message and "cover the world" not in r.errors[0].upstream


def test_explicit_null_schedule_names_autopipelines_error():
    # CODE-FACTS 19: pipeline: {pp_schedule: null} without a csv reaches AutoPipeline.__init__
    r = validate({"pp_size": 2, "pipeline": {"pp_schedule": None}}, world_size=8)
    assert r.errors[0].code == "MW-E-PP-SCHEDULE"  # the code users already see for it, with AutoPipeline's words
    assert "Either pipeline_parallel_schedule or pipeline_parallel_schedule_csv must be provided" in r.errors[0].message
    assert "autopipeline.py" in r.errors[0].upstream
    assert validate(r.suggested_fix, world_size=8).ok
    # with a csv the null still reaches get_schedule_class when the model is split: still rejected
    csv = validate({"pp_size": 2, "pipeline": {"pp_schedule": None, "pp_schedule_csv": "s.csv"}}, world_size=8)
    assert csv.errors[0].code == "MW-E-PP-SCHEDULE" and "not a schedule torch accepts" in csv.errors[0].message
    # the distributed-only verdict (no recipe checks) does not judge schedules
    assert validate({"pp_size": 2, "pipeline": {"pp_schedule": None}}, world_size=8, recipe_checks=False).ok


@pytest.mark.parametrize("pp", [float("inf"), 2.5])
def test_a_non_int_pp_size_gets_one_verdict(pp):
    """Issue 20.7: upstream's parse raises on `pp_size > 1` without a pipeline block before any mesh is
    built, so the value is not also said to "run as pp_size 1"; with a block it is, and nothing else."""
    r = validate({"strategy": "fsdp2", "pp_size": pp}, world_size=8)
    assert r.codes == ["MW-E-PP-NO-PIPELINE"]
    assert "pp_size: 1" in r.suggested_fix and "pipeline" not in r.suggested_fix
    r = validate({"strategy": "fsdp2", "pp_size": pp, "pipeline": {}}, world_size=8)
    assert r.ok and r.codes == ["MW-W-SIZE-NOT-INT"] and "pp_size = 1" in r.warnings[0].message


@pytest.mark.parametrize("value", ["${TP}", "$TP", "${oc.env:TP}"])
def test_a_size_from_an_unset_environment_variable_is_not_said_to_run_as_one(value):
    # upstream resolves it at load or raises KeyError (config/loader.py resolve_yaml_env_vars): never
    # "silently runs it as tp_size = 1"; the environment warning is the one finding for that key
    r = validate({"strategy": "fsdp2", "tp_size": value}, world_size=8)
    codes = [w.code for w in r.warnings if w.path == "distributed.tp_size"]
    assert codes == ["MW-W-ENV-VAR"]
