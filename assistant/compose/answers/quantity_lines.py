"""The quantity statements: one sentence per number a layout resolves to (dp_size, dp_shard, ep_shard,
mesh shapes, grad-acc steps, microbatches, layers per stage, model states, the largest ep_size), as
arithmetic on the user's numbers.

Every answer module that states a number says it with these (a verdict's ep_shard, a fact worked on
the user's sizes, a recommendation's dp_shard), so none of them imports another's writer for it.
"""
from __future__ import annotations

from assistant.compose.writer import Writer
from assistant.understand import catalog
from assistant.understand.cues import INTERLEAVED, Reading, read
from assistant.validator.layout import Layout
from assistant.validator.report import Derived, ValidationReport


def derived_sizes(r: ValidationReport, judged: dict | None) -> Derived | None:
    """The validator's derived sizes; for a layout that fails, the same arithmetic from `Layout`
    (an error explanation still shows how dp came out)."""
    if r.derived is not None:
        return r.derived
    dist = (judged or {}).get("distributed")
    if not isinstance(dist, dict) or not r.world_size:
        return None

    def size(k: str) -> int:
        v = dist.get(k)
        return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 1

    dp = dist.get("dp_size")
    try:
        lay = Layout.of(str(dist.get("strategy") or "fsdp2"), r.world_size, tp=size("tp_size"), pp=size("pp_size"),
                        cp=size("cp_size"), ep=size("ep_size"), dp_replicate=size("dp_replicate_size"),
                        dp=dp if isinstance(dp, int) and not isinstance(dp, bool) and dp > 0 else None)
        return lay.derived()
    except (ValueError, KeyError, ZeroDivisionError):
        return None


def no_ep_class(query) -> str | None:
    """The class of a known MoE model that takes no EP (Mixtral: the Hugging Face MixtralForCausalLM,
    not a MoEFSDPSyncMixin; `_transformers/capabilities.py` validate_for_mesh refuses ep_size > 1), else None."""
    model = getattr(query.situation, "model", None) or query.params.model
    info = catalog.model_info(model) if model else None
    if info is None or not info.is_moe or info.ep_supported is not False:
        return None
    return info.architectures[0] if info.architectures else info.name


def experts_of(query) -> int | None:
    """The routed-expert count: the model table's for a known model, else the count the user states."""
    model = getattr(query.situation, "model", None) or query.params.model
    info = catalog.model_info(model) if model else None
    return (info.num_experts if info is not None and info.is_moe else None) or query.params.num_experts


def _ep_sizes(d: Derived, experts: int | None) -> list[int]:
    """The ep_size values above 1 the layout's other sizes allow, ascending: divisors of dp*cp*tp
    (mesh_utils), and of the routed experts when the count is known (moe/parallelizer)."""
    from assistant.validator.derive import divisors

    return [x for x in divisors(d.dp_size * d.cp_size * d.tp_size) if x > 1 and (experts is None or experts % x == 0)]


def largest_ep(r: ValidationReport, judged: dict | None, experts: int | None, no_ep: str | None = None) -> int | None:
    """The ep_size the max_ep line names as the largest; None where it names none (a MoE class with no
    EP, TP beside a known model's experts, no size above 1)."""
    d = derived_sizes(r, judged)
    if d is None or no_ep or (experts is not None and d.tp_size > 1):
        return None
    valid = _ep_sizes(d, experts)
    return valid[-1] if valid else None


