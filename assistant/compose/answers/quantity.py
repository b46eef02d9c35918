"""Quantity: the numbers the user's own layout resolves to (dp_size, dp_shard, ep_shard, mesh shapes,
grad-acc steps, microbatches, memory, world size), each as arithmetic on the user's numbers.

The numbers are the validator's derived sizes for the layout exactly as stated; a layout that fails
gets its verdict first, since its quantities do not exist.
"""
from __future__ import annotations

import re

from assistant.compose.answers.base import AnswerKind, ComposeInput, Part
from assistant.compose.answers.scaled import CHANGED_TARGETS, change_lines
from assistant.compose.answers.verdict import ESTIMATES as _ESTIMATES, judged_body, verdict_line
from assistant.compose.writer import Writer, features_of, first_sentence
from assistant.defaults import DEFAULT_GPUS_PER_NODE
from assistant.understand import catalog
from assistant.understand.asks import load_asks
from assistant.compose.diagnose import judge_stated
from assistant.compose.judge import rejudge
from assistant.defaults import DEFAULT_GPUS_PER_NODE
from assistant.understand.params import extract_params, normalize
from assistant.validator import UnusableInput, validate
from assistant.validator.coerce import load_yaml
from assistant.validator.layout import Layout
from assistant.validator.report import Derived, ValidationReport


_STRATEGY_ASKED = re.compile(r"\bstrateg|\byaml\b|策略|字段|\bfields?\b", re.I)  # the layout as a whole is asked too
_DEFAULT_GBS = frozenset({"MW-E-BATCH-DIVISIBLE"})
_FROM_DP = ("dp_shard", "dp_replicate", "ep_shard", "moe_mesh_shape", "grad_acc_steps", "gbs_no_acc")


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


def _max_ep_line(w: Writer, d, experts: int | None, no_ep: str | None = None) -> str:
    """The largest ep_size the layout's other sizes allow: a divisor of dp*cp*tp (mesh_utils), and of
    the routed experts when the model is known (moe/parallelizer); 1 for a MoE class that takes no EP."""
    from assistant.validator.derive import divisors

    if no_ep:
        return w.say("q_max_ep_no_ep_class", cls=no_ep)

    prod = d.dp_size * d.cp_size * d.tp_size
    valid = [x for x in divisors(prod) if x > 1 and (experts is None or experts % x == 0)]
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


# "80 层", "80 layers", "(80 decoder layers)": a layer count the user states for a model the table lacks
_LAYERS_STATED = re.compile(r"(?<![\d.])(\d{1,3})\s*[-‐]?\s*(?:个)?\s*(?:层(?!\s*/)|(?:decoder\s+|transformer\s+|hidden\s+)?layers?\b(?!\s+(?:per|each)))", re.I)
# "microbatch 数 ≥ 4 倍 stage 数", "4x the number of stages", "four times the stages": a ratio asked for
_STAGE_RATIO = re.compile(r"(?:micro-?batch|微批)[^.?。？]{0,40}?(?<![\d.])(\d+)\s*(?:倍|x|×|times)(?![\w])[^.?。？\d]{0,40}?(?:stages?|阶段)"
                          r"|(?<![\d.])(\d+)\s*(?:x|×|times)\s+as\s+many\s+micro-?batch(?:es)?\s+as\s+(?:pipeline\s+)?stages", re.I)


def layers_of(query) -> int | None:
    """The decoder layer count: the model table's for a known model, else the count the user states."""
    model = getattr(query.situation, "model", None) or query.params.model
    info = catalog.model_info(model) if model else None
    if info is not None and info.num_layers:
        return info.num_layers
    m = _LAYERS_STATED.search(normalize(query.text))
    return int(m.group(1)) if m else None


def _pipeline(judged: dict | None) -> dict:
    dist = (judged or {}).get("distributed") if isinstance(judged, dict) else None
    pipe = dist.get("pipeline") if isinstance(dist, dict) else None
    return pipe if isinstance(pipe, dict) else {}


