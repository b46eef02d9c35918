"""Quantity: the numbers the user's own layout resolves to (dp_size, dp_shard, ep_shard, mesh shapes,
grad-acc steps, microbatches, memory, world size), each as arithmetic on the user's numbers.

The numbers are the validator's derived sizes for the layout exactly as stated; a layout that fails
gets its verdict first, since its quantities do not exist.
"""
from __future__ import annotations

import math

from assistant.compose.answers.base import AnswerKind, ComposeInput, Part
from assistant.compose.answers.scaled import CHANGED_TARGETS, change_lines
from assistant.compose.answers.solved_lines import solved_line, solved_value
from assistant.compose.answers import recommendation
from assistant.compose.answers.quantity_lines import (
    derived_sizes, experts_of, largest_ep, layers_of, layout_targets, no_ep_class, quantity_line,
)
from assistant.compose.answers.verdict import ESTIMATES as _ESTIMATES, asked_alternative, judged_body, verdict_line
from assistant.compose.writer import Writer, features_of, first_sentence, sizes_text
from assistant.defaults import DEFAULT_GPUS_PER_NODE
from assistant.compose.knowledge.diagnose import judge_stated
from assistant.compose.knowledge.allowed import FIELDS as ALLOWED_FIELDS, allowed_values
from assistant.compose.knowledge.judge import layout_values, rejudge, with_layout, with_values
from assistant.understand.cues import Reading, asking_sentence, read
from assistant.understand.query import SIZE_KEYS
from assistant.validator import UnusableInput, validate
from assistant.validator.coerce import load_yaml
from assistant.validator.fields import field_table
from assistant.validator.layout import Layout
from assistant.validator.report import ValidationReport


_DEFAULT_GBS = frozenset({"MW-E-BATCH-DIVISIBLE"})
_FROM_DP = ("dp_shard", "dp_replicate", "ep_shard", "moe_mesh_shape", "grad_acc_steps", "gbs_no_acc")


def _targets(ask, r: ValidationReport, judged: dict | None, question: Reading = Reading("")) -> list[str]:
    """This ask's quantity; without one, the quantities the user's layout has: dp_size, ep_shard
    with EP, grad-acc steps with batch sizes, the mesh."""
    target = getattr(ask, "target", None)
    mesh = [] if target in ("mesh_shape", "memory", "world_size", "nodes", "min_local_batch_size", "layers_per_stage") \
        else ["mesh_shape"]  # the whole picture, after
    # other quantities of the layout the question names ("... enough microbatches for pp 4?"), in case
    # the asks did not single them out
    named = [t for t in (*layout_targets(r, judged), "tp_in_dp")
             if t != target and t in question.quantity_targets]
    if target in _FROM_DP:
        # the number asked first (the lead answers its ask), then the dp it is computed from
        return list(dict.fromkeys([target, "dp_size", *named] + mesh))
    if target:
        return list(dict.fromkeys([target, *named] + mesh))
    return layout_targets(r, judged) + ["mesh_shape"]


def _write_compared(w: Writer, inp: ComposeInput, ask, base: dict, world: int, gpn: int) -> Part | None:
    """The asked quantities for each of the two layouts the question compares, each labelled."""
    found = read(inp.query).compared_sizes
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
        targets = [t for t in _targets(ask, r, recipe, read(inp.query)) if t != "mesh_shape"]
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
    from assistant.compose.knowledge.world_needed import world_needed

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


_WORLD_MIN_STEPS = 64  # multiples of tp * cp * pp tried; far past any layout's smallest world


def _write_world_min(w: Writer, d) -> Part | None:
    """"How many GPUs do I need at minimum for tp 2 + pp 4?" on a world the layout does not fit: the
    smallest world where the user's own sizes pass start-up (a multiple of tp * cp * pp, each judged by
    the validator), not the sizes of the nearest fix at the user's world."""
    dist = (d.judged or {}).get("distributed") if isinstance(d.judged, dict) else None
    if not isinstance(dist, dict):
        return None
    sizes = {k: dist.get(k) if isinstance(dist.get(k), int) and dist.get(k) > 0 else 1
             for k in ("tp_size", "cp_size", "pp_size")}
    step = sizes["tp_size"] * sizes["cp_size"] * sizes["pp_size"]
    for k in range(1, _WORLD_MIN_STEPS + 1):
        r = validate(d.judged, world_size=step * k, gpus_per_node=d.gpus_per_node)
        if {f.code for f in r.errors} <= _ESTIMATES:
            w.answer(w.computed(w.say("q_world_min", world=step * k, tp=sizes["tp_size"], cp=sizes["cp_size"],
                                      pp=sizes["pp_size"], product=step)))
            return Part(report=r, strategy=r.derived.strategy if r.derived else None, judged=d.judged)
    return None


