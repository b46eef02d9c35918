"""Per-GPU memory estimate: model state under FSDP/TP/PP/EP, Korthikanti activations, findings."""
from __future__ import annotations

import re

import pytest

from assistant.validator.memory import (
    GIB,
    MEMORY_TIGHT_FRACTION,
    Sizing,
    _stage_layout,
    estimate_for_sizes,
    estimate_memory,
    fits,
)
from assistant.validator.layout import Layout
from assistant.validator.models import load_gpu, load_model
from assistant.validator.report import Derived

H100 = load_gpu("h100-80gb")
CJK = re.compile(r"[\u4e00-\u9fff]")


def derived(world: int, tp: int = 1, cp: int = 1, pp: int = 1, ep: int = 1, dpr: int = 1,
            strategy: str = "fsdp2") -> Derived:
    dp = world // (tp * cp * pp)
    non_pp = dp * cp * tp
    ep_shard = (non_pp // ep if ep < non_pp else 1) if ep > 1 else None
    return Derived(
        strategy=strategy, world_size=world, tp_size=tp, pp_size=pp, cp_size=cp, ep_size=ep, dp_size=dp,
        dp_replicate_size=dpr, dp_shard_size=dp // dpr, ep_shard_size=ep_shard,
        mesh_dim_names=("pp", "dp_replicate", "dp_shard", "cp", "tp"), mesh_shape=(pp, dpr, dp // dpr, cp, tp),
        moe_mesh_shape=(ep_shard, ep) if ep_shard else None, grad_acc_steps=None,
    )


def recipe(dist: dict, *, lbs: int = 1, seq: int | None = None, dtype: str | None = None, **extra) -> dict:
    r = {"distributed": dist, "step_scheduler": {"global_batch_size": 1024, "local_batch_size": lbs}, **extra}
    if seq:
        r["dataset"] = {"seq_len": seq}
    if dtype:
        r["model"] = {"torch_dtype": dtype}
    return r


def estimate(model: str, d: Derived, r: dict, gpu=H100):
    return estimate_memory(d, r["distributed"], r, load_model(model), gpu)


# ------------------------------------------------------------------------------------------ formulas


def test_llama_8b_matches_hand_arithmetic():
    """8 GPUs, pure FSDP, fp32 master state, seq 4096, micro-batch 1, no checkpointing."""
    h, inter, v, layers, heads, kv, d = 4096, 14336, 128256, 32, 32, 8, 128
    attn = h * heads * d + 2 * h * kv * d + heads * d * h + 2 * h
    mlp = 3 * h * inter
    total_params = 2 * v * h + layers * (attn + mlp) + h
    local = total_params / 8
    unit = max(attn + mlp, v * h)  # biggest FSDP unit: the embedding
    state = local * (4 + 4 + 8) + 2 * unit * 2 + unit * 4
    # Korthikanti et al. 2022 per layer and token, tp = 1: 10h (norms, inputs, dropout masks)
    # + Q, K, V, attention output (GQA) + 8 bytes per SwiGLU intermediate element.
    per_token = 10 * h + 2 * heads * d + 2 * kv * d + 2 * kv * d + 2 * heads * d + 8 * inter
    acts = layers * 4096 * per_token + 4 * 4096 * v  # plus fp32 log-probs of the head
    expected = (state + acts) / GIB
    est = estimate_for_sizes(load_model("llama-3.1-8b"), world_size=8, seq_len=4096, gpu="h100-80gb")
    assert est.total_gib == pytest.approx(expected, abs=0.02)
    assert est.activations_gib == pytest.approx(acts / GIB, abs=0.01)
    assert est.optimizer_gib == pytest.approx(local * 8 / GIB, abs=0.01)
    assert est.total_gib == pytest.approx(est.params_gib + est.grads_gib + est.optimizer_gib + est.activations_gib,
                                          abs=0.03)


def test_full_checkpointing_keeps_layer_inputs_plus_one_layer():
    m = load_model("llama-3.1-8b")
    none = estimate_for_sizes(m, world_size=8, seq_len=4096)
    full = estimate_for_sizes(m, world_size=8, seq_len=4096, activation_checkpointing=True)
    h, v = 4096, 128256
    per_layer_full = 4096 * (none.activations_gib * GIB - 4 * 4096 * v) / (32 * 4096)
    expected = (32 * 4096 * 2 * h + per_layer_full + 4 * 4096 * v) / GIB
    assert full.activations_gib == pytest.approx(expected, abs=0.01)
    assert full.params_gib == none.params_gib and full.optimizer_gib == none.optimizer_gib
    selective = estimate_for_sizes(m, world_size=8, seq_len=4096, activation_checkpointing="selective")
    assert full.activations_gib < selective.activations_gib < none.activations_gib


def test_scaling_properties():
    m = load_model("llama-3.1-70b")
    base = dict(world_size=64, seq_len=4096)
    totals = [estimate_for_sizes(m, tp=t, **base).total_gib for t in (1, 2, 4, 8)]
    assert totals == sorted(totals, reverse=True) and len(set(totals)) == 4
    # More data-parallel ranks shard the state further; activations do not change.
    small, big = estimate_for_sizes(m, world_size=64, tp=8), estimate_for_sizes(m, world_size=128, tp=8)
    assert big.optimizer_gib == pytest.approx(small.optimizer_gib / 2, rel=0.01)
    assert big.activations_gib == small.activations_gib
    # Activations are linear in the sequence with flash attention; CP divides the sequence.
    s1 = estimate_for_sizes(m, world_size=64, tp=8, seq_len=4096)
    s2 = estimate_for_sizes(m, world_size=64, tp=8, seq_len=8192)
    assert s2.activations_gib == pytest.approx(2 * s1.activations_gib, rel=0.01)
    cp2 = estimate_for_sizes(m, world_size=64, tp=8, cp=2, seq_len=8192)
    assert cp2.activations_gib == pytest.approx(s1.activations_gib, rel=0.01)
    # FSDP shards over dp_shard*cp: trading dp_shard for cp keeps the sharded state the same.
    assert cp2.optimizer_gib == s2.optimizer_gib
    # Sequence parallelism also splits the norm/dropout activations by tp.
    sp = estimate_for_sizes(m, world_size=64, tp=8, seq_len=8192, sequence_parallel=True)
    assert sp.activations_gib < 0.5 * s2.activations_gib


def test_precision_peft_hsdp_and_ddp():
    m = load_model("llama-3.1-8b")
    fp32 = estimate_for_sizes(m, world_size=8)
    bf16 = estimate_for_sizes(m, world_size=8, weights_dtype="bf16")
    assert bf16.optimizer_gib == pytest.approx(fp32.optimizer_gib / 2, abs=0.01)
    peft = estimate_for_sizes(m, world_size=8, peft=True, weights_dtype="bf16")
    assert peft.grads_gib == 0 and peft.optimizer_gib == 0 and peft.params_gib == bf16.params_gib
    hsdp = estimate_for_sizes(m, world_size=8, dp_replicate=2)
    assert hsdp.optimizer_gib == pytest.approx(2 * fp32.optimizer_gib, rel=0.01)
    ddp = estimate_for_sizes(m, world_size=8, strategy="ddp")
    assert ddp.optimizer_gib == pytest.approx(8 * fp32.optimizer_gib, rel=0.01)


def test_expert_parallel_lowers_moe_memory():
    m = load_model("qwen3-30b-a3b")
    ep1 = estimate_for_sizes(m, world_size=8, ep=1)
    ep8 = estimate_for_sizes(m, world_size=8, ep=8)
    # Same sharded share of the experts (1/8 either way), but FSDP no longer gathers all 128 experts.
    assert ep8.optimizer_gib == pytest.approx(ep1.optimizer_gib, rel=0.01)
    assert ep8.params_gib < ep1.params_gib
    # ep 8 on 16 GPUs: experts split 8 ways and FSDP-sharded 2 ways over ep_shard.
    ep8_16 = estimate_for_sizes(m, world_size=16, ep=8)
    assert ep8_16.optimizer_gib < 0.6 * ep8.optimizer_gib


@pytest.mark.parametrize("layers,pp,schedule,lps", [
    (80, 4, "1f1b", None), (16, 4, "interleaved1f1b", None), (32, 4, "interleaved1f1b", 2),
    (61, 8, "1f1b", None), (16, 4, "zbvzerobubble", None), (30, 4, "gpipe", None), (16, 16, "1f1b", None),
])
def test_pipeline_layout_places_every_layer_once(layers, pp, schedule, lps):
    m = load_model("llama-3.2-1b")
    from dataclasses import replace

    m = replace(m, num_layers=layers)
    layout, _ = _stage_layout(m, Sizing(Layout.of("fsdp2", pp, pp=pp), pp_schedule=schedule, layers_per_stage=lps))
    ids = sorted(i for rank_ids, _, _ in layout.values() for i in rank_ids)
    assert ids == list(range(layers))
    assert sum(emb for _, emb, _ in layout.values()) == 1 and sum(head for _, _, head in layout.values()) == 1
    assert layout[0][1]  # the embedding lives on pipeline rank 0
    if schedule == "zbvzerobubble":
        assert layout[0][2]  # V placement: rank 0 also holds the last stage
    else:
        assert layout[pp - 1][2]


def test_first_stage_holds_pp_microbatches_under_1f1b():
    m = load_model("llama-3.1-70b")
    one = estimate_for_sizes(m, world_size=64, tp=8, pp=4, n_microbatches=1)
    eight = estimate_for_sizes(m, world_size=64, tp=8, pp=4, n_microbatches=8)
    gpipe = estimate_for_sizes(m, world_size=64, tp=8, pp=4, n_microbatches=8, pp_schedule="gpipe")
    assert eight.activations_gib > 3.5 * one.activations_gib  # 4 in flight vs 1
    assert gpipe.activations_gib > 1.9 * eight.activations_gib  # all 8 in flight


def test_estimate_for_sizes_rejects_bad_input():
    m = load_model("llama-3.1-8b")
    with pytest.raises(ValueError, match="divisible"):
        estimate_for_sizes(m, world_size=12, tp=8)
    with pytest.raises(ValueError, match="weights_dtype"):
        estimate_for_sizes(m, world_size=8, weights_dtype="fp8")
    with pytest.raises(ValueError, match="positive"):
        estimate_for_sizes(m, world_size=8, seq_len=0)
    with pytest.raises(ValueError):
        estimate_for_sizes(m, world_size=8, gpu="not-a-gpu")


# ------------------------------------------------------------------------------------------ reference scenarios


def test_reference_70b_on_64_h100_tp8_pp4_fits():
    r = recipe({"tp_size": 8, "pp_size": 4, "pipeline": {"pp_microbatch_size": 1}}, lbs=8, seq=4096)
    est, findings = estimate("llama-3.1-70b", derived(64, tp=8, pp=4), r)
    assert findings == []
    assert est.total_gib < MEMORY_TIGHT_FRACTION * H100.memory_gib and fits(est)
    assert est.gpu == "h100-80gb" and est.capacity_gib == H100.memory_gib
    text = " | ".join(est.assumptions)
    assert "dp_shard_cp" in text and "16 B per parameter" in text and "dataset.seq_len" in text
    assert "4 micro-batch(es) in flight" in text


def test_assumptions_are_the_same_lines_in_chinese():
    """Chinese reports list the assumptions in Chinese, line for line, with the same numbers and
    identifiers; only made-up sources ("default") are translated, recipe keys stay as they are."""
    import re

    r = recipe({"tp_size": 8, "pp_size": 4, "pipeline": {"pp_microbatch_size": 1}}, lbs=8, seq=4096)
    est, _ = estimate("llama-3.1-70b", derived(64, tp=8, pp=4), r)
    assert len(est.assumptions_zh) == len(est.assumptions) > 8
    assert est.assumptions_in("zh") == est.assumptions_zh and est.assumptions_in("en") == est.assumptions
    for en, zh in zip(est.assumptions, est.assumptions_zh):
        assert re.search(r"[\u4e00-\u9fff]", zh), zh
        assert sorted(re.findall(r"\d+", en)) == sorted(re.findall(r"\d+", zh)), (en, zh)
        for ident in re.findall(r"[a-z]+_[a-z_]+|dataset\.[a-z_]+", en):
            assert ident in zh, (ident, zh)
    moe, _ = estimate("qwen3-30b-a3b", derived(16, ep=8), recipe({"ep_size": 8}, lbs=2, seq=2048))
    assert any("路由专家" in a for a in moe.assumptions_zh)
    default, _ = estimate("llama-3.1-8b", derived(8), recipe({}, lbs=1, seq=None))
    assert any("4096（默认值）" in a for a in default.assumptions_zh)


def test_reference_70b_on_8_h100_pure_fsdp_does_not_fit():
    r = recipe({"strategy": "fsdp2"}, lbs=1, seq=8192)
    est, findings = estimate("llama-3.1-70b", derived(8), r)
    assert [f.code for f in findings] == ["MW-E-MEMORY"]
    f = findings[0]
    assert f.severity == "error" and f.path == "distributed" and f.upstream == "meshwise"
    assert est.total_gib > H100.memory_gib
    # The breakdown in both languages.
    for part in (est.params_gib, est.grads_gib, est.optimizer_gib, est.activations_gib):
        assert f"{part:.1f}" in f.message and f"{part:.1f}" in f.message_zh
    assert CJK.search(f.message_zh) and not CJK.search(f.message)
    # The knob that helps most here is activation checkpointing, and its number is reproducible.
    best = re.search(r"helps most: (.*?) \(-([\d.]+) GiB, to ([\d.]+) GiB\)", f.message)
    assert best and "activation_checkpointing" in best.group(1)
    with_ac = estimate_for_sizes(load_model("llama-3.1-70b"), world_size=8, seq_len=8192,
                                 activation_checkpointing=True)
    assert float(best.group(3)) == pytest.approx(with_ac.total_gib, abs=0.06)
    assert "activation_checkpointing" in f.message_zh


def test_reference_qwen3_moe_on_8_h100_fits_with_bf16_and_ac():
    r = recipe({"ep_size": 8, "activation_checkpointing": True}, lbs=4, seq=4096, dtype="bf16")
    est, findings = estimate("qwen3-30b-a3b", derived(8, ep=8), r)
    assert findings == [] and fits(est)
    no_ac = recipe({"ep_size": 8}, lbs=4, seq=4096, dtype="bf16")
    est2, findings2 = estimate("qwen3-30b-a3b", derived(8, ep=8), no_ac)
    assert [f.code for f in findings2] == ["MW-E-MEMORY"]
    assert est2.activations_gib > 3 * est.activations_gib


def test_tight_warning_between_90_and_100_percent():
    m = load_model("llama-3.1-8b")
    seq = next(s for s in range(4096, 65536, 256)
               if 0.9 * H100.memory_gib < estimate_for_sizes(m, world_size=8, seq_len=s, weights_dtype="bf16",
                                                             gpu=H100).total_gib <= H100.memory_gib)
    r = recipe({}, lbs=1, seq=seq, dtype="bf16")
    est, findings = estimate("llama-3.1-8b", derived(8), r)
    assert [f.code for f in findings] == ["MW-W-MEMORY-TIGHT"]
    pct = int(re.search(r"is (\d+)% of", findings[0].message).group(1))
    assert 90 <= pct <= 100
    assert findings[0].severity == "warning" and CJK.search(findings[0].message_zh)


def test_no_gpu_means_no_findings():
    r = recipe({}, lbs=64, seq=65536)
    est, findings = estimate("llama-3.1-405b", derived(8), r, gpu=None)
    assert findings == [] and est.capacity_gib is None and est.gpu is None and est.total_gib > 1000
    assert fits(est) is None


def test_recipe_fields_are_read():
    m = "llama-3.1-8b"
    default, _ = estimate(m, derived(8), {"distributed": {}})
    assert any("4096 (default)" in a for a in default.assumptions)
    packed, _ = estimate(m, derived(8), recipe({}, packed_sequence={"packed_sequence_size": 8192}))
    assert packed.activations_gib == pytest.approx(2 * default.activations_gib, rel=0.01)
    bf16, _ = estimate(m, derived(8), recipe({}, dtype="torch.bfloat16"))
    assert bf16.optimizer_gib == pytest.approx(default.optimizer_gib / 2, abs=0.01)
    lora, _ = estimate(m, derived(8), recipe({}, dtype="bf16", peft={"dim": 8}))
    assert lora.optimizer_gib == 0
    vision_only, _ = estimate(m, derived(8), recipe({"activation_checkpointing": True,
                                                     "activation_checkpointing_scope": "vision"}))
    assert vision_only.activations_gib == default.activations_gib


def test_ddp_of_a_large_model_suggests_fsdp2():
    r = recipe({"strategy": "ddp", "activation_checkpointing": True}, lbs=1, seq=2048)
    est, findings = estimate("llama-3.1-8b", derived(8, strategy="ddp"), r)
    assert [f.code for f in findings] == ["MW-E-MEMORY"]
    assert "switch strategy from ddp to fsdp2" in findings[0].message
    assert "fsdp2" in findings[0].message_zh


def test_combination_when_no_single_knob_fits():
    m = load_model("llama-3.1-70b")
    r = recipe({}, lbs=1, seq=16384, dtype="bf16")
    _, findings = estimate("llama-3.1-70b", derived(16), r)
    f = findings[0]
    combo = re.search(r"together (.*?) bring it to ([\d.]+) GiB", f.message)
    assert combo, f.message
    settings = dict(item.split(": ") for item in combo.group(1).split(", "))
    assert settings.get("activation_checkpointing") == "true"
    cp = int(settings.get("cp_size", 1))
    tp = int(settings.get("tp_size", 1))
    again = estimate_for_sizes(m, world_size=16, tp=tp, cp=cp, seq_len=16384, weights_dtype="bf16",
                               activation_checkpointing=True)
    assert float(combo.group(2)) == pytest.approx(again.total_gib, abs=0.06)
    assert again.total_gib <= MEMORY_TIGHT_FRACTION * H100.memory_gib
    assert "组合" in f.message_zh


def test_more_gpus_on_top_of_the_best_knob():
    m = load_model("llama-3.1-70b")
    _, findings = estimate("llama-3.1-70b", derived(8), recipe({}, lbs=1, seq=8192, dtype="bf16"))
    more = re.search(r"use more GPUs: (\d+) GPUs .*?with activation_checkpointing: true, bring it to ([\d.]+) GiB",
                     findings[0].message)
    assert more, findings[0].message
    again = estimate_for_sizes(m, world_size=int(more.group(1)), seq_len=8192, weights_dtype="bf16",
                               activation_checkpointing=True)
    assert float(more.group(2)) == pytest.approx(again.total_gib, abs=0.06)


@pytest.mark.timeout(30)
def test_huge_batch_sizes_stay_cheap():
    # local_batch_size from a hostile recipe: the knob search must not enumerate it.
    r = recipe({"pp_size": 2, "pipeline": {"pp_microbatch_size": 10**15}}, lbs=10**18, seq=8192)
    est, findings = estimate("llama-3.1-70b", derived(16, pp=2), r)
    assert [f.code for f in findings] == ["MW-E-MEMORY"] and est.total_gib > 1e6


def test_an_estimate_without_assumptions_has_the_same_figures():
    from assistant.validator.layout import Layout
    from assistant.validator.memory import estimate_for_layout
    from assistant.validator.models import load_model

    facts, lay = load_model("llama-3.1-70b"), Layout.of("fsdp2", 16, tp=8, pp=2)
    full = estimate_for_layout(facts, lay, gpu="h100-80gb")
    bare = estimate_for_layout(facts, lay, gpu="h100-80gb", assumptions=False)
    assert bare.total_gib == full.total_gib and bare.params_gib == full.params_gib
    assert full.assumptions and bare.assumptions == () and bare.assumptions_zh == ()
