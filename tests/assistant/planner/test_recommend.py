"""Planner scenarios. Every feasible plan must pass the validator at the user's numbers."""
from __future__ import annotations

import re

import pytest
import yaml

from assistant.answer import Turn
from assistant.planner.plan import Plan
from assistant.planner.recommend import plan
from assistant.understand.query import Params
from assistant.understand.understand import understand
from assistant.validator import validate

_CJK = re.compile(r"[\u4e00-\u9fff]")


def _revalidate(p: Plan, *, model=None, gpu=None):
    return validate(p.yaml, world_size=p.world_size, gpus_per_node=p.gpus_per_node, model=model, gpu=gpu)


def _check(p: Plan, *, model=None, gpu=None) -> dict:
    """The invariants every plan keeps; returns the distributed mapping."""
    data = yaml.safe_load(p.yaml)
    assert data["distributed"] == p.distributed
    dist = p.distributed
    assert "dp_size" not in dist
    assert all(dist.get(k, 2) != 1 for k in ("tp_size", "pp_size", "cp_size", "ep_size"))  # defaults left out
    assert ("pipeline" in dist) == (dist.get("pp_size", 1) > 1)
    assert ("moe" in dist) == (dist.get("ep_size", 1) > 1)
    if p.feasible:
        assert p.report.ok, p.report.codes
        again = _revalidate(p, model=model, gpu=gpu)
        assert again.ok, again.codes
    for step in p.arithmetic:
        assert step.en.strip() and step.zh.strip()  # formulas may read the same in both languages
    for step in (*p.rationale, *p.assumptions, *p.rejected):
        assert step.en.strip() and _CJK.search(step.zh), step
    return dist


def test_single_gpu():
    p = plan(Params(world_size=1, model_size_b=1.0))
    assert _check(p) == {"strategy": "fsdp2"}
    assert p.feasible and p.world_size == 1


def test_8_gpus_8b():
    # review: this test asserted tp_size 2 (the skill doc's "3-13B: TP 2-4"); upstream's own recipes for
    # 8B on 8 GPUs (examples/llm_finetune/llama3_1/llama3_1_8b_hellaswag_fp8.yaml, _squad_qlora.yaml,
    # qwen/qwen3_8b_squad_spark.yaml) run fsdp2 with tp_size 1, dp 8.
    p = plan(understand("Llama 3.1 8B on 8 GPUs"))
    d = _check(p, model="llama-3.1-8b")
    assert d["strategy"] == "fsdp2" and d.get("tp_size", 1) == 1
    assert any("8 / (1*1*1) = 8" in s.en for s in p.arithmetic)


def test_8b_on_80gb_stays_tp1_with_the_memory_estimate_as_reason():
    p = plan(understand("Llama 3.1 8B full fine-tune on 8 H100s"))
    d = _check(p, model="llama-3.1-8b")
    assert d.get("tp_size", 1) == 1
    tier = next(s for s in p.rationale if "3-13B" in s.en)
    assert "tp_size 1: the memory estimate is" in tier.en and "GiB per GPU of 79.6 GiB" in tier.en
    assert "tp_size 1：单卡显存估算为" in tier.zh


def test_8b_on_24gb_takes_tp_because_tp1_is_over_memory():
    p = plan(understand("Llama 3.1 8B full fine-tune on 8 RTX 4090 24GB"))
    d = _check(p, model="llama-3.1-8b")
    assert d.get("tp_size", 1) > 1
    tier = next(s for s in p.rationale if "3-13B" in s.en)
    assert f"tp_size {d['tp_size']}: with tp_size 1 the estimate is over" in tier.en
    assert p.report.memory is not None and p.report.memory.total_gib <= p.report.memory.capacity_gib


