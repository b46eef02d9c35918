"""Verdict: does the user's own layout run? Judged exactly as stated; the nearest valid layout,
re-validated, comes only after a "no"."""
from __future__ import annotations

import re
from dataclasses import replace

from assistant.compose.answers.base import AnswerKind, ComposeInput, Part
from assistant.compose.answers.quantity_lines import layout_targets, quantity_line
from assistant.compose.knowledge.diagnose import Diagnosis, judge_stated
from assistant.compose.writer import FEATURE_ORDER, Writer, first_sentence, yaml_value
from assistant.defaults import DEFAULT_GPUS_PER_NODE, DEFAULT_WORLD_SIZE
from assistant.validator import UnusableInput, validate
from assistant.validator.coerce import load_yaml
from assistant.validator.fields import CANONICAL_STRATEGIES
from assistant.understand.cues import Reading, is_whole_question, read, read_sentence
from assistant.understand.query import SIZE_KEYS

_SIZES = ("tp_size", "pp_size", "cp_size", "ep_size", "dp_size", "dp_replicate_size")
_SIZE_OR_BLOCK = frozenset({*_SIZES, "pipeline", "moe", "strategy"})
_PARALLELISMS = frozenset({"tp", "pp", "cp", "ep", "sp", "hsdp"})
# "will it hang?", "会 OOM 吗" (cues.Reading.worry): a worry about run time, answered by where the run really stops.
ESTIMATES = frozenset({"MW-E-MEMORY"})  # not a start-up check: the run starts, then runs out of memory
_UNSAID = Reading("")  # a verdict asked with no clause of its own


def layout_text(w: Writer, d: Diagnosis, said: Reading = _UNSAID) -> str:
    """`tp_size 4, pp_size 3` (the sizes the user gave), or "your layout" for a pasted config, with
    the sizes the asking clause names ("is ep_size 8 valid?": "your layout with `ep_size: 8`")."""
    dist = (d.judged or {}).get("distributed")
    if d.pasted and isinstance(dist, dict):
        named = [k for k in said.named_sizes if k in dist]
        if named:
            return w.say("layout_yours_named", named=", ".join(f"`{k}: {dist[k]}`" for k in dict.fromkeys(named)))
    if d.pasted or not isinstance(dist, dict):
        return w.say("layout_yours")
    parts = [f"`strategy: {dist['strategy']}`"] if isinstance(dist.get("strategy"), str) else []
    parts += [f"`{k}: {dist[k]}`" for k in _SIZES if k in dist]
    pipeline = dist.get("pipeline")
    if isinstance(pipeline, dict) and isinstance(pipeline.get("pp_schedule"), str):
        parts.append(f"`pp_schedule: {pipeline['pp_schedule']}`")  # "can I use interleaved 1F1B?" names it
    text = ", ".join(parts) or w.say("layout_yours")
    if pipeline == {} and said.pipeline_block == "present":
        return w.say("layout_block_added", layout=text)  # "... and if I add `pipeline: {}`?": the block asked about
    return text


def verdict_line(w: Writer, d: Diagnosis, said: Reading = _UNSAID) -> str:
    """The one sentence that answers "does it run?" ("good idea?" is advice_line's)."""
    if d.report is None:
        return w.say("diag_unusable", message=(d.error_zh if w.lang == "zh" else d.error_en) or "")
    r = d.report
    if r.ok:
        key = "verdict_yes_worry" if said.worry else "verdict_yes"
        # a world smaller than a node is that one node ("4 GPUs": one node of 4, not "8 GPUs per node")
        gpn = min(d.gpus_per_node, d.world_size)
        line = w.say(key, layout=layout_text(w, d, said), world=d.world_size, gpn=gpn, mesh=w.mesh(r))
        named = [f for f in r.warnings if said.says(f.path.rsplit(".", 1)[-1])]
        # what still deserves a change in a pasted config, the warning on the key the clause names, and
        # what the run does differently when the clause asks what happens ("会咋样": 2.0 runs as 1)
        if r.warnings and (d.pasted or named or said.what_happens):
            first = (named or r.warnings)[0]
            line += w.space + w.say("verdict_warning", code=first.code,
                                    message=(first.message_zh if w.lang == "zh" else first.message).rstrip(" .。"))
        return line
    first = r.errors[0]
    message = (first.message_zh if w.lang == "zh" else first.message).rstrip(" .。")
    key = "verdict_no_worry" if said.worry else "verdict_no"
    memory_only = {f.code for f in r.errors} <= ESTIMATES
    if key == "verdict_no_worry" and memory_only and said.memory_worry:
        key = "verdict_oom"  # "会爆显存吗" over the estimate: the run starts, then runs out of memory
    elif key == "verdict_no" and memory_only:
        # "tp 8 + FSDP enough, or PP too?": the layout starts; what says no is the memory, on that layout
        return w.say("verdict_no_memory", layout=layout_text(w, d), world=d.world_size, message=message,
                     code=first.code) + (w.space + fix if (fix := fix_line(w, d)) else "")
    if _passes_start_up(first):
        # a mesh smaller than the world: start-up accepts it, the run then hangs or idles (CODE-FACTS 4)
        key = "verdict_later_worry" if said.worry else "verdict_later"
    return w.say(key, message=message, code=first.code) + (w.space + fix if (fix := fix_line(w, d)) else "")