def _allowed(inp: ComposeInput, ask):
    """(the judged layout, the values of a `values:<field>` ask's field the validator accepts in it),
    the layout being the user's with the sizes the ask puts instead ("要是扩到 pp_size 4，pp_microbatch_size
    最大能设多少"); None when the ask is not one or there is nothing to vary."""
    target = getattr(ask, "target", None) or ""
    d = inp.diagnosis
    if not target.startswith("values:") or d is None or not isinstance(d.judged, dict) or not d.world_size:
        return None
    field = target.split(":", 1)[1]
    if getattr(ask, "layout", None):
        put = layout_values(ask.layout)
        if field in put:
            # "要是扩到 pp_size 4，pp_microbatch_size 最大能设多少": the field the clause sets is given; the one
            # whose values are asked is the other number field it names
            field = next((r.key for r in read(ask).fields if r.key in ALLOWED_FIELDS and r.key not in put), None)
            if field is None:
                return None
        d = with_layout(inp.query, d, ask.layout) or d
        d = _scaled_out(inp, d)
    derived = d.report.derived if d.report is not None else None
    sit = inp.query.situation
    found = allowed_values(field, d.judged, d.world_size, validate, ignore=_ESTIMATES,
                           dp_size=derived.dp_size if derived else None, gpus_per_node=d.gpus_per_node,
                           model=sit.model, gpu=sit.gpu)
    return None if found is None else (d, found)


def _scaled_out(inp: ComposeInput, d):
    """"要是以后扩到 pp_size 4": sizes whose product the user's world does not hold are asked of a larger
    cluster, the smallest multiple of the world that tp * cp * pp divides (judged there); `d` when the
    mesh already holds or the product is unknown."""
    dist = (d.judged or {}).get("distributed") if isinstance(d.judged, dict) else None
    if d.report is None or d.report.derived is not None or not isinstance(dist, dict) or not d.world_size:
        return d
    product = 1
    for key in ("tp_size", "cp_size", "pp_size"):
        v = dist.get(key)
        product *= v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 1
    world = math.lcm(d.world_size, product)
    if world == d.world_size:
        return d
    scaled = rejudge(inp.query, d, d.judged, world)
    return scaled if scaled.report is not None and scaled.report.derived is not None else d


def _write_allowed(w: Writer, inp: ComposeInput, ask) -> Part | None:
    """"which pp_size values work with tp 8 on 40 GPUs?": the values of the asked field the validator
    accepts in the user's layout (valid or not: that is often why it is asked), the rest unchanged."""
    if (allowed := _allowed(inp, ask)) is None:
        return None
    d, found = allowed
    field, derived = found.field, d.report.derived if d.report is not None else None
    # values on sizes the clause puts instead ("if we later go to pp_size 4") say which layout they are for
    sizes = ask.layout.split(",") if getattr(ask, "layout", None) else []
    if sizes and d.world_size != inp.diagnosis.world_size:
        sizes.append(f"world_size={d.world_size}")  # a cluster scaled out to hold the sizes (_scaled_out)
    label = w.say("q_layout_with", sizes=sizes_text(sizes)) if sizes else ""
    sep = "、" if w.lang == "zh" else ", "
    if found.step:
        lbs = found.step // derived.dp_size
        both = (" 和 " if w.lang == "zh" else " and ").join(str(v) for v in found.values)
        w.answer(w.computed(w.say("q_allowed_gbs", lbs=lbs, dp=derived.dp_size, step=found.step,
                                  current=found.current or found.step, values=both)))
    elif found.values:
        now = w.say("q_allowed_now", current=found.current) \
            if found.current is not None and found.current not in found.values else ""
        w.answer(w.computed(label + w.say("q_allowed", field=field, values=sep.join(map(str, found.values)),
                                          max=max(found.values), now=now)))
    else:
        w.answer(label + w.say("q_allowed_none", field=field))
    given = inp.diagnosis  # the user's layout stays the one judged
    return Part(report=given.report, strategy=derived.strategy if derived else None, judged=given.judged)


