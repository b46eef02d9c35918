"""Per-GPU memory estimate: sharded model state plus activations, against the GPU's capacity.

Model state (weights, gradients, AdamW states) follows where upstream puts each tensor:
FSDP2 shards over the flattened dp_shard*cp mesh ("dp_shard_cp"; HSDP replicates over dp_replicate),
the TP plan splits attention, MLP and embedding weights by tp, pipeline stages hold their own
layers (plus the embedding on the first stage and the head on the last), and with ep_size > 1 the
routed experts are split over ep and FSDP-sharded over ep_shard (nemo_automodel/components/moe/
parallelizer.py). Activations follow Korthikanti et al. 2022, "Reducing Activation Recomputation
in Large Transformer Models" (per layer s*b*h*(34 + 5*a*s/h) bytes for a 4h MLP without
parallelism), generalized to GQA, gated and MoE MLP widths; flash attention drops the 5*a*s/h
score term. Everything is arithmetic on the model's shape: pure and fast.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from pathlib import Path

from assistant.datafile import read_yaml
from assistant.defaults import DEFAULT_GPUS_PER_NODE
from assistant.validator.capabilities import accepts
from assistant.validator.layout import Layout
from assistant.validator.model_checks import virtual_stages
from assistant.validator.models import GpuFacts, ModelFacts, ParamCounts, load_gpu, param_counts
from assistant.validator.report import Derived, Finding, MemoryEstimate
from assistant.validator.rules import make_finding
from assistant.validator.schedules import is_accepted
from assistant.validator.workload import (
    ALL_FORWARD_FIRST_SCHEDULES,
    DEFAULT_SEQ_LEN,
    SINGLE_STAGE_SCHEDULES,
    V_SCHEDULES,
    ACMode,
    Workload,
    ac_mode,
    read_workload,
)

GIB = 1 << 30
MEMORY_TIGHT_FRACTION = 0.90
_KNOBS_FILE = Path(__file__).resolve().parent / "memory_knobs.yaml"


@dataclass(frozen=True)
class Precision:
    key: str  # "fp32" | "bf16"
    weight: int  # bytes per parameter, sharded
    grad: int
    optim: int  # AdamW exp_avg + exp_avg_sq


# FSDP2 keeps the sharded parameters in the dtype the model was loaded in and computes in bf16
# (MixedPrecisionPolicy param_dtype bf16, reduce_dtype fp32); torch AdamW keeps its two states in
# the parameter dtype. fp32 loading therefore means 4+4+8 = 16 B per parameter (the classic
# "bf16 compute with fp32 master weights and optimizer"), bf16 loading 2+2+4 = 8 B.
PRECISIONS = {"fp32": Precision("fp32", 4, 4, 8), "bf16": Precision("bf16", 2, 2, 4)}


@dataclass(frozen=True)
class RankMemory:
    """One pipeline rank's share, in bytes."""

    rank: int
    weights: float  # sharded weights
    gathered: float  # FSDP all-gathered bf16 copies of the units in flight
    grads: float
    reduce_buffer: float  # fp32 reduce-scatter input of one unit
    optim: float
    activations: float
    logits: float
    layers: int
    in_flight: float

    @property
    def params(self) -> float:
        return self.weights + self.gathered

    @property
    def gradients(self) -> float:
        return self.grads + self.reduce_buffer

    @property
    def acts(self) -> float:
        return self.activations + self.logits

    @property
    def total(self) -> float:
        return self.params + self.gradients + self.optim + self.acts