# the parallelism a size turns on, by the names strategy_lacks uses
_FEATURE_OF_SIZE = {"tp_size": "tp", "pp_size": "pp", "cp_size": "cp", "ep_size": "ep", "dp_replicate_size": "hsdp"}


def claim_line(w: Writer, d: Diagnosis, said: Reading, whole: Reading = _UNSAID) -> str | None:
    """"Is it true ddp can't do tp? we want tp 2 on 4 GPUs", "megatron_fsdp has no TP, right? tp_size 2 on 8":
    the clause claims the judged strategy lacks a feature (claims.Claim.denied), so the verdict confirms or
    contradicts that claim first ("Yes, that's true: ... cannot do TP", "No: ... does support TP"), then
    says what the validator does with the layout. A bare clause ("Is that so?") that names no strategy
    and denies nothing checks the claim of the whole question (`whole`) on a size the layout sets. None when no claim denies
    anything of the judged strategy, or its features split both ways."""
    r = d.report
    dist = (d.judged or {}).get("distributed") or {}
    strategy = dist.get("strategy") or "fsdp2"
    claim = said if said.claim.denied or said.params.strategy else whole
    if r is None or not claim.claim.denied or claim.params.strategy != strategy:
        return None
    if claim is whole and not any(_FEATURE_OF_SIZE[k] in claim.claim.denied for k, v in dist.items()
                                  if k in _FEATURE_OF_SIZE and isinstance(v, int) and v > 1):
        return None  # "megatron_fsdp can't do pp. Is tp 2 on 8 GPUs valid?": the verdict is on other sizes
    feats = [f for f in FEATURE_ORDER if f in claim.claim.denied and f in w.p.feature_names]
    lacks = w.p.strategy_lacks.get(strategy, {})
    missing, has = [f for f in feats if f in lacks], [f for f in feats if f not in lacks]
    if not feats or (missing and has):
        return None
    lead = w.say("limits_no_confirmed" if missing else "limits_yes_contrary", strategy=strategy, features=w.features(feats))
    layout = layout_text(w, d, said)
    if missing and not r.ok:
        first = r.errors[0]
        rest = w.say("claim_verdict_rejected", layout=layout, code=first.code,
                     message=(first.message_zh if w.lang == "zh" else first.message).rstrip(" .。"))
        rest += (w.space + fix) if (fix := fix_line(w, d)) else ""
    elif has and r.ok:
        rest = w.say("claim_verdict_passes", layout=layout, world=d.world_size,
                     gpn=min(d.gpus_per_node, d.world_size), mesh=w.mesh(r))
    else:
        rest = verdict_line(w, d, said)  # the claim answered; the layout fails or passes on other grounds
    return lead + w.space + rest