def _min_lbs_line(w: Writer, pp: int, judged: dict | None, question: str) -> str:
    mbs = _pipeline(judged).get("pp_microbatch_size", 1)
    mbs = mbs if isinstance(mbs, int) and not isinstance(mbs, bool) and mbs > 0 else 1
    if pp <= 1:
        return w.say("q_min_lbs_no_pp")
    line = w.say("q_min_lbs", min=pp * mbs, pp=pp, mbs=mbs)
    m = _STAGE_RATIO.search(normalize(question))
    ratio = int(m.group(1) or m.group(2)) if m else 0
    if 1 < ratio <= 64:
        line += w.space + w.say("q_min_lbs_ratio", ratio=ratio, pp=pp, mbs=mbs, lbs=ratio * pp * mbs)
    return line


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
    if extra == 0:
        return w.say("q_layers_per_stage", per=base, layers=layers, stages=stages, pp=pp, spr=stages // pp,
                     schedule=schedule)
    return w.say("q_layers_uneven", base=base, more=base + 1, extra=extra, layers=layers, stages=stages, pp=pp,
                 spr=stages // pp, schedule=schedule)


_INTERLEAVED = re.compile(r"interleaved|zero[\s_-]*bubble|\bzbv\b|dualpipe|looped", re.I)


def _microbatches_needed(w: Writer, pp: int, pipe: dict, question: str) -> str | None:
    """"How many microbatches does 1f1b need with pp 4?" without batch sizes: the minimum the recipe
    asserts (local_batch_size // pp_microbatch_size >= pp_size), and the interleaved schedules' rounds."""
    if pp <= 1:
        return None
    line = w.say("q_microbatches_needed", pp=pp)
    if _INTERLEAVED.search(f"{pipe.get('pp_schedule') or ''} {question}"):
        line += w.space + w.say("q_microbatches_interleaved", pp=pp, bad=2 * pp + 1, good=2 * pp)
    return line


_BF16 = re.compile(r"\bbf16\b|bfloat16", re.I)


def _states_line(w: Writer, d: Derived, size_b: float, question: str, gpu: str | None = None) -> str:
    """Model states per GPU for a model known only by its size ("7B, bf16, AdamW"): weights, gradients and
    the two AdamW moments, split over the ranks that shard them; activations come on top."""
    from assistant.validator.memory import PRECISIONS

    prec = PRECISIONS["bf16" if _BF16.search(question) else "fp32"]
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
                  experts: int | None = None, *, layers: int | None = None, question: str = "",
                  size_b: float | None = None, gpu: str | None = None, no_ep: str | None = None) -> str | None:
    d = derived_sizes(r, judged)
    if d is None:
        return None
    if target == "experts_per_rank":
        return _experts_line(w, d.ep_size, experts)
    if target == "min_local_batch_size":
        return _min_lbs_line(w, d.pp_size, judged, question)
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
    if target in ("dp_shard", "dp_replicate"):
        return w.say("q_dp_shard", dp=d.dp_size, rep=d.dp_replicate_size, shard=d.dp_shard_size)
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
        return _microbatches_needed(w, d.pp_size, pipe if isinstance(pipe, dict) else {}, question)
    if target == "memory":
        m = r.memory
        if (m is None or not m.capacity_gib) and size_b:
            return _states_line(w, d, size_b, question, gpu)
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


_NAMES = {name: pat for name, pat in load_asks().quantity_targets}


def _targets(ask, r: ValidationReport, judged: dict | None, question: str = "") -> list[str]:
    """This ask's quantity; without one, the quantities the user's layout has: dp_size, ep_shard
    with EP, grad-acc steps with batch sizes, the mesh."""
    target = getattr(ask, "target", None)
    mesh = [] if target in ("mesh_shape", "memory", "world_size", "nodes", "min_local_batch_size", "layers_per_stage") \
        else ["mesh_shape"]  # the whole picture, after
    # other quantities of the layout the question names ("... enough microbatches for pp 4?"), in case
    # the asks did not single them out
    named = [t for t in (*layout_targets(r, judged), "tp_in_dp")
             if t != target and _NAMES.get(t) and _NAMES[t].search(question)]
    if target in _FROM_DP:
        return list(dict.fromkeys(["dp_size", target, *named] + mesh))  # the dp they are computed from, first
    if target:
        return list(dict.fromkeys([target, *named] + mesh))
    return layout_targets(r, judged) + ["mesh_shape"]


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


