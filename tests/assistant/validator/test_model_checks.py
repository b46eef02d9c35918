"""Model-aware warnings: heads, KV heads, experts, layers, CP sequence length, router under AC."""
from __future__ import annotations

import re
import string
from pathlib import Path

import pytest
import yaml

from assistant.validator import validate
from assistant.validator.model_checks import check_model, virtual_stages
from assistant.validator.models import load_model
from assistant.validator.report import Derived
from assistant.validator.rules import RULES

TABLE = Path(__file__).resolve().parents[3] / "assistant" / "validator" / "model_rules_table.yaml"
CJK = re.compile(r"[\u4e00-\u9fff]")


def derived(world: int, tp: int = 1, cp: int = 1, pp: int = 1, ep: int = 1, dpr: int = 1) -> Derived:
    # Built here rather than through the validator, so these tests pin only the model checks.
    dp = world // (tp * cp * pp)
    non_pp = dp * cp * tp
    ep_shard = (non_pp // ep if ep < non_pp else 1) if ep > 1 else None
    return Derived(
        strategy="fsdp2", world_size=world, tp_size=tp, pp_size=pp, cp_size=cp, ep_size=ep, dp_size=dp,
        dp_replicate_size=dpr, dp_shard_size=dp // dpr, ep_shard_size=ep_shard,
        mesh_dim_names=("pp", "dp_replicate", "dp_shard", "cp", "tp"), mesh_shape=(pp, dpr, dp // dpr, cp, tp),
        moe_mesh_shape=(ep_shard, ep) if ep_shard else None, grad_acc_steps=None,
    )


def run(model: str, d: Derived, dist: dict | None = None, **recipe):
    dist = dist or {}
    return check_model(d, dist, {"distributed": dist, **recipe}, load_model(model))


def codes(findings):
    return [f.code for f in findings]


def assert_bilingual(f, severity="warning"):
    assert f.message and f.message_zh and f.message != f.message_zh
    assert CJK.search(f.message_zh) and not CJK.search(f.message)
    assert f.severity == severity and f.upstream


# ------------------------------------------------------------------------------------------ table


def test_table_codes_are_loaded_by_the_renderer():
    data = yaml.safe_load(TABLE.read_text(encoding="utf-8"))
    for code, entry in data.items():
        assert code in RULES
        assert entry["severity"] in ("error", "warning")
        assert code.startswith("MW-E-") == (entry["severity"] == "error")


def _fields(template: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


def test_templates_carry_the_same_facts_in_both_languages():
    data = yaml.safe_load(TABLE.read_text(encoding="utf-8"))
    for code, entry in data.items():
        for variant in [entry, *(entry.get("variants") or {}).values()]:
            # a variant without text (one that only names another upstream message) shows the row's own
            en, zh = _fields(variant.get("en", entry["en"])), _fields(variant.get("zh", entry["zh"]))
            assert {f.removesuffix("_zh") for f in zh} == {f.removesuffix("_zh") for f in en}, code


# ------------------------------------------------------------------------------------------ TP


def test_tp_dividing_both_head_counts_is_quiet():
    assert run("llama-3.1-70b", derived(64, tp=8)) == []
    assert run("llama-3.1-70b", derived(64, tp=1)) == []


def test_tp_larger_than_kv_heads():
    # Llama 3.1 70B: 64 heads (16 divides), 8 KV heads (16 does not).
    out = run("llama-3.1-70b", derived(64, tp=16))
    assert codes(out) == ["MW-W-TP-KV-HEADS"]
    f = out[0]
    assert "8 % 16 = 8" in f.message and "8 % 16 = 8" in f.message_zh
    assert "largest tp_size that works is 8" in f.message
    assert f.path == "distributed.tp_size"
    assert_bilingual(f)


def test_tp_not_dividing_attention_heads():
    # Qwen3 14B: 40 heads, 8 KV heads. tp 16: 40 % 16 = 8 and 8 % 16 = 8.
    out = run("qwen3-14b", derived(16, tp=16))
    assert codes(out) == ["MW-W-TP-HEADS", "MW-W-TP-KV-HEADS"]
    assert "40 % 16 = 8" in out[0].message
    assert "1, 2, 4, 8" in out[0].message
    # Llama 3.2 3B: 24 heads; tp 16 misses both.
    assert set(codes(run("llama-3.2-3b", derived(16, tp=16)))) == {"MW-W-TP-HEADS", "MW-W-TP-KV-HEADS"}


def test_tp_with_ep_on_custom_moe_needs_a_plan():
    d = derived(16, tp=2, ep=8)
    assert codes(run("qwen3-30b-a3b", d)) == ["MW-E-TP-MOE-PLAN"]
    assert run("qwen3-30b-a3b", d, {"tp_plan": {"model.layers.*.self_attn.q_proj": "colwise"}}) == []
    sp = run("qwen3-30b-a3b", d, {"tp_plan": {"x": "colwise"}, "sequence_parallel": True})
    assert codes(sp) == ["MW-E-TP-MOE-PLAN"] and sp[0].path == "distributed.sequence_parallel"
    assert "sequence_parallel" in sp[0].message
    # Without EP the MoE parallelizer is not used.
    assert run("qwen3-30b-a3b", derived(16, tp=2)) == []


# ------------------------------------------------------------------------------------------ EP


def test_ep_dividing_experts_is_quiet():
    assert run("qwen3-30b-a3b", derived(8, ep=8)) == []
    assert run("deepseek-v3", derived(256, pp=8, ep=32)) == []


def test_ep_not_dividing_experts():
    out = run("qwen3-30b-a3b", derived(12, ep=6))
    assert codes(out) == ["MW-E-EP-EXPERTS"] and out[0].severity == "error"  # CODE-FACTS 21: upstream asserts it
    f = out[0]
    assert "128 % 6 = 2" in f.message and "128 % 6 = 2" in f.message_zh
    assert "2, 4" in f.message  # divisors of 128 that also divide dp*cp*tp = 12
    assert_bilingual(f, "error")


def test_ep_on_dense_and_on_hf_moe():
    dense = run("llama-3.1-8b", derived(8, ep=2))
    # upstream raises (capabilities.py attach_capabilities_and_validate): the job does not start
    assert codes(dense) == ["MW-E-EP-DENSE"] and "dense" in dense[0].message and dense[0].severity == "error"
    assert "capabilities.py" in dense[0].upstream
    mixtral = run("mixtral-8x7b", derived(8, ep=2))
    assert codes(mixtral) == ["MW-E-EP-DENSE"] and "MixtralForCausalLM" in mixtral[0].message
    assert_bilingual(mixtral[0], "error")


# ------------------------------------------------------------------------------------------ PP


def test_virtual_stages_mirror_upstream():
    assert virtual_stages(32, 4, "1f1b", None, None) == 4
    assert virtual_stages(32, 4, "interleaved1f1b", None, None) == 8
    assert virtual_stages(32, 4, "interleaved1f1b", 3, None) == 11
    assert virtual_stages(32, 4, "interleaved1f1b", 3, "up") == 12
    assert virtual_stages(32, 4, "interleaved1f1b", 3, "down") == 8


def test_pp_within_layers_is_quiet():
    d = derived(16, pp=4)
    assert run("llama-3.2-1b", d, {"pp_size": 4, "pipeline": {}}) == []
    assert run("llama-3.2-1b", d, {"pp_size": 4, "pipeline": {"pp_schedule": "Interleaved1F1B"}}) == []
    assert run("llama-3.2-1b", d, {"pp_size": 4, "pipeline": {"layers_per_stage": 4}}) == []
    assert run("llama-3.2-1b", d, {"pp_size": 4, "pipeline": {"pp_schedule": "interleaved1f1b",
                                                                "layers_per_stage": 2}}) == []


def test_pp_more_stages_than_layers():
    # Llama 3.2 1B has 16 layers; an interleaved schedule defaults to 2 stages per rank.
    out = run("llama-3.2-1b", derived(16, pp=16), {"pipeline": {"pp_schedule": "interleaved1f1b"}})
    assert codes(out) == ["MW-W-PP-LAYERS"]
    assert "32 pipeline stages" in out[0].message and "pp_size <= 8" in out[0].message
    out = run("llama-3.2-1b", derived(32, pp=32), {"pipeline": {}})
    assert codes(out) == ["MW-W-PP-LAYERS"] and "pp_size <= 16" in out[0].message
    assert_bilingual(out[0])


def test_layers_per_stage_not_a_multiple_of_pp():
    out = run("llama-3.1-8b", derived(32, pp=4), {"pipeline": {"pp_schedule": "interleaved1f1b", "layers_per_stage": 3}})
    assert codes(out) == ["MW-W-PP-LAYERS"]
    assert "ceil(32/3) = 11" in out[0].message and "11 % 4 = 3" in out[0].message
    # round_virtual_stages_to_pp_multiple makes upstream accept it.
    ok = run("llama-3.1-8b", derived(32, pp=4), {"pipeline": {"pp_schedule": "interleaved1f1b", "layers_per_stage": 3,
                                                              "round_virtual_stages_to_pp_multiple": "up"}})
    assert ok == []


def test_stages_per_rank_must_match_the_schedule():
    single = run("llama-3.1-8b", derived(32, pp=4), {"pipeline": {"pp_schedule": "1f1b", "layers_per_stage": 4}})
    assert codes(single) == ["MW-W-PP-LAYERS"] and "one stage per rank" in single[0].message
    multi = run("llama-3.1-8b", derived(32, pp=4), {"pipeline": {"pp_schedule": "interleaved1f1b", "layers_per_stage": 8}})
    assert codes(multi) == ["MW-W-PP-LAYERS"] and "at least 2 stages per rank" in multi[0].message


@pytest.mark.parametrize("schedule", ["1f1b", "interleaved1f1b", "gpipe", "zbvzerobubble"])
def test_listed_layers_per_stage_values_are_accepted(schedule):
    bad = run("llama-3.1-8b", derived(24, pp=3), {"pipeline": {"pp_schedule": schedule, "layers_per_stage": 5}})
    assert codes(bad) == ["MW-W-PP-LAYERS"]
    listed = re.search(r"work(?: with \S+)?: ([\d, .]+)$", bad[0].message).group(1)
    values = [int(v) for v in listed.replace("...", "").split(",") if v.strip()]
    assert values
    for lps in values:
        assert run("llama-3.1-8b", derived(24, pp=3), {"pipeline": {"pp_schedule": schedule, "layers_per_stage": lps}}) == []


# ------------------------------------------------------------------------------------------ CP


def test_cp_sequence_not_a_multiple_of_2cp():
    out = run("llama-3.1-8b", derived(8, cp=4), {}, dataset={"seq_len": 4100})
    assert codes(out) == ["MW-W-CP-SEQ"]
    f = out[0]
    assert "4100 % 8 = 4" in f.message and "4104" in f.message and f.path == "dataset.seq_len"
    assert "1026" in f.message  # tokens per CP rank: 4104 / 4
    assert_bilingual(f)


def test_cp_sequence_quiet_cases():
    assert run("llama-3.1-8b", derived(8, cp=4), {}, dataset={"seq_len": 4096}) == []
    assert run("llama-3.1-8b", derived(8, cp=1), {}, dataset={"seq_len": 4100}) == []
    assert run("llama-3.1-8b", derived(8, cp=4), {}) == []  # no stated length
    # Packed sequences are the validator's own MW-W-PACKING-CP.
    assert run("llama-3.1-8b", derived(8, cp=4), {}, packed_sequence={"packed_sequence_size": 4100}) == []


def test_cp_sequence_from_pp_seq_len():
    out = run("llama-3.1-8b", derived(16, cp=2, pp=2), {"pipeline": {"pp_seq_len": 1026}})
    assert codes(out) == ["MW-W-CP-SEQ"] and out[0].path == "distributed.pipeline.pp_seq_len"


# ------------------------------------------------------------------------------------------ router + AC


def test_router_recompute_under_full_ac():
    dist = {"ep_size": 8, "activation_checkpointing": True, "moe": {"ignore_router_for_ac": False}}
    out = run("qwen3-30b-a3b", derived(8, ep=8), dist)
    assert codes(out) == ["MW-W-ROUTER-AC"]
    f = out[0]
    assert f.path == "distributed.moe.ignore_router_for_ac" and "CheckpointError" in f.message
    assert "moe/parallelizer.py" in f.upstream
    assert_bilingual(f)


@pytest.mark.parametrize("dist", [
    {"activation_checkpointing": True, "moe": {"ignore_router_for_ac": True}},
    {"activation_checkpointing": True, "moe": {}},
    {"activation_checkpointing": "selective", "moe": {"ignore_router_for_ac": False}},
    {"activation_checkpointing": False, "moe": {"ignore_router_for_ac": False}},
    {"activation_checkpointing": True, "activation_checkpointing_scope": "vision",
     "moe": {"ignore_router_for_ac": False}},
])
def test_router_quiet_cases(dist):
    assert run("qwen3-30b-a3b", derived(8, ep=8), dist) == []


def test_router_needs_ep_and_a_moe_model():
    dist = {"activation_checkpointing": True, "moe": {"ignore_router_for_ac": False}}
    assert run("qwen3-30b-a3b", derived(8), dist) == []  # moe block ignored with ep_size 1
    assert "MW-W-ROUTER-AC" not in codes(run("llama-3.1-8b", derived(8, ep=2), dist))


# ------------------------------------------------------------------------------------------ totality

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from assistant.validator.memory import estimate_memory  # noqa: E402

_junk = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-10**30, max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30),
    st.sampled_from(["true", "false", "selective", "full", "4096", "1" * 5000, "vision", "up", "GPipe"]),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)
_dist_keys = ["activation_checkpointing", "activation_checkpointing_scope", "sequence_parallel", "tp_plan",
              "pipeline", "moe"]
_pipeline = st.dictionaries(
    st.sampled_from(["pp_schedule", "pp_microbatch_size", "layers_per_stage", "round_virtual_stages_to_pp_multiple",
                     "pp_seq_len"]), _junk, max_size=5)


@st.composite
def _layouts(draw):
    tp = draw(st.sampled_from([1, 2, 3, 8, 16, 64]))
    cp = draw(st.sampled_from([1, 2, 3]))
    pp = draw(st.sampled_from([1, 2, 5, 8, 200, 4096]))
    dp = draw(st.sampled_from([1, 2, 4, 6]))
    ep = draw(st.sampled_from([d for d in (1, 2, 3, 4, 7, 8) if (dp * cp * tp) % d == 0]))
    return derived(dp * cp * tp * pp, tp=tp, cp=cp, pp=pp, ep=ep)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    model=st.sampled_from(["llama-3.2-1b", "qwen3-30b-a3b", "deepseek-v3", "mixtral-8x7b", "gpt-oss-20b"]),
    d=_layouts(),
    dist=st.dictionaries(st.sampled_from(_dist_keys), st.one_of(_junk, _pipeline), max_size=6),
    pipeline=st.one_of(st.none(), _pipeline),
    extra=st.dictionaries(st.sampled_from(["step_scheduler", "packed_sequence", "dataset", "model", "peft"]),
                          st.one_of(_junk, st.dictionaries(
                              st.sampled_from(["local_batch_size", "packed_sequence_size", "seq_len", "seq_length",
                                               "torch_dtype", "max_length"]), _junk, max_size=3)), max_size=5),
    gpu=st.sampled_from([None, "h100-80gb", "rtx-4090-24gb"]),
)
def test_hostile_values_never_crash(model, d, dist, pipeline, extra, gpu):
    if pipeline is not None:
        dist = {**dist, "pipeline": pipeline}
    facts = load_model(model)
    r = {"distributed": dist, **extra}
    for f in check_model(d, dist, r, facts):
        assert f.code in RULES and f.message and f.message_zh
    from assistant.validator.models import load_gpu

    est, findings = estimate_memory(d, dist, r, facts, load_gpu(gpu) if gpu else None)
    assert est.total_gib >= 0 and all(f.code in ("MW-E-MEMORY", "MW-W-MEMORY-TIGHT") for f in findings)


