"""Recommendation: which strategy and sizes for the user's situation, from the planner's validated plan.

The lead is the recommendation itself; the body is the plan's YAML (validated), the sizing with the
user's numbers, and only the reasons and pitfalls that bear on what the config turns on.
"""
from __future__ import annotations

from typing import Sequence

from assistant.compose.answers.base import AnswerKind, ComposeInput, Part
from assistant.compose.answers.from_kb import retrieved
from assistant.compose.answers.quantity_lines import quantity_line
from assistant.compose.writer import FEATURE_ORDER, Writer, features_of, yaml_value
from assistant.planner.plan import Plan, Step
from assistant.understand.query import Query
from assistant.validator.report import ValidationReport

_FIELD_ORDER = ("strategy", "tp_size", "pp_size", "cp_size", "ep_size", "dp_replicate_size", "sequence_parallel",
                "activation_checkpointing", "defer_fsdp_grad_sync")
_SIZE_FIELDS = ("tp_size", "pp_size", "cp_size", "ep_size", "dp_replicate_size", "sequence_parallel", "moe")
_MAX_PITFALLS = 2
_MAX_WHY = 2
# The key that turns a feature on: a planner note naming it is about that feature.
SIZE_KEYS = {"tp": "tp_size", "pp": "pp_size", "cp": "cp_size", "ep": "ep_size", "hsdp": "dp_replicate_size",
             "sp": "sequence_parallel"}
_LEADS = (("pp", "fsdp2_pp"), ("ep", "fsdp2_ep"), ("hsdp", "fsdp2_hsdp"), ("cp", "fsdp2_cp"), ("tp", "fsdp2_tp"))


def wanted(query: Query) -> list[str]:
    want = set(query.params.wanted) | {t for t in query.topics if t in FEATURE_ORDER}
    return [f for f in FEATURE_ORDER if f in want]


def lead_key(strategy: str, feats: Sequence[str], world: int | None, asked: Sequence[str] = ()) -> str:
    """The lead sentence: about the feature the user asked for when the config has it, else the
    feature that most constrains the strategy."""
    if strategy == "ddp":
        return "ddp"
    if strategy in ("megatron_fsdp", "megatron-fsdp", "mfsdp"):
        return "megatron_fsdp"
    for want in (True, False):
        for feat, key in _LEADS:
            if feat in feats and (not want or feat in asked):
                return key
    return "fsdp2_single" if world == 1 else "fsdp2_dp"


def verdict_heading(w: Writer, r: ValidationReport, plan: Plan) -> str:
    key = "verdict_ok_warn" if r.warnings else "verdict_ok"
    return w.say(key, world=r.world_size or plan.world_size, gpn=r.gpus_per_node or plan.gpus_per_node,
                 mesh=w.mesh(r), n=len(r.warnings))


def show_plan_yaml(w: Writer, plan: Plan) -> tuple[str | None, ValidationReport | None]:
    """The plan's YAML under its verdict line, and its warnings; nothing when it did not validate."""
    if not (plan.report.ok and plan.yaml):
        return None, None
    r = plan.report
    w.heading("yaml", " — " + verdict_heading(w, r, plan))
    w.code(plan.yaml)
    if r.warnings:
        w.bullets([w.finding(f) for f in r.warnings], heading="warnings")
    return plan.yaml, r


def declined(plan: Plan, query: Query, feats: Sequence[str]) -> list[Step]:
    """The planner's notes on features the user asked for that the plan leaves out: they answer the
    question, so they come right after the recommendation."""
    missing = [f for f in wanted(query) if f not in feats and f in SIZE_KEYS]
    return [s for s in plan.rejected if any(SIZE_KEYS[f] in s.en for f in missing)]


def say_declined(w: Writer, notes: Sequence[Step]) -> None:
    said = [w.step(s) for s in notes]
    if any(SIZE_KEYS["ep"] in s.en and "MoEFSDPSyncMixin" not in s.en for s in notes):
        said.append(w.fact("ep_needs_moe_class"))  # the rule behind a refusal that does not name it
    w.para(w.space.join(x for x in said if x))


def _too_few_gpus(w: Writer, plan: Plan, query: Query) -> bool:
    """A known model that no layout fits at the user's world size: say how many GPUs it needs."""
    from assistant.compose.knowledge.world_needed import world_needed

    world = plan.report.world_size or plan.world_size
    found = world_needed(query, plan.gpus_per_node) if world else None
    if found is None or found.world <= world:
        return False
    r = found.plan.report
    w.answer(w.say("too_few_gpus", model=found.model, world=world, needed=found.world, nodes=found.nodes,
                   gib=f"{r.memory.total_gib:.1f}", gpu=found.gpu, mesh=w.mesh(r)))
    return True