# "tp 从 1 改成 2", "going from pp 2 to pp 4", "ep 4 vs 8": two values of one size, compared
_KEY = r"(?P<key>tp|pp|cp|ep|dp_replicate)(?:_size)?"
_TO = r"(?:改成|改为|变成|换成|调到|调成|增加到|加到|升到|降到|到|to|->|→|=>|vs\.?|versus|还是|or)"
_VALUE = r"\s*(?:=|:)?\s*"
_COMPARED = (
    re.compile(rf"(?<![a-z_]){_KEY}{_VALUE}(?:从|from)\s*(?P<a>\d+)\s*{_TO}\s*(?:(?P=key)(?:_size)?{_VALUE})?(?P<b>\d+)", re.I),
    re.compile(rf"(?:从|from)\s*{_KEY}{_VALUE}(?P<a>\d+)\s*{_TO}\s*(?:(?P=key)(?:_size)?{_VALUE})?(?P<b>\d+)", re.I),
    re.compile(rf"(?<![a-z_]){_KEY}{_VALUE}(?P<a>\d+)\s*{_TO}\s*(?:(?P=key)(?:_size)?{_VALUE})?(?P<b>\d+)", re.I),
)
_NOT_A_SIZE = re.compile(r"\s*(?:gpus?|nodes?|cards?|卡|张|台|个|节点|b\b|k\b)", re.I)


def compared_sizes(text: str) -> tuple[str, int, int] | None:
    """("tp_size", 1, 2) when the question compares two values of one size; None otherwise."""
    for pat in _COMPARED:
        for m in pat.finditer(text):
            a, b = int(m.group("a")), int(m.group("b"))
            if a != b and a >= 1 and b >= 1 and not _NOT_A_SIZE.match(text, m.end()):
                return f"{m.group('key').lower()}_size", a, b
    return None


def _write_compared(w: Writer, inp: ComposeInput, ask, base: dict, world: int, gpn: int) -> Part | None:
    """The asked quantities for each of the two layouts the question compares, each labelled."""
    found = compared_sizes(inp.query.text)
    dist = base.get("distributed") if isinstance(base, dict) else None
    if found is None or not isinstance(dist, dict):
        return None
    key, *values = found
    first: Part | None = None
    asked: list[str] = []
    for value in values:
        recipe = {**base, "distributed": {**dist, key: value}}
        r = validate(recipe, world_size=world, gpus_per_node=gpn)
        label = w.say("q_layout_label", name=key, value=value)
        if not r.ok:
            f = r.errors[0]
            w.answer(label + w.say("verdict_no", message=(f.message_zh if w.lang == "zh" else f.message).rstrip(" .。"),
                                   code=f.code))
            continue
        targets = [t for t in _targets(ask, r, recipe, inp.query.text) if t != "mesh_shape"]
        asked = asked or targets
        for target in targets:
            line = quantity_line(w, target, r, recipe, experts_of(inp.query), no_ep=no_ep_class(inp.query))
            if line:
                w.answer(label + line)
        first = first or Part(report=r, strategy=r.derived.strategy if r.derived else None, judged=recipe)
    sched = base.get("step_scheduler")
    if "grad_acc_steps" in asked and isinstance(sched, dict) and isinstance(sched.get("global_batch_size"), int):
        w.answer(w.say("q_gbs_fixed", gbs=sched["global_batch_size"]))
    return first


def _write_world_needed(w: Writer, inp: ComposeInput, ask) -> Part | None:
    """"How many GPUs does this model need?": no world stated, a model known, the world is the answer."""
    sit = inp.query.situation
    if getattr(ask, "target", None) not in ("world_size", "nodes") or sit.world_size or sit.nodes:
        return None
    from assistant.compose.world_needed import world_needed

    found = world_needed(inp.query, sit.gpus_per_node or DEFAULT_GPUS_PER_NODE)
    if found is None:
        return None
    r = found.plan.report
    d = r.derived
    sizes = [f"`{k}: {v}`" for k, v in (("tp_size", d.tp_size), ("pp_size", d.pp_size), ("cp_size", d.cp_size),
                                         ("ep_size", d.ep_size)) if v > 1] + [f"dp {d.dp_size}"]
    w.answer(w.say("q_world_needed", world=found.world, nodes=found.nodes, gpn=found.world // found.nodes,
                   model=found.model,
                   layout=", ".join(sizes), gib=f"{r.memory.total_gib:.1f}", gpu=found.gpu,
                   assumed=w.say("q_world_needed_gpu_assumed") if found.gpu_assumed else ""))
    w.answer(w.say("q_mesh", mesh=w.mesh(r)))
    return Part(report=r, strategy=found.plan.strategy)