def test_pp_checks_skip_a_schedule_torch_rejects():
    # interleaved_1f1b is MW-E-PP-SCHEDULE (the validator's); the stage count would be a guess.
    out = run("llama-3.2-1b", derived(16, pp=16), {"pipeline": {"pp_schedule": "interleaved_1f1b"}})
    assert out == []


# ------------------------------------------------------------------------------------------ upstream facts
# These read the upstream checkout named by MESHWISE_UPSTREAM_SRC and skip without it.

import os  # noqa: E402

_UPSTREAM = os.environ.get("MESHWISE_UPSTREAM_SRC")
needs_upstream = pytest.mark.skipif(not _UPSTREAM or not Path(_UPSTREAM).is_dir(),
                                    reason="MESHWISE_UPSTREAM_SRC not set")


def _read(rel: str) -> str:
    return (Path(_UPSTREAM) / rel).read_text(encoding="utf-8")


@needs_upstream
def test_cited_upstream_code_says_what_the_rules_say():
    par = _read("nemo_automodel/components/distributed/parallelizer.py")
    assert "num_key_value_heads % tp_mesh.size() == 0" in par and "num_attention_heads % tp_mesh.size() == 0" in par
    moe = _read("nemo_automodel/components/moe/parallelizer.py")
    assert "n_routed_experts % moe_mesh[ep_axis_name].size() == 0" in moe
    assert "ignore_router_for_ac=False" in moe and "CheckpointError" in moe
    assert "No safe tensor-parallel plan is registered" in moe
    cfg = _read("nemo_automodel/components/distributed/config.py")
    assert "ignore_router_for_ac: bool = True" in cfg and "CheckpointError" in cfg
    pipe = _read("nemo_automodel/components/distributed/pipelining/functional.py")
    assert "def calculate_virtual_stages" in pipe and "cannot exceed number of layers" in pipe
    sharder = _read("nemo_automodel/components/distributed/context_parallel/sharder.py")
    assert "divisible by 2 * cp_size" in sharder
    caps = _read("nemo_automodel/_transformers/capabilities.py")
    assert "requires a MoE model" in caps and "MoEFSDPSyncMixin" in caps


