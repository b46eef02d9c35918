"""Deterministic recommendation: the user's numbers and the kb's sizing rules become a validated plan.

Order of decisions: the strategy (the user's, unless it lacks a feature they need: then fsdp2 and a
`rejected` note), target ranges for tp/pp/cp/ep from the sizing tables (`sizing.yaml`), then a search
over nearby sizes that keeps TP inside a node, honours what the user fixed or excluded, and asks the
validator about each candidate in order of distance from the rules. The first pass requires
everything the user asked for; when nothing passes, a second pass relaxes those wishes and the plan
says it is infeasible, with the closest valid config. A plan marked feasible is always valid.
"""
from __future__ import annotations

import inspect
import math
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import product
from pathlib import Path

from assistant.datafile import dump_yaml, read_yaml
from assistant.defaults import DEFAULT_GPUS_PER_NODE, DEFAULT_WORLD_SIZE, MAX_WORLD_SIZE
from assistant.planner.plan import Plan, Step
from assistant.planner.relax import Dropped, fewest_dropped
from assistant.planner.relax import requests_of as relax_requests
from assistant.understand import catalog
from assistant.understand.catalog import ModelInfo
from assistant.understand.query import Params, Query
from assistant.validator import validate
from assistant.validator.capabilities import FEATURES, accepts, capabilities
from assistant.validator.layout import Layout
from assistant.validator.memory import estimate_for_layout
from assistant.validator.models import load_gpu, load_model
from assistant.validator.report import ValidationReport


_SIZING_PATH = Path(__file__).with_name("sizing.yaml")
_DIMS = ("tp", "pp", "cp", "ep")
_BYTES_PER_PARAM_REPLICA = 16  # bf16 weights + fp32 master copy + fp32 Adam moments + bf16 grads


@dataclass(frozen=True)
class Rules:
    dense: tuple[dict, ...]
    moe: tuple[dict, ...]
    unknown_dense: dict
    unknown_moe: dict
    wanted: dict
    context_parallel: tuple[dict, ...]
    weights: dict
    sizes: tuple[int, ...]
    max_validations: int
    pipeline: dict


@lru_cache(maxsize=1)
def load_rules(path: Path = _SIZING_PATH) -> Rules:
    d = read_yaml(path)
    return Rules(
        dense=tuple(d["dense"]),
        moe=tuple(d["moe"]),
        unknown_dense=d["unknown_dense"],
        unknown_moe=d["unknown_moe"],
        wanted=d["wanted"],
        context_parallel=tuple(sorted(d["context_parallel"], key=lambda r: r["min_seq"])),
        weights=d["weights"],
        sizes=tuple(d["search"]["sizes"]),
        max_validations=int(d["search"]["max_validations"]),
        pipeline=d["pipeline"],
    )


# --- the situation -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Situation:
    """What the plan is for, with every default filled in and recorded as an assumption."""
    world: int
    gpn: int  # GPUs per node used for topology (at most the world size)
    node_gpus: int  # GPUs per node as stated or assumed
    nodes: int | None
    model_key: str | None
    info: ModelInfo | None
    size_b: float | None
    is_moe: bool
    ep_ok: bool  # the model can use expert parallelism upstream
    experts: int | None
    layers: int | None
    heads: int | None
    kv_heads: int | None
    pp_ok: bool  # the model class can be pipelined
    gpu: str | None  # GPU table key, passed to the validator for the memory estimate
    gpu_mem_gib: float | None
    seq_len: int | None
    params: Params
    assumptions: tuple[Step, ...]
    model_facts: object | None = None  # the validator's ModelFacts, for the memory pre-check
    gpu_facts: object | None = None  # the validator's GpuFacts
    world_from_sizes: str | None = None  # "8*4*2*2" when the world size was derived from the user's sizes
    ac_selective: bool = False  # the question asks for selective activation checkpointing


def _ac_value(s: Situation, strategy: str) -> bool | str:
    # selective AC is accepted by fsdp2 and ddp only (MW-E-AC-SELECTIVE); elsewhere full AC is what exists
    return "selective" if s.ac_selective and accepts(strategy, "ac_selective") else True


