"""Model-aware warnings: does the layout fit the model's heads, experts, layers and sequence length?

Called by the validator only when a model is known. Every check reads the resolved sizes from
`Derived` and the rest from the (coerced) distributed mapping and the recipe.
"""
from __future__ import annotations

import math

from assistant.validator.layout import Layout
from assistant.validator.models import ModelFacts
from assistant.validator.report import Derived, Finding
from assistant.validator.rules import make_finding
from assistant.validator.schedules import is_accepted
from assistant.validator.workload import SINGLE_STAGE_SCHEDULES, Workload, as_bool, read_workload

_MAX_LISTED = 8


def _listed(values: list[int]) -> str:
    shown = values[:_MAX_LISTED]
    text = ", ".join(str(v) for v in shown)
    return text + (", ..." if len(values) > _MAX_LISTED else "") if values else "none"


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0] if n <= 100_000 else [1, n]


def check_model(derived: Derived, dist: dict, recipe: dict, facts: ModelFacts) -> list[Finding]:
    """Warnings for a layout that upstream accepts at start-up but that cannot run this model well or at all."""
    dist = dist if isinstance(dist, dict) else {}
    work = read_workload(dist, recipe, pp_size=derived.pp_size)
    out: list[Finding] = []
    out += _check_tp(derived, work, facts)
    out += _check_ep(derived, facts)
    out += _check_pp(derived, work, facts)
    out += _check_cp(derived, work)
    out += _check_router_ac(derived, work, facts)
    return out


def _check_tp(d: Derived, work: Workload, m: ModelFacts) -> list[Finding]:
    tp = d.tp_size
    out: list[Finding] = []
    if tp <= 1:
        return out
    both = _divisors(math.gcd(m.num_attention_heads, m.num_kv_heads))
    common = dict(tp=tp, heads=m.num_attention_heads, kv=m.num_kv_heads, model=m.name, valid=_listed(both))
    if m.num_attention_heads % tp:
        out.append(make_finding("MW-W-TP-HEADS", "distributed.tp_size", rem=m.num_attention_heads % tp, **common))
    if m.num_kv_heads % tp:
        out.append(make_finding("MW-W-TP-KV-HEADS", "distributed.tp_size", rem=m.num_kv_heads % tp,
                           best=max(both), **common))
    if d.ep_size > 1 and m.upstream_moe:
        args = dict(tp=tp, ep=d.ep_size, model=m.name, arch=m.architecture or m.name)
        if not work.tp_plan_given:
            out.append(make_finding("MW-E-TP-MOE-PLAN", "distributed.tp_size", **args))
        if work.sequence_parallel:
            out.append(make_finding("MW-E-TP-MOE-PLAN", "distributed.sequence_parallel", "sequence_parallel", **args))
    return out


def _check_ep(d: Derived, m: ModelFacts) -> list[Finding]:
    ep = d.ep_size
    if ep <= 1:
        return []
    if not m.is_moe:
        return [make_finding("MW-E-EP-DENSE", "distributed.ep_size", ep=ep, model=m.name)]
    if not m.upstream_moe:
        return [make_finding("MW-E-EP-DENSE", "distributed.ep_size", "hf_moe", ep=ep, model=m.name,
                        arch=m.architecture or "?", experts=m.num_routed_experts)]
    return expert_findings(d, m.num_routed_experts, m.name)


def expert_findings(d: Derived, experts: int, model: str | None = None) -> list[Finding]:
    """The routed experts must divide by ep_size: the one home of that rule, for a known model's count
    and for the count a user states with no model named ("we have 64 experts", model None)."""
    ep = d.ep_size
    if ep <= 1 or experts <= 0 or experts % ep == 0:
        return []
    # CODE-FACTS 21: parallelize_model asserts this when the model is parallelised, so it is an error
    non_pp = Layout.from_derived(d).non_pp
    valid = [x for x in _divisors(experts) if x > 1 and non_pp % x == 0]
    return [make_finding("MW-E-EP-EXPERTS", "distributed.ep_size", None if model else "stated", ep=ep,
                         experts=experts, rem=experts % ep, model=model or "", non_pp=non_pp, valid=_listed(valid))]


def virtual_stages(layers: int, pp: int, schedule: str, lps: int | None, rounding: str | None) -> int:
    """Pipeline stages upstream builds (calculate_virtual_stages), before its own validity checks."""
    if lps is None:
        return pp * (1 if schedule in SINGLE_STAGE_SCHEDULES else 2)
    stages = math.ceil(layers / lps)
    if stages % pp and rounding == "up":
        stages += pp - stages % pp
    elif stages % pp and rounding == "down":
        stages -= stages % pp
    return stages