def _write_solved(w: Writer, inp: ComposeInput, ask) -> Part | None:
    """"what local_batch_size gives grad-acc 4?": the input value, then the validator's word on the layout
    with it set (a value the arithmetic gives can still fail another check)."""
    d = inp.diagnosis
    if d is None or d.report is None:
        # nothing stated to solve on: the recommended layout's numbers, as the other quantities take them
        plan = inp.plan
        if plan is None or not plan.report.ok or (found := solved_value(ask, plan.report, recommendation.plan_recipe(plan),
                                                                        inp.query)) is None:
            return None
        w.answer(w.computed(solved_line(w, found)))
        return Part(report=plan.report, strategy=plan.strategy, judged=recommendation.plan_recipe(plan))
    found = solved_value(ask, d.report, d.judged, inp.query)
    if found is None:
        return None
    w.answer(w.computed(solved_line(w, found)))
    field, value = found[0], found[1]
    if value and field_table().get(field) and isinstance(d.judged, dict):
        sit = inp.query.situation
        # the user's batch sizes, not defaults, beside the solved value
        values = {field: value, **{k: getattr(sit, k) for k in ("global_batch_size", "local_batch_size")
                                   if k != field and isinstance(getattr(sit, k), int)}}
        # a global_batch_size the user never gave is upstream's default: its divisibility is not theirs
        soft = _ESTIMATES | (_DEFAULT_GBS if sit.global_batch_size is None else frozenset())
        r = (with_values(inp.query, d, values) or d).report
        if r is not None and not r.ok and (failing := [f for f in r.errors if f.code not in soft]):
            w.bullets([w.finding(f) for f in failing], heading="warnings")
    return Part(report=d.report, strategy=d.report.derived.strategy if d.report.derived else None, judged=d.judged)