def write(w: Writer, inp: ComposeInput, ask) -> Part:
    if (part := _write_world_needed(w, inp, ask)) is not None:
        return part
    d = inp.diagnosis
    if d is not None and d.report is not None and d.report.ok and d.judged and d.world_size:
        part = _write_compared(w, inp, ask, d.judged, d.world_size, d.gpus_per_node)
        if part is not None:
            return part
    elif d is None and inp.plan is not None and inp.plan.report.ok:
        from assistant.compose.answers.recommendation import plan_recipe

        recipe = plan_recipe(inp.plan)
        part = _write_compared(w, inp, ask, recipe or {}, inp.plan.report.world_size or inp.plan.world_size or 1,
                               inp.plan.gpus_per_node)
        if part is not None:
            return part
    if d is None and "hsdp" in inp.query.situation.stated.wanted and inp.query.situation.world_size:
        # "replicate between machines, shard within each one": HSDP is the layout stated, its size is ours
        sit = inp.query.situation
        d = judge_stated({"distributed": {"strategy": sit.stated.strategy or "fsdp2"}}, world_size=sit.world_size,
                         gpus_per_node=sit.gpus_per_node or DEFAULT_GPUS_PER_NODE, validate=validate,
                         unusable=UnusableInput)
        d = _hsdp_by_node(inp, d, ask)
    if d is None or d.report is None:
        # nothing stated to compute from: the quantities of the recommended layout, then that layout
        from assistant.compose.answers import recommendation

        plan = inp.plan
        if plan is None or not plan.report.ok:
            return recommendation.write(w, inp, ask)
        recipe = recommendation.plan_recipe(plan)
        for target in _targets(ask, plan.report, recipe):
            w.answer(quantity_line(w, target, plan.report, recipe, experts_of(inp.query), no_ep=no_ep_class(inp.query)))
        if inp.query.intent in ("strategy", "yaml") or _STRATEGY_ASKED.search(inp.query.text):
            return recommendation.write(w, inp, ask)  # the question is about the layout as a whole
        # which layout these numbers are for, in one sentence; its YAML only when a config is asked
        w.answer(w.fact(recommendation.lead_key(plan.strategy, features_of(plan.distributed or {}), plan.world_size,
                                                recommendation.wanted(inp.query)), section="leads", required=True))
        return Part(report=plan.report, strategy=plan.strategy, judged=recipe)
    d = _hsdp_by_node(inp, d, ask) or _asked_layout(inp, d, ask) or d
    r = d.report
    # A global_batch_size the user never gave is upstream's default, not their number: its divisibility
    # does not stop the sizes they asked about ("local_batch_size 16, how many microbatches?").
    soft = _ESTIMATES | (_DEFAULT_GBS if inp.query.situation.global_batch_size is None and not d.pasted else frozenset())
    if not r.ok and {f.code for f in r.errors} <= soft and derived_sizes(r, d.judged) is not None:
        # over the memory estimate: the sizes still exist and were asked; the estimate follows
        for target in _targets(ask, r, d.judged, inp.query.text):
            w.answer(quantity_line(w, target, r, d.judged, experts_of(inp.query), layers=layers_of(inp.query),
                                   question=inp.query.text, no_ep=no_ep_class(inp.query)))
        # the estimate's first sentence (its totals); the knobs and assumptions are in the report
        w.bullets([w.say("rule_item", code=f.code, path=f.path,
                         message=first_sentence(f.message_zh if w.lang == "zh" else f.message, 260))
                   for f in r.errors], heading="warnings")
        return Part(report=r, strategy=r.derived.strategy if r.derived else None, judged=d.judged)
    if not r.ok:
        before = list(inp.asks)[:list(inp.asks).index(ask)] if ask in inp.asks else []
        if any(a.kind in ("verdict", "diagnosis") for a in before) and not (d.fix_report is not None and d.fix_report.ok):
            return Part()  # the verdict before this ask already said why there are no numbers
        if any(a.kind in ("verdict", "diagnosis") for a in inp.asks) and d.fix_report is not None and d.fix_report.ok:
            # "does it run, and what is dp?" after a "no": the numbers of the nearest layout that runs
            fixed = load_yaml(d.fix_yaml) if d.fix_yaml else None
            for target in _targets(ask, d.fix_report, fixed if isinstance(fixed, dict) else None):
                w.answer(quantity_line(w, target, d.fix_report, fixed if isinstance(fixed, dict) else None))
            return Part()
        w.answer(verdict_line(w, d))
        return judged_body(w, inp, d)
    changed = change_lines(w, inp.query, d)  # "go from 1 node to 4": what the change does, first
    for line in changed:
        w.answer(w.computed(line))
    experts, layers = experts_of(inp.query), layers_of(inp.query)
    asks = list(inp.asks)
    later = asks[asks.index(ask) + 1:] if ask in asks else []
    for target in _targets(ask, r, d.judged, inp.query.text):
        if changed and target in CHANGED_TARGETS:
            continue  # the change lines state them, before and after
        if target == "mesh_shape" and target != getattr(ask, "target", None) and any(a.kind == "quantity" for a in later):
            continue  # the whole mesh after every number asked, not between them
        line = quantity_line(w, target, r, d.judged, experts, layers=layers, question=inp.query.text,
                             size_b=inp.query.params.model_size_b, gpu=inp.query.situation.gpu,
                             no_ep=no_ep_class(inp.query))
        if line and not _said(w, line):
            w.answer(w.computed(line))
    return judged_body(w, inp, d)