def test_70b_on_8_nodes_with_tp_and_pp():
    q = understand("I am training a 70B LLM on 8 nodes x 8 GPUs and want tensor plus pipeline parallelism. "
                   "Which distributed strategy should I use?")
    p = plan(q)
    d = _check(p)
    assert (d["strategy"], d["tp_size"], d["pp_size"]) == ("fsdp2", 8, 4)
    assert d["pipeline"]["pp_schedule"] in ("1f1b", "interleaved1f1b")
    assert p.report.derived.dp_size == 2
    assert any(s.en == "dp_size = world_size / (tp_size * pp_size * cp_size) = 64 / (8*4*1) = 2" for s in p.arithmetic)
    assert any("dp_size = world_size / (tp_size * pp_size * cp_size) = 64 / (8*4*1) = 2" in s.zh for s in p.arithmetic)
    # enough microbatches for the pipeline, stated with numbers
    sched = yaml.safe_load(p.yaml)["step_scheduler"]
    assert sched["local_batch_size"] // d["pipeline"]["pp_microbatch_size"] >= 4


def test_70b_eval_question_in_chinese_gives_the_same_plan():
    en = plan(understand("I am training a 70B LLM on 8 nodes and want tensor plus pipeline parallelism."))
    zh = plan(understand("我在 8 个节点上训练 70B 模型，想用张量并行加流水线并行。"))
    assert en.distributed == zh.distributed and en.feasible and zh.feasible
    assert any("assumed 8" in s.en for s in en.assumptions)


def test_405b_fits_memory():
    p = plan(understand("Llama 3.1 405B on 16 nodes x 8 H100"))
    d = _check(p, model="llama-3.1-405b", gpu="h100-80gb")
    assert d["tp_size"] == 8 and d["pp_size"] >= 2
    m = p.report.memory
    assert m is not None and m.total_gib <= m.capacity_gib


def test_qwen3_moe_on_8_gpus_uses_ep_8():
    p = plan(understand("Qwen3-30B-A3B on 8 GPUs"))
    d = _check(p, model="qwen3-30b-a3b")
    assert d["ep_size"] == 8 and d.get("tp_size", 1) == 1 and "moe" in d
    assert p.report.derived.ep_shard_size == 1
    assert any("ep_shard_size = 8 / 8 = 1" in s.en for s in p.arithmetic)
    assert any("128 / 8 = 16" in s.en for s in p.arithmetic)


def test_deepseek_v3_on_256_gpus():
    p = plan(understand("DeepSeek-V3 on 256 GPUs"))
    d = _check(p, model="deepseek-v3")
    ep, pp, tp = d["ep_size"], d.get("pp_size", 1), d.get("tp_size", 1)
    assert ep >= 8 and 256 % ep == 0
    dp = 256 // (tp * pp)
    assert (dp * tp) % ep == 0 and pp >= 2


def test_long_sequence_gets_context_parallelism():
    p = plan(understand("Llama 3.1 8B with 128K context on 8 GPUs"))
    d = _check(p, model="llama-3.1-8b")
    assert d.get("cp_size", 1) >= 2
    assert any("131072" in s.en for s in p.arithmetic)


def test_megatron_with_pp_becomes_fsdp2_with_a_rejection():
    q = understand("Recommend megatron_fsdp with pp_size 4 for a 70B model on 64 GPUs")
    p = plan(q)
    d = _check(p)
    assert d["strategy"] == "fsdp2" and d["pp_size"] == 4
    assert any("megatron_fsdp" in s.en and "MW-E-MEGATRON-PP" in s.en for s in p.rejected)
    # the rejection matches what the validator says about the user's own config
    theirs = validate({"strategy": "megatron_fsdp", "pp_size": 4, "pipeline": {}}, world_size=64)
    assert "MW-E-MEGATRON-PP" in theirs.codes


def test_megatron_eval_question_rejects_pp_ep_and_sp():
    p = plan(understand("Can I use megatron_fsdp if I need pipeline parallelism, expert parallelism, or sequence_parallel?"))
    _check(p)
    assert p.strategy == "fsdp2"
    text = " ".join(s.en for s in p.rejected)
    assert "pipeline" in text and "expert" in text and "sequence_parallel" in text


def test_megatron_is_kept_when_it_covers_the_need():
    p = plan(understand("megatron_fsdp for Llama 3.1 8B on 8 GPUs"))
    d = _check(p, model="llama-3.1-8b")
    assert d["strategy"] == "megatron_fsdp" and "pp_size" not in d and not p.rejected