def write(w: Writer, inp: ComposeInput, ask) -> Part:
    if (part := _write_world_needed(w, inp, ask)) is not None:
        return part
    if (part := _write_solved(w, inp, ask)) is not None:
        return part
    if (part := _write_allowed(w, inp, ask)) is not None:
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
        plan = inp.plan
        if plan is None or not plan.report.ok:
            return Part(handoff="recommendation")
        recipe = recommendation.plan_recipe(plan)
        for target in _targets(ask, plan.report, recipe):
            w.answer(quantity_line(w, target, plan.report, recipe, experts_of(inp.query), no_ep=no_ep_class(inp.query)))
        if inp.query.intent in ("strategy", "yaml") or read(inp.query).strategy_asked:
            return Part(handoff="recommendation")  # the question is about the layout as a whole
        # which layout these numbers are for, in one sentence; its YAML only when a config is asked
        w.answer(w.fact(recommendation.lead_key(plan.strategy, features_of(plan.distributed or {}), plan.world_size,
                                                recommendation.wanted(inp.query)), section="leads", required=True))
        return Part(report=plan.report, strategy=plan.strategy, judged=recipe)
    hsdp = _hsdp_by_node(inp, d, ask)
    asked = None if hsdp is not None else _asked_layout(inp, d, ask)
    layout = getattr(ask, "layout", None) if asked is not None else None
    largest = _at_largest(inp, d, ask) if hsdp is None and asked is None else None
    if largest is not None:
        layout, asked = largest
    # the numbers of a layout the clause puts instead of the user's say which layout they are for
    label = w.say("q_layout_with", sizes=sizes_text(layout.split(","))) if layout else ""
    given = d
    d = hsdp or asked or _after_alternative(inp, d, ask) or _after_recommendation(inp, d, ask) or d
    r = d.report
    # A global_batch_size the user never gave is upstream's default, not their number: its divisibility
    # does not stop the sizes they asked about ("local_batch_size 16, how many microbatches?").
    soft = _ESTIMATES | (_DEFAULT_GBS if inp.query.situation.global_batch_size is None and not d.pasted else frozenset())
    if not r.ok and {f.code for f in r.errors} <= soft and derived_sizes(r, d.judged) is not None:
        # over the memory estimate: the sizes still exist and were asked; the estimate follows
        for target in _targets(ask, r, d.judged, read(inp.query)):
            w.answer(quantity_line(w, target, r, d.judged, experts_of(inp.query), layers=layers_of(inp.query),
                                   said=read(inp.query), no_ep=no_ep_class(inp.query)))
        # the estimate's first sentence (its totals); the knobs and assumptions are in the report
        w.bullets([w.say("rule_item", code=f.code, path=f.path,
                         message=first_sentence(f.message_zh if w.lang == "zh" else f.message, 260))
                   for f in r.errors], heading="warnings")
        return Part(report=r, strategy=r.derived.strategy if r.derived else None, judged=d.judged)
    if not r.ok and getattr(ask, "target", None) == "world_size" and (part := _write_world_min(w, d)) is not None:
        return part
    if not r.ok and getattr(ask, "target", None) == "experts_per_rank" and r.errors[0].code == "MW-E-EP-EXPERTS":
        # "60 experts, ep 8: how many per rank?": the number asked is the failure itself (no whole number
        # per rank, start-up fails, the sizes that divide), not a verdict in its place
        w.answer(w.computed(quantity_line(w, "experts_per_rank", r, d.judged, experts_of(inp.query))))
        return judged_body(w, inp, d)
    if not r.ok and getattr(ask, "target", None) == "dp_size" and {f.code for f in r.errors} == {_DDP_SIZES} \
            and d.world_size and read(ask).params.strategy == "ddp":
        # "ddp, 8 GPUs, tp_size 2 left in: what is dp_size with ddp?": ddp builds no mesh
        # (mesh_utils._create_device_meshes returns None for DDPConfig), so its dp is the world, never world / tp
        # with the tp it rejects; the rejection is the verdict's (asked) or follows here. A dp asked with no
        # strategy named ("换完以后 dp_size 是多少") is the fix's, below
        w.answer(w.computed(w.say("q_dp_ddp", world=d.world_size)))
        if any(a.kind in ("verdict", "diagnosis") for a in inp.asks if a is not ask):
            return Part()
        w.answer(verdict_line(w, d))
        return judged_body(w, inp, d)
    if not r.ok:
        before = list(inp.asks)[:list(inp.asks).index(ask)] if ask in inp.asks else []
        # "48 GPUs, ep 12 on 64 experts: must ep divide? And what dp_size?": a failure past the mesh (the
        # validator still derived its sizes) leaves the mesh numbers standing; the asked one is said
        standing = _standing_line(w, ask, r, d.judged)
        if any(a.kind in ("verdict", "diagnosis") for a in before) and not (d.fix_report is not None and d.fix_report.ok):
            if standing:
                w.answer(w.computed(standing))
            return Part()  # the verdict before this ask already said why there are no numbers
        if any(a.kind in ("verdict", "diagnosis", "recommendation") for a in inp.asks) and d.fix_report is not None \
                and d.fix_report.ok:
            # "does it run, and what is dp?" after a "no", and "不支持的话换啥？换了之后 dp 是几": the numbers of
            # the nearest layout that runs (the one to switch to)
            fixed = load_yaml(d.fix_yaml) if d.fix_yaml else None
            for target in _targets(ask, d.fix_report, fixed if isinstance(fixed, dict) else None):
                w.answer(quantity_line(w, target, d.fix_report, fixed if isinstance(fixed, dict) else None))
            return Part()
        w.answer(verdict_line(w, d))
        if standing:
            w.answer(w.computed(standing))
        return judged_body(w, inp, d)
    changed = change_lines(w, inp.query, d)  # "go from 1 node to 4": what the change does, first
    for line in changed:
        w.answer(w.computed(line))
    experts, layers = experts_of(inp.query), layers_of(inp.query)
    asks = list(inp.asks)
    later = asks[asks.index(ask) + 1:] if ask in asks else []
    for target in _targets(ask, r, d.judged, read(inp.query)):
        if changed and target in CHANGED_TARGETS:
            continue  # the change lines state them, before and after
        if target == "mesh_shape" and target != getattr(ask, "target", None) and any(a.kind == "quantity" for a in later):
            continue  # the whole mesh after every number asked, not between them
        line = quantity_line(w, target, r, d.judged, experts, layers=layers, said=read(inp.query),
                             size_b=inp.query.params.model_size_b, gpu=inp.query.situation.gpu,
                             no_ep=no_ep_class(inp.query))
        if line and not _said(w, line):
            w.answer(w.computed(label + line if label and target != "mesh_shape" else line))
            if label and largest is None and (compared := _compared_line(w, target, given, d, layout)):
                w.answer(w.computed(compared))
    return judged_body(w, inp, d)