def config_sections(w: Writer, plan: Plan, query: Query, *, fields: bool, rationale: bool,
                    declined_said: bool = False, lead: bool = True, asked_size: str | None = None,
                    brief: bool = False) -> Part:
    """Recommendation, YAML, fields (when a config was asked for), sizing, the strategies the user
    named that do not fit, the pitfalls of what the config turns on. `brief`: the lead and the YAML
    only (a verdict before it already gave the warnings and the why)."""
    dist = plan.distributed or {}
    feats = features_of(dist)
    strategy = plan.strategy
    if lead and asked_size and isinstance(dist.get(asked_size), int) and plan.report.ok:
        # "ep 设多少": the number first, then why this layout
        w.answer(w.say("rec_size", name=asked_size, value=dist[asked_size], world=plan.report.world_size or plan.world_size,
                       mesh=w.mesh(plan.report)))
    if lead and not plan.feasible and _too_few_gpus(w, plan, query):
        # "32 张 H100 训练 DeepSeek-V3": the GPU count is the answer; a config that cannot fit is none
        return Part(strategy=strategy)
    if lead:
        w.answer(w.fact(lead_key(strategy, feats, plan.world_size, wanted(query)), section="leads", required=True))
        if "hsdp" in feats and "hsdp" in wanted(query) and plan.report.ok:
            # how HSDP splits the data-parallel ranks is what an HSDP question asks for
            w.answer(quantity_line(w, "dp_shard", plan.report, plan_recipe(plan)))
    named = query.params.strategy
    if named and named != strategy:
        w.para(w.say("strategy_named_rejected", strategy=named, chosen=strategy))
    notes = declined(plan, query, feats)
    if not declined_said:
        say_declined(w, notes)
    if plan.assumptions:
        w.para("_" + w.p.heading("assumptions", w.lang) + w.colon.strip() + "_ " +
               w.space.join((s.zh if w.lang == "zh" else s.en) for s in plan.assumptions))
    if rationale and plan.rationale:
        w.bullets([w.step(s) for s in plan.rationale[:_MAX_WHY]], heading="why")

    if not plan.feasible:
        reason = plan.infeasible_reason
        closest = plan.report.ok and bool(plan.yaml)
        why = ((reason.zh if w.lang == "zh" else reason.en) if reason else "").strip()
        if why and not why.endswith((".", "。", "!", "！")):
            why += "。" if w.lang == "zh" else "."
        w.para(w.say("no_valid_yaml_closest" if closest else "no_valid_yaml", reason=why).strip())
        if closest:
            w.para(w.say("closest"))
    shown_yaml, shown_report = show_plan_yaml(w, plan)
    if brief:
        return Part(shown_yaml, shown_report, strategy, plan_recipe(plan) if shown_yaml else None)

    if shown_yaml:
        # a config answer explains every key; a recommendation only the sizes it turned on
        keys = _flatten_fields(dist) if fields else [(k, v) for k, v in _flatten_fields(dist) if k in _SIZE_FIELDS]
        items = [w.fact(key, section="fields", value=yaml_value(value)) for key, value in keys if key in w.p.fields]
        if plan.world_size != 1 and "dp_size" not in dist:
            items.append(w.fact("dp_size", section="fields", required=True))
        if "ep" in feats and "moe" not in dist:
            items.append(w.fact("moe_block", required=True))
        if "pp" in feats and not isinstance(dist.get("pipeline"), dict):
            items.append(w.fact("pp_subconfig", required=True))
        w.bullets(items, heading="fields")

    sizing = [w.step(s) for s in plan.arithmetic]
    d = plan.report.derived if plan.report.ok else None
    if d is not None and d.world_size > 1 and not any("dp_size" in s.en for s in plan.arithmetic):
        if d.strategy == "fsdp2":
            sizing.append(w.computed(f"dp_size = {d.world_size} / ({d.tp_size} × {d.pp_size} × {d.cp_size}) = {d.dp_size}"))
        if "fields.dp_size" not in w.stated:
            sizing.append(w.fact("dp_inferred"))
    if "ep" in feats:
        sizing.append(w.fact("ep_divides", required=True))
    if any(k in (plan.yaml or "") for k in ("global_batch_size", "local_batch_size")):
        sizing.append(w.fact("batch_divisible"))
    w.bullets(sizing, heading="sizing")

    if not asked_size:  # "ep 设多少" asks for a number, not for what other strategies lack
        _unsupported(w, plan, query, feats, skip=notes)
        pitfalls(w, feats, shown_report)
    return Part(shown_yaml, shown_report, strategy, plan_recipe(plan) if shown_yaml else None)