def test_ddp_with_tp_becomes_fsdp2():
    p = plan(understand("I want ddp with TP on 8 GPUs for an 8B model"))
    d = _check(p)
    assert d["strategy"] == "fsdp2" and d["tp_size"] >= 2
    assert any("ddp" in s.en and "tensor parallelism" in s.en for s in p.rejected)


def test_ddp_is_kept_for_a_small_model():
    p = plan(understand("ddp for Llama 3.2 1B on 8 GPUs"))
    d = _check(p, model="llama-3.2-1b")
    assert d == {"strategy": "ddp"} and not p.rejected


def test_ddp_rejected_when_a_replica_does_not_fit():
    p = plan(understand("Use ddp for a 70B model on 64 GPUs"))
    _check(p)
    assert p.strategy == "fsdp2" and any("replica" in s.en for s in p.rejected)


def test_world_7_with_tp_8_is_infeasible_with_closest_valid():
    p = plan(understand("world size 7 with tp 8"))
    d = _check(p)
    assert not p.feasible and p.infeasible_reason is not None
    assert "7" in p.infeasible_reason.en and "8" in p.infeasible_reason.en and _CJK.search(p.infeasible_reason.zh)
    assert p.report.ok and "tp_size" not in d  # the closest valid config at world size 7
    assert validate(p.yaml, world_size=7).ok


def test_excluded_pp_is_respected():
    p = plan(understand("Llama 3.1 70B on 8 nodes x 8 GPUs, no pipeline parallelism"))
    d = _check(p, model="llama-3.1-70b")
    assert "pp_size" not in d and d["tp_size"] == 8


def test_sizes_fixed_by_the_user_are_kept():
    p = plan(understand("70B on 16 GPUs with tp_size 4 and pp_size 2"))
    d = _check(p)
    assert (d["tp_size"], d["pp_size"]) == (4, 2)


def test_hsdp_when_asked():
    p = plan(understand("Llama 3.1 8B on 4 nodes x 8 GPUs with HSDP"))
    d = _check(p, model="llama-3.1-8b")
    assert d["strategy"] == "fsdp2" and d["dp_replicate_size"] > 1
    dp = p.report.derived.dp_size
    assert dp % d["dp_replicate_size"] == 0 and d["dp_replicate_size"] < dp


def test_ep_divides_experts_and_the_non_pp_group():
    p = plan(understand("an MoE with 64 experts on 48 GPUs, 6 nodes x 8"))
    d = _check(p)
    ep = d["ep_size"]
    non_pp = 48 // d.get("pp_size", 1)
    assert 64 % ep == 0 and non_pp % ep == 0


def test_grad_accumulation_from_batch_sizes():
    p = plan(understand("Llama 3.1 8B on 16 GPUs, global batch size 512, local batch size 4"))
    _check(p, model="llama-3.1-8b")
    dp = p.report.derived.dp_size
    assert p.report.derived.grad_acc_steps == 512 // (4 * dp)
    assert any(s.en.startswith("grad_acc_steps = global_batch_size / (local_batch_size * dp_size) = 512 / (4*") for s in p.arithmetic)


def test_impossible_batch_sizes_are_infeasible():
    p = plan(understand("8B on 8 GPUs, global batch size 6, local batch size 4"))
    _check(p)
    assert not p.feasible and p.report.ok and "global_batch_size" in p.infeasible_reason.en


def test_mixtral_ep_request_is_rejected():
    p = plan(understand("Mixtral 8x7B on 16 GPUs with expert parallelism"))
    d = _check(p, model="mixtral-8x7b")
    assert "ep_size" not in d and any("ep_size > 1" in s.en for s in p.rejected)
    # why, in upstream's terms: the HF class it loads through lacks the MoE mixin the capability check wants
    why = next(s for s in p.rejected if "ep_size > 1" in s.en)
    for part in ("Mixtral 8x7B", "`MixtralForCausalLM`", "`MoEFSDPSyncMixin`", "`validate_for_mesh`"):
        assert part in why.en and part in why.zh


def test_four_gpu_nodes_keep_tp_inside_a_node():
    p = plan(Params(model_size_b=70.0, nodes=8, gpus_per_node=4))
    d = _check(p)
    assert d.get("tp_size", 1) <= 4 and p.world_size == 32
    assert "MW-W-TP-CROSS-NODE" not in p.report.codes