# the mesh numbers a "does dp stay the same if we switch?" compares, by the Derived attribute that holds them
_COMPARED = {"dp_size": "dp_size", "dp_shard": "dp_shard_size", "ep_shard": "ep_shard_size"}


def _compared_line(w: Writer, target: str, given, asked, layout: str) -> str | None:
    """"If we switch, does dp stay the same?": a number asked on the layout a clause puts instead of the
    user's, said against the user's own (both validated); None where either has no such number."""
    attr = _COMPARED.get(target)
    if attr is None or given is None or given.report is None or not given.report.ok:
        return None
    before = getattr(derived_sizes(given.report, given.judged), attr, None)
    value = getattr(derived_sizes(asked.report, asked.judged), attr, None)
    if before is None or value is None:
        return None
    sizes = sizes_text(layout.split(","))
    if before == value:
        return w.say("q_layout_stays", name=target, value=value, sizes=sizes)
    return w.say("q_layout_changes", name=target, before=before, value=value, sizes=sizes)


_DDP_SIZES = "MW-E-DDP-PARALLEL"  # ddp given a TP/PP/CP/EP size above 1 (mesh_utils._require_size_one)

# the sizes the device mesh alone decides: they exist when only a check after the mesh fails
_MESH_TARGETS = frozenset({"dp_size", "dp_shard", "dp_replicate", "fsdp_shards", "layout_kind", "ep_shard", "moe_mesh_shape"})


def _standing_line(w: Writer, ask, r: ValidationReport, judged: dict | None) -> str | None:
    """The asked mesh size of a layout that fails a check past the mesh (r.derived is set only when the
    mesh arithmetic holds, validator/layout.py), else None."""
    target = getattr(ask, "target", None)
    if r.derived is None or target not in _MESH_TARGETS or getattr(ask, "layout", None):
        return None
    return quantity_line(w, target, r, judged)


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


def _asked_layout(inp: ComposeInput, d, ask):
    """"OOMs with pp4 ep8 ... but trains with pp8 ep8. In that pp8 ep8 layout, what is dp?": the
    sizes stated in the asking sentence are the layout asked about when they differ from the first
    ones read; that layout judged at the same numbers. None when the sentence restates nothing new."""
    dist = (d.judged or {}).get("distributed")
    if not isinstance(dist, dict):
        return None
    if getattr(ask, "layout", None):
        # "if I drop to tp_size 2, what are dp and grad-acc then?": understanding read the sizes the
        # asking clause puts instead of the user's (pasted or stated), the rest of the layout stays
        return with_layout(inp.query, d, ask.layout)
    if d.pasted or not getattr(ask, "text", ""):
        return None
    # the sentence that asks is the one the clause ends in: a clause can begin in the story before it
    sentence = asking_sentence(inp.query, ask)
    if sentence is None:
        return None
    p = sentence.params
    changed = {k: v for k in ("tp_size", "pp_size", "cp_size", "ep_size", "dp_replicate_size")
               if isinstance(v := getattr(p, k), int) and k in dist and dist[k] != v}
    new = {**dist, **changed}
    if getattr(ask, "target", None) == "dp_size" and "dp_size" in new:
        # "a table says dp2: what is dp_size really?": the size asked for is a claim to check, not a given
        new.pop("dp_size")
        changed["dp_size"] = None
    # "what dp_size would 32 GPUs give me with the same tp and pp?": the world size the clause itself asks
    # about (the sentence around it may describe the cluster: "when a node only has 4 GPUs")
    asked_world = read(ask).params_normalized.world_size
    world = asked_world if asked_world and d.world_size and asked_world != d.world_size else None
    if not changed and world is None:
        return None
    if new.get("pp_size", 1) > 1:
        new.setdefault("pipeline", {})
    judged = rejudge(inp.query, d, {**d.judged, "distributed": new}, world)
    return judged if judged.report is not None else None


