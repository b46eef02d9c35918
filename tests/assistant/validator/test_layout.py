"""Layout: the one home of the size arithmetic. Values checked against upstream's formulas
(mesh_utils._create_fsdp2_device_mesh, _create_megatron_fsdp_device_mesh) and the rule codes."""
from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest

from assistant.validator import validate
from assistant.validator.capabilities import accepts, capabilities
from assistant.validator.layout import Layout


def codes(findings):
    return [f.code for f in findings]


def test_fsdp2_sizes_and_meshes():
    lay = Layout.of("fsdp2", 64, tp=2, pp=4, cp=2, ep=4, dp_replicate=2)
    assert (lay.dp, lay.dp_shard, lay.non_pp) == (4, 2, 16)
    assert lay.mesh_dim_names == ("pp", "dp_replicate", "dp_shard", "cp", "tp")
    assert lay.mesh_shape == (4, 2, 2, 2, 2)
    assert (lay.ep_shard, lay.moe_mesh_shape) == (4, (4, 4))
    assert lay.features == {"tp", "pp", "cp", "ep", "hsdp"}
    assert lay.findings() == []
    with pytest.raises(FrozenInstanceError):
        lay.tp = 4  # type: ignore[misc]


def test_ep_shard_is_one_when_ep_covers_the_stage_and_none_without_ep():
    assert Layout.of("fsdp2", 8, ep=8).ep_shard == 1
    assert Layout.of("fsdp2", 8, tp=2, ep=8).moe_mesh_shape == (1, 8)
    assert Layout.of("fsdp2", 8).ep_shard is None and Layout.of("fsdp2", 8).moe_mesh_shape is None


def test_megatron_and_ddp():
    m = Layout.of("mfsdp", 16, tp=2, cp=2)
    assert (m.strategy, m.dp, m.mesh_shape, m.mesh_dim_names) == ("megatron_fsdp", 4, (4, 2, 2), ("dp", "cp", "tp"))
    d = Layout.of("DDP", 8)
    assert (d.dp, d.dp_shard, d.mesh_shape, d.derived().dp_replicate_size) == (8, 1, (), 8)
    assert codes(Layout.of("ddp", 8, tp=2, cp=2).findings()) == ["MW-E-DDP-PARALLEL", "MW-E-DDP-PARALLEL"]
    assert codes(Layout.of("megatron_fsdp", 8, pp=2, ep=2).findings()) == ["MW-E-MEGATRON-PP", "MW-E-MEGATRON-EP"]


@pytest.mark.parametrize("layout, code, text", [
    (Layout.of("fsdp2", 48, tp=8, pp=4), "MW-E-WORLD-DIVISIBLE", "world_size (48) must be divisible by tp_size*cp_size*pp_size (8*1*4 = 32)"),
    (Layout.of("fsdp2", 16, dp_replicate=3), "MW-E-DP-REPLICATE-DIVIDES", "16 % 3 = 1"),
    (Layout.of("fsdp2", 8, dp_replicate=8), "MW-E-DP-REPLICATE-LT-DP", "dp_replicate_size (8) must be less than dp_size (8)"),
    (Layout.of("fsdp2", 12, ep=8), "MW-E-EP-DIVIDES", "12 % 8 = 4"),
    (Layout.of("fsdp2", 8, dp=1), "MW-E-DP-MISMATCH", "explicit dp_size = 1"),
    (Layout.of("megatron_fsdp", 8, dp=1), "MW-E-DP-MISMATCH", "dp_size*cp_size*tp_size"),
    (Layout.of("ddp", 8, dp_replicate=2), "MW-E-HSDP-STRATEGY", "dp_replicate_size = 2"),
])
def test_each_rule_once_with_its_arithmetic(layout, code, text):
    found = layout.findings()
    assert codes(found) == [code]
    assert text in found[0].message


def test_dp_resolution_and_with_sizes():
    lay = Layout.of("fsdp2", 32, tp=4)
    assert lay.dp == 8 and not lay.dp_explicit
    assert lay.with_sizes(tp=8).dp == 4  # re-inferred
    assert lay.with_sizes(world_size=64).dp_shard == 16
    explicit = Layout.of("fsdp2", 32, tp=4, dp=8)
    assert explicit.with_sizes(tp=8).dp == 8  # an explicit dp is kept, and now does not fit
    assert codes(explicit.with_sizes(tp=8).findings()) == ["MW-E-DP-MISMATCH"]
    assert lay.grad_acc_steps(64, 2) == 4 and lay.grad_acc_steps(60, 2) is None