def test_defaults_are_stated_as_assumptions():
    p = plan(Params())
    _check(p)
    assert p.world_size == 8 and p.gpus_per_node == 8
    assert any("World size not given" in s.en for s in p.assumptions)


def test_explicit_arguments_win_over_the_text():
    p = plan(understand("70B on 64 GPUs"), world_size=16, gpus_per_node=8)
    _check(p)
    assert p.world_size == 16


def test_follow_up_replans_with_the_new_node_count():
    history = (Turn("user", "70B on 8 nodes x 8 GPUs with TP+PP"), Turn("assistant", "tp 8, pp 4"))
    p = plan(understand("what if only 4 nodes?", history))
    d = _check(p)
    assert p.world_size == 32 and (d["tp_size"], d["pp_size"]) == (8, 4) and p.report.derived.dp_size == 1
    pz = plan(understand("如果只有 4 个节点呢?", history))
    assert pz.distributed == p.distributed


def test_memory_infeasible_is_never_marked_feasible():
    p = plan(understand("Llama 3.1 70B on 8 H100"))
    _check(p, model="llama-3.1-70b", gpu="h100-80gb")
    assert not p.feasible and not p.report.ok and "MW-E-MEMORY" in p.report.codes
    assert "GiB" in p.infeasible_reason.en


WORLDS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64, 128, 256)
ASKS = (
    "", "with TP+PP", "no PP", "128K context", "with HSDP", "with expert parallelism", "megatron_fsdp",
    "ddp", "tp 8", "global batch size 96",
)
MODELS = ("", "Llama 3.2 1B", "Llama 3.1 8B", "Llama 3.1 70B", "Qwen3-30B-A3B", "DeepSeek-V3", "Mixtral 8x7B", "a 13B model")


@pytest.mark.parametrize("world", WORLDS)
def test_every_feasible_plan_is_valid(world):
    for i, model in enumerate(MODELS):
        for ask in ASKS[i % 3:: 3]:
            q = understand(f"{model} on {world} GPUs {ask}".strip())
            p = plan(q)
            assert p.world_size == world
            _check(p, model=q.params.model)
            if not p.feasible:
                assert p.infeasible_reason is not None


def test_bad_world_sizes_are_refused():
    with pytest.raises(ValueError):
        plan(Params(), world_size=0)
    with pytest.raises(ValueError):
        plan(Params(world_size=1 << 30))


# --- property: whatever the request, a feasible plan is valid, an infeasible one says why -------

from hypothesis import given, settings, strategies as st  # noqa: E402

_FEATURES = st.frozensets(st.sampled_from(["tp", "pp", "cp", "ep", "hsdp", "sp", "ac", "packing"]), max_size=3)


@settings(max_examples=60, deadline=None)
@given(
    world=st.integers(1, 96),
    gpn=st.sampled_from([None, 1, 2, 4, 8]),
    model=st.sampled_from([None, "llama-3.2-1b", "llama-3.1-8b", "llama-3.1-70b", "qwen3-30b-a3b", "mixtral-8x7b"]),
    size=st.sampled_from([None, 0.5, 7.0, 34.0, 120.0]),
    moe=st.sampled_from([None, True, False]),
    wanted=_FEATURES,
    unwanted=_FEATURES,
    strategy=st.sampled_from([None, "fsdp2", "megatron_fsdp", "ddp"]),
    tp=st.sampled_from([None, 1, 2, 3, 8]),
    seq=st.sampled_from([None, 2048, 32768, 131072]),
    gbs=st.sampled_from([None, 7, 64, 96]),
)
def test_any_request_gives_an_honest_plan(world, gpn, model, size, moe, wanted, unwanted, strategy, tp, seq, gbs):
    p = Params(model=model, model_size_b=size, is_moe=moe, world_size=world, gpus_per_node=gpn,
               wanted=wanted - unwanted, unwanted=unwanted, strategy=strategy, tp_size=tp, seq_len=seq,
               global_batch_size=gbs)
    result = plan(p)
    _check(result, model=model)
    if not result.feasible:
        assert result.infeasible_reason is not None and result.infeasible_reason.en
    if strategy and result.strategy != strategy:
        assert result.rejected


# --- phrasings the eval set exposed ------------------------------------------------------------------