@needs_upstream
def test_upstream_moe_architectures_inherit_the_mixin():
    from assistant.validator.models import upstream_moe_architectures

    models_dir = Path(_UPSTREAM) / "nemo_automodel" / "components" / "models"
    bases: dict[str, str] = {}
    for f in models_dir.glob("*/model.py"):
        bases.update(re.findall(r"^class (\w+)\(([^)]*)\)", f.read_text(encoding="utf-8"), re.M))
    mixin_classes = {c for c, b in bases.items() if "MoEFSDPSyncMixin" in b}
    grown = True
    while grown:  # subclasses of a mixin class (DeepseekV32ForCausalLM(DeepseekV3ForCausalLM))
        more = {c for c, b in bases.items() if any(x.strip() in mixin_classes for x in b.split(","))}
        grown = not more <= mixin_classes
        mixin_classes |= more
    registry = _read("nemo_automodel/_transformers/registry.py")
    for arch in upstream_moe_architectures():
        assert arch in mixin_classes, arch
        assert f'"{arch}"' in registry, arch
    assert "Mixtral" not in registry  # Mixtral runs through the Hugging Face class


def test_router_ac_warns_without_a_model_when_ep_implies_moe():
    from assistant.validator import validate

    cfg = {"distributed": {"strategy": "fsdp2", "ep_size": 8, "activation_checkpointing": True,
                           "moe": {"ignore_router_for_ac": False}}}
    assert "MW-W-ROUTER-AC" in validate(cfg, world_size=8).codes
    cfg["distributed"]["moe"]["ignore_router_for_ac"] = True
    assert "MW-W-ROUTER-AC" not in validate(cfg, world_size=8).codes
    cfg["distributed"].update(ep_size=1, moe={"ignore_router_for_ac": False})
    assert "MW-W-ROUTER-AC" not in validate(cfg, world_size=8).codes  # moe block ignored without EP