def test_topology_advice_only_for_a_working_layout():
    assert codes(Layout.of("fsdp2", 16, gpus_per_node=4, tp=8).findings()) == ["MW-W-TP-CROSS-NODE"]
    assert codes(Layout.of("fsdp2", 12, gpus_per_node=8).findings()) == ["MW-W-WORLD-NOT-NODE-MULTIPLE"]
    assert codes(Layout.of("fsdp2", 12, gpus_per_node=8, tp=8).findings()) == ["MW-E-WORLD-DIVISIBLE"]


def test_the_validator_reports_the_layout_it_built():
    r = validate({"tp_size": 2, "ep_size": 8, "pp_size": 2, "pipeline": {}}, world_size=32, suggest_fix=False)
    assert r.ok
    lay = Layout.from_derived(r.derived, r.gpus_per_node)
    assert lay.derived() == r.derived and Layout.from_report(r) == lay
    assert Layout.from_report(validate({"ep_size": 16}, world_size=8, suggest_fix=False)) is None
    assert (lay.ep_shard, r.derived.ep_shard_size) == (2, 2)  # dp*cp*tp = 8*1*2 = 16 over ep 8


def test_capabilities_come_from_the_schema():
    assert capabilities("fsdp2").accepts == {"tp", "pp", "cp", "ep", "hsdp", "sp", "ac_selective"}
    assert capabilities("megatron-fsdp").refusals == {"hsdp": "MW-E-HSDP-STRATEGY", "pp": "MW-E-MEGATRON-PP",
                                                     "ep": "MW-E-MEGATRON-EP", "sp": "MW-E-STRATEGY-OPTION",
                                                     "ac_selective": "MW-E-AC-SELECTIVE"}
    assert capabilities("ddp").accepts == {"ac_selective"}
    assert accepts("ddp", "ac_selective") and not accepts("megatron_fsdp", "sp")
    # each refusal is what the validator says for that feature on that strategy
    cases = {"sp": {"sequence_parallel": True}, "ac_selective": {"activation_checkpointing": "selective"},
             "hsdp": {"dp_replicate_size": 2}, "tp": {"tp_size": 2}, "pp": {"pp_size": 2, "pipeline": {}},
             "cp": {"cp_size": 2}, "ep": {"ep_size": 2}}
    for strategy in ("fsdp2", "megatron_fsdp", "ddp"):
        caps = capabilities(strategy)
        for feature, extra in cases.items():
            r = validate({"strategy": strategy, **extra}, world_size=8, suggest_fix=False)
            want = caps.refuses(feature)
            assert (want in r.codes) if want else r.ok, (strategy, feature, r.codes)


def test_node_replicas_shards_inside_a_node():
    assert Layout.of("fsdp2", 64, gpus_per_node=8).node_replicas == 8  # 8 nodes: a group per node
    assert Layout.of("fsdp2", 32, gpus_per_node=8, tp=2).node_replicas == 4  # dp 16, 4 dp ranks per node
    assert Layout.of("fsdp2", 64, gpus_per_node=8, pp=2).node_replicas == 4  # dp 32 over 8 per node
    assert Layout.of("fsdp2", 8, gpus_per_node=8).node_replicas is None  # one node: nothing to replicate
    assert Layout.of("megatron_fsdp", 32, gpus_per_node=8).node_replicas is None


def test_mesh_ok_agrees_with_mesh_errors_on_every_small_layout():
    # the planner's fast test and the validator's findings are one set of checks
    from itertools import product

    from assistant.validator.layout import Layout

    for strategy, world, tp, pp, cp, ep, dpr in product(("fsdp2", "megatron_fsdp", "ddp"), (6, 8, 12, 16),
                                                        (1, 2, 4), (1, 2, 3), (1, 2), (1, 2, 8), (1, 2, 4)):
        lay = Layout.of(strategy, world, tp=tp, pp=pp, cp=cp, ep=ep, dp_replicate=dpr)
        assert lay.mesh_ok == (lay.mesh_errors() == [])


def test_batch_sizes_solved_back_from_the_grad_acc_steps_agree_with_the_forward_quotient():
    lay = Layout.of("fsdp2", 64, tp=8)  # dp 8
    assert lay.local_batch_for(512, 4) == 16 and lay.grad_acc_steps(512, 16) == 4
    assert lay.local_batch_for(100, 4) is None  # 100 / (4 * 8) is no whole size
    assert lay.global_batch_for(2, 4) == 64 and lay.grad_acc_steps(64, 2) == 4