def test_asking_whether_tp_is_needed_keeps_a_small_model_on_dp_only():
    p = plan(understand("Training a 1B model on 4 GPUs in one workstation with 2K sequences. "
                        "Do I need tensor parallelism at all?"))
    d = _check(p)
    assert "tp_size" not in d and "cp_size" not in d and p.world_size == 4


def test_minimum_world_size_from_the_stated_sizes():
    p = plan(understand("How many GPUs do I need at minimum for tp 8, pp 4 and cp 2 with at least 2 data-parallel replicas?"))
    d = _check(p)
    assert p.feasible and p.world_size == 128
    assert (d["tp_size"], d["pp_size"], d["cp_size"]) == (8, 4, 2)
    assert any("8 * 4 * 2 * 2 = 128" in s.en for s in p.arithmetic)
    assert any("128" in s.zh for s in p.assumptions)


def test_minimum_world_size_rounds_up_to_whole_nodes():
    p = plan(understand("tp 4, pp 3 and dp 3: how many GPUs?"))
    _check(p)
    assert p.world_size % 8 == 0 and p.world_size % 36 == 0


def test_stated_world_size_wins_over_the_sizes():
    p = plan(understand("64 GPUs, tp 8, pp 4, dp 2: what is dp_size?"))
    _check(p)
    assert p.world_size == 64


def test_hsdp_described_as_shard_inside_replicate_across():
    q = understand("Two nodes of 8 GPUs, 8B model. I want to cut cross-node traffic for gradient sync by "
                   "sharding inside each node and replicating across nodes. How?")
    p = plan(q)
    d = _check(p)
    assert d.get("dp_replicate_size") == 2
    assert any("must divide dp_size and be smaller" in s.en and "2 < " in s.en for s in p.arithmetic)


def test_chinese_counts_glued_to_text():
    p = plan(understand("我们有256张卡，要训练一个700亿参数的稠密模型，张量并行和流水线并行分别设多少合适？"))
    d = _check(p)
    assert p.world_size == 256 and d["tp_size"] in (4, 8) and d["pp_size"] in (2, 4, 8)
    p = plan(understand("70B 模型 8 机训练，TP + PP 用哪个 strategy？"))
    _check(p)
    assert p.world_size == 64


def test_stated_pipeline_microbatch_that_breaks_the_count_is_explained():
    q = understand("With pp_size 2, local_batch_size 4 and pp_microbatch_size 4, my run asserts at startup. What's wrong?")
    p = plan(q)
    d = _check(p)
    assert not p.feasible and p.report.ok  # the closest valid config, shown with the reason
    assert d["pp_size"] == 2 and d["pipeline"]["pp_microbatch_size"] == 1
    assert "MW-E-PP-MICROBATCH-COUNT" in p.infeasible_reason.en and "4 // pp_microbatch_size 4 = 1" in p.infeasible_reason.en
    assert "MW-E-PP-MICROBATCH-COUNT" in p.infeasible_reason.zh


def test_stated_pipeline_microbatch_that_fits_is_kept():
    p = plan(understand("pp_size 2, local_batch_size 8, pp_microbatch_size 2 on 16 GPUs"))
    d = _check(p)
    assert p.feasible and d["pipeline"]["pp_microbatch_size"] == 2


def test_ep_size_asked_in_chinese_is_kept():
    p = plan(understand("Moonlight-16B-A3B（64 个专家）16 张卡，ep_size 能设 16 吗？"))
    d = _check(p, model="moonlight-16b-a3b")
    assert d["ep_size"] == 16 and p.feasible


def test_formula_in_the_question_adds_no_parallelism():
    p = plan(understand("On 8 GPUs, is {tp_size 2, ep_size 8} valid? The skill doc says ep_size must divide "
                        "dp_size * cp_size, and dp is only 4."))
    d = _check(p)
    assert (d.get("tp_size"), d.get("ep_size"), d.get("cp_size")) == (2, 8, None)
    assert any("= 4" in s.en and s.en.startswith("dp_size") for s in p.arithmetic)