def _max_ep_line(w: Writer, d, experts: int | None, no_ep: str | None = None) -> str:
    """The largest ep_size the layout's other sizes allow: a divisor of dp*cp*tp (mesh_utils), and of
    the routed experts when the model is known (moe/parallelizer); 1 for a MoE class that takes no EP."""
    if no_ep:
        return w.say("q_max_ep_no_ep_class", cls=no_ep)

    prod = d.dp_size * d.cp_size * d.tp_size
    valid = _ep_sizes(d, experts)
    shown = ", ".join(str(x) for x in valid[-8:]) or "-"
    best = valid[-1] if valid else 1
    if experts is None:
        return w.say("q_max_ep", best=best, dp=d.dp_size, cp=d.cp_size, tp=d.tp_size, prod=prod, valid=shown)
    if d.tp_size > 1:  # MW-E-TP-MOE-PLAN: no AutoModel MoE class has a TP plan at 36044ad3
        return w.say("q_max_ep_tp", tp=d.tp_size, best_tp1=best)
    return w.say("q_max_ep_experts", best=best, dp=d.dp_size, cp=d.cp_size, tp=d.tp_size, prod=prod, valid=shown,
                 experts=experts, per=experts // best)


def _experts_line(w: Writer, ep: int, experts: int | None) -> str:
    if experts is None:
        return w.say("q_experts_unknown", ep=ep)
    if ep <= 1:
        return w.say("q_experts_no_ep", experts=experts)
    if experts % ep:
        valid = ", ".join(str(x) for x in range(2, experts + 1) if experts % x == 0 and x <= 64) or "-"
        return w.say("q_experts_uneven", experts=experts, ep=ep, rem=experts % ep, valid=valid)
    return w.say("q_experts_per_rank", per=experts // ep, experts=experts, ep=ep)


def layers_of(query) -> int | None:
    """The decoder layer count: the model table's for a known model, else the count the user states."""
    model = getattr(query.situation, "model", None) or query.params.model
    info = catalog.model_info(model) if model else None
    if info is not None and info.num_layers:
        return info.num_layers
    return read(query).layers_stated


def _pipeline(judged: dict | None) -> dict:
    dist = (judged or {}).get("distributed") if isinstance(judged, dict) else None
    pipe = dist.get("pipeline") if isinstance(dist, dict) else None
    return pipe if isinstance(pipe, dict) else {}


def _min_lbs_line(w: Writer, pp: int, judged: dict | None, said: Reading) -> str:
    mbs = _pipeline(judged).get("pp_microbatch_size", 1)
    mbs = mbs if isinstance(mbs, int) and not isinstance(mbs, bool) and mbs > 0 else 1
    if pp <= 1:
        return w.say("q_min_lbs_no_pp")
    line = w.say("q_min_lbs", min=pp * mbs, pp=pp, mbs=mbs)
    ratio = said.stage_ratio
    if 1 < ratio <= 64:
        line += w.space + w.say("q_min_lbs_ratio", ratio=ratio, pp=pp, mbs=mbs, lbs=ratio * pp * mbs)
    return line


_MAX_LISTED_STAGES = 8  # more stages than this are told as "the first N get one more", not listed


def _layers_line(w: Writer, pp: int, judged: dict | None, layers: int | None) -> str:
    from assistant.validator.model_checks import virtual_stages
    from assistant.validator.workload import SINGLE_STAGE_SCHEDULES

    pipe = _pipeline(judged)
    schedule = str(pipe.get("pp_schedule") or "1f1b")
    lps = pipe.get("layers_per_stage")
    lps = lps if isinstance(lps, int) and not isinstance(lps, bool) and lps > 0 else None
    if pp <= 1:
        return w.say("q_layers_no_pp", layers=layers if layers else "num_hidden_layers")
    stages = virtual_stages(layers or 0, pp, schedule.lower(), lps, pipe.get("round_virtual_stages_to_pp_multiple"))
    spr = 1 if schedule.lower() in SINGLE_STAGE_SCHEDULES else 2
    if not layers or not stages:
        return w.say("q_layers_unknown", stages=pp * spr, pp=pp, spr=spr, schedule=schedule)
    base, extra = divmod(layers, stages)
    # unset, upstream splits the layers itself: "do I need to set layers_per_stage?" is answered by that
    auto = "" if lps is not None else w.say("q_layers_auto", stages=stages) + w.space
    if extra == 0:
        return auto + w.say("q_layers_per_stage", per=base, layers=layers, stages=stages, pp=pp, spr=stages // pp,
                            schedule=schedule)
    # "每个 stage 分别几层", "会不会丢层": the stages' counts in order say both, when they fit in a line
    counts = [base + 1] * extra + [base] * (stages - extra)
    split = "" if stages > _MAX_LISTED_STAGES else w.say("q_layers_split", counts=("、" if w.lang == "zh" else ", ").join(
        map(str, counts)), layers=layers)
    # the split answers the ask, so it leads; whether to set layers_per_stage follows
    return w.say("q_layers_uneven", base=base, more=base + 1, extra=extra, layers=layers, stages=stages,
                 pp=pp, spr=stages // pp, schedule=schedule, split=split) + (w.space + auto.strip() if auto else "")


def _microbatches_needed(w: Writer, pp: int, pipe: dict, said: Reading) -> str | None:
    """"How many microbatches does 1f1b need with pp 4?" without batch sizes: the minimum the recipe
    asserts (local_batch_size // pp_microbatch_size >= pp_size), and the interleaved schedules' rounds."""
    if pp <= 1:
        return None
    line = w.say("q_microbatches_needed", pp=pp)
    if INTERLEAVED.search(str(pipe.get('pp_schedule') or '')) or said.interleaved:
        line += w.space + w.say("q_microbatches_interleaved", pp=pp, bad=2 * pp + 1, good=2 * pp)
    return line


def _states_line(w: Writer, d: Derived, size_b: float, said: Reading, gpu: str | None = None) -> str:
    """Model states per GPU for a model known only by its size ("7B, bf16, AdamW"): weights, gradients and
    the two AdamW moments, split over the ranks that shard them; activations come on top."""
    from assistant.validator.memory import PRECISIONS

    prec = PRECISIONS["bf16" if said.bf16 else "fp32"]
    per_param = prec.weight + prec.grad + prec.optim
    shard = 1 if d.strategy == "ddp" else d.world_size // max(1, d.dp_replicate_size)
    gb = size_b * per_param / shard
    line = w.say("q_memory_states", gb=gb, size=f"{size_b:g}", bytes=per_param,
                 dtype=prec.key, w=prec.weight, g=prec.grad, o=prec.optim, shard=shard)
    return line + w.space + _against_gpu(w, gb, gpu)


# Model states that leave under a quarter of the card are called tight: the estimate with a known model
# puts a 70B's activations at 4096 tokens near 35 GiB per GPU without checkpointing.
_ROOM_FOR_ACTIVATIONS = 0.25


def _against_gpu(w: Writer, gb: float, gpu: str | None) -> str:
    """"does a 13B fit on 4 GPUs?" is answered against a card: the one named, else the assumed one, said so."""
    from assistant.defaults import ASSUMED_GPU
    from assistant.validator.models import load_gpu

    try:
        card = load_gpu(gpu or ASSUMED_GPU)
    except ValueError:
        card = load_gpu(ASSUMED_GPU)
        gpu = None
    assumed = "" if gpu else w.say("q_gpu_assumed")
    if gb >= card.memory_gb:
        return w.say("q_states_over", cap=f"{card.memory_gb:g}", gpu=card.name, assumed=assumed)
    key = "q_states_tight" if card.memory_gb - gb < _ROOM_FOR_ACTIVATIONS * card.memory_gb else "q_states_room"
    return w.say(key, cap=f"{card.memory_gb:g}", gpu=card.name, assumed=assumed, left=card.memory_gb - gb)


def quantity_line(w: Writer, target: str, r: ValidationReport, judged: dict | None,
                  experts: int | None = None, *, layers: int | None = None, said: Reading = Reading(""),
                  size_b: float | None = None, gpu: str | None = None, no_ep: str | None = None) -> str | None:
    d = derived_sizes(r, judged)
    if d is None:
        return None
    if target == "experts_per_rank":
        return _experts_line(w, d.ep_size, experts)
    if target == "min_local_batch_size":
        return _min_lbs_line(w, d.pp_size, judged, said)
    if target == "layers_per_stage":
        return _layers_line(w, d.pp_size, judged, layers)
    sched = (judged or {}).get("step_scheduler") if isinstance(judged, dict) else None
    sched = sched if isinstance(sched, dict) else {}
    if target == "dp_size":
        if d.strategy == "ddp":
            return w.say("q_dp_ddp", world=d.world_size)
        if d.strategy == "megatron_fsdp":
            return w.say("q_dp_megatron", world=d.world_size, tp=d.tp_size, cp=d.cp_size, dp=d.dp_size)
        return w.say("q_dp_fsdp2", world=d.world_size, tp=d.tp_size, pp=d.pp_size, cp=d.cp_size, dp=d.dp_size)
    if target == "layout_kind":
        return _layout_kind_line(w, d)
    if target in ("dp_shard", "dp_replicate"):
        return w.say("q_dp_shard", dp=d.dp_size, rep=d.dp_replicate_size, shard=d.dp_shard_size)
    if target == "fsdp_shards" and d.strategy == "fsdp2":
        # FSDP2 shards over the flattened dp_shard_cp mesh (mesh_utils flattened_axes), replicas aside
        return w.say("q_fsdp_shards", shard=d.dp_shard_size, cp=d.cp_size, n=d.dp_shard_size * d.cp_size,
                     rep=d.dp_replicate_size)
    if target in ("ep_shard", "moe_mesh_shape"):
        if d.ep_size <= 1 or d.ep_shard_size is None:
            return w.say("q_no_ep")
        prod = d.dp_size * d.cp_size * d.tp_size
        if d.ep_size >= prod:
            return w.say("q_ep_shard_one", ep=d.ep_size, prod=prod)
        return w.say("q_ep_shard", dp=d.dp_size, cp=d.cp_size, tp=d.tp_size, ep=d.ep_size, shard=d.ep_shard_size)
    if target == "max_ep":
        return _max_ep_line(w, d, experts, no_ep)
    if target == "mesh_shape":
        return w.say("q_mesh", mesh=w.mesh(r))
    if target == "gbs_no_acc":
        lbs = sched.get("local_batch_size")
        if isinstance(lbs, int) and lbs > 0:
            return w.say("q_gbs_no_acc", gbs=lbs * d.dp_size, lbs=lbs, dp=d.dp_size)
        return w.say("q_gbs_no_acc_missing", dp=d.dp_size)
    if target == "tp_in_dp":
        return w.say("q_tp_in_dp", tp=d.tp_size, pp=d.pp_size, cp=d.cp_size, world=d.world_size, dp=d.dp_size)
    if target == "grad_acc_steps":
        gbs, lbs = sched.get("global_batch_size"), sched.get("local_batch_size")
        if d.grad_acc_steps is not None and isinstance(gbs, int) and isinstance(lbs, int):
            return w.say("q_grad_acc", gbs=gbs, lbs=lbs, dp=d.dp_size,
                         steps=d.grad_acc_steps)
        return w.say("q_grad_acc_missing", dp=d.dp_size)
    if target == "microbatches":
        dist = (judged or {}).get("distributed") or {}
        pipe = dist.get("pipeline") if isinstance(dist, dict) else None
        mbs = pipe.get("pp_microbatch_size", 1) if isinstance(pipe, dict) else 1
        lbs = sched.get("local_batch_size")
        if isinstance(lbs, int) and isinstance(mbs, int) and mbs > 0:
            n = lbs // mbs
            enough = w.say("q_microbatches_enough" if n >= d.pp_size else "q_microbatches_short", pp=d.pp_size)
            return w.say("q_microbatches", lbs=lbs, mbs=mbs, n=n, enough=enough)
        return _microbatches_needed(w, d.pp_size, pipe if isinstance(pipe, dict) else {}, said)
    if target == "memory":
        m = r.memory
        if (m is None or not m.capacity_gib) and size_b:
            return _states_line(w, d, size_b, said, gpu)
        if m is None or not m.capacity_gib:
            return w.say("q_memory_unknown")
        return w.say("q_memory", total=m.total_gib, cap=f"{m.capacity_gib:g}", gpu=m.gpu or "?")
    if target == "nodes" and r.gpus_per_node:
        gpn = r.gpus_per_node
        nodes = -(-d.world_size // gpn)
        key = "q_nodes" if d.world_size % gpn == 0 else "q_nodes_partial"
        return w.say(key, nodes=nodes, gpn=gpn, world=d.world_size)
    if target == "world_size":
        line = w.say("q_world", tp=d.tp_size, pp=d.pp_size, cp=d.cp_size, dp=d.dp_size, world=d.world_size)
        gpn = r.gpus_per_node
        if gpn and d.world_size % gpn == 0 and d.world_size > gpn:
            line += w.space + w.say("q_world_nodes", nodes=d.world_size // gpn, gpn=gpn, world=d.world_size)
        return line
    return None


def _layout_kind_line(w: Writer, d: Derived) -> str | None:
    """What the layout's data parallelism IS (mesh_utils: dp_shard = dp / dp_replicate): HSDP with
    replica groups, FSDP over every dp rank, no data parallelism at dp 1, or ddp's whole-model replicas."""
    if d.strategy == "ddp":
        return w.say("q_kind_ddp", world=d.world_size)
    if d.dp_size <= 1:
        return w.say("q_kind_no_dp", world=d.world_size, tp=d.tp_size, pp=d.pp_size, cp=d.cp_size)
    if d.strategy != "fsdp2":
        return None
    if d.dp_replicate_size > 1:
        return w.say("q_kind_hsdp", dp=d.dp_size, rep=d.dp_replicate_size, shard=d.dp_shard_size)
    return w.say("q_kind_fsdp", dp=d.dp_size, shard=d.dp_shard_size)


def layout_targets(r: ValidationReport, judged: dict | None) -> list[str]:
    """The quantities a layout has: dp_size, and dp_shard with HSDP, ep_shard with EP, microbatches
    with PP, grad-acc steps with batch sizes."""
    out = ["dp_size"]
    d = r.derived
    sched = (judged or {}).get("step_scheduler")
    if d is not None and d.dp_replicate_size > 1 and d.strategy == "fsdp2":
        out.append("dp_shard")
    if d is not None and d.ep_size > 1:
        out.append("ep_shard")
    if d is not None and d.pp_size > 1 and isinstance(sched, dict) and "local_batch_size" in sched:
        out.append("microbatches")
    if isinstance(sched, dict) and "global_batch_size" in sched:
        out.append("grad_acc_steps")
    return out