@dataclass(frozen=True)
class Sizing:
    """Everything the estimate depends on: the layout (from a validated Derived or the planner's
    candidate) and the workload read from the recipe."""

    layout: Layout
    sequence_parallel: bool = False
    seq_len: int = DEFAULT_SEQ_LEN
    seq_source: str = "default"
    micro_batch: int = 1
    micro_batch_source: str = "default"
    n_microbatches: int = 1
    ac: ACMode = "none"
    pp_schedule: str = "1f1b"
    layers_per_stage: int | None = None
    round_virtual_stages: str | None = None
    weights_dtype: str = "fp32"
    weights_dtype_stated: bool = False
    peft: bool = False
    flash_attention: bool = True

    # the layout's sizes, read under the names the estimate uses
    world_size = property(lambda self: self.layout.world_size)
    tp = property(lambda self: self.layout.tp)
    pp = property(lambda self: self.layout.pp)
    cp = property(lambda self: self.layout.cp)
    ep = property(lambda self: self.layout.ep)
    dp_replicate = property(lambda self: self.layout.dp_replicate)
    dp_shard = property(lambda self: self.layout.dp_shard)
    strategy = property(lambda self: self.layout.strategy)

    @property
    def fsdp_shard(self) -> int:
        """FSDP2 shards over the flattened dp_shard*cp mesh; ddp does not shard."""
        return 1 if self.strategy == "ddp" else self.dp_shard * self.cp

    @property
    def ep_shard(self) -> int:
        return self.layout.ep_shard or 1

    def changed(self, changes: dict) -> Sizing:
        """With some fields changed; a size change goes through the layout, which resolves dp again."""
        sizes = {k: v for k, v in changes.items() if k in _LAYOUT_FIELDS}
        rest = {k: v for k, v in changes.items() if k not in _LAYOUT_FIELDS}
        return replace(self, layout=self.layout.with_sizes(**sizes) if sizes else self.layout, **rest)


_LAYOUT_FIELDS = frozenset({"strategy", "world_size", "tp", "pp", "cp", "ep", "dp_replicate"})


@functools.cache
def _phrases() -> dict:
    return read_yaml(_KNOBS_FILE)


# ------------------------------------------------------------------------------------------ layout