def _hsdp_by_node(inp: ComposeInput, d, ask):
    """"HSDP, sharded inside each 8-GPU node: what dp_replicate_size?": the user wants HSDP and left
    its size to us; the usual one is a sharding group per node, replicated across nodes. The user's
    layout with that dp_replicate_size, judged again; None when it does not apply."""
    st = inp.query.situation.stated
    dist = (d.judged or {}).get("distributed")
    if "hsdp" not in st.wanted or "dp_replicate_size" in st.sizes or d.pasted or not isinstance(dist, dict) \
            or d.report is None or not d.report.ok or d.report.derived is None:
        return None
    if getattr(ask, "target", None) not in ("dp_replicate", "dp_shard", None):
        return None
    replicas = Layout.from_derived(d.report.derived, d.gpus_per_node).node_replicas
    if replicas is None:
        return None
    recipe = {**d.judged, "distributed": {**dist, "dp_replicate_size": replicas}}
    judged = judge_stated(recipe, world_size=d.world_size, gpus_per_node=d.gpus_per_node, validate=validate,
                          unusable=UnusableInput)
    return judged if judged.report is not None and judged.report.ok else None


_SENTENCE = re.compile(r"[^.?!。？！]+[.?!。？！]?")


def _asked_layout(inp: ComposeInput, d, ask):
    """"OOMs with pp4 ep8 ... but trains with pp8 ep8. In that pp8 ep8 layout, what is dp?": the
    sizes stated in the asking sentence are the layout asked about when they differ from the first
    ones read; that layout judged at the same numbers. None when the sentence restates nothing new."""
    dist = (d.judged or {}).get("distributed")
    if d.pasted or not isinstance(dist, dict) or not getattr(ask, "text", ""):
        return None
    # the sentence that asks is the one the clause ends in: a clause can begin in the story before it
    core = ask.text.strip(" ?？.。")[-40:]
    sentence = next((m.group(0) for m in _SENTENCE.finditer(normalize(inp.query.text)) if core and core in m.group(0)), None)
    if sentence is None:
        return None
    p = extract_params(sentence)
    changed = {k: v for k in ("tp_size", "pp_size", "cp_size", "ep_size", "dp_replicate_size")
               if isinstance(v := getattr(p, k), int) and k in dist and dist[k] != v}
    new = {**dist, **changed}
    if getattr(ask, "target", None) == "dp_size" and "dp_size" in new:
        # "a table says dp2: what is dp_size really?": the size asked for is a claim to check, not a given
        new.pop("dp_size")
        changed["dp_size"] = None
    # "what dp_size would 32 GPUs give me with the same tp and pp?": the world size the clause itself asks
    # about (the sentence around it may describe the cluster: "when a node only has 4 GPUs")
    asked_world = extract_params(normalize(ask.text)).world_size
    world = asked_world if asked_world and d.world_size and asked_world != d.world_size else None
    if not changed and world is None:
        return None
    if new.get("pp_size", 1) > 1:
        new.setdefault("pipeline", {})
    judged = rejudge(inp.query, d, {**d.judged, "distributed": new}, world)
    return judged if judged.report is not None else None


def _said(w: Writer, line: str) -> bool:
    """The same quantity already in the lead (another ask of the question computed it, cited differently)."""
    core = line.rstrip(" .。")
    return any(lead.startswith(core) for lead in w.leads)


KIND = AnswerKind("quantity", frozenset({"validation", "plan", "retrieval"}), write)