def _after_alternative(inp: ComposeInput, d, ask):
    """"ep 能不能开到 32？这时候 dp_size 是多少？", "Could we go to pp_size 4? What's dp_size then?": a
    quantity asked right after a verdict on a changed layout, stating no sizes of its own, is asked of
    that changed layout (the one the verdict just judged); None otherwise."""
    asks = list(inp.asks)
    i = asks.index(ask) if ask in asks else 0
    if i == 0 or asks[i - 1].kind != "verdict":
        return None
    return asked_alternative(inp, d, asks[i - 1])


_LARGEST_ASKS = ("max_ep", "values:")


def _at_largest(inp: ComposeInput, d, ask) -> tuple[str, object] | None:
    """"Largest ep_size? And ep_shard at that size?", "the largest pp_microbatch_size, and how many
    microbatches does that give?", "with the largest of those, what's dp_size?": a quantity asked right
    after the largest value of a field (quantities with no target of their own between), stating no sizes
    of its own, is asked of the layout with that value: (`field=value`, that layout judged), else None."""
    asks = list(inp.asks)
    i = asks.index(ask) if ask in asks else 0
    said = _clause_sizes(ask)
    if getattr(ask, "layout", None) or said or not isinstance(d.judged, dict):
        return None  # "what would dp_size be with pp 3?": the clause's own sizes, not the largest
    before = next((a for a in reversed(asks[:i]) if not (a.kind == "quantity" and a.target is None)), None)
    target = getattr(before, "target", None) or ""
    if before is None or before.kind != "quantity" or not target.startswith(_LARGEST_ASKS):
        return None
    if target == "max_ep":
        best, field = largest_ep(d.report, d.judged, experts_of(inp.query), no_ep_class(inp.query)), "ep_size"
    else:
        allowed = _allowed(inp, before)
        field = allowed[1].field if allowed is not None else ""
        best = max(allowed[1].values) if allowed is not None and allowed[1].values and not allowed[1].step else None
    if best is None:
        return None
    layout = ",".join([*(before.layout.split(",") if before.layout else []), f"{field}={best}"])
    judged = with_layout(inp.query, d, layout)
    return None if judged is None else (layout, judged)


def _clause_sizes(ask) -> dict[str, int]:
    """The parallel sizes the ask's own clause states, as understanding reads them."""
    p = read(ask).params_normalized
    return {k: v for k in SIZE_KEYS if isinstance(v := getattr(p, k, None), int)}


def _after_recommendation(inp: ComposeInput, d, ask):
    """"What would you use instead on 32 GPUs, and what dp_size does that give?": a quantity asked right
    after a recommendation, stating no sizes of its own, is asked of the recommended layout when that
    differs from the user's (judged at the same numbers); None otherwise."""
    asks = list(inp.asks)
    i = asks.index(ask) if ask in asks else 0
    plan = inp.plan
    if i == 0 or asks[i - 1].kind != "recommendation" or getattr(ask, "layout", None) or plan is None \
            or not plan.report.ok:
        return None
    recipe = recommendation.plan_recipe(plan)
    mine = (d.judged or {}).get("distributed") if d is not None else None
    if not recipe or not isinstance(recipe.get("distributed"), dict) or recipe.get("distributed") == mine:
        return None
    judged = judge_stated(recipe, world_size=plan.report.world_size or plan.world_size, gpus_per_node=plan.gpus_per_node,
                          validate=validate, unusable=UnusableInput)
    return judged if judged is not None and judged.report is not None and judged.report.ok else None


def _said(w: Writer, line: str) -> bool:
    """The same quantity already in the lead (another ask of the question computed it, cited differently)."""
    core = line.rstrip(" .。")
    return any(lead.startswith(core) for lead in w.leads)


KIND = AnswerKind("quantity", frozenset({"validation", "plan", "retrieval"}), write)