def _working_lps(layers: int, pp: int, single: bool) -> list[int]:
    good = []
    for lps in range(1, layers + 1):
        stages = math.ceil(layers / lps)
        if stages % pp or stages > layers:
            continue
        per_rank = stages // pp
        if (single and per_rank == 1) or (not single and per_rank >= 2):
            good.append(lps)
    return good


def _check_pp(d: Derived, work: Workload, m: ModelFacts) -> list[Finding]:
    pp = d.pp_size
    if pp <= 1:
        return []
    layers, schedule, lps = m.num_layers, work.pp_schedule, work.layers_per_stage
    if not is_accepted(schedule):
        return []  # the validator reports MW-E-PP-SCHEDULE; the stage count would be a guess
    single = schedule in SINGLE_STAGE_SCHEDULES
    path = "distributed.pipeline.layers_per_stage"
    if lps is not None:
        raw = math.ceil(layers / lps)
        if raw % pp and work.round_virtual_stages is None:
            return [make_finding("MW-W-PP-LAYERS", path, "not_divisible", lps=lps, layers=layers, model=m.name,
                            stages=raw, pp=pp, rem=raw % pp, schedule=schedule,
                            valid=_listed(_working_lps(layers, pp, single)))]
        stages = virtual_stages(layers, pp, schedule, lps, work.round_virtual_stages)
        per_rank = stages // pp
        if single and per_rank != 1:
            return [make_finding("MW-W-PP-LAYERS", path, "single_stage", schedule=schedule, lps=lps, layers=layers,
                            stages=stages, per_rank=per_rank, pp=pp, valid=_listed(_working_lps(layers, pp, True)))]
        if not single and per_rank < 2:
            return [make_finding("MW-W-PP-LAYERS", path, "multi_stage", schedule=schedule, lps=lps, layers=layers,
                            stages=stages, per_rank=per_rank, pp=pp, valid=_listed(_working_lps(layers, pp, False)))]
    else:
        stages = virtual_stages(layers, pp, schedule, None, None)
        per_rank = stages // pp
    if stages > layers:
        return [make_finding("MW-W-PP-LAYERS", "distributed.pp_size", pp=pp, schedule=schedule, stages=stages,
                        per_rank=per_rank, layers=layers, model=m.name, max_pp=max(1, layers // per_rank))]
    return []


def _check_cp(d: Derived, work: Workload) -> list[Finding]:
    cp = d.cp_size
    # Packed sequences are the validator's MW-W-PACKING-CP; with no stated length there is nothing to check.
    if cp <= 1 or work.packed or work.seq_source == "default":
        return []
    mult = 2 * cp
    seq = work.seq_len
    if seq % mult == 0:
        return []
    padded = -(-seq // mult) * mult
    return [make_finding("MW-W-CP-SEQ", work.seq_source, seq_source=work.seq_source, seq=seq, cp=cp, mult=mult, rem=seq % mult,
                    padded=padded, pad=padded - seq, local=padded // cp,
                    suggest=padded)]


def router_ac_findings(derived: Derived, dist: dict, recipe: dict) -> list[Finding]:
    """MW-W-ROUTER-AC when no model is named: ep_size > 1 already implies an upstream MoE class
    (`_transformers/capabilities.py` refuses EP for any other), so the risk does not need the table."""
    dist = dist if isinstance(dist, dict) else {}
    moe = dist.get("moe")
    if not isinstance(moe, dict) or as_bool(moe.get("ignore_router_for_ac")) is not False:
        return []  # the risk needs an explicit ignore_router_for_ac: false; skip reading the workload
    return _check_router_ac(derived, read_workload(dist, recipe, pp_size=derived.pp_size), None)


def _check_router_ac(d: Derived, work: Workload, m: ModelFacts | None) -> list[Finding]:
    # The moe block only reaches the MoE parallelizer when ep_size > 1; selective AC and a
    # non-decoder scope take the path that saves the router outputs anyway.
    if d.ep_size <= 1 or (m is not None and not m.upstream_moe) or work.ignore_router_for_ac is not False:
        return []
    if work.ac != "full" or not work.ac_decoder:
        return []
    ac = str(work.ac_raw).lower() if isinstance(work.ac_raw, bool) else work.ac_raw
    return [make_finding("MW-W-ROUTER-AC", "distributed.moe.ignore_router_for_ac", ac=ac, model=m.name if m else "MoE",
                    ep=d.ep_size)]