def switch_line(w: Writer, inp: ComposeInput, d: Diagnosis) -> str | None:
    """"We run fsdp2 with tp_size 4 ... standardize on megatron_fsdp: can we keep TP?", "fsdp2, cp_size 4 ...
    megatron_fsdp 能开 cp 吗": a verdict on the strategy switched to (named after the one run now,
    claims.Claim.strategies_named) says which of the layout's parallelisms it keeps and which strategy
    would not, or, when it drops one, which strategies keep it. None with no switch or no size above 1."""
    r = d.report
    dist = (d.judged or {}).get("distributed") or {}
    strategy = dist.get("strategy")
    named = read(inp.query).claim.strategies_named
    if r is None or strategy not in named or named[0] == strategy:
        return None
    sizes = {f: (k, v) for k, f in _FEATURE_OF_SIZE.items() if isinstance(v := dist.get(k), int) and v > 1}
    feats = [f for f in FEATURE_ORDER if f in sizes and f in w.p.feature_names]
    if not feats:
        return None
    lacks = w.p.strategy_lacks
    kept = [f for f in feats if f not in lacks.get(strategy, {})]
    lost = [f for f in feats if f in lacks.get(strategy, {})]
    lines = []
    if kept:
        lines.append(w.say("switch_keeps", strategy=strategy, features=w.features(kept),
                           sizes=", ".join(f"`{sizes[f][0]}: {sizes[f][1]}`" for f in kept)))
        lines += [w.say("switch_other_lacks", strategy=s, features=w.features([f for f in kept if f in lacks.get(s, {})]))
                  for s in CANONICAL_STRATEGIES if s != strategy and any(f in lacks.get(s, {}) for f in kept)]
    if lost:
        keepers = [s for s in CANONICAL_STRATEGIES if s != strategy and not any(f in lacks.get(s, {}) for f in lost)]
        fixed = d.fix_report.derived.strategy if d.fix_report is not None and d.fix_report.derived else None
        if keepers and keepers != [fixed]:  # the one keeper is the fix's strategy: the fix already says it
            keepers = [f"`{s}`" for s in keepers]
            lines.append(w.say("switch_keepers" if len(keepers) > 1 else "switch_keeper", features=w.features(lost),
                               strategies=(" 和 " if w.lang == "zh" else " and ").join(keepers)))
    return w.space.join(lines) or None