def _situation(p: Params, gpus_per_node: int | None, world_size: int | None, model: str | None, gpu: str | None) -> Situation:
    rules = load_rules()
    notes: list[Step] = []
    gpn = gpus_per_node if gpus_per_node is not None else p.gpus_per_node
    gpn_given = gpn is not None
    if gpn is None:
        gpn = DEFAULT_GPUS_PER_NODE
    world = world_size if world_size is not None else p.world_size
    nodes = p.nodes
    if world is None and p.nodes:
        world = p.nodes * gpn
    fixed = _fixed_mesh(p)
    world_from_sizes = None
    if world is None and fixed is not None and (p.dp_size or fixed[1] > (gpn if gpn_given else DEFAULT_WORLD_SIZE)):
        # "how many GPUs for tp 8, pp 4, cp 2 and 2 replicas": the sizes the user fixed say the world
        factors, needed = fixed
        world = needed if needed <= gpn or needed % gpn == 0 else math.lcm(needed, gpn)
        nodes = max(1, world // gpn) if world >= gpn else 1
        world_from_sizes = factors
        notes.append(Step(
            f"World size not given: the smallest that holds your sizes, tp_size*pp_size*cp_size*dp_size = {factors} = {needed}"
            + (f", rounded up to whole {gpn}-GPU nodes: {world}" if world != needed else "") + f" GPUs ({nodes} node{'s' if nodes > 1 else ''} x {min(gpn, world)}).",
            f"未给出 world size：按能容纳你指定规模的最小值计算，tp_size*pp_size*cp_size*dp_size = {factors} = {needed}"
            + (f"，向上取整到完整的 {gpn} 卡节点：{world}" if world != needed else "") + f" 张 GPU（{nodes} 个节点 x {min(gpn, world)}）。",
        ))
    if world is None:
        world = gpn if gpn_given else DEFAULT_WORLD_SIZE
        nodes = max(1, world // gpn) if world >= gpn else 1
        notes.append(Step(
            f"World size not given: assumed {nodes} node{'s' if nodes > 1 else ''} x {gpn} GPUs = {world} GPUs.",
            f"未给出 world size：按 {nodes} 个节点 x 每节点 {gpn} 张 GPU = {world} 张 GPU 计算。",
        ))
    elif not gpn_given and world > gpn:
        notes.append(Step(f"GPUs per node not given: assumed {gpn} (TP stays within {gpn} GPUs).",
                          f"未给出每节点 GPU 数：按 {gpn} 计算（TP 不超过 {gpn} 张卡）。"))
    if not 1 <= world <= MAX_WORLD_SIZE or not 1 <= gpn <= MAX_WORLD_SIZE:
        raise ValueError(f"world size and GPUs per node must be between 1 and {MAX_WORLD_SIZE}, got {world} and {gpn}")
    if nodes is None and world % gpn == 0:
        nodes = world // gpn
    topo_gpn = min(gpn, world)

    key = model or p.model
    info = catalog.model_info(key) if key else None
    if info is None and model:
        found = catalog.find_model(model)  # a display name or alias ("Llama 3.1 70B")
        info = catalog.model_info(found[0]) if found else None
    size = info.total_b if info and info.total_b else p.model_size_b
    is_moe = bool(info.is_moe if info else False) or bool(p.is_moe)
    if p.is_moe is None and info is None and ("ep" in p.wanted or (p.ep_size or 1) > 1):
        is_moe = True  # asking for EP says the model has experts
    ep_ok = is_moe and (info is None or info.ep_supported is not False)
    experts = (info.num_experts if info else None) or p.num_experts
    if size is None:
        notes.append(Step(
            "Model size not given: the sizes below follow from the parallelism you asked for, not from a sizing tier.",
            "未给出模型规模：下面的并行度来自你要求的特性，而不是按规模查表。",
        ))
    g = gpu or p.gpu
    if g and g not in catalog.gpu_keys():
        facts = _load(load_gpu, g)  # an alias ("h100", "A100 40G"): the table's own matching
        g = getattr(facts, "key", None)
    mem = catalog.gpu_memory_gib(g) if g else (float(p.gpu_memory_gb) if p.gpu_memory_gb else None)
    if (info is not None or size is not None or g is not None) and (info is None or g is None):
        notes.append(Step(
            "No per-GPU memory check: it needs a model from the table and a GPU type.",
            "未做单卡显存估算：需要已知模型和 GPU 型号。",
        ))
    return Situation(
        world=world, gpn=topo_gpn, node_gpus=gpn, nodes=nodes, model_key=info.key if info else None, info=info, size_b=size,
        is_moe=is_moe, ep_ok=ep_ok, experts=experts,
        layers=info.num_layers if info else None, heads=info.num_heads if info else None,
        kv_heads=info.num_kv_heads if info else None, pp_ok=not (info and info.pp_plan is False),
        gpu=g if info else None, gpu_mem_gib=mem, seq_len=p.seq_len, params=p, assumptions=tuple(notes),
        model_facts=_load(load_model, info.key) if info and g else None,
        gpu_facts=_load(load_gpu, g) if info and g else None,
        world_from_sizes=world_from_sizes,
    )


def _fixed_mesh(p: Params) -> tuple[str, int] | None:
    """("8*4*2*2", 128): the product tp*pp*cp*dp of the sizes the user fixed, or None when none is fixed."""
    sizes = [p.tp_size, p.pp_size, p.cp_size, p.dp_size]
    if not any(v and v > 1 for v in sizes):
        return None
    vals = [v if v and v > 0 else 1 for v in sizes]
    return "*".join(str(v) for v in vals), math.prod(vals)


def _load(loader, key: str):
    try:
        return loader(key)
    except (ValueError, KeyError, OSError):
        return None


# --- strategy ------------------------------------------------------------------------------------------

_FEATURE_EN = {
    "tp": "tensor parallelism (tp_size > 1)", "pp": "pipeline parallelism (pp_size > 1)",
    "cp": "context parallelism (cp_size > 1)", "ep": "expert parallelism (ep_size > 1)",
    "hsdp": "HSDP (dp_replicate_size > 1)", "sp": "sequence_parallel",
    "ac_selective": "selective activation checkpointing",
}
_FEATURE_ZH = {
    "tp": "张量并行（tp_size > 1）", "pp": "流水线并行（pp_size > 1）", "cp": "上下文并行（cp_size > 1）",
    "ep": "专家并行（ep_size > 1）", "hsdp": "HSDP（dp_replicate_size > 1）", "sp": "sequence_parallel",
    "ac_selective": "选择性激活检查点（activation_checkpointing: selective）",
}
_SIZE_LABELS = {"tp": "TP", "pp": "PP", "cp": "CP", "ep": "EP", "hsdp": "HSDP"}


def _feature_list(features: list[str]) -> tuple[str, str]:
    """("TP, PP and HSDP", "TP、PP 和 HSDP") for the parallel features named."""
    names = [_SIZE_LABELS[f] for f in features]
    if len(names) < 2:
        return "".join(names), "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}", f"{'、'.join(names[:-1])} 和 {names[-1]}"


def _lacks(strategy: str | None) -> dict[str, str]:
    """What a named strategy cannot do (feature -> the validator code that says so); {} for an unknown name."""
    try:
        return capabilities(strategy).refusals if strategy else {}
    except KeyError:
        return {}


def _needed_features(s: Situation) -> set[str]:
    p = s.params
    need = set(p.wanted) & set(FEATURES)
    for dim in _DIMS:
        v = getattr(p, f"{dim}_size")
        if v and v > 1:
            need.add(dim)
    if p.dp_replicate_size and p.dp_replicate_size > 1:
        need.add("hsdp")
    if s.is_moe and s.ep_ok and s.world > 1 and "ep" not in p.unwanted:
        need.add("ep")
    if not s.ep_ok:
        need.discard("ep")  # rejected on its own (the model has no expert-parallel path)
    return need


def _choose_strategy(s: Situation) -> tuple[str, list[Step], list[Step]]:
    """(strategy, rejected notes, rationale)."""
    named = s.params.strategy
    rationale: list[Step] = []
    rejected: list[Step] = []
    lacks = _lacks(named)
    if lacks:
        need = _needed_features(s)
        missing = sorted(f for f in need if f in lacks)
        if named == "ddp" and not missing and s.size_b is not None and s.world > 1:
            cap = s.gpu_mem_gib or 80.0
            replica = s.size_b * _BYTES_PER_PARAM_REPLICA
            if replica > cap:
                rejected.append(Step(
                    f"ddp rejected: it keeps a full replica of the model, its gradients and Adam states on every GPU, "
                    f"about {s.size_b:g}B x {_BYTES_PER_PARAM_REPLICA} bytes = {replica:,.0f} GB, more than one GPU's "
                    f"{cap:g} GB; fsdp2 shards them across the data-parallel group.",
                    f"不采用 ddp：它在每张 GPU 上保存完整的模型、梯度和 Adam 状态，约 {s.size_b:g}B x "
                    f"{_BYTES_PER_PARAM_REPLICA} 字节 = {replica:,.0f} GB，超过单卡的 {cap:g} GB；fsdp2 会在数据并行组内切分它们。",
                ))
                return "fsdp2", rejected, rationale
        for f in missing:
            code = lacks[f]
            rejected.append(Step(
                f"{named} rejected: it does not support {_FEATURE_EN[f]} (validator {code}); fsdp2 does.",
                f"不采用 {named}：它不支持{_FEATURE_ZH[f]}（校验规则 {code}）；fsdp2 支持。",
            ))
        if missing:
            if named == "ddp":
                en, zh = _feature_list([f for f in _SIZE_LABELS if f in lacks])
                rationale.append(Step(f"ddp is plain data parallelism only: no {en.replace(' and ', ' or ')}.",
                                      f"ddp 只做简单的数据并行：不支持 {zh}。"))
            return "fsdp2", rejected, rationale
        rationale.append(Step(f"strategy: {named}, as asked; it covers what this setup needs.",
                              f"strategy 按你的要求用 {named}；它满足这个配置的需要。"))
        return named, rejected, rationale
    if s.world == 1:
        rationale.append(Step(
            "One GPU: fsdp2 with no parallel sizes; the recipe still needs a distributed section, and the FSDP2 manager skips sharding at world size 1.",
            "单卡：用 fsdp2，不设任何并行度；recipe 仍需要 distributed 段，world size 为 1 时 FSDP2 管理器会跳过切分。",
        ))
    else:
        en, zh = _feature_list([f for f in _SIZE_LABELS if accepts("fsdp2", f)])
        rationale.append(Step(f"strategy: fsdp2, the default that supports {en}.", f"strategy 选 fsdp2：默认策略，支持 {zh}。"))
    return "fsdp2", rejected, rationale


# --- target ranges ---------------------------------------------------------------------------------------

@dataclass
class Targets:
    ranges: dict[str, tuple[int, int]]
    prefer: dict[str, int]
    fixed: dict[str, int] = field(default_factory=dict)  # the user's own sizes
    required: set[str] = field(default_factory=set)  # features that must be > 1
    automatic: set[str] = field(default_factory=set)  # required by the rules (EP for MoE), not by the user
    forbidden: set[str] = field(default_factory=set)  # features that must stay 1
    tier: dict | None = None
    cp_rule: dict | None = None


def _tier(s: Situation) -> tuple[dict, bool]:
    rules = load_rules()
    moe = s.is_moe and s.ep_ok
    if s.size_b is None:
        return (rules.unknown_moe if moe else rules.unknown_dense), moe
    for t in (rules.moe if moe else rules.dense):
        if s.size_b < float(t["below_b"]):
            return t, moe
    return (rules.moe if moe else rules.dense)[-1], moe


def _targets(s: Situation, strategy: str) -> Targets:
    rules = load_rules()
    tier, moe = _tier(s)
    ranges = {"tp": tuple(tier["tp"]), "pp": tuple(tier["pp"]), "cp": (1, 1), "ep": tuple(tier.get("ep", (1, 1)))}
    prefer = {"tp": tier["prefer"]["tp"], "pp": tier["prefer"]["pp"], "cp": 1, "ep": tier["prefer"].get("ep", 1)}
    cp_rule = None
    if s.seq_len:
        for r in rules.context_parallel:
            if s.seq_len >= r["min_seq"]:
                cp_rule = r
        if cp_rule:
            ranges["cp"] = (2, int(cp_rule["cp"]))
            prefer["cp"] = int(cp_rule["cp"])
    t = Targets(ranges=ranges, prefer=prefer, tier=tier if s.size_b is not None else None, cp_rule=cp_rule)
    p = s.params
    wanted = set(p.wanted)
    if "sp" in wanted and accepts(strategy, "sp"):
        wanted.add("tp")  # sequence parallelism shards along the TP group
    if "hsdp" in wanted:
        t.required.add("hsdp")
    for dim in _DIMS:
        if dim in wanted and ranges[dim][1] <= 1:
            lo, hi = rules.wanted[dim]
            if dim == "tp":
                hi = min(hi, s.gpn)
            t.ranges[dim] = (lo, max(lo, hi))
            t.prefer[dim] = lo if dim != "ep" else min(8, hi)
        if dim in wanted:
            t.required.add(dim)
        if dim in p.unwanted:
            t.forbidden.add(dim)
        v = getattr(p, f"{dim}_size")
        if v:
            t.fixed[dim] = v
            if v > 1:
                t.required.add(dim)
    if "hsdp" in p.unwanted:
        t.forbidden.add("hsdp")
    if moe and s.world > 1 and "ep" not in p.unwanted:
        if "ep" not in t.required:
            t.automatic.add("ep")
        t.required.add("ep")
    if not s.ep_ok:
        t.forbidden.add("ep")
    return t


# --- candidates -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Candidate:
    layout: Layout  # the sizes; dp and the meshes follow from it
    ac: bool = False
    lbs: int | None = None
    gbs: int | None = None

    strategy = property(lambda self: self.layout.strategy)
    tp = property(lambda self: self.layout.tp)
    pp = property(lambda self: self.layout.pp)
    cp = property(lambda self: self.layout.cp)
    ep = property(lambda self: self.layout.ep)
    dp_replicate = property(lambda self: self.layout.dp_replicate)

    def size(self, dim: str) -> int:
        return getattr(self.layout, dim)


def _dist(v: int, lo: int, hi: int) -> float:
    lv = math.log2(v)
    if lv < math.log2(lo):
        return math.log2(lo) - lv
    if lv > math.log2(hi):
        return lv - math.log2(hi)
    return 0.0


def _cost(c: Candidate, s: Situation, t: Targets, relaxed: bool) -> float:
    w = load_rules().weights
    cost = 0.0
    for dim in _DIMS:
        v = c.size(dim)
        lo, hi = t.ranges[dim]
        cost += float(w[dim]) * _dist(v, lo, hi) + 0.01 * abs(math.log2(v) - math.log2(t.prefer[dim]))
        if relaxed:
            if dim in t.fixed:
                cost += 2 * float(w[dim]) * abs(math.log2(v) - math.log2(t.fixed[dim]))
            if dim in t.required - t.automatic and v == 1:
                cost += float(w["wanted_missing"])
    if c.tp > s.gpn or s.gpn % c.tp:
        cost += float(w["tp_cross_node"])
    if s.heads and s.heads % c.tp:
        cost += float(w["tp_heads"])
    if s.layers and c.pp > 1 and s.layers % c.pp:
        cost += float(w["pp_layers_uneven"])
    if c.ac:
        cost += 0.5  # recompute costs about a third more compute: only when it buys something
    if c.dp_replicate > 1 and "hsdp" not in t.required:
        cost += 5.0
    if relaxed and "hsdp" in t.required and c.dp_replicate == 1:
        cost += float(w["wanted_missing"])
    if c.dp_replicate > 1 and c.layout.node_replicas and c.dp_replicate != c.layout.node_replicas:
        cost += 0.05 * abs(math.log2(c.dp_replicate) - math.log2(c.layout.node_replicas))  # a group per node first
    return cost


def _pow2_upto(n: int, sizes: tuple[int, ...]) -> list[int]:
    return [x for x in sizes if x <= n]


def _candidates(s: Situation, t: Targets, strategy: str, relaxed: bool) -> list[Candidate]:
    rules = load_rules()
    allowed = {d for d in _DIMS if accepts(strategy, d)}
    world = s.world
    options: dict[str, list[int]] = {}
    for dim in _DIMS:
        vals = set(_pow2_upto(world, rules.sizes))
        if dim == "pp":
            # pipeline stages need not be a power of two: 3 nodes can hold 3 stages
            vals |= {d for d in range(3, min(world, max(rules.sizes)) + 1) if world % d == 0 and d <= 16}
        if dim in t.fixed and t.fixed[dim] <= world:
            vals.add(t.fixed[dim])
        if dim == "ep" and s.experts:
            vals = {v for v in vals if s.experts % v == 0} | {1}
        if dim not in allowed or dim in t.forbidden:
            vals = {1}
        elif not relaxed:
            if dim in t.fixed:
                vals = {t.fixed[dim]}
            elif dim in t.required - t.automatic:
                vals = {v for v in vals if v > 1}
        if dim == "pp" and not s.pp_ok:
            vals = {1}
        elif dim == "pp" and s.layers:
            vals = {v for v in vals if v <= s.layers}
        options[dim] = sorted(vals)  # empty when a requirement cannot be met: no candidates
    ac_options = [False]
    if "ac" in s.params.wanted or (s.is_moe and s.ep_ok and world > 1 and "ac" not in s.params.unwanted):
        ac_options = [True]  # upstream's MoE recipes checkpoint activations
    elif t.cp_rule and "cp" in s.params.unwanted and "ac" not in s.params.unwanted:
        # a sequence long enough for CP (sizing.yaml context_parallel) with CP excluded ("64k, cp 不想开"):
        # checkpointing is the activation-memory lever left
        ac_options = [True]
    elif "ac" not in s.params.unwanted and s.gpu and s.info:
        ac_options = [False, True]  # with a memory estimate, checkpointing is one way to fit
    out: list[Candidate] = []
    for tp, pp, cp, ep in product(options["tp"], options["pp"], options["cp"], options["ep"]):
        layout = Layout.of(strategy, world, gpus_per_node=s.gpn, tp=tp, pp=pp, cp=cp, ep=ep)
        if not layout.mesh_ok:  # the world does not divide, or ep does not divide dp*cp*tp
            continue
        for dpr in _replicate_options(s, t, strategy, layout, relaxed):
            for ac in ac_options:
                out.append(Candidate(replace(layout, dp_replicate=dpr), ac))
    return out


def _replicate_options(s: Situation, t: Targets, strategy: str, layout: Layout, relaxed: bool) -> list[int]:
    dp = layout.dp
    if not accepts(strategy, "hsdp") or "hsdp" in t.forbidden or "hsdp" not in t.required:
        return [1]
    fixed = s.params.dp_replicate_size
    divisors = [d for d in range(2, dp) if dp % d == 0]
    if fixed:
        opts = [fixed] if fixed in divisors else []
    else:
        # replicate across nodes, shard inside one: the replica count is the node count when it fits
        want = layout.node_replicas or (s.nodes if s.nodes and s.nodes > 1 else 2)
        opts = sorted(divisors, key=lambda d: (abs(math.log2(d) - math.log2(want)), d))[:3]
    if relaxed:
        opts = opts + [1]
    return opts or ([1] if relaxed else [])


# --- building and validating ---------------------------------------------------------------------------

def _model_name(s: Situation) -> str | None:
    return (s.info.name or s.info.key) if s.info is not None else None


def _model_class(s: Situation) -> str | None:
    return s.info.architectures[0] if s.info is not None and s.info.architectures else None


def _schedule(s: Situation, pp: int) -> tuple[str, str]:
    pl = load_rules().pipeline
    if s.layers:
        deep = s.layers >= 2 * pp
    else:
        deep = s.size_b is not None and s.size_b >= float(pl["deep_model_b"])
    return (pl["interleaved"], "deep") if deep else (pl["plain"], "shallow")


def _microbatch(s: Situation) -> int:
    """The pipeline micro-batch: the user's when stated, else the table's."""
    return s.params.pp_microbatch_size or int(load_rules().pipeline["microbatch_size"])


def _batches(s: Situation, c: Candidate) -> tuple[int | None, int | None]:
    """(local, global) batch sizes for the step_scheduler block, or (None, None) when none is needed."""
    p = s.params
    pl = load_rules().pipeline
    mbs = _microbatch(s)
    if c.pp <= 1 and p.global_batch_size is None and p.local_batch_size is None:
        return None, None
    dp = c.layout.dp  # ddp: the world
    lbs = p.local_batch_size
    if lbs is None:
        if c.pp > 1:
            base = c.pp * mbs
            choices = [base * int(pl["microbatches_per_stage"]), base, base * 4, base * 8]
        else:
            choices = [4, 2, 1, 8]
        lbs = choices[0]
        if p.global_batch_size:
            fitting = [x for x in choices if p.global_batch_size % (x * dp) == 0]
            lbs = fitting[0] if fitting else choices[0]
    gbs = p.global_batch_size or lbs * dp
    return lbs, gbs


def _build(s: Situation, c: Candidate) -> tuple[dict, dict]:
    """(distributed mapping, whole recipe for the validator)."""
    dist: dict = {"strategy": c.strategy}
    for dim in _DIMS:
        if c.size(dim) > 1:
            dist[f"{dim}_size"] = c.size(dim)
    if c.dp_replicate > 1:
        dist["dp_replicate_size"] = c.dp_replicate
    if accepts(c.strategy, "sp") and c.tp > 1 and "sp" in s.params.wanted:
        dist["sequence_parallel"] = True
    if c.ac:
        dist["activation_checkpointing"] = _ac_value(s, c.strategy)
    if c.pp > 1:
        sched, _ = _schedule(s, c.pp)
        dist["pipeline"] = {"pp_schedule": sched, "pp_microbatch_size": _microbatch(s)}
    if c.ep > 1:
        moe: dict = {"reshard_after_forward": False}
        if c.ac:
            moe["ignore_router_for_ac"] = True  # the default; recompute must not re-route tokens
        dist["moe"] = moe
    recipe: dict = {"distributed": dist}
    lbs, gbs = _batches(s, c)
    if lbs is not None:
        recipe["step_scheduler"] = {"global_batch_size": gbs, "local_batch_size": lbs}
    if "packing" in s.params.wanted:
        size = s.seq_len or 4096
        if c.cp > 1 and size % (2 * c.cp):
            size += 2 * c.cp - size % (2 * c.cp)
        recipe["packed_sequence"] = {"packed_sequence_size": size}
    return dist, recipe


# The user's sequence length reaches the memory estimate only if the validator accepts it as an
# argument; otherwise both the pre-check and the validator use the recipe's (default) length, so
# their verdicts agree.
_VALIDATE_TAKES_SEQ = "seq_len" in inspect.signature(validate).parameters


def _seq_kwargs(s: Situation) -> dict:
    return {"seq_len": s.seq_len} if _VALIDATE_TAKES_SEQ and s.seq_len else {}


# Reports of one plan() call, by everything validate() reads. The validator is pure, and one plan meets
# the same recipe many times: each dropped request repeats the search, and the closest failure is built
# again. Qwen3-235B on 128 GPUs, "suggest tp, pp and ep": 702 validations of 302 distinct recipes.
_REPORTS: ContextVar[dict | None] = ContextVar("planner_reports", default=None)


def _frozen(value):
    """A recipe as a hashable key that keeps key order (the validator walks mappings in order) and each
    leaf's type (True == 1 in Python, not to the validator)."""
    if isinstance(value, dict):
        return (dict, tuple((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, list):
        return (list, tuple(_frozen(v) for v in value))
    return (type(value), value)


def _validate(s: Situation, recipe: dict, with_memory: bool = True) -> ValidationReport:
    gpu = s.gpu if with_memory else None
    seq = _seq_kwargs(s)
    memo = _REPORTS.get()
    key = (_frozen(recipe), s.world, s.gpn, s.model_key, gpu, s.experts, tuple(seq.items())) if memo is not None else None
    if key is not None and key in memo:
        return memo[key]
    report = validate(
        recipe,
        world_size=s.world,
        gpus_per_node=s.gpn,
        model=s.model_key,
        gpu=gpu,
        experts=s.experts,  # a count stated with no model named meets the same EP-experts rule
        suggest_fix=False,  # the planner searches itself; the fixer would only cost time
        **seq,
    )
    if key is not None:
        memo[key] = report
    return report


@dataclass
class _Found:
    cand: Candidate
    dist: dict
    recipe: dict
    report: ValidationReport
    score: float
    closer_failed: _Found | None = None  # the layout nearest the rules that the validator rejected


def _estimate_seq(s: Situation, recipe: dict) -> dict:
    if _seq_kwargs(s):
        return _seq_kwargs(s)
    packed = (recipe.get("packed_sequence") or {}).get("packed_sequence_size")
    return {"seq_len": packed} if packed else {}


def _memory_total(s: Situation, c: Candidate, dist: dict, recipe: dict) -> float | None:
    """The validator's own per-GPU estimate for a candidate, computed directly (about 15x cheaper than a
    validation), so layouts over capacity are skipped before the validator is asked. None without a
    model and GPU, or when the estimate cannot be made for these sizes."""
    if s.model_facts is None or s.gpu_facts is None:
        return None
    pipe = dist.get("pipeline") or {}
    lbs = (recipe.get("step_scheduler") or {}).get("local_batch_size")
    if c.pp > 1:
        mbs = int(pipe.get("pp_microbatch_size", 1))
        micro, n_micro = mbs, max(1, (lbs or mbs) // mbs)
    else:
        micro, n_micro = lbs or 1, None
    seq = _estimate_seq(s, recipe).get("seq_len")
    return _estimated_total(s.model_facts, c.layout, micro, n_micro, c.ac, bool(dist.get("sequence_parallel")),
                            str(pipe.get("pp_schedule", "1f1b")), s.gpu_facts, seq)


@lru_cache(maxsize=4096)
def _estimated_total(facts, layout: Layout, micro: int, n_micro: int | None, ac, sequence_parallel: bool,
                     schedule: str, gpu, seq_len: int | None) -> float | None:
    # cached: a search meets the same layout under several candidates (about half of them repeat)
    try:
        est = estimate_for_layout(
            facts, layout, micro_batch=micro, n_microbatches=n_micro, activation_checkpointing=ac,
            sequence_parallel=sequence_parallel, pp_schedule=schedule, gpu=gpu, assumptions=False,
            **({"seq_len": seq_len} if seq_len else {}),
        )
    except ValueError:
        return None
    return est.total_gib


def _search(s: Situation, t: Targets, strategy: str, relaxed: bool) -> tuple[_Found | None, _Found | None]:
    """(best valid candidate, the candidate with the smallest memory estimate among those that failed
    only on memory)."""
    rules = load_rules()
    w_warn = float(rules.weights["warning"])
    cap = s.gpu_facts.memory_gib if s.gpu_facts is not None and s.model_facts is not None else None
    cands = sorted(
        ((c, _cost(c, s, t, relaxed)) for c in _candidates(s, t, strategy, relaxed)),
        key=lambda x: (x[1], x[0].tp, x[0].pp, x[0].cp, x[0].ep, x[0].dp_replicate, x[0].ac),
    )
    best: _Found | None = None
    first_failed: tuple[Candidate, float] | None = None
    smallest: tuple[float, Candidate, float] | None = None  # (GiB, candidate, cost) of layouts over memory
    validations = 0
    for c, cost in cands:
        if validations >= rules.max_validations or (best is not None and cost >= best.score):
            break
        dist, recipe = _build(s, c)
        total = _memory_total(s, c, dist, recipe) if cap is not None else None
        if total is not None and total > cap:
            if smallest is None or total < smallest[0]:
                smallest = (total, c, cost)
            if first_failed is None:
                first_failed = (c, cost)
            continue
        validations += 1
        report = _validate(s, recipe)
        score = cost + w_warn * len(report.warnings)
        if report.ok:
            if best is None or score < best.score:
                best = _Found(c, dist, recipe, report, score)
            continue
        if first_failed is None:
            first_failed = (c, cost)
        if {f.code for f in report.errors} == {"MW-E-MEMORY"} and report.memory is not None:
            if smallest is None or report.memory.total_gib < smallest[0]:
                smallest = (report.memory.total_gib, c, cost)
    if best is not None and first_failed is not None and first_failed[1] < best.score:
        best = replace(best, closer_failed=_found(s, *first_failed))
    mem_only = _found(s, smallest[1], smallest[2]) if smallest is not None else None
    if mem_only is not None and {f.code for f in mem_only.report.errors} != {"MW-E-MEMORY"}:
        mem_only = None  # over memory and wrong otherwise too: not a memory-only failure
    return best, mem_only


def _found(s: Situation, c: Candidate, cost: float) -> _Found:
    dist, recipe = _build(s, c)
    return _Found(c, dist, recipe, _validate(s, recipe), cost)


# --- explanations ---------------------------------------------------------------------------------------

def _arith(s: Situation, f: _Found) -> list[Step]:
    c, r = f.cand, f.report
    steps: list[Step] = []
    p = s.params
    if s.world_from_sizes:
        needed = math.prod(int(x) for x in s.world_from_sizes.split("*"))
        rounded = f", rounded up to whole nodes: {s.world}" if needed != s.world else ""
        rounded_zh = f"，取整到完整节点：{s.world}" if needed != s.world else ""
        steps.append(Step(
            f"minimum world_size = tp_size * pp_size * cp_size * dp_size = {s.world_from_sizes.replace('*', ' * ')} = {needed}{rounded}",
            f"最少 GPU 数 world_size = tp_size * pp_size * cp_size * dp_size = {s.world_from_sizes.replace('*', ' * ')} = {needed}{rounded_zh}",
        ))
    elif p.world_size is None and p.nodes and s.world == p.nodes * (p.gpus_per_node or s.gpn):
        steps.append(Step(
            f"world_size = nodes * gpus_per_node = {p.nodes} * {s.world // p.nodes} = {s.world}",
            f"world_size = 节点数 * 每节点 GPU 数 = {p.nodes} * {s.world // p.nodes} = {s.world}",
        ))
    lay = c.layout
    if c.strategy == "ddp":
        steps.append(Step(f"dp_size = world_size = {s.world} (ddp replicates the model on every GPU)",
                          f"dp_size = world_size = {s.world}（ddp 在每张 GPU 上复制整个模型）"))
    elif c.strategy == "megatron_fsdp":
        dp = lay.dp
        steps.append(Step(f"dp_size = world_size / (tp_size * cp_size) = {s.world} / ({c.tp}*{c.cp}) = {dp}",
                          f"dp_size = world_size / (tp_size * cp_size) = {s.world} / ({c.tp}*{c.cp}) = {dp}"))
    else:
        dp = lay.dp
        steps.append(Step(
            f"dp_size = world_size / (tp_size * pp_size * cp_size) = {s.world} / ({c.tp}*{c.pp}*{c.cp}) = {dp}",
            f"dp_size = world_size / (tp_size * pp_size * cp_size) = {s.world} / ({c.tp}*{c.pp}*{c.cp}) = {dp}",
        ))
        if c.dp_replicate > 1:
            steps.append(Step(
                f"dp_replicate_size must divide dp_size and be smaller than it: {dp} % {c.dp_replicate} = 0, {c.dp_replicate} < {dp}; "
                f"dp_shard_size = dp_size / dp_replicate_size = {dp} / {c.dp_replicate} = {lay.dp_shard}",
                f"dp_replicate_size 必须整除 dp_size 且小于它：{dp} % {c.dp_replicate} = 0，{c.dp_replicate} < {dp}；"
                f"dp_shard_size = dp_size / dp_replicate_size = {dp} / {c.dp_replicate} = {lay.dp_shard}",
            ))
        if c.ep > 1:
            non_pp, shard = lay.non_pp, lay.ep_shard
            steps.append(Step(
                f"ep_size must divide dp_size * cp_size * tp_size = {dp}*{c.cp}*{c.tp} = {non_pp}: {non_pp} % {c.ep} = 0; "
                f"ep_shard_size = {non_pp} / {c.ep} = {shard}; moe_mesh = (ep_shard, ep) = ({shard}, {c.ep}) per pipeline stage",
                f"ep_size 必须整除 dp_size * cp_size * tp_size = {dp}*{c.cp}*{c.tp} = {non_pp}：{non_pp} % {c.ep} = 0；"
                f"ep_shard_size = {non_pp} / {c.ep} = {shard}；每个流水线 stage 的 moe_mesh = (ep_shard, ep) = ({shard}, {c.ep})",
            ))
            if s.experts and s.experts % c.ep == 0:
                steps.append(Step(f"experts per EP rank = {s.experts} / {c.ep} = {s.experts // c.ep}",
                                  f"每个 EP rank 上的专家数 = {s.experts} / {c.ep} = {s.experts // c.ep}"))
    if c.tp > 1 and s.heads:
        kv = f"; KV heads {s.kv_heads} / {c.tp} = {s.kv_heads / c.tp:g}" if s.kv_heads else ""
        kvz = f"；KV heads {s.kv_heads} / {c.tp} = {s.kv_heads / c.tp:g}" if s.kv_heads else ""
        steps.append(Step(f"attention heads per TP rank = {s.heads} / {c.tp} = {s.heads // c.tp}{kv}",
                          f"每个 TP rank 的注意力头数 = {s.heads} / {c.tp} = {s.heads // c.tp}{kvz}"))
    if c.pp > 1 and s.layers:
        steps.append(Step(f"layers per pipeline stage = {s.layers} / {c.pp} = {s.layers / c.pp:g}",
                          f"每个流水线 stage 的层数 = {s.layers} / {c.pp} = {s.layers / c.pp:g}"))
    if c.cp > 1 and s.seq_len:
        steps.append(Step(f"tokens per CP rank = {s.seq_len} / {c.cp} = {s.seq_len // c.cp}",
                          f"每个 CP rank 的 token 数 = {s.seq_len} / {c.cp} = {s.seq_len // c.cp}"))
    sched = f.recipe.get("step_scheduler")
    if sched:
        lbs, gbs = sched["local_batch_size"], sched["global_batch_size"]
        dpb = lay.dp
        if c.pp > 1:
            mbs = f.dist["pipeline"]["pp_microbatch_size"]
            steps.append(Step(
                f"microbatches = local_batch_size // pp_microbatch_size = {lbs} // {mbs} = {lbs // mbs} >= pp_size {c.pp}",
                f"microbatch 数 = local_batch_size // pp_microbatch_size = {lbs} // {mbs} = {lbs // mbs} >= pp_size {c.pp}",
            ))
        steps.append(Step(
            f"grad_acc_steps = global_batch_size / (local_batch_size * dp_size) = {gbs} / ({lbs}*{dpb}) = {gbs // (lbs * dpb)}",
            f"梯度累积步数 grad_acc_steps = global_batch_size / (local_batch_size * dp_size) = {gbs} / ({lbs}*{dpb}) = {gbs // (lbs * dpb)}",
        ))
    m = r.memory
    if m is not None and m.capacity_gib:
        note_en = note_zh = ""
        if s.seq_len and not _seq_kwargs(s) and "packed_sequence" not in f.recipe:
            # the estimate reads the length from the recipe; this plan's recipe states none
            note_en = f"; activations at the estimate's default sequence length, not your {s.seq_len} tokens"
            note_zh = f"；激活按估算的默认序列长度计算，而不是你的 {s.seq_len} tokens"
        steps.append(Step(
            f"estimated memory per GPU = {m.total_gib:.1f} GiB of {m.capacity_gib:.1f} GiB (params {m.params_gib:.1f} + grads {m.grads_gib:.1f} + optimizer {m.optimizer_gib:.1f} + activations {m.activations_gib:.1f}{note_en})",
            f"单卡显存估算 = {m.total_gib:.1f} GiB / {m.capacity_gib:.1f} GiB（参数 {m.params_gib:.1f} + 梯度 {m.grads_gib:.1f} + 优化器 {m.optimizer_gib:.1f} + 激活 {m.activations_gib:.1f}{note_zh}）",
        ))
    return steps


def _why(s: Situation, t: Targets, f: _Found) -> list[Step]:
    c = f.cand
    out: list[Step] = []
    tier = t.tier
    size = f"{s.size_b:g}B" if s.size_b is not None else ""
    if tier is not None:
        if s.is_moe and s.ep_ok:
            kind_en, kind_zh, table_en, table_zh = "MoE", "MoE", "MoE sizing table", "MoE 规模表"
        elif s.is_moe:
            kind_en, kind_zh, table_en, table_zh = "MoE, sized as dense", "MoE，按稠密模型切分", "dense sizing table", "稠密模型规模表"
        else:
            kind_en, kind_zh, table_en, table_zh = "dense", "稠密", "dense sizing table", "稠密模型规模表"
        row = Step(
            f"Model size {size} ({kind_en}): the {tier['label']} row of the {table_en} applies: {tier['kb']}.",
            f"模型规模 {size}（{kind_zh}）：适用{table_zh}中 {tier['label']} 一行：{tier.get('kb_zh', tier['kb'])}。",
        )
        # a row that leaves tp to memory says what the estimate decided, in the same bullet (the answer
        # shows only the first reasons)
        # only the row whose tp the memory estimate decides (the 3-13B dense row) says why its tp_size
        reason = _tp_memory_reason(f) if tier.get("tp_from_memory") and "tp" not in t.fixed and "tp" not in t.required else None
        if reason is not None:
            row = Step(f"{row.en} {reason.en}", f"{row.zh}{reason.zh}")
        out.append(row)
    if c.strategy == "megatron_fsdp" and tier is not None and int(tier["pp"][0]) > 1:
        out.append(Step(
            f"megatron_fsdp has no pipeline parallelism, so the model's depth is not split (the table suggests pp_size {tier['pp'][0]}-{tier['pp'][1]}); fsdp2 would allow it.",
            f"megatron_fsdp 不支持流水线并行，因此不按深度切分（规模表建议 pp_size {tier['pp'][0]}-{tier['pp'][1]}）；fsdp2 可以。",
        ))
    if s.is_moe and not s.ep_ok:
        name = _model_name(s)
        out.append(Step(
            f"{name or 'This model'} has no expert-parallel path upstream (it is not one of AutoModel's MoE classes), so ep_size stays 1 and it is sized like a dense model.",
            f"{name + ' ' if name else '该模型'}在上游没有专家并行实现（不属于 AutoModel 的 MoE 类），因此 ep_size 保持 1，按稠密模型来切分。",
        ))
    if s.gpn and c.tp > s.gpn:
        # only a tp_size the user fixed is this large: say what it costs, never "inside one node"
        out.append(Step(
            f"tp_size {c.tp} is larger than a node of {s.gpn} GPUs: its TP groups span nodes, so every layer's "
            "all-reduce crosses the inter-node network (`MW-W-TP-CROSS-NODE`); keep TP inside the node and span nodes with PP or DP.",
            f"tp_size {c.tp} 大于单节点的 {s.gpn} 张 GPU：TP 组跨节点，每层的 all-reduce 都要走节点间网络"
            "（`MW-W-TP-CROSS-NODE`）；应把 TP 放在节点内，跨节点用 PP 或 DP。",
        ))
    elif c.tp > 1 and getattr(s.gpu_facts, "nvlink_domain", None) == 1:
        gpu = s.gpu_facts.key
        out.append(Step(
            f"tp_size {c.tp} stays inside one node of {s.gpn} GPUs, but {gpu} has no NVLink: TP's per-layer "
            "all-reduces cross PCIe, so keep tp_size as small as memory allows; TP across nodes is slower still.",
            f"tp_size {c.tp} 位于单个 {s.gpn} 卡节点内，但 {gpu} 没有 NVLink：TP 每层的 all-reduce 走 PCIe，"
            "在显存允许的前提下 tp_size 越小越好；跨节点的 TP 更慢。",
        ))
    elif c.tp > 1:
        out.append(Step(
            f"tp_size {c.tp} stays inside one node of {s.gpn} GPUs (NVLink); TP across nodes is slow.",
            f"tp_size {c.tp} 位于单个 {s.gpn} 卡节点内（NVLink）；跨节点的 TP 很慢。",
        ))
    if c.pp > 1:
        sched, why = _schedule(s, c.pp)
        span = " and spans nodes" if s.nodes and s.nodes > 1 else ""
        span_zh = "，可以跨节点" if s.nodes and s.nodes > 1 else ""
        if why == "deep":
            reason_en = f"{sched} (interleaved: two stages per rank, smaller bubbles)"
            reason_zh = f"{sched}（交错调度：每个 rank 两个 stage，bubble 更小）"
        else:
            reason_en = f"{sched} (one stage per rank: too few layers to interleave)"
            reason_zh = f"{sched}（每个 rank 一个 stage：层数不足以交错）"
        out.append(Step(
            f"pp_size {c.pp} splits the model's depth{span}; pipeline schedule {reason_en}.",
            f"pp_size {c.pp} 按深度切分模型{span_zh}；流水线调度用 {reason_zh}。",
        ))
    if c.cp > 1:
        seq = f" for {s.seq_len} tokens" if s.seq_len else ""
        seqz = f"（{s.seq_len} tokens）" if s.seq_len else ""
        out.append(Step(f"cp_size {c.cp} shards the sequence{seq}: long sequences (8K+) get context parallelism.",
                        f"cp_size {c.cp} 按序列维切分{seqz}：长序列（8K 以上）使用上下文并行。"))
    if c.ep > 1:
        out.append(Step(
            f"ep_size {c.ep}: expert parallelism comes first for MoE models; it builds a separate moe_mesh, and the moe block configures MoEParallelizerConfig.",
            f"ep_size {c.ep}：MoE 模型优先用专家并行；它会建立单独的 moe_mesh，moe 块对应 MoEParallelizerConfig。",
        ))
    if c.ep == 1 and s.is_moe and s.ep_ok and s.world > 1:
        limit = f" and the {s.experts} experts" if s.experts else ""
        limit_zh = f"和 {s.experts} 个专家数" if s.experts else ""
        non_pp = c.layout.non_pp
        out.append(Step(
            f"ep_size stays 1: no EP size above 1 divides both dp_size*cp_size*tp_size = {non_pp}{limit} with a layout that passes the validator.",
            f"ep_size 保持 1：没有大于 1 的 EP 大小能同时整除 dp_size*cp_size*tp_size = {non_pp}{limit_zh}并通过校验。",
        ))
    if c.dp_replicate > 1:
        out.append(Step(
            f"dp_replicate_size {c.dp_replicate}: HSDP replicates across {c.dp_replicate} groups and shards inside each.",
            f"dp_replicate_size {c.dp_replicate}：HSDP 在 {c.dp_replicate} 组之间复制，组内切分。",
        ))
    if c.ac and _ac_value(s, c.strategy) == "selective":
        out.append(Step(
            "activation_checkpointing: selective recomputes only part of each block, so it costs less compute than full checkpointing and saves less memory.",
            "activation_checkpointing: selective 只重算每个 block 的一部分，比完整检查点省计算，但省下的显存也更少。",
        ))
    elif c.ac:
        out.append(Step(
            "activation_checkpointing: true trades about a third more compute for much less activation memory.",
            "activation_checkpointing: true 用大约三成的额外计算换取大幅减少的激活显存。",
        ))
    if f.closer_failed is not None:
        near = f.closer_failed
        err = near.report.errors[0]
        out.append(Step(
            f"A layout closer to the table, {_describe(near.cand)}, fails validation: {err.code}: {_first_sentence(err.message)}",
            f"更接近规模表的布局 {_describe(near.cand)} 未通过校验：{err.code}：{_first_sentence(err.message_zh)}",
        ))
    if c.strategy != "ddp":
        out.append(Step("dp_size is left out: it is inferred from the world size.",
                        "dp_size 不写：它由 world size 自动推算。"))
    return out


def _tp_memory_reason(f: _Found) -> Step | None:
    """Why this tier's tp_size: the validator's memory estimate decides between TP 1 and more."""
    c, m = f.cand, f.report.memory
    if m is not None and m.capacity_gib:
        est_en = f"the memory estimate is {m.total_gib:.1f} GiB per GPU of {m.capacity_gib:.1f} GiB"
        est_zh = f"单卡显存估算为 {m.total_gib:.1f} GiB / {m.capacity_gib:.1f} GiB"
        if c.tp == 1:
            return Step(f"tp_size 1: {est_en}, so FSDP sharding alone fits; TP would only add per-layer all-reduces.",
                        f"tp_size 1：{est_zh}，只靠 FSDP 分片就放得下；TP 只会多出每层的 all-reduce。")
        return Step(f"tp_size {c.tp}: with tp_size 1 the estimate is over the GPU's memory; {est_en} with tp_size {c.tp}.",
                    f"tp_size {c.tp}：tp_size 1 时显存估算超过单卡显存；tp_size {c.tp} 时{est_zh}。")
    if c.tp == 1:
        return Step("tp_size 1, as upstream's own recipes for 7-9B models on 8 GPUs: FSDP sharding alone fits on "
                    "80 GB GPUs (about 16 bytes of model state per parameter, divided by the GPUs); "
                    "add tp_size 2 only if the run is short of memory.",
                    "tp_size 1，与上游 7-9B 模型的 8 卡示例配方一致：80 GB 的卡只靠 FSDP 分片就放得下（每个参数约 16 字节"
                    "的模型状态，按卡数均分）；只有显存不够时再加 tp_size 2。")
    return None


def _first_sentence(text: str) -> str:
    for sep in ("。", ". "):
        i = text.find(sep)
        if i > 0:
            return text[: i + len(sep)].strip()
    return text


def _describe(c: Candidate) -> str:
    parts = [f"{d}_size {c.size(d)}" for d in _DIMS if c.size(d) > 1] or ["data parallelism only"]
    if c.dp_replicate > 1:
        parts.append(f"dp_replicate_size {c.dp_replicate}")
    if c.ac:
        parts.append("activation_checkpointing")
    return ", ".join(parts)


def _relaxed_notes(s: Situation, t: Targets, c: Candidate) -> list[str]:
    """English/Chinese phrases for each user wish the closest valid config does not keep."""
    lost = []
    for dim in _DIMS:
        if dim in t.fixed and c.size(dim) != t.fixed[dim]:
            lost.append((f"{dim}_size {t.fixed[dim]}", f"{dim}_size {t.fixed[dim]}"))
        elif dim in t.required - t.automatic and c.size(dim) == 1 and dim not in t.fixed:
            lost.append((_FEATURE_EN[dim], _FEATURE_ZH[dim]))
    if "hsdp" in t.required and c.dp_replicate == 1:
        lost.append((_FEATURE_EN["hsdp"], _FEATURE_ZH["hsdp"]))
    return lost


def _why_infeasible(s: Situation, t: Targets, strategy: str, closest: _Found | None) -> Step:
    reasons_en, reasons_zh = [], []
    f = t.fixed
    asked = Layout.of("fsdp2", s.world, gpus_per_node=s.gpn, tp=f.get("tp", 1), pp=f.get("pp", 1), cp=f.get("cp", 1))
    prod = asked.non_dp
    if prod > 1 and s.world % prod:
        factors = "*".join(str(f.get(d, 1)) for d in ("tp", "pp", "cp"))
        nxt = ((s.world // prod) + 1) * prod
        reasons_en.append(f"world_size {s.world} is not divisible by tp_size*pp_size*cp_size = {factors} = {prod} (the nearest world size that is: {nxt})")
        reasons_zh.append(f"world_size {s.world} 不能被 tp_size*pp_size*cp_size = {factors} = {prod} 整除（最近的可行 world size：{nxt}）")
    if f.get("tp", 1) > s.node_gpus:
        reasons_en.append(f"tp_size {f['tp']} is larger than the {s.node_gpus} GPUs of a node")
        reasons_zh.append(f"tp_size {f['tp']} 大于单节点的 {s.node_gpus} 张 GPU")
    if "ep" in f and f["ep"] > 1:
        non_pp = Layout.of("fsdp2", s.world, pp=f.get("pp", 1)).non_pp  # dp*cp*tp = world / pp
        if non_pp % f["ep"]:
            reasons_en.append(f"ep_size {f['ep']} does not divide dp_size*cp_size*tp_size = {non_pp}")
            reasons_zh.append(f"ep_size {f['ep']} 不能整除 dp_size*cp_size*tp_size = {non_pp}")
        if s.experts and s.experts % f["ep"]:
            reasons_en.append(f"ep_size {f['ep']} does not divide the {s.experts} experts")
            reasons_zh.append(f"ep_size {f['ep']} 不能整除 {s.experts} 个专家")
    for dim in sorted(t.required - set(f)):
        if dim in _DIMS and s.world == 1:
            reasons_en.append(f"{_FEATURE_EN[dim]} needs at least 2 GPUs")
            reasons_zh.append(f"{_FEATURE_ZH[dim]}至少需要 2 张 GPU")
    if "pp" in t.required and not s.pp_ok:
        reasons_en.append("this model's class has no _pp_plan, so it cannot be pipelined")
        reasons_zh.append("该模型类没有 _pp_plan，无法做流水线并行")
    if "hsdp" in t.required:
        reasons_en.append("HSDP needs a data-parallel size with a divisor between 1 and dp_size (dp_replicate_size < dp_size)")
        reasons_zh.append("HSDP 需要 dp_size 有一个介于 1 和 dp_size 之间的因子（dp_replicate_size < dp_size）")
    if s.params.global_batch_size and not reasons_en:
        reasons_en.append(f"global_batch_size {s.params.global_batch_size} is not divisible by local_batch_size * dp_size for any layout that keeps your other choices")
        reasons_zh.append(f"在保留其他选择的前提下，global_batch_size {s.params.global_batch_size} 无法被 local_batch_size * dp_size 整除")
    if not reasons_en:
        reasons_en.append("no layout that keeps every size and feature you asked for passes the validator")
        reasons_zh.append("没有任何同时满足你所有要求的布局能通过校验")
    en = "; ".join(reasons_en)
    zh = "；".join(reasons_zh)
    if closest is not None:
        lost = _relaxed_notes(s, t, closest.cand)
        if lost:
            en += ". The closest valid config drops " + ", ".join(a for a, _ in lost)
            zh += "。最接近的有效配置放弃了 " + "、".join(b for _, b in lost)
    return Step(f"Infeasible as asked: {en}.", f"按原要求不可行：{zh}。")


def _request_name(r, lang: str) -> str:
    if r.fixed is not None:
        return f"{r.dim}_size {r.fixed}"
    return (_FEATURE_ZH if lang == "zh" else _FEATURE_EN)[r.dim]


def _refusal(s: Situation, t: Targets, strategy: str):
    """The validator's first error on the closest layout that keeps every request, or None."""
    cands = sorted(((c, _cost(c, s, t, False)) for c in _candidates(s, t, strategy, False)),
                   key=lambda x: (x[1], x[0].tp, x[0].pp, x[0].cp, x[0].ep, x[0].dp_replicate, x[0].ac))
    if not cands:
        return None
    _, recipe = _build(s, cands[0][0])
    report = _validate(s, recipe, with_memory=False)
    return report.errors[0] if report.errors else None


def _dropped_reason(s: Situation, t: Targets, strategy: str, d: Dropped) -> Step:
    """"TP cannot be kept (the validator's reason); the config drops only TP and keeps PP and EP"."""
    kept = [r for r in relax_requests(t) if r not in d.requests]
    names_en = ", ".join(_request_name(r, "en") for r in d.requests)
    names_zh = "、".join(_request_name(r, "zh") for r in d.requests)
    err = _refusal(s, t, strategy)
    if err is not None:
        why_en = f": {err.message.rstrip(' .')} (validator {err.code})"
        why_zh = f"：{err.message_zh.rstrip(' 。.')}（校验规则 {err.code}）"
    else:
        old = _why_infeasible(s, t, strategy, None)
        why_en = ": " + old.en.removeprefix("Infeasible as asked: ").rstrip(".")
        why_zh = "：" + old.zh.removeprefix("按原要求不可行：").rstrip("。")
    keep_en = (" and keeps " + ", ".join(_request_name(r, "en") for r in kept)) if kept else ""
    keep_zh = ("，保留 " + "、".join(_request_name(r, "zh") for r in kept)) if kept else ""
    return Step(
        f"Infeasible as asked: {names_en} cannot be kept{why_en}. The config below drops only {names_en}{keep_en}.",
        f"按原要求不可行：无法保留{names_zh}{why_zh}。下面的配置只放弃了{names_zh}{keep_zh}。",
    )


def _microbatch_reason(s: Situation, c: Candidate) -> Step | None:
    """Why the user's pp_microbatch_size fails with this layout's pipeline, in the validator's terms."""
    mbs, p = s.params.pp_microbatch_size, s.params
    if not mbs or c.pp <= 1:
        return None
    lbs, _ = _batches(s, c)
    if lbs is None:
        return None
    if lbs // mbs < c.pp:
        return Step(
            f"Infeasible as asked: local_batch_size {lbs} // pp_microbatch_size {mbs} = {lbs // mbs} microbatch(es), fewer than pp_size {c.pp} "
            f"(validator rule MW-E-PP-MICROBATCH-COUNT: local_batch_size // pp_microbatch_size >= pp_size). "
            f"The config below uses pp_microbatch_size {_microbatch(replace(s, params=replace(p, pp_microbatch_size=None)))}; "
            f"keeping {mbs} needs local_batch_size >= {mbs * c.pp}.",
            f"按原要求不可行：local_batch_size {lbs} // pp_microbatch_size {mbs} = {lbs // mbs} 个 microbatch，少于 pp_size {c.pp}"
            f"（校验规则 MW-E-PP-MICROBATCH-COUNT：local_batch_size // pp_microbatch_size >= pp_size）。"
            f"下面的配置改用 pp_microbatch_size {_microbatch(replace(s, params=replace(p, pp_microbatch_size=None)))}；"
            f"若保持 {mbs}，local_batch_size 至少要 {mbs * c.pp}。",
        )
    if lbs % mbs:
        return Step(
            f"Infeasible as asked: local_batch_size {lbs} is not divisible by pp_microbatch_size {mbs} "
            f"(validator rule MW-E-PP-MICROBATCH-DIVIDES: {lbs} % {mbs} = {lbs % mbs}).",
            f"按原要求不可行：local_batch_size {lbs} 不能被 pp_microbatch_size {mbs} 整除"
            f"（校验规则 MW-E-PP-MICROBATCH-DIVIDES：{lbs} % {mbs} = {lbs % mbs}）。",
        )
    return None


def _memory_reason(f: _Found) -> Step:
    m = f.report.memory
    if m is None or not m.capacity_gib:
        return Step("Every layout exceeds the GPU memory.", "所有布局都超出单卡显存。")
    return Step(
        f"Every layout searched exceeds the GPU memory; the smallest estimate is {m.total_gib:.1f} GiB per GPU against {m.capacity_gib:.1f} GiB. More GPUs, a larger-memory GPU, or a shorter sequence would help.",
        f"搜索到的所有布局都超出单卡显存；最小的估算为每卡 {m.total_gib:.1f} GiB，而显存只有 {m.capacity_gib:.1f} GiB。可以增加 GPU、换更大显存的 GPU 或缩短序列。",
    )


def to_yaml(recipe: dict) -> str:
    return dump_yaml(recipe, sort_keys=False, default_flow_style=False, allow_unicode=True)


def _batch_notes(s: Situation, f: _Found) -> list[Step]:
    sched = f.recipe.get("step_scheduler")
    p = s.params
    if not sched or (p.global_batch_size and p.local_batch_size):
        return []
    lbs, gbs = sched["local_batch_size"], sched["global_batch_size"]
    dp = f.cand.layout.dp
    chosen = [] if p.local_batch_size else [f"local_batch_size {lbs}"]
    chosen += [] if p.global_batch_size else [f"global_batch_size {gbs}"]
    why_en = f"at least pp_size {f.cand.pp} microbatches per step" if f.cand.pp > 1 else "divisibility"
    why_zh = f"每步至少 pp_size {f.cand.pp} 个 microbatch" if f.cand.pp > 1 else "整除要求"
    return [Step(
        f"Batch sizes not given: {' and '.join(chosen)} {'are placeholders that satisfy' if len(chosen) > 1 else 'is a placeholder that satisfies'} {why_en}; "
        f"set global_batch_size to your target, a multiple of local_batch_size * dp_size = {lbs}*{dp} = {lbs * dp}.",
        f"未给出 batch 大小：{'、'.join(chosen)} 只是满足{why_zh}的占位值；"
        f"请把 global_batch_size 设为你的目标值，它必须是 local_batch_size * dp_size = {lbs}*{dp} = {lbs * dp} 的倍数。",
    )]


def _plan_from(s: Situation, t: Targets, f: _Found, strategy_rationale: list[Step], rejected: list[Step], *,
               feasible: bool = True, reason: Step | None = None) -> Plan:
    return Plan(
        strategy=f.cand.strategy,
        distributed=f.dist,
        yaml=to_yaml(f.recipe),
        report=f.report,
        world_size=s.world,
        gpus_per_node=s.gpn,
        arithmetic=tuple(_arith(s, f)),
        rationale=tuple(strategy_rationale + _why(s, t, f)),
        assumptions=s.assumptions + tuple(_batch_notes(s, f)),
        feasible=feasible,
        infeasible_reason=reason,
        rejected=tuple(rejected),
    )


# --- entry point -------------------------------------------------------------------------------------

def _stated_params(q: Query):
    """The query's parameters with its stated layout as constraints."""
    sit = q.situation
    st = sit.stated
    p = replace(q.params, **{k: v for k, v in st.sizes.items() if k != "dp_size" or not st.rest_data_parallel})
    if st.rest_data_parallel:
        free = {d for d in ("tp", "pp", "cp") if f"{d}_size" not in st.sizes}
        p = replace(p, unwanted=frozenset(p.unwanted | free), wanted=frozenset(p.wanted - free))
    return p, sit


def plan(
    query_or_params: Query | Params,
    *,
    gpus_per_node: int | None = None,
    world_size: int | None = None,
    model: str | None = None,
    gpu: str | None = None,
) -> Plan:
    """A validated recommendation for the situation of a question (or bare parameters).

    A Query's situation already holds the request's values and the layout the user stated: a stated
    size (1 included) is kept, and "the rest data parallel" leaves every unstated model-parallel
    size at 1. Explicit arguments are for callers without a Query; leave `gpus_per_node` None unless
    the user set it, so "4 GPUs per node" in the text counts."""
    token = _REPORTS.set({})  # a memo for this call only: nothing is kept between questions
    try:
        found = _plan(query_or_params, gpus_per_node=gpus_per_node, world_size=world_size, model=model, gpu=gpu)
        warned = _warned_stated(query_or_params, found) if isinstance(query_or_params, Query) else set()
        if warned:
            found = _plan(_released(query_or_params, warned), gpus_per_node=gpus_per_node, world_size=world_size,
                          model=model, gpu=gpu)
        return found
    finally:
        _REPORTS.reset(token)


def _asks_instead(q: Query) -> bool:
    """"Is tp_size 16 across two nodes a bad idea? What would you use instead?": a good-idea verdict on
    the user's layout with a recommendation asked after it: the layout to recommend replaces theirs."""
    asks = list(q.asks)
    first = next((i for i, a in enumerate(asks) if a.kind == "verdict" and a.aspect == "advice"), None)
    return first is not None and any(a.kind == "recommendation" for a in asks[first + 1:])


def _warned_stated(q: Query, found: Plan) -> set[str]:
    """The stated sizes the plan kept although the validator warns about them (TP across nodes, heads
    that do not split), when the question asks what to use instead of its layout: the requests to
    release, so the recommendation is not the layout the verdict warns against."""
    if not _asks_instead(q) or found.report is None:
        return set()
    stated = set(q.situation.stated.sizes)
    return {f.path.rsplit(".", 1)[-1] for f in found.report.warnings if f.path} & stated


def _released(q: Query, keys: set[str]) -> Query:
    """The query with the stated sizes `keys` no longer asked for (the planner picks them)."""
    sit = q.situation
    stated = replace(sit.stated, sizes={k: v for k, v in sit.stated.sizes.items() if k not in keys})
    return replace(q, situation=replace(sit, stated=stated), params=replace(q.params, **{k: None for k in keys}))


def _plan(query_or_params: Query | Params, *, gpus_per_node: int | None, world_size: int | None,
          model: str | None, gpu: str | None) -> Plan:
    if isinstance(query_or_params, Query):
        p, sit = _stated_params(query_or_params)
        world_size = world_size if world_size is not None else sit.world_size
        gpus_per_node = gpus_per_node if gpus_per_node is not None else sit.gpus_per_node
        model, gpu = model or sit.model, gpu or sit.gpu
    else:
        p = query_or_params
    s = _situation(p, gpus_per_node, world_size, model, gpu)
    if isinstance(query_or_params, Query) and "ac_selective" in query_or_params.topics:
        s = replace(s, ac_selective=True)
    strategy, rejected, rationale = _choose_strategy(s)
    t = _targets(s, strategy)
    if "ep" in t.required and not s.ep_ok:
        if s.is_moe:
            name, cls = _model_name(s), _model_class(s)
            cls_en = f" loads through the Hugging Face class `{cls}`, which" if cls else ""
            cls_zh = f" 通过 Hugging Face 的 `{cls}` 类加载，该类" if cls else " "
            rejected.append(Step(
                f"Expert parallelism rejected: {name or 'this model'}{cls_en} does not inherit AutoModel's `MoEFSDPSyncMixin`"
                f" (it is not one of AutoModel's MoE classes), so `validate_for_mesh` in `_transformers/capabilities.py`"
                " refuses ep_size > 1 at start-up.",
                f"不采用专家并行：{name or '该模型'}{cls_zh if name else cls_zh.strip()}没有继承 AutoModel 的 `MoEFSDPSyncMixin`"
                "（不属于 AutoModel 的 MoE 类），启动时 `_transformers/capabilities.py` 里的 `validate_for_mesh` 会拒绝 ep_size > 1。",
            ))
        else:
            rejected.append(Step(
                "Expert parallelism rejected: ep_size > 1 needs a MoE model (upstream refuses it for a dense model); this model is dense.",
                "不采用专家并行：ep_size > 1 需要 MoE 模型（上游对稠密模型会拒绝）；该模型是稠密模型。",
            ))
        t.required.discard("ep")
        t.fixed.pop("ep", None)
        t.forbidden.add("ep")
    if s.world == 1:
        # one GPU: nothing to shard; wishes for parallelism cannot be met
        t.ranges = {d: (1, 1) for d in _DIMS}

    best, mem_strict = _search(s, t, strategy, relaxed=False)
    if best is not None:
        return _plan_from(s, t, best, rationale, rejected)
    if p.pp_microbatch_size and p.pp_microbatch_size != int(load_rules().pipeline["microbatch_size"]):
        # The stated micro-batch is what breaks it ("pp_size 2, local_batch_size 4, pp_microbatch_size 4"):
        # keep everything else, use the table's micro-batch, and say why the stated one fails.
        s_mb = replace(s, params=replace(p, pp_microbatch_size=None))
        found, _ = _search(s_mb, t, strategy, relaxed=False)
        if found is not None:
            return _plan_from(s_mb, t, found, rationale, rejected, feasible=False,
                              reason=_microbatch_reason(s, found.cand) or _why_infeasible(s, t, strategy, found))

    # Nothing keeps every wish: first drop the fewest of them (and say which), then relax them all,
    # stay as close as possible, and say why.
    wishes = bool(t.fixed) or bool(t.required - t.automatic)
    if not wishes and mem_strict is not None:
        return _plan_from(s, t, mem_strict, rationale, rejected, feasible=False, reason=_memory_reason(mem_strict))
    if wishes and s.world > 1:
        rules_want = {"ep"} if s.is_moe and s.ep_ok and "ep" not in p.unwanted else set()
        dropped = fewest_dropped(t, lambda tt: _search(s, tt, strategy, relaxed=False)[0], rules_want=rules_want)
        if dropped is not None:
            return _plan_from(s, dropped.targets, dropped.found, rationale, rejected, feasible=False,
                              reason=_dropped_reason(s, t, strategy, dropped))
    closest, mem_relaxed = _search(s, t, strategy, relaxed=True)
    if closest is not None:
        if not _relaxed_notes(s, t, closest.cand):
            return _plan_from(s, t, closest, rationale, rejected)  # the wishes held after all
        reason = _memory_reason(mem_strict) if mem_strict is not None else _why_infeasible(s, t, strategy, closest)
        return _plan_from(s, t, closest, rationale, rejected, feasible=False, reason=reason)
    mem = mem_strict or mem_relaxed
    if mem is not None:
        # Every layout is structurally fine but over memory: the report says so (ok=False), never hidden.
        return _plan_from(s, t, mem, rationale, rejected, feasible=False, reason=_memory_reason(mem))
    # Last resort: plain data parallelism, which every world size accepts.
    base = Candidate(Layout.of(strategy, s.world, gpus_per_node=s.gpn))  # plain data parallelism: valid for every strategy
    dist, recipe = _build(replace(s, params=replace(p, global_batch_size=None, local_batch_size=None, wanted=frozenset())), base)
    # with memory: a plain layout that does not fit says so (ok=False), so no answer shows it as valid
    report = _validate(s, recipe)
    f = _Found(base, dist, recipe, report, 0.0)
    return _plan_from(s, t, f, rationale, rejected, feasible=False, reason=_why_infeasible(s, t, strategy, f))