def test_tp_on_a_gpu_without_nvlink_is_not_described_as_nvlink():
    """kb/gpus.yaml says the RTX 4090 is PCIe only: the rationale must say so in both languages."""
    p = plan(understand("Llama 3.1 8B full fine-tune on 8 RTX 4090s"))
    d = _check(p)
    assert d.get("tp_size", 1) > 1  # 24 GB needs TP for 8B here; the claim under test is about the link
    tp_steps = [s for s in p.rationale if s.en.startswith("tp_size")]
    assert tp_steps and all("no NVLink" in s.en and "PCIe" in s.en and "没有 NVLink" in s.zh for s in tp_steps)
    h100 = plan(understand("Llama 3.1 70B on 8 nodes of 8 H100"))
    assert any("(NVLink)" in s.en for s in h100.rationale if s.en.startswith("tp_size"))


def test_hsdp_replicas_are_one_group_per_node():
    # 8 nodes x 8: a sharding group per node is 8 replicas (the search used to settle on 2)
    d = _check(plan(understand("HSDP for an 8B model on 8 nodes x 8 GPUs")))
    assert d["dp_replicate_size"] == 8
    d = _check(plan(understand("HSDP with tp_size 2 on 4 nodes x 8 GPUs")))
    assert (d["tp_size"], d["dp_replicate_size"]) == (2, 4)  # dp 16, 4 data-parallel ranks per node


def test_a_fixed_tp_larger_than_a_node_is_never_called_inside_one_node():
    # "tp 直接拉满 16" on two 8-GPU nodes: the rationale said "tp_size 16 stays inside one node of 8 GPUs"
    p = plan(understand("2 nodes of 8 GPUs, give me a config with tp_size 16"))
    _check(p)
    text = " ".join(s.en for s in p.rationale)
    assert "inside one node of 8" not in text and "MW-W-TP-CROSS-NODE" in text


def test_a_stated_expert_count_is_validated_with_no_model_named():
    # issue 18: "64 experts, ep 12 on 48 GPUs": 48 % 12 == 0 but 64 % 12 = 4 (components/moe/experts.py)
    p = plan(Params(world_size=48, ep_size=12, num_experts=64, is_moe=True))
    assert p.distributed.get("ep_size") != 12 and 64 % p.distributed.get("ep_size", 1) == 0
    assert not any("64 / 12" in s.en for s in p.arithmetic)


def test_a_long_sequence_with_cp_excluded_checkpoints_activations():
    # sizing.yaml gives 64k tokens CP; with CP (and PP) excluded, checkpointing is the memory lever left
    p = plan(Params(world_size=8, gpus_per_node=8, seq_len=65536, unwanted=frozenset({"cp", "pp"})))
    dist = _check(p)
    assert dist.get("activation_checkpointing") is True and "cp_size" not in dist and "pp_size" not in dist


def test_one_plan_validates_each_recipe_once(monkeypatch):
    """The validator is pure: within one plan() a recipe met again (each dropped request repeats the
    search) reuses its report, and the plan is the same as without the memo (issue 21)."""
    import assistant.planner.recommend as rec
    from assistant.understand.understand import understand

    q = understand("Qwen3-235B-A22B on 16 nodes x 8 H100, suggest tp, pp and ep")
    seen: list = []
    real = rec.validate

    def counting(recipe, **kw):
        seen.append((rec._frozen(recipe), tuple(sorted(kw.items()))))
        return real(recipe, **kw)

    monkeypatch.setattr(rec, "validate", counting)
    p = rec.plan(q)
    assert len(seen) == len(set(seen)) > 100  # 702 calls for 302 recipes before
    seen.clear()
    monkeypatch.setattr(rec, "_REPORTS", rec.ContextVar("no_memo", default=None))
    unmemoised = rec._plan(q, gpus_per_node=None, world_size=None, model=None, gpu=None)
    assert len(seen) > len(set(seen))
    assert (p.yaml, p.report, p.feasible, p.infeasible_reason) == \
        (unmemoised.yaml, unmemoised.report, unmemoised.feasible, unmemoised.infeasible_reason)


def test_the_memo_key_tells_true_from_one():
    from assistant.planner.recommend import _frozen

    assert _frozen({"a": True}) != _frozen({"a": 1}) and _frozen({"a": 1, "b": 2}) != _frozen({"b": 2, "a": 1})