def advice_line(w: Writer, d: Diagnosis) -> str:
    """"Good idea?": a layout that starts is still a "no" when a warning in phrases.yaml's
    advice_against argues against it (TP across nodes, memory nearly full), then what to use instead.
    Memory over capacity is weighed with those warnings: a layout that starts but does not fit leads
    with the warning and the memory together ("it starts, but TP crosses nodes and it does not fit"),
    then what to use instead for both; with no warning against it, "not a good idea" on the memory alone,
    with the estimate's knob and the fix. A layout that does not start is the plain verdict's "no"."""
    r = d.report
    if r is None:
        return verdict_line(w, d)
    over_memory = [f for f in r.errors if f.code in ESTIMATES]
    if len(over_memory) < len(r.errors):
        return verdict_line(w, d)  # it does not start: that is the answer
    against = [f for f in r.warnings if f.code in w.p.advice_against]
    gpn = min(d.gpus_per_node, d.world_size)
    if not against and not over_memory:
        return w.say("advice_yes", layout=layout_text(w, d), world=d.world_size, gpn=gpn, mesh=w.mesh(r))
    if not against:
        # a layout that starts but does not fit is still no good idea: the estimate's own message says
        # by how much and which knob helps most, which is what to use instead
        first = over_memory[0]
        line = w.say("advice_no_memory", layout=layout_text(w, d), world=d.world_size, code=first.code,
                     message=(first.message_zh if w.lang == "zh" else first.message).rstrip(" .。"))
        return line + (w.space + fix if (fix := fix_line(w, d)) else "")
    nodes = max(1, d.world_size // gpn) if gpn else 1
    tp = ((d.judged or {}).get("distributed") or {}).get("tp_size", 1)

    def why(f) -> str:
        # the short reason in the lead (the full message is in the warnings below it)
        if f.code == "MW-W-TP-CROSS-NODE":
            return w.say("advice_why_tp_cross_node", tp=tp, gpn=gpn)
        # the reason only: what to do after it ("; use ...") is the advice_instead line that follows
        reason = re.split(r"；|;\s", f.message_zh if w.lang == "zh" else f.message)[0]
        return first_sentence(reason, 160).rstrip(" .。")

    first = against[0]
    lines = [w.say("advice_no", layout=layout_text(w, d), world=d.world_size, message=why(first), code=first.code)]
    m = r.memory
    if over_memory and m is not None and m.capacity_gib:
        lines.append(w.say("advice_also_memory", total=f"{m.total_gib:.1f}", cap=f"{m.capacity_gib:.1f}",
                           code=over_memory[0].code))
    keys = [w.p.advice_against[f.code] for f in against] + (["advice_fit_memory"] if over_memory else [])
    lines += [w.say(k, gpn=gpn, nodes=nodes) for k in dict.fromkeys(keys)]
    return w.space.join(lines)


def tp_in_node_line(w: Writer, d: Diagnosis) -> str | None:
    """Where the TP groups sit, when they stay inside a node: asked ("tp 8 会不会跨机") or part of what
    "good idea?" weighs ("tp4 放单机里这样还行吗"), said after the verdict whatever else (memory) weighs
    against the layout. mesh_utils orders the dims (pp, dp_replicate, dp_shard, cp, tp), tp innermost, so
    a TP group is consecutive ranks, one node's when tp_size divides the GPUs per node. None when the
    layout does not start, TP is 1, or its groups cross nodes."""
    r = d.report
    if r is None or any(f.code not in ESTIMATES for f in r.errors):
        return None  # a layout that does not start: its error is the answer
    tp = ((d.judged or {}).get("distributed") or {}).get("tp_size", 1)
    gpn = min(d.gpus_per_node, d.world_size)
    if not isinstance(tp, int) or tp <= 1 or not gpn or gpn % tp or any(
            f.code == "MW-W-TP-CROSS-NODE" for f in r.warnings):
        return None
    return w.say("tp_inside_node", tp=tp, gpn=gpn)


def _passes_start_up(f) -> bool:
    """An error the run only meets after start-up: an explicit dp_size that leaves ranks outside the
    mesh (torch refuses only a mesh bigger than the world when it is built)."""
    return f.code == "MW-E-DP-MISMATCH" and "init_device_mesh" not in f.message


def _flat(data, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    if isinstance(data, dict):
        for k, v in data.items():
            path = f"{prefix}.{k}" if prefix else str(k)
            if isinstance(v, dict) and v:
                out.update(_flat(v, path))
            else:
                out[path] = v
    return out


def fix_line(w: Writer, d: Diagnosis) -> str | None:
    """What the nearest passing layout changes, key by key: the fix in one sentence."""
    changes = fix_changes(w, d)
    return w.say("fix_line", changes=("、" if w.lang == "zh" else ", ").join(changes[:4])) if changes else None


def fix_changes(w: Writer, d: Diagnosis) -> list[str]:
    if not (d.fix_yaml and d.fix_report is not None and d.fix_report.ok and d.judged):
        return []
    try:
        fixed = load_yaml(d.fix_yaml)
    except ValueError:
        return []
    fixed = fixed if isinstance(fixed, dict) and "distributed" in fixed else {"distributed": fixed}
    before, after = _flat(d.judged), _flat(fixed)

    def short(path: str) -> str:
        return path.removeprefix("distributed.")

    changes = [w.say("fix_change", name=short(k), new=yaml_value(after[k]), old=yaml_value(before[k]))
               for k in before if k in after and before[k] != after[k]]
    changes += [w.say("fix_remove", name=short(k)) for k in before if k not in after
                and not any(a.startswith(k + ".") for a in after)]
    changes += [f"`{short(k)}: {yaml_value(after[k]) if after[k] != {} else '{}'}`" for k in after
                if k not in before and not any(b.startswith(k + ".") for b in before)]
    return changes


def judged_body(w: Writer, inp: ComposeInput, d: Diagnosis, *, sizing: bool = False,
                listed: frozenset[str] | set[str] = frozenset(), fix_yaml: bool = True) -> Part:
    """After the verdict: the other failing checks, why the rule exists, and the nearest layout that
    passes (the validator's fix, else the plan). A passing layout shows no YAML: a config is shown
    when one is asked for (compose/answers/config.py) or as the fix after a "no"."""
    if d.assumed:
        why = w.say("world_assumed_node" if d.assumed == "node" else "world_assumed_mesh")
        told = w.say("world_assumed", world=d.world_size, why=why)
        if told not in w.lines:  # once per answer, however many asks judge the same layout
            w.para(told)
    r = d.report
    if r is None:
        return Part(judged=None)
    strategy = r.derived.strategy if r.derived else None
    part = Part(yaml=None, report=r, strategy=strategy, judged=d.judged)  # the user's own YAML is not re-shown
    if r.ok:
        rest = r.warnings[1:] if d.pasted else r.warnings  # a pasted config's first one is in the verdict
        if rest:
            w.bullets([w.finding(f) for f in rest], heading="warnings")
        if sizing and r.derived is not None and not any(a.kind == "quantity" for a in inp.asks):
            lines = [quantity_line(w, t, r, d.judged) for t in layout_targets(r, d.judged)]
            if r.derived.ep_size > 1:
                lines.append(w.fact("ep_divides", required=True))  # the rule an EP layout passes
            w.bullets(lines, heading="sizing")
        return part
    # the first failing check is the verdict already said (or the pasted errors, `listed`)
    more = [f for f in r.errors[0 if listed else 1:] if f.code not in listed]
    if more:
        w.para(w.say("verdict_more", n=len(more)))
        w.bullets([w.finding(f) for f in more])
    if r.warnings:
        w.bullets([w.finding(f) for f in r.warnings], heading="warnings")
    w.bullets([w.fact(k, required=True) for k in why_facts(w, (*r.errors, *r.warnings))], heading="why")
    plan = inp.plan
    if d.fix_yaml and d.fix_report is not None and d.fix_report.ok:
        part.strategy = d.fix_report.derived.strategy if d.fix_report.derived else strategy
        if fix_yaml:
            w.para(w.say("nearest", world=d.world_size, mesh=w.mesh(d.fix_report)))
            w.code(d.fix_yaml)
            part.yaml, part.yaml_report = d.fix_yaml, d.fix_report
    elif plan is not None and plan.report.ok and plan.yaml:
        w.para(w.say("nearest", world=plan.report.world_size or d.world_size, mesh=w.mesh(plan.report)))
        w.code(plan.yaml)
        part.strategy = plan.strategy
        part.yaml, part.yaml_report = plan.yaml, plan.report
    else:
        w.para(w.say("diag_no_fix"))
    return part


def why_facts(w: Writer, findings, limit: int = 2) -> list[str]:
    """The kb facts behind the failing rules, only those about what the finding itself names (the
    unknown-option rule's fact about `sequence_parallel` does not explain `defer_fsdp_grad_sync`)."""
    keys = []
    for f in findings:
        said = f"{f.path} {f.message}"
        keys += [k for k in w.p.rule_facts.get(f.code, ())
                 if all(t in said for t in w.p.facts[k].terms if "_" in t)]
    return list(dict.fromkeys(keys))[:limit]


def write(w: Writer, inp: ComposeInput, ask) -> Part:
    d = inp.diagnosis
    st = inp.query.situation.stated
    # a size written as a decimal ("tp_size 写成 2.0") is stated too, as written (stated.py keeps it an option)
    # "can I leave ep_size out and just run fsdp2 on 16 GPUs? A teammate set ep_size: 32 ...": beside another
    # person's run (a diagnosis on its own sizes, understand.others_run), a clause that names the stated
    # strategy asks about the user's own layout, that strategy's defaults, judged like any layout
    own_strategy = d is not None and d.report is not None and st.strategy is not None \
        and read(ask).params.strategy == st.strategy and bool(inp.query.situation.world_size) \
        and any(a.kind == "diagnosis" and a.layout for a in inp.asks)
    if d is None or (not d.pasted and not st.sizes and not set(st.options) & set(SIZE_KEYS) and not own_strategy):
        before = list(inp.asks)[:list(inp.asks).index(ask)] if ask in inp.asks else []
        d = _strategy_with_fields(inp, ask, clause_only=bool(before))
        if d is not None:  # "can megatron_fsdp take defer_fsdp_grad_sync?": the validator says, also after
            w.answer(verdict_line(w, d, read(ask, inp.query)))  # facts on that field
            return judged_body(w, inp, d)
        if any(a.kind in ("diagnosis", "fact") for a in before):
            return Part()  # "does megatron_fsdp do PP?" after its error or its facts: already answered
        # nothing of the user's to judge: a capability or value question ("can megatron_fsdp do PP?",
        # "is `interleaved_1f1b` right?"), or, with a cluster or a model, a wish for a layout
        sit = inp.query.situation
        numbers = sit.world_size or sit.nodes or sit.model or inp.query.params.model_size_b
        if not numbers or inp.query.intent in ("limitations", "howto"):
            return Part(handoff="fact")
        return Part(handoff="recommendation")
    alternative = asked_alternative(inp, d, ask)
    d = alternative or d
    asked = read(ask, inp.query)
    if alternative is not None:
        asked = read_sentence(inp.query, ask)  # the values the verdict is on are that sentence's
    # "good idea?": asks.yaml's advice cue (target) or the reader's GOOD_IDEA (aspect); the warnings answer it
    field_ok = _asked_ep_passes(w, asked, d)
    if field_ok:
        w.answer(field_ok)  # "ep 8 还合法么" on a layout that fails elsewhere: the asked size's own rule first
    advice = getattr(ask, "target", None) == "advice" or getattr(ask, "aspect", None) == "advice"
    if advice:
        w.answer(advice_line(w, d))
    else:
        w.answer(claim_line(w, d, asked, read(inp.query)) or verdict_line(w, d, asked))
    w.answer(switch_line(w, inp, d))
    r = d.report
    sit = inp.query.situation
    if r is not None and r.ok and (read(inp.query).memory_worry or sit.model or inp.query.params.model_size_b):
        # "will 70b blow up on 8 GPUs with tp 8?", "tp 2 pp 2 for a 13B model on 4 GPUs?": past start-up
        # is half the answer; with a model named, whether it fits is the other
        w.answer(quantity_line(w, "memory", r, d.judged, size_b=inp.query.params.model_size_b, said=read(inp.query),
                                 gpu=sit.gpu))
    if advice or "tp_in_node" in asked.cued_facts:
        w.answer(tp_in_node_line(w, d))  # "tp 8 会不会跨机", or "good idea?" on TP inside the node
    if r is not None and r.ok and r.derived is not None and r.derived.ep_size > 1:
        # an EP layout passes or fails on (dp*cp*tp) % ep: that arithmetic is the reason, said with it
        w.answer(quantity_line(w, "ep_shard", r, d.judged))
    return judged_body(w, inp, d, sizing=True)


def _asked_ep_passes(w, asked, d: Diagnosis) -> str | None:
    """The EP rule on its own, when the clause asks about the judged ep_size ("ep 8 还合法么", "is ep 8
    still legal?") and the layout fails on another rule: (dp * cp * tp) % ep == 0 holds, which is what
    was asked; the failure follows. None when EP itself fails or is not what the clause names."""
    r = d.report
    der = r.derived if r is not None else None
    if der is None or r.ok or der.ep_size <= 1 or getattr(asked.params, "ep_size", None) != der.ep_size:
        return None
    non_pp = der.dp_size * der.cp_size * der.tp_size
    if non_pp % der.ep_size or any("ep_size" in (f.path or "") for f in r.errors):
        return None
    return w.say("verdict_ep_itself_ok", ep=der.ep_size, non_pp=non_pp)


def asked_alternative(inp: ComposeInput, d: Diagnosis, ask) -> Diagnosis | None:
    """"tp 2 and ep 8: what is dp, and could I use ep 16 instead?": what the asking clause itself
    states, when it differs from the layout read first, is the layout this verdict is on: its sizes,
    its world ("pp 4 with ep 16 on 64 GPUs?"), its strategy ("the same with megatron_fsdp?") and its
    batch sizes ("if I drop global_batch_size to 36?"). The clause's values are read exactly (params)."""
    from assistant.compose.knowledge.judge import rejudge

    dist = (d.judged or {}).get("distributed")
    if not isinstance(dist, dict) or not getattr(ask, "text", "") or is_whole_question(ask, inp.query):
        return None
    # the layout understanding put on the ask ("Is the third option valid?": the third one listed), then
    # the clause's own values; a clause that states none ("那些也会挂吗") is read in its sentence
    found = _target_change(ask, dist) or _stated_change(read(ask), dist, d) \
        or _stated_change(read_sentence(inp.query, ask), dist, d)
    if found is None and read(ask).back_reference:
        # "... have a pipeline: section while pp_size is 1. Do those fail too?": "those" are the sentence before
        found = _stated_change(read_sentence(inp.query, ask, back=1), dist, d)
    if found is None:
        return None
    changed, batches, world, block = found
    steps = dict((d.judged or {}).get("step_scheduler") or {})
    new = {**dist, **changed}
    if block == "absent":
        new.pop("pipeline", None)  # "what happens if I leave out the pipeline block?"
    elif block == "present":
        new.setdefault("pipeline", {})  # "... and if I add `pipeline: {}`?", "configs that keep a pipeline: block"
    elif new.get("pp_size", 1) > 1:
        new.setdefault("pipeline", {})
    recipe = {**d.judged, "distributed": new}
    if batches:
        recipe["step_scheduler"] = {**steps, **batches}
    judged = rejudge(inp.query, d, recipe, world_size=world)
    if judged.report is None:
        return None
    return replace(judged, pasted=False) if d.pasted else judged


def _target_change(ask, dist: dict) -> tuple | None:
    """The sizes a verdict's target names (`tp_size=8,pp_size=4`, Ask.layout's form) that differ from the
    judged layout, as `_stated_change` gives them; None when the target is no layout."""
    target = getattr(ask, "target", None) or ""
    pairs = [kv.split("=", 1) for kv in target.split(",")] if "=" in target else []
    if not pairs or not all(k in _SIZES and v.isdigit() for k, v in pairs):
        return None
    changed = {k: int(v) for k, v in pairs if dist.get(k, 1) != int(v)}
    return (changed, {}, None, None) if changed else None


def _stated_change(said: Reading, dist: dict, d: Diagnosis) -> tuple | None:
    """The sizes, strategy, batch sizes, world and pipeline block the clause states that differ from the
    judged layout, or None when it states no change."""
    p = said.params
    changed = {k: v for k in _SIZES if isinstance(v := getattr(p, k, None), int) and k in dist and dist[k] != v}
    if isinstance(p.strategy, str) and p.strategy != (dist.get("strategy") or "fsdp2"):
        changed["strategy"] = p.strategy
    steps = dict((d.judged or {}).get("step_scheduler") or {})
    batches = {k: v for k in ("global_batch_size", "local_batch_size")
               if isinstance(v := getattr(p, k, None), int) and steps.get(k, v) != v}
    world = p.world_size if p.world_size and d.world_size and p.world_size != d.world_size else None
    block = said.pipeline_block
    if block is not None and (block == "absent") == ("pipeline" not in dist):
        block = None  # the clause restates the block as it is
    if not (changed or batches or world or block):
        return None
    return changed, batches, world, block


def _strategy_with_fields(inp: ComposeInput, ask, clause_only: bool = False) -> Diagnosis | None:
    """The named strategy with the named option fields set, judged: whether a strategy accepts a
    field is the validator's verdict on exactly that. After other asks (`clause_only`), only a clause
    that names both the strategy and the field is judged so ("... if I switch to ddp, can I keep
    enable_fsdp2_prefetch?")."""
    sit = inp.query.situation
    said = read(ask, inp.query)
    strategy = said.params.strategy if clause_only else sit.stated.strategy
    if not strategy or sit.stated.wanted & _PARALLELISMS:  # parallelisms asked about: the strategy's limits answer
        return None
    refs = [r for r in said.fields
            if r.section == "distributed" and not r.is_strategy_name and r.key not in _SIZE_OR_BLOCK]
    if not refs:
        return None
    dist = {"strategy": strategy, **{r.key: r.default if r.default is not None else True for r in refs}}
    return judge_stated({"distributed": dist}, world_size=sit.world_size or DEFAULT_WORLD_SIZE,
                        gpus_per_node=sit.gpus_per_node or DEFAULT_GPUS_PER_NODE, validate=validate,
                        unusable=UnusableInput)


KIND = AnswerKind("verdict", frozenset({"validation", "plan", "retrieval"}), write)