def test_ep_not_dividing_the_experts_fails_validation_with_a_fix():
    # CODE-FACTS 21: parallelize_model asserts n_routed_experts % ep_size == 0, so the run stops there
    r = validate({"ep_size": 6}, world_size=12, model="qwen3-30b-a3b")
    assert not r.ok and r.errors[0].code == "MW-E-EP-EXPERTS"
    assert r.suggested_fix is not None
    fixed = validate(r.suggested_fix, world_size=12, model="qwen3-30b-a3b")
    assert fixed.ok and 128 % fixed.derived.ep_size == 0


def test_tp_on_a_custom_moe_class_is_an_error_the_fixer_removes():
    # upstream _resolve_moe_tp_plan raises: no AutoModel MoE class has a registered TP plan at 36044ad3
    from assistant.validator import validate

    r = validate({"distributed": {"strategy": "fsdp2", "tp_size": 2, "ep_size": 8}}, world_size=16,
                 gpus_per_node=8, model="qwen3-30b-a3b")
    assert not r.ok and [f.code for f in r.errors] == ["MW-E-TP-MOE-PLAN"]
    fixed = validate(r.suggested_fix, world_size=16, gpus_per_node=8, model="qwen3-30b-a3b")
    assert fixed.ok and fixed.derived.tp_size == 1 and fixed.derived.ep_size == 8


def test_a_stated_expert_count_reaches_the_ep_experts_rule():
    # issue 18: "we have 64 experts", no model named; 64 % 12 = 4, ep sizes dividing 64 and 48: 2, 4, 8, 16
    from assistant.validator import validate

    dist = {"distributed": {"strategy": "fsdp2", "ep_size": 12}}
    r = validate(dist, world_size=48, experts=64)
    assert [f.code for f in r.errors] == ["MW-E-EP-EXPERTS"]
    assert "64 % 12 = 4" in r.errors[0].message and "2, 4, 8, 16" in r.errors[0].message
    assert "ep_size: 16" in r.suggested_fix
    assert validate(dist, world_size=48).ok