def _stage_layout(m: ModelFacts, s: Sizing) -> tuple[dict[int, tuple[list[int], bool, bool]], int]:
    """Pipeline ranks that hold anything -> (layer ids, holds the embedding, holds the head); stages per rank.

    Ranks left without a layer (pp_size above the layer count, which upstream rejects) are omitted:
    they hold nothing, so they can never be the busiest rank, and skipping them keeps a huge pp cheap.
    """
    layers, pp = m.num_layers, max(1, s.pp)
    if pp == 1:
        return {0: (list(range(layers)), True, True)}, 1
    stages = virtual_stages(layers, pp, s.pp_schedule, s.layers_per_stage, s.round_virtual_stages)
    per_rank = max(1, stages // pp)
    stages = pp * per_rank
    if stages > layers:  # upstream raises here (MW-W-PP-LAYERS); estimate the one-stage-per-rank split
        per_rank, stages = 1, pp
    base, extra = divmod(layers, stages)
    v_shape = s.pp_schedule in V_SCHEDULES and per_rank == 2
    out: dict[int, tuple[list[int], bool, bool]] = {}
    for st in sorted(set(range(min(stages, layers))) | {0, stages - 1}):
        start = st * base + min(st, extra)
        ids = list(range(start, start + base + (1 if st < extra else 0)))
        r = (st if st < pp else 2 * pp - 1 - st) if v_shape else st % pp
        cur, emb, head = out.get(r, ([], False, False))
        out[r] = (cur + ids, emb or st == 0, head or st == stages - 1)
    return out, per_rank


def _in_flight(s: Sizing, rank: int, stages: int) -> float:
    """Micro-batches whose activations a pipeline rank holds at its peak (stages: stages per rank)."""
    if s.pp <= 1:
        return 1.0
    n = max(1, s.n_microbatches)
    if s.pp_schedule in ALL_FORWARD_FIRST_SCHEDULES:
        return float(n)
    warm = min(s.pp - rank, n)
    if s.pp_schedule in SINGLE_STAGE_SCHEDULES:
        return float(warm)
    # Korthikanti et al. 2022, interleaved schedule: (1 + (p-1)/(p*v)) times the 1F1B amount.
    return min(float(n * stages), warm * (1 + (s.pp - 1) / (s.pp * stages)))


# ------------------------------------------------------------------------------------------ activations


def _token_bytes(m: ModelFacts, s: Sizing) -> tuple[float, float, float]:
    """Per token and layer, in bytes: (full activations, stored with full AC, stored with selective AC).

    Korthikanti et al. 2022 terms for one layer: attention 11*h (QKV input 2h, Q and K 4h, V 2h,
    projection input 2h, dropout mask h), MLP 19*h for a 4h GeLU MLP (input 2h, GeLU input 8h,
    second linear input 8h, dropout mask h), norms 4*h. The parts that need the full hidden state
    (norm inputs, layer inputs, dropout masks: 10*h) are split by TP only with sequence parallelism.
    """
    h, a = m.hidden_size, m.num_attention_heads
    t = max(1, s.tp)
    if m.is_mla:
        dq = (m.qk_nope_head_dim or 0) + (m.qk_rope_head_dim or 0)
        dv, kvh = m.v_head_dim or m.head_dim, a
    else:
        dq = dv = m.head_dim
        kvh = m.num_kv_heads
    attn_split = 2 * a * dq + 2 * kvh * dq + 2 * kvh * dv + 2 * a * dv
    if not s.flash_attention:
        attn_split += 5 * a * s.seq_len / max(1, s.cp)
    per_width = 8 if m.gated_mlp else 4  # gated: gate, act(gate), up, product; plain: act input, fc2 input
    if m.is_moe:
        width = m.experts_per_token * (m.moe_intermediate_size or 0) + m.shared_expert_width
        # The dispatch copies each token to its k experts; the router keeps fp32 scores.
        moe_extra = 2 * m.experts_per_token * h + 4 * m.num_routed_experts
        dense_width = m.intermediate_size or 0
        n_dense = len(m.dense_layer_ids)
        width = (width * m.num_moe_layers + dense_width * n_dense) / m.num_layers
        moe_extra = moe_extra * m.num_moe_layers / m.num_layers
    else:
        width, moe_extra = m.intermediate_size or 4 * h, 0
    mlp_split = per_width * width
    replicated = 10 * h + moe_extra
    rep_div = t if s.sequence_parallel else 1
    full = replicated / rep_div + (attn_split + mlp_split) / t
    ckpt = 2 * h / rep_div
    # Upstream selective AC (TorchTitan policy, components/distributed/activation_checkpointing.py)
    # saves attention outputs and every other matmul output; the block input is kept as well.
    mm_out = 2 * (a * dq + kvh * dq + kvh * dv + h + (2 if m.gated_mlp else 1) * width + h)
    selective = 2 * h / rep_div + (2 * a * dv + mm_out / 2) / t
    return full, ckpt, min(selective, full)


# ------------------------------------------------------------------------------------------ estimate


def _rank_memory(m: ModelFacts, c: ParamCounts, s: Sizing) -> list[RankMemory]:
    prec = PRECISIONS[s.weights_dtype]
    dense_ids = set(m.dense_layer_ids) if m.is_moe else None
    tok_full, tok_ckpt, tok_sel = _token_bytes(m, s)
    s_local = math.ceil(s.seq_len / max(1, s.cp))
    tokens = s_local * s.micro_batch
    full_layer = tokens * tok_full
    stored = {"none": full_layer, "full": tokens * tok_ckpt, "selective": tokens * tok_sel}[s.ac]
    t, shard = max(1, s.tp), max(1, s.fsdp_shard)
    expert_div = s.ep * s.ep_shard if s.ep > 1 else shard
    experts_gathered = c.num_routed_experts * c.routed_expert / (s.ep if s.ep > 1 else 1)
    out = []
    layout, per_rank = _stage_layout(m, s)
    for rank, (ids, has_emb, has_head) in sorted(layout.items()):
        n_dense = len(ids) if dense_ids is None else sum(1 for i in ids if i in dense_ids)
        n_moe = len(ids) - n_dense
        dense_elems = len(ids) * c.attention + n_dense * c.dense_mlp + n_moe * (c.shared_experts + c.router)
        head = c.lm_head or (c.embedding if s.pp > 1 else 0)  # tied weights are duplicated across stages
        dense_elems += (c.embedding if has_emb else 0) + ((head + c.final_norm) if has_head else 0)
        routed = n_moe * c.num_routed_experts * c.routed_expert
        local = dense_elems / t / shard + routed / expert_div
        weights = local * prec.weight
        grads = 0.0 if s.peft else local * prec.grad
        optim = 0.0 if s.peft else local * prec.optim
        gathered = reduce_buf = 0.0
        if shard > 1:
            unit = 0.0
            if ids:
                unit = max(
                    (c.attention + c.dense_mlp) / t if n_dense else 0.0,
                    (c.attention + c.shared_experts + c.router) / t + experts_gathered if n_moe else 0.0,
                )
            if has_emb:
                unit = max(unit, c.embedding / t)
            if has_head:
                unit = max(unit, head / t)
            gathered = 2 * unit * 2  # current and prefetched unit, bf16
            reduce_buf = 0.0 if s.peft else unit * 4
        in_flight = _in_flight(s, rank, per_rank)
        acts = len(ids) * stored * in_flight
        if s.ac != "none" and ids:
            acts += full_layer  # one layer's activations rebuilt during its backward
        logits = 4.0 * tokens * m.vocab_size / t if has_head else 0.0
        out.append(RankMemory(rank, weights, gathered, grads, reduce_buf, optim, acts, logits, len(ids), in_flight))
    return out


def _source_name(source: str, lang: str) -> str:
    """A recipe key stays as it is; the two made-up sources read in the answer's language."""
    names = _phrases()["assumptions"]["source"]
    return names[source][lang] if source in names else source


def _assumptions(m: ModelFacts, s: Sizing, worst: RankMemory) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The estimate's assumptions in English and Chinese: the same lines, from memory_knobs.yaml."""
    ph = _phrases()["assumptions"]
    prec = PRECISIONS[s.weights_dtype]
    # (key, values, [suffix keys that apply]) per line
    lines: list[tuple[str, dict, list[str]]] = [
        ("model", dict(key=m.key, params_b=f"{m.params_b:g}", layers=m.num_layers, hidden=m.hidden_size,
                       experts=m.num_routed_experts, topk=m.experts_per_token), ["model+moe"] if m.is_moe else []),
        ("peft", dict(w=prec.weight), []) if s.peft else
        ("precision_stated" if s.weights_dtype_stated else "precision_assumed",
         dict(dtype=s.weights_dtype, w=prec.weight, g=prec.grad, o=prec.optim, total=prec.weight + prec.grad + prec.optim),
         []),
        ("ddp", {}, []) if s.strategy == "ddp" else
        ("fsdp", dict(dp_shard=s.dp_shard, cp=s.cp, fsdp=s.fsdp_shard, replicate=s.dp_replicate),
         ["fsdp+replicate"] if s.dp_replicate > 1 else []),
        ("tp", dict(tp=s.tp), []),
    ]
    if m.is_moe:
        lines.append(("experts_ep", dict(ep=s.ep, ep_shard=s.ep_shard), []) if s.ep > 1 else
                     ("experts_no_ep", dict(fsdp=s.fsdp_shard), []))
    extras = (["pipeline+embedding"] if worst.rank == 0 else []) + (["pipeline+head"] if worst.logits else [])
    lines += [
        ("pipeline", dict(pp=s.pp, schedule=s.pp_schedule, rank=worst.rank, layers=worst.layers,
                          inflight=f"{worst.in_flight:g}"), extras),
        ("buffers", {}, []),
        ("workload", dict(seq=s.seq_len, per_cp=math.ceil(s.seq_len / max(1, s.cp)), mb=s.micro_batch), []),
        ("activations", {}, ["activations+flash" if s.flash_attention else "activations+scores"]
         + (["activations+sp"] if s.sequence_parallel and s.tp > 1 else [])),
        (f"ac_{s.ac}", {}, []),
        ("head", {}, []),
        ("not_counted", {}, []),
    ]
    out: dict[str, list[str]] = {"en": [], "zh": []}
    for lang in ("en", "zh"):
        for key, values, suffixes in lines:
            values = dict(values, seq_source=_source_name(s.seq_source, lang),
                          mb_source=_source_name(s.micro_batch_source, lang))
            if key == "pipeline":  # the suffixes sit inside the sentence, before "with ... in flight"
                values["extras"] = "".join(ph[x][lang] for x in suffixes)
                suffixes = []
            out[lang].append(ph[key][lang].format(**values) + "".join(ph[x][lang].format(**values) for x in suffixes))
    return tuple(out["en"]), tuple(out["zh"])


def _estimate(m: ModelFacts, s: Sizing, gpu: GpuFacts | None,
              assumptions: bool = True) -> tuple[MemoryEstimate, RankMemory]:
    ranks = _rank_memory(m, param_counts(m), s)
    worst = max(ranks, key=lambda r: r.total)
    # the sentences cost half of an estimate; the planner, ranking hundreds of layouts, reads only totals
    en, zh = _assumptions(m, s, worst) if assumptions else ((), ())
    est = MemoryEstimate(
        gpu=gpu.key if gpu else None,
        capacity_gib=gpu.memory_gib if gpu else None,
        params_gib=round(worst.params / GIB, 2),
        grads_gib=round(worst.gradients / GIB, 2),
        optimizer_gib=round(worst.optim / GIB, 2),
        activations_gib=round(worst.acts / GIB, 2),
        total_gib=round(worst.total / GIB, 2),
        assumptions=en,
        assumptions_zh=zh,
    )
    return est, worst


_MAX_SIZE = 1 << 40


def _positive_int(name: str, v: object) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= _MAX_SIZE:
        raise ValueError(f"{name} must be a positive integer up to {_MAX_SIZE}, got {v!r}")
    return v


def estimate_for_sizes(
    facts: ModelFacts,
    *,
    world_size: int,
    tp: int = 1,
    pp: int = 1,
    cp: int = 1,
    ep: int = 1,
    dp_shard: int | None = None,
    dp_replicate: int = 1,
    strategy: str = "fsdp2",
    **workload,
) -> MemoryEstimate:
    """Per-GPU estimate for explicit sizes (no recipe needed); the workload keywords are
    estimate_for_layout's. dp_shard defaults to what upstream infers, world_size // (tp*cp*pp*dp_replicate)."""
    for name, v in (("world_size", world_size), ("tp", tp), ("pp", pp), ("cp", cp), ("ep", ep),
                    ("dp_replicate", dp_replicate)):
        _positive_int(name, v)
    if dp_shard is not None:
        _positive_int("dp_shard", dp_shard)
    layout = Layout.of(strategy, world_size, tp=tp, pp=pp, cp=cp, ep=ep, dp_replicate=dp_replicate,
                       dp=None if dp_shard is None else dp_shard * dp_replicate)
    if dp_shard is None and (world_size % layout.non_dp or layout.dp % dp_replicate):
        raise ValueError(f"world_size {world_size} is not divisible by tp*cp*pp*dp_replicate = "
                         f"{tp * cp * pp * dp_replicate}")
    return estimate_for_layout(facts, layout, **workload)


def estimate_for_layout(
    facts: ModelFacts,
    layout: Layout,
    *,
    seq_len: int = DEFAULT_SEQ_LEN,
    micro_batch: int = 1,
    n_microbatches: int | None = None,
    activation_checkpointing: bool | str = False,
    sequence_parallel: bool = False,
    pp_schedule: str = "1f1b",
    layers_per_stage: int | None = None,
    weights_dtype: str = "fp32",
    peft: bool = False,
    flash_attention: bool = True,
    gpu: GpuFacts | str | None = None,
    assumptions: bool = True,
) -> MemoryEstimate:
    """Per-GPU estimate for a layout (the planner's entry point). n_microbatches (per step, under PP)
    defaults to pp; activation_checkpointing takes True/False or "full"/"selective"; without
    `assumptions` the estimate carries its figures only."""
    for name, v in (("seq_len", seq_len), ("micro_batch", micro_batch)):
        _positive_int(name, v)
    for name, v in (("n_microbatches", n_microbatches), ("layers_per_stage", layers_per_stage)):
        if v is not None:
            _positive_int(name, v)
    if weights_dtype not in PRECISIONS:
        raise ValueError(f"weights_dtype must be one of {', '.join(PRECISIONS)}, got {weights_dtype!r}")
    gpu_facts = load_gpu(gpu) if isinstance(gpu, str) else gpu
    sizing = Sizing(
        layout, sequence_parallel=bool(sequence_parallel), seq_len=seq_len, seq_source="argument",
        micro_batch=micro_batch, micro_batch_source="argument",
        n_microbatches=n_microbatches or max(1, layout.pp),
        ac=ac_mode(activation_checkpointing), pp_schedule=pp_schedule.lower(), layers_per_stage=layers_per_stage,
        weights_dtype=weights_dtype, weights_dtype_stated=True, peft=peft, flash_attention=flash_attention,
    )
    return _estimate(facts, sizing, gpu_facts, assumptions)[0]


def fits(estimate: MemoryEstimate, fraction: float = MEMORY_TIGHT_FRACTION) -> bool | None:
    """True when the estimate stays under fraction*capacity; None without a GPU."""
    if estimate.capacity_gib is None:
        return None
    return estimate.total_gib <= fraction * estimate.capacity_gib


# ------------------------------------------------------------------------------------------ validator entry


def sizing_from(derived: Derived, work: Workload) -> Sizing:
    return Sizing(
        Layout.from_derived(derived),
        sequence_parallel=work.sequence_parallel,
        seq_len=work.seq_len,
        seq_source=work.seq_source,
        micro_batch=work.micro_batch,
        micro_batch_source=work.micro_batch_source,
        n_microbatches=work.n_microbatches,
        ac=work.ac if work.ac_decoder else "none",
        # A name torch rejects (MW-E-PP-SCHEDULE) is estimated as the default 1F1B.
        pp_schedule=work.pp_schedule if is_accepted(work.pp_schedule) else "1f1b",
        layers_per_stage=work.layers_per_stage,
        round_virtual_stages=work.round_virtual_stages,
        weights_dtype=work.weights_dtype or "fp32",
        weights_dtype_stated=work.weights_dtype is not None,
        peft=work.peft,
    )


def estimate_memory(
    derived: Derived,
    dist: dict,
    recipe: dict | None,
    facts: ModelFacts,
    gpu: GpuFacts | None,
    *,
    seq_len: int | None = None,
    gpus_per_node: int | None = None,
) -> tuple[MemoryEstimate, list[Finding]]:
    """The estimate for a validated layout, and MW-E-MEMORY / MW-W-MEMORY-TIGHT when a GPU is given.

    seq_len overrides the recipe's sequence length; gpus_per_node bounds the tp_size the knob search
    proposes (default: the GPU's typical server).
    """
    work = read_workload(dist, recipe, pp_size=derived.pp_size, seq_len=seq_len)
    sizing = sizing_from(derived, work)
    est, worst = _estimate(facts, sizing, gpu)
    if gpu is None:
        return est, []
    cap = gpu.memory_gib
    total = worst.total / GIB
    if total <= MEMORY_TIGHT_FRACTION * cap:
        return est, []
    options, more_gpus, combo = _advice(facts, sizing, work, gpu, total, gpus_per_node)
    values = _finding_values(worst, sizing, gpu, total, options, more_gpus, combo)
    code = "MW-E-MEMORY" if total > cap else "MW-W-MEMORY-TIGHT"
    return est, [make_finding(code, "distributed", **values)]


# ------------------------------------------------------------------------------------------ knobs


@dataclass(frozen=True)
class _Option:
    knob: str  # key into memory_knobs.yaml
    value: int | str
    new_gib: float
    changes: dict  # Sizing fields the change sets (sizes go through the layout: dp follows)
    setting: str  # the recipe setting, "key: value", language-neutral
    extra: dict


def _fmt(x: float) -> str:
    return f"{x:.1f}"


def _try(m: ModelFacts, s: Sizing, changes: dict) -> float:
    return _estimate(m, s.changed(changes), None)[1].total / GIB


def _knobs(m: ModelFacts, s: Sizing, work: Workload, limit: float, node: int, current: float) -> list[_Option]:
    """Single changes that lower the estimate, best first; each keeps the layout valid for upstream."""
    world = s.world_size
    opts: list[_Option] = []

    def add(knob: str, value: int | str, changes: dict, setting: str, **extra) -> None:
        opts.append(_Option(knob, value, _try(m, s, changes), changes, setting, extra))

    def valid(**sizes: int) -> bool:
        # upstream builds this mesh (the layout's own rules), not only "the world divides"
        lay = s.layout.with_sizes(**sizes)
        return lay.mesh_ok and not lay.strategy_errors()

    def smallest_fitting(candidates: list[tuple[int, dict]]) -> tuple[int, dict] | None:
        # The smallest change that fits, else the one that lowers the estimate most.
        if not candidates:
            return None
        scored = [(v, ch, _try(m, s, ch)) for v, ch in candidates]
        fitting = [c for c in scored if c[2] <= limit]
        v, ch, _ = fitting[0] if fitting else min(scored, key=lambda c: c[2])
        return v, ch

    if s.strategy == "ddp" and world > 1:
        add("strategy", world, {"strategy": "fsdp2", "dp_replicate": 1}, "strategy: fsdp2")
    if s.ac == "none":
        add("activation_checkpointing", "true", {"ac": "full"}, "activation_checkpointing: true")
    tps = []
    for t in (2, 4, 8, 16):
        if s.tp < t <= node and valid(tp=t) and m.num_attention_heads % t == 0 and m.num_kv_heads % t == 0:
            tps.append((t, {"tp": t}))
    if (pick := smallest_fitting(tps)) is not None:
        add("tp_size", pick[0], pick[1], f"tp_size: {pick[0]}")
    if accepts(s.strategy, "pp") and m.pp_plan is not False:
        pps = []
        p = s.pp * 2
        while p <= min(m.num_layers, 64):
            # Keep the micro-batch as large as the pipeline allows (local_batch_size // mbs >= pp), so
            # the saving shown is the pipeline's, not a smaller micro-batch's.
            lbs = work.local_batch_size or s.micro_batch * s.n_microbatches * p
            mbs = _pipeline_micro_batch(lbs, s.micro_batch, p)
            if valid(pp=p) and mbs:
                pps.append((p, {"pp": p, "micro_batch": mbs, "n_microbatches": lbs // mbs}))
            p *= 2
        if (pick := smallest_fitting(pps)) is not None:
            add("pp_size", pick[0], pick[1], f"pp_size: {pick[0]}")
    if s.seq_len >= 8192 and accepts(s.strategy, "cp"):
        cps = [(c, {"cp": c}) for c in (s.cp * 2, s.cp * 4) if valid(cp=c)]
        if (pick := smallest_fitting(cps)) is not None:
            add("cp_size", pick[0], pick[1], f"cp_size: {pick[0]}")
    if m.is_moe and m.upstream_moe and accepts(s.strategy, "ep"):
        non_pp = s.layout.non_pp
        top = min(m.num_routed_experts, non_pp, 4096)
        eps = [(e, {"ep": e}) for e in range(s.ep + 1, top + 1)
               if m.num_routed_experts % e == 0 and non_pp % e == 0]
        if (pick := smallest_fitting(eps)) is not None:
            add("ep_size", pick[0], pick[1], f"ep_size: {pick[0]}")
    if s.micro_batch > 1:
        key = "distributed.pipeline.pp_microbatch_size" if s.pp > 1 else "step_scheduler.local_batch_size"
        n_mb = s.n_microbatches * s.micro_batch if s.pp > 1 else 1
        add("micro_batch", 1, {"micro_batch": 1, "n_microbatches": n_mb}, f"{key.rsplit('.', 1)[1]}: 1", key=key)
    # A knob worth naming saves at least 0.5 GiB and 1% of the estimate.
    opts = [o for o in opts if current - o.new_gib >= max(0.5, 0.01 * current)]
    opts.sort(key=lambda o: o.new_gib)
    return opts


def _pipeline_micro_batch(lbs: int, current: int, pp: int) -> int | None:
    """The largest pp_microbatch_size <= current that divides lbs and leaves >= pp micro-batches."""
    top = min(current, lbs // pp)
    for b in range(top, max(0, top - 64), -1):  # bounded: huge batch sizes must stay cheap
        if lbs % b == 0:
            return b
    return 1 if lbs >= pp else None


def _more_gpus(m: ModelFacts, s: Sizing, limit: float, base: _Option | None) -> _Option | None:
    """The smallest doubling of the world (more data-parallel shards) that fits, on top of `base` if given."""
    start = s.changed(base.changes) if base else s
    plus = (f", with {base.setting}," if base else "")
    plus_zh = (f"并设 {base.setting}，" if base else "")
    w = s.world_size * 2
    while w <= s.world_size * 64:
        changes = {"world_size": w}
        new = _try(m, start, changes)
        if new <= limit:
            return _Option("world_size", w, new, changes, f"world_size: {w}",
                           {"dp_shard": start.changed(changes).dp_shard, "plus": plus, "plus_zh": plus_zh})
        w *= 2
    return None


def _combination(m: ModelFacts, s: Sizing, work: Workload, limit: float, node: int,
                 first: _Option) -> tuple[list[_Option], float] | None:
    """Greedy: apply the best knob, then the best on top of it, up to three; None when that never fits."""
    chosen, cur_s, cur = [first], s.changed(first.changes), first.new_gib
    while cur > limit and len(chosen) < 3:
        taken = {o.knob for o in chosen}
        nxt = [o for o in _knobs(m, cur_s, work, limit, node, cur) if o.knob not in taken]
        if not nxt:
            return None
        chosen.append(nxt[0])
        cur_s, cur = cur_s.changed(nxt[0].changes), nxt[0].new_gib
    return (chosen, cur) if cur <= limit else None


def _advice(m: ModelFacts, s: Sizing, work: Workload, gpu: GpuFacts, current: float,
            gpus_per_node: int | None) -> tuple[list[_Option], _Option | None, tuple[list[_Option], float] | None]:
    limit = MEMORY_TIGHT_FRACTION * gpu.memory_gib
    node = gpus_per_node or gpu.gpus_per_node or DEFAULT_GPUS_PER_NODE
    opts = _knobs(m, s, work, limit, node, current)
    if opts and opts[0].new_gib <= limit:
        return opts, None, None
    combo = _combination(m, s, work, limit, node, opts[0]) if opts else None
    more = _more_gpus(m, s, limit, opts[0] if opts else None) if combo is None else None
    return opts, more, combo


def _finding_values(worst: RankMemory, s: Sizing, gpu: GpuFacts, total: float, options: list[_Option],
                    more_gpus: _Option | None, combo: tuple[list[_Option], float] | None) -> dict:
    ph = _phrases()
    knobs = ph["knobs"]

    def render(o: _Option, lang: str) -> str:
        return knobs[o.knob][lang].format(value=o.value, d=_fmt(total - o.new_gib), new=_fmt(o.new_gib), **o.extra)

    extra_en: list[str] = []
    extra_zh: list[str] = []
    if combo is not None:
        items = ", ".join(o.setting for o in combo[0])
        extra_en.append(ph["combination"]["en"].format(items=items, new=_fmt(combo[1])))
        extra_zh.append(ph["combination"]["zh"].format(items=items, new=_fmt(combo[1])))
    if more_gpus is not None:
        extra_en.append(render(more_gpus, "en"))
        extra_zh.append(render(more_gpus, "zh"))
    if options:
        best, rest = options[0], options[1:3]
        knob_en, knob_zh = render(best, "en"), render(best, "zh")
        extra_en += [render(o, "en") for o in rest]
        extra_zh += [render(o, "zh") for o in rest]
        if combo is None and more_gpus is None and best.new_gib > MEMORY_TIGHT_FRACTION * gpu.memory_gib:
            extra_en.append(knobs["none"]["en"])
            extra_zh.append(knobs["none"]["zh"])
    elif more_gpus is not None:
        knob_en, knob_zh = extra_en.pop(), extra_zh.pop()
    else:
        knob_en, knob_zh = knobs["none"]["en"], knobs["none"]["zh"]
    others_en = ph["others"]["en"].format(items="; ".join(extra_en)) if extra_en else ""
    others_zh = ph["others"]["zh"].format(items="；".join(extra_zh)) if extra_zh else ""
    prec_key = "peft" if s.peft else s.weights_dtype
    prec = ph["precision"][prec_key]
    wbytes = PRECISIONS[s.weights_dtype].weight
    basis_vals = dict(seq=s.seq_len, seq_source=s.seq_source, mb=s.micro_batch, mb_source=s.micro_batch_source,
                      inflight=f"{worst.in_flight:g}", ac=s.ac)
    return dict(
        total=_fmt(total), cap=_fmt(gpu.memory_gib), gpu=gpu.key, pct=round(100 * total / gpu.memory_gib),
        tight=round(100 * MEMORY_TIGHT_FRACTION),
        params=_fmt(worst.params / GIB), grads=_fmt(worst.gradients / GIB), optim=_fmt(worst.optim / GIB),
        acts=_fmt(worst.acts / GIB), rank=worst.rank,
        knob=knob_en, knob_zh=knob_zh, others=others_en, others_zh=others_zh,
        basis=ph["basis"]["en"].format(precision=prec["en"].format(wbytes=wbytes), **basis_vals),
        basis_zh=ph["basis"]["zh"].format(precision_zh=prec["zh"].format(wbytes=wbytes),
                                          **dict(basis_vals, seq_source=_source_name(s.seq_source, "zh"),
                                                 mb_source=_source_name(s.micro_batch_source, "zh"))),
    )