def plan_recipe(plan: Plan) -> dict | None:
    from assistant.validator.coerce import load_yaml

    try:
        data = load_yaml(plan.yaml)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _flatten_fields(dist: dict) -> list[tuple[str, object]]:
    out = [(k, dist[k]) for k in _FIELD_ORDER if k in dist]
    for block in ("pipeline", "moe"):
        sub = dist.get(block)
        if block in dist:
            out.append((block, sub))
        if isinstance(sub, dict):
            out += [(f"{block}.{k}", v) for k, v in sub.items()]
    return out


def _unsupported(w: Writer, plan: Plan, query: Query, feats: Sequence[str], skip: Sequence[Step] = ()) -> None:
    """Only what bears on the question: the strategy the user named and the features the plan
    refused; not a tour of every strategy's gaps."""
    items: list[str | None] = []
    covered: set[str] = set()
    named = query.params.strategy
    asked = set(wanted(query))
    for other in ("megatron_fsdp", "ddp"):
        if other == plan.strategy:
            continue
        lacks = w.p.strategy_lacks.get(other, {})
        # the strategy the user named, for what the plan needs; any other, for what the user asked
        keys = list(dict.fromkeys(lacks[f] for f in feats if f in lacks and (other == named or f in asked)))
        items += [w.fact(key, required=True) for key in keys]
        if keys:
            covered.add(other)
    for s in plan.rejected:
        if s in skip or any(name in s.en + " " + s.zh for name in covered):
            continue
        items.append(w.step(s))
    w.bullets(items, heading="unsupported")


def pitfalls(w: Writer, feats: Sequence[str], report: ValidationReport | None, limit: int = _MAX_PITFALLS) -> None:
    keys: list[str] = []
    if report is not None:
        for finding in report.warnings:
            keys += w.p.rule_facts.get(finding.code, ())
    for f in feats:
        keys += w.p.pitfalls_by_feature.get(f, ())
    items = []
    for key in dict.fromkeys(keys):
        s = w.fact(key)
        if s:
            items.append(s)
        if len(items) >= limit:
            break
    w.bullets(items, heading="pitfalls")


_LAYOUT_KEYS = ("tp_size", "pp_size", "cp_size", "ep_size", "dp_replicate_size")


def _layout(dist: object) -> tuple | None:
    if not isinstance(dist, dict):
        return None
    return (dist.get("strategy"), *(dist.get(k) or 1 for k in _LAYOUT_KEYS))


def _layout_shown(w: Writer, plan: Plan) -> bool:
    """An earlier ask of this answer already showed a config with the plan's strategy and sizes (a
    verdict's nearest passing layout): the recommendation is that layout, said once."""
    import yaml

    mine = _layout(plan.distributed)
    for body in w.shown:
        try:
            data = yaml.safe_load(body)
        except yaml.YAMLError:
            continue
        if isinstance(data, dict) and mine is not None and _layout(data.get("distributed")) == mine:
            return True
    return False


def _judged_before(inp: ComposeInput, plan: Plan, ask) -> bool:
    """A verdict asked before this ask judged the user's own layout valid, and the plan is that layout
    ("is this valid? ... or should I just drop dp_replicate_size?"): the recommendation is the layout
    the verdict already judged, said once, not its config, fields and sizing a second time."""
    d = inp.diagnosis
    asks = list(inp.asks)
    before = asks[:asks.index(ask)] if ask in asks else []
    if d is None or d.report is None or not d.report.ok or not any(a.kind == "verdict" for a in before):
        return False
    mine = _layout(plan.distributed)
    return mine is not None and _layout((d.judged or {}).get("distributed")) == mine


def write(w: Writer, inp: ComposeInput, ask) -> Part:
    if inp.plan is None:
        return retrieved(w, inp)
    asked = getattr(ask, "target", None)
    plan = inp.plan
    if plan.feasible and plan.report.ok and (_layout_shown(w, plan) or _judged_before(inp, plan, ask)):
        # "不支持的话换啥" after the verdict showed the fix: the strategy in one sentence, not a second config
        w.answer(w.fact(lead_key(plan.strategy, features_of(plan.distributed or {}), plan.world_size, wanted(inp.query)),
                        section="leads", required=True))
        return Part(strategy=plan.strategy)
    asks = list(inp.asks)
    # "bad idea? what would you use instead?": the verdict before this ask already said what is wrong
    # and why; the replacement is its lead and its config (t9_realen: 3.6k chars where 1.5k do)
    after_verdict = ask in asks and any(a.kind == "verdict" for a in asks[:asks.index(ask)])
    return config_sections(w, inp.plan, inp.query, fields=False, rationale=inp.query.intent == "strategy" and not asked,
                           asked_size=asked if asked in SIZE_KEYS.values() else None, brief=after_verdict)


KIND = AnswerKind("recommendation", frozenset({"plan", "retrieval"}), write)
