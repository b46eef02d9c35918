"""The offline composer: a grounded answer built from the plan, the validator and the retrieved chunks.

Order, for every config-shaped answer: the strategy, the minimal YAML (the plan's, validated), the
fields that matter, the sizing with the user's numbers, what not to use and the pitfalls that apply,
then the sources. Every kb fact is one sentence from `phrases.yaml` and carries a citation `[n]` to a
chunk that supports it; a fact no chunk supports is left out unless the answer cannot do without it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import yaml

from assistant.compose.anchors import Anchor, anchor_of
from assistant.compose.citations import Citer, source_lines, with_citation
from assistant.compose.diagnose import Diagnosis
from assistant.compose.phrases import Phrases
from assistant.planner.plan import Plan, Step
from assistant.retrieve.hit import Hit
from assistant.understand.query import Query
from assistant.validator.report import Derived, Finding, ValidationReport

FENCE = "```"
_FEATURE_ORDER = ("tp", "pp", "cp", "ep", "sp", "hsdp", "ac", "packing", "mixed_precision", "grad_sync")
_FIELD_ORDER = ("strategy", "tp_size", "pp_size", "cp_size", "ep_size", "dp_replicate_size", "sequence_parallel",
                "activation_checkpointing", "defer_fsdp_grad_sync")
_MAX_PITFALLS = 4
_MAX_CODE_ANCHORS = 4
_MAX_CODE_FACTS = 3
_WORD = re.compile(r"(?<![A-Za-z0-9_])_?[A-Za-z][A-Za-z0-9_]{3,}(?![A-Za-z0-9_])")


def _identifiers(text: str) -> set[str]:
    """snake_case and CamelCase names in a question: `global_batch_size`, `_pp_plan`, `FSDP2Config`."""
    return {t.lower() for t in _WORD.findall(text)
            if "_" in t or (sum(c.isupper() for c in t) >= 2 and any(c.islower() for c in t))}
# The key that turns a feature on: a planner note naming it is about that feature.
_SIZE_KEYS = {"tp": "tp_size", "pp": "pp_size", "cp": "cp_size", "ep": "ep_size", "hsdp": "dp_replicate_size",
              "sp": "sequence_parallel"}


@dataclass(frozen=True)
class ComposeInput:
    query: Query
    plan: Plan | None
    gpus_per_node: int
    diagnosis: Diagnosis | None = None
    anchors: Sequence[Hit] = ()  # code-anchor hits, for code_location
    code_anchors: Mapping[str, Anchor] = field(default_factory=dict)  # kb/anchors.yaml by anchor id


@dataclass
class Composed:
    text: str
    yaml: str | None
    validation: ValidationReport | None
    strategy: str | None
    uncited: list[str] = field(default_factory=list)  # facts stated without a supporting chunk (should stay empty)


class _Writer:
    """Markdown with citations, in one language."""

    def __init__(self, lang: str, phrases: Phrases, citer: Citer):
        self.lang, self.p, self.citer = lang, phrases, citer
        self.lines: list[str] = []
        self.uncited: list[str] = []
        self.stated: set[str] = set()

    # --- sentences -------------------------------------------------------------------------
    def fact(self, key: str, *, required: bool = False, section: str = "facts", **values) -> str | None:
        """The fact as a cited sentence; None when already said, or when unsupported and optional."""
        if f"{section}.{key}" in self.stated:
            return None
        f = getattr(self.p, section)[key]
        text = f.text(self.lang, **values)
        n = self.citer.cite(f.docs, f.terms, f.text(self.lang) if not values else text)
        if n is None:
            if not required:
                return None
            self.uncited.append(f"{section}.{key}")
            return text
        self.stated.add(f"{section}.{key}")
        return with_citation(text, [n])

    def computed(self, sentence: str) -> str:
        """A line computed from the user's numbers: cited to the doc that explains the rule, if any."""
        n = self.citer.cite_by_terms(sentence, self.p.cite_map)
        return with_citation(sentence, [n]) if n else sentence

    def mesh(self, report: ValidationReport) -> str:
        return mesh_text(report, no_mesh=self.say("mesh_none"))

    def step(self, s: Step) -> str:
        return self.computed(s.zh if self.lang == "zh" else s.en)

    def say(self, key: str, **values) -> str:
        return self.p.say(key, self.lang, **values)

    @property
    def colon(self) -> str:
        return "：" if self.lang == "zh" else ": "

    def lead(self, sentence: str | None) -> None:
        if sentence:
            self.lines += [f"**{self.p.heading('recommendation', self.lang)}**{self.colon}{sentence}", ""]

    # --- blocks ------------------------------------------------------------------------------
    def para(self, text: str | None) -> None:
        if text:
            self.lines += [text, ""]

    def heading(self, key: str, suffix: str = "") -> None:
        self.lines += [f"**{self.p.heading(key, self.lang)}**{suffix}", ""]

    def bullets(self, items: Sequence[str | None], heading: str | None = None) -> None:
        items = [i for i in items if i]
        if not items:
            return
        if heading:
            self.heading(heading)
        self.lines += [f"- {i}" for i in items] + [""]

    def code(self, text: str, lang: str = "yaml") -> None:
        self.lines += [f"{FENCE}{lang}", text.rstrip("\n"), FENCE, ""]

    def sources(self) -> None:
        if not self.citer.sources:
            return
        self.heading("sources")
        self.lines += source_lines(self.citer.sources) + [""]

    def render(self) -> str:
        return "\n".join(self.lines).strip() + "\n"


# --- helpers ---------------------------------------------------------------------------------
def _size(dist: dict, key: str) -> int:
    v = dist.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 1


def features_of(dist: dict) -> list[str]:
    """Features a `distributed:` mapping turns on, in a stable order."""
    on = set()
    if _size(dist, "tp_size") > 1:
        on.add("tp")
    if _size(dist, "pp_size") > 1:
        on.add("pp")
    if _size(dist, "cp_size") > 1:
        on.add("cp")
    if _size(dist, "ep_size") > 1:
        on.add("ep")
    if _size(dist, "dp_replicate_size") > 1:
        on.add("hsdp")
    if dist.get("sequence_parallel") is True:
        on.add("sp")
    ac = dist.get("activation_checkpointing")
    if ac not in (None, False, "false", "none", "off", "no", "disabled"):
        on.add("ac")
    return [f for f in _FEATURE_ORDER if f in on]


def mesh_text(report: ValidationReport, no_mesh: str = "()") -> str:
    """`(pp=2, dp_replicate=1, ...)`; `no_mesh` when the strategy builds none (ddp)."""
    d = report.derived
    if d is None:
        return "?"
    if not d.mesh_shape:
        return no_mesh
    mesh = "(" + ", ".join(f"{n}={s}" for n, s in zip(d.mesh_dim_names, d.mesh_shape)) + ")"
    if d.moe_mesh_shape:
        mesh += f", moe_mesh (ep_shard={d.moe_mesh_shape[0]}, ep={d.moe_mesh_shape[1]})"
    return mesh


_LEADS = (("pp", "fsdp2_pp"), ("ep", "fsdp2_ep"), ("hsdp", "fsdp2_hsdp"), ("cp", "fsdp2_cp"), ("tp", "fsdp2_tp"))


def _lead_key(strategy: str, feats: Sequence[str], world: int | None, wanted: Sequence[str] = ()) -> str:
    """The lead sentence: about the feature the user asked for when the config has it, else the
    feature that most constrains the strategy."""
    if strategy == "ddp":
        return "ddp"
    if strategy in ("megatron_fsdp", "megatron-fsdp", "mfsdp"):
        return "megatron_fsdp"
    for want in (True, False):
        for feat, key in _LEADS:
            if feat in feats and (not want or feat in wanted):
                return key
    return "fsdp2_single" if world == 1 else "fsdp2_dp"


def _finding(w: _Writer, f: Finding) -> str:
    msg = f.message_zh if w.lang == "zh" else f.message
    return w.say("rule_item", code=f.code, path=f.path, message=msg.rstrip())


def _flatten_fields(dist: dict) -> list[tuple[str, object]]:
    out = [(k, dist[k]) for k in _FIELD_ORDER if k in dist]
    for block in ("pipeline", "moe"):
        sub = dist.get(block)
        if block in dist:
            out.append((block, sub))
        if isinstance(sub, dict):
            out += [(f"{block}.{k}", v) for k, v in sub.items()]
    return out


def _yaml_value(v: object) -> str:
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    return str(v)


# --- sections --------------------------------------------------------------------------------
def _config_sections(w: _Writer, plan: Plan, query: Query, *, fields: bool, rationale: bool,
                     declined_said: bool = False) -> tuple[str | None, ValidationReport | None]:
    """Recommendation, YAML, fields, sizing, what not to use, pitfalls. Returns the YAML shown."""
    dist = plan.distributed or {}
    feats = features_of(dist)
    strategy = plan.strategy

    w.lead(w.fact(_lead_key(strategy, feats, plan.world_size, _wanted(query)), section="leads", required=True))
    named = query.params.strategy
    if named and named != strategy:
        w.para(w.say("strategy_named_rejected", strategy=named, chosen=strategy))
    declined = _declined(plan, query, feats)
    if not declined_said:
        _say_declined(w, declined)
    if plan.assumptions:
        w.para("_" + w.p.heading("assumptions", w.lang) + w.colon.strip() + "_ " +
               ("" if w.lang == "zh" else " ").join((s.zh if w.lang == "zh" else s.en) for s in plan.assumptions))
    if rationale and plan.rationale:
        w.bullets([w.step(s) for s in plan.rationale], heading="why")

    shown_yaml, shown_report = None, None
    if not plan.feasible:
        reason = plan.infeasible_reason
        closest = plan.report.ok and bool(plan.yaml)
        why = ((reason.zh if w.lang == "zh" else reason.en) if reason else "").strip()
        if why and not why.endswith((".", "。", "!", "！")):
            why += "。" if w.lang == "zh" else "."
        w.para(w.say("no_valid_yaml_closest" if closest else "no_valid_yaml", reason=why).strip())
        if closest:
            w.para(w.say("closest"))
    if plan.report.ok and plan.yaml:
        r = plan.report
        world = r.world_size or plan.world_size
        gpn = r.gpus_per_node or plan.gpus_per_node
        verdict_key = "verdict_ok_warn" if r.warnings else "verdict_ok"
        w.heading("yaml", " — " + w.say(verdict_key, world=world, gpn=gpn, mesh=w.mesh(r), n=len(r.warnings)))
        w.code(plan.yaml)
        shown_yaml, shown_report = plan.yaml, r
        if r.warnings:
            w.bullets([_finding(w, f) for f in r.warnings], heading="warnings")

    if fields and shown_yaml:
        items = []
        for key, value in _flatten_fields(dist):
            if key in w.p.fields:
                items.append(w.fact(key, section="fields", value=_yaml_value(value)))
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

    _unsupported(w, plan, feats, skip=declined)
    _pitfalls(w, feats, shown_report)
    return shown_yaml, shown_report


def _say_declined(w: _Writer, declined: Sequence[Step]) -> None:
    said = [w.step(s) for s in declined]
    if any(_SIZE_KEYS["ep"] in s.en and "MoEFSDPSyncMixin" not in s.en for s in declined):
        said.append(w.fact("ep_needs_moe_class"))  # the rule behind a refusal that does not name it
    w.para(("" if w.lang == "zh" else " ").join(x for x in said if x))


def _declined(plan: Plan, query: Query, feats: Sequence[str]) -> list[Step]:
    """The planner's notes on features the user asked for that the plan leaves out: they answer the
    question, so they come right after the recommendation instead of under "what not to use"."""
    missing = [f for f in _wanted(query) if f not in feats and f in _SIZE_KEYS]
    return [s for s in plan.rejected if any(_SIZE_KEYS[f] in s.en for f in missing)]


def _unsupported(w: _Writer, plan: Plan, feats: Sequence[str], skip: Sequence[Step] = ()) -> None:
    items: list[str | None] = []
    covered: set[str] = set()
    for other in ("megatron_fsdp", "ddp"):
        if other == plan.strategy:
            continue
        lacks = w.p.strategy_lacks.get(other, {})
        keys = list(dict.fromkeys(lacks[f] for f in feats if f in lacks))
        for key in keys:
            items.append(w.fact(key, required=True))
        if keys:
            covered.add(other)
    for s in plan.rejected:
        if s in skip:
            continue
        text = s.en + " " + s.zh
        if any(name in text for name in covered):
            continue  # already said, with a citation, in our own words above
        items.append(w.step(s))
    w.bullets(items, heading="unsupported")


def _pitfalls(w: _Writer, feats: Sequence[str], report: ValidationReport | None) -> None:
    keys: list[str] = []
    for f in feats:
        keys += w.p.pitfalls_by_feature.get(f, ())
    if report is not None:
        for finding in report.warnings:
            keys += w.p.rule_facts.get(finding.code, ())
    items = []
    for key in dict.fromkeys(keys):
        s = w.fact(key)
        if s:
            items.append(s)
        if len(items) >= _MAX_PITFALLS:
            break
    w.bullets(items, heading="pitfalls")


def _wanted(query: Query) -> list[str]:
    want = set(query.params.wanted) | {t for t in query.topics if t in _FEATURE_ORDER}
    return [f for f in _FEATURE_ORDER if f in want]


# --- intents ---------------------------------------------------------------------------------
def _compose_plan_answer(w: _Writer, inp: ComposeInput, *, fields: bool, rationale: bool) -> Composed:
    plan = inp.plan
    if plan is None:
        return _compose_retrieved(w, inp)
    shown, report = _config_sections(w, plan, inp.query, fields=fields, rationale=rationale)
    w.sources()
    return Composed(w.render(), shown, report, plan.strategy, w.uncited)


def _compose_diagnose(w: _Writer, inp: ComposeInput) -> Composed:
    d = inp.diagnosis
    assert d is not None
    if d.assumed:
        why = w.say("world_assumed_node" if d.assumed == "node" else "world_assumed_mesh")
        w.para(w.say("world_assumed", world=d.world_size, why=why))
    if d.report is None:
        w.para(w.say("diag_unusable", message=(d.error_zh if w.lang == "zh" else d.error_en) or ""))
        if inp.plan is not None and inp.plan.report.ok:
            shown, report = _config_sections(w, inp.plan, inp.query, fields=False, rationale=False)
            w.sources()
            return Composed(w.render(), shown, report, inp.plan.strategy, w.uncited)
        w.sources()
        return Composed(w.render(), None, None, None, w.uncited)

    r = d.report
    # the strategy this answer recommends: the fix's when one is shown, else the user's own
    strategy = r.derived.strategy if r.derived else None
    if r.ok:
        w.heading("diagnosis")
        w.para(w.say("diag_ok", world=d.world_size, gpn=d.gpus_per_node, mesh=w.mesh(r)))
        if r.warnings:  # what still deserves a change comes before the arithmetic
            w.bullets([_finding(w, f) for f in r.warnings], heading="warnings")
        if r.derived is not None:
            w.bullets(_mesh_arithmetic(w, r.derived), heading="sizing")
    else:
        w.heading("diagnosis")
        w.para(w.say("diag_fail", n=len(r.errors), world=d.world_size, gpn=d.gpus_per_node))
        w.bullets([_finding(w, f) for f in r.errors])
        if r.warnings:
            w.bullets([_finding(w, f) for f in r.warnings], heading="warnings")
    # why each failing rule exists, in kb terms
    keys: list[str] = []
    for f in (*r.errors, *r.warnings):
        keys += w.p.rule_facts.get(f.code, ())
    w.bullets([w.fact(k, required=True) for k in dict.fromkeys(keys)], heading="why")

    if not r.ok:
        w.heading("fix")
        if d.fix_yaml and d.fix_report is not None and d.fix_report.ok:
            w.para(w.say("diag_fix_intro", world=d.world_size, mesh=w.mesh(d.fix_report)))
            w.code(d.fix_yaml)
            strategy = d.fix_report.derived.strategy if d.fix_report.derived else strategy
        elif inp.plan is not None and inp.plan.report.ok and inp.plan.yaml:
            w.para(w.say("diag_fix_intro", world=inp.plan.report.world_size or d.world_size, mesh=w.mesh(inp.plan.report)))
            w.code(inp.plan.yaml)
            strategy = inp.plan.strategy
        else:
            w.para(w.say("diag_no_fix"))
    w.sources()
    # The YAML under diagnosis is the one this answer is about: its report is the verdict shown.
    return Composed(w.render(), d.yaml_text, r, strategy, w.uncited)


def _mesh_arithmetic(w: _Writer, d: Derived) -> list[str | None]:
    """The sizes a passing config resolves to, as arithmetic on the user's numbers."""
    so = "，所以" if w.lang == "zh" else ", so"
    out: list[str | None] = []
    if d.strategy in ("fsdp2", "megatron_fsdp") and d.world_size > 1:
        if d.strategy == "fsdp2":
            out.append(w.computed(f"dp_size = world_size / (tp_size * pp_size * cp_size) = {d.world_size} / "
                                  f"({d.tp_size}*{d.pp_size}*{d.cp_size}) = {d.dp_size}"))
        else:
            out.append(w.computed(f"dp_size = world_size / (tp_size * cp_size) = {d.world_size} / "
                                  f"({d.tp_size}*{d.cp_size}) = {d.dp_size}"))
    if d.ep_size > 1:
        prod = d.dp_size * d.cp_size * d.tp_size
        shard = f"{so} ep_shard = {prod} / {d.ep_size} = {d.ep_shard_size}" if d.ep_shard_size else ""
        out.append(w.computed(f"dp_size * cp_size * tp_size = {d.dp_size}*{d.cp_size}*{d.tp_size} = {prod}; "
                              f"{prod} % ep_size = {prod} % {d.ep_size} = {prod % d.ep_size}{shard}"))
        out.append(w.fact("ep_divides", required=True))
    if d.grad_acc_steps:
        out.append(w.say("grad_acc", value=d.grad_acc_steps))
    return out


def _limitation_strategies(query: Query) -> list[str]:
    named = query.params.strategy
    if named in ("megatron_fsdp", "ddp"):
        return [named]
    if named == "fsdp2":
        return ["fsdp2"]
    return ["megatron_fsdp", "ddp"]


def _limitation_features(query: Query) -> list[str]:
    """The features asked about; "selective AC" is its own feature here, since strategies differ on it."""
    wanted = _wanted(query)
    if "ac_selective" in query.topics:
        wanted = [f for f in wanted if f != "ac"] + ["ac_selective"]
    return wanted


def _compose_limitations(w: _Writer, inp: ComposeInput) -> Composed:
    query, plan = inp.query, inp.plan
    wanted = _limitation_features(query)
    strategies = _limitation_strategies(query)
    all_missing: list[str] = []
    for strategy in strategies:
        lacks = w.p.strategy_lacks.get(strategy, {})
        missing = [f for f in wanted if f in lacks]
        all_missing += missing
        names = lambda fs: ("、" if w.lang == "zh" else ", ").join(w.p.feature(f, w.lang) for f in fs)
        if missing:
            w.para("**" + w.say("limits_no", strategy=strategy, features=names(missing)) + "**")
        elif wanted and strategy != "fsdp2":
            w.para("**" + w.say("limits_yes", strategy=strategy, features=names(wanted)) + "**")
            # what the supported feature is and asks of the config, in one line each
            w.bullets([w.fact(w.p.topic_facts[f][0]) for f in wanted if w.p.topic_facts.get(f)])
        elif strategy != "fsdp2":
            w.para(w.say("limits_list", strategy=strategy))
        keys = list(w.p.limitations.get(strategy, ()))
        if missing:  # the asked-about gaps first, then the rest of the picture
            first = [lacks[f] for f in missing]
            keys = list(dict.fromkeys(first + keys))
        w.bullets([w.fact(k, required=k in (lacks.get(f) for f in missing) or k in ("ddp_simple",)) for k in keys],
                  heading="limits" if strategy != "fsdp2" else None)

    shown = report = None
    named_ok = (len(strategies) == 1 and plan is not None and plan.strategy == strategies[0] and plan.report.ok
                and bool(plan.yaml) and not any(f in w.p.strategy_lacks.get(strategies[0], {}) for f in wanted))
    if named_ok:
        r = plan.report
        w.heading("yaml", " — " + w.say("verdict_ok_warn" if r.warnings else "verdict_ok", world=r.world_size or plan.world_size,
                                         gpn=r.gpus_per_node or plan.gpus_per_node, mesh=w.mesh(r), n=len(r.warnings)))
        w.code(plan.yaml)
        shown, report = plan.yaml, r
        if r.warnings:
            w.bullets([_finding(w, f) for f in r.warnings], heading="warnings")
    elif strategies != ["fsdp2"]:
        w.heading("instead")
        instead = next((w.p.instead_facts[f] for f in all_missing if f in w.p.instead_facts),
                       w.p.instead_facts.get("default", "fsdp2_for_all"))
        w.para(w.fact(instead, required=True))
        if plan is not None and plan.report.ok and plan.yaml and plan.strategy == "fsdp2":
            r = plan.report
            w.para(w.say("verdict_ok_warn" if r.warnings else "verdict_ok", world=r.world_size or plan.world_size,
                         gpn=r.gpus_per_node or plan.gpus_per_node, mesh=w.mesh(r), n=len(r.warnings)))
            w.code(plan.yaml)
            shown, report = plan.yaml, r
        ddp_lacks = w.p.strategy_lacks.get("ddp", {})
        if "ddp" not in strategies and (not wanted or any(f in ddp_lacks for f in wanted)):
            w.para(w.say("not_ddp_either") + ("" if w.lang == "zh" else " ") + (w.fact("ddp_simple", required=True) or ""))
    w.sources()
    return Composed(w.render(), shown, report, plan.strategy if plan else "fsdp2", w.uncited)


def _asked_first(w: _Writer, keys: Sequence[str], question: str) -> list[str]:
    """Facts about an identifier the question names ("must local_batch_size be 1?") answer it: they
    go first, the rest keep their order."""
    q = question.lower()

    def named(key: str) -> bool:
        return any("_" in t and t.lower() in q for t in w.p.facts[key].terms)

    return [k for k in keys if named(k)] + [k for k in keys if not named(k)]


def _plan_is_relevant(plan: Plan | None, query: Query, feats: Sequence[str]) -> bool:
    if plan is None:
        return False
    p = query.params
    if p.world_size or p.nodes or p.model or p.model_size_b:
        return True  # the user gave numbers: they want them used
    return not feats or bool(set(feats) & set(features_of(plan.distributed or {})))


def _compose_howto(w: _Writer, inp: ComposeInput) -> Composed:
    query, plan = inp.query, inp.plan
    feats = _wanted(query)
    topic_keys = [t for t in query.topics if t in w.p.topic_facts and t not in feats]
    first = [t for t in topic_keys if t in w.p.lead_topics]
    groups = first + feats + [t for t in topic_keys if t not in first]
    if not groups:
        return _compose_retrieved(w, inp) if plan is None else _compose_plan_answer(w, inp, fields=False, rationale=False)
    relevant = _plan_is_relevant(plan, query, feats)
    declined = _declined(plan, query, features_of(plan.distributed or {})) if relevant else []
    if declined:
        _say_declined(w, declined)  # "how do I use EP for Mixtral?": that it cannot comes first
    names = ("、" if w.lang == "zh" else ", ").join(w.p.feature(f, w.lang) for f in groups)
    w.para(w.say("howto_intro", features=names))
    keys = list(dict.fromkeys(key for g in groups for key in w.p.topic_facts.get(g, ())))
    w.bullets([w.fact(key) for key in _asked_first(w, keys, query.text)])
    shown = report = None
    if relevant:
        shown, report = _config_sections(w, plan, query, fields=False, rationale=False, declined_said=bool(declined))
    w.sources()
    return Composed(w.render(), shown, report, plan.strategy if shown and plan else None, w.uncited)


def _chunk_anchor_fields(h: Hit, lang: str) -> tuple[str, list[str], str]:
    """(path, symbols, first sentence) of a code chunk, or of an anchor chunk missing from the table."""
    data = None
    if h.kind == "anchor" and len(h.text) < 16_000:
        try:
            data = yaml.safe_load(h.text)
        except yaml.YAMLError:
            data = None
    if isinstance(data, dict) and isinstance(data.get("summary"), str):
        summary = data.get("summary_zh") if lang == "zh" and isinstance(data.get("summary_zh"), str) else data["summary"]
        return str(data.get("path") or h.path), [str(s) for s in data.get("symbols") or []], _first_sentence(summary)
    # a chunk's text is not a record: name only what it shows in backticks, say nothing it does not state
    symbols = re.findall(r"`([A-Za-z_][\w.]*(?:\(\))?)`", h.text)[:4] if h.kind == "code" else []
    return h.path, symbols, _first_sentence(h.text) if h.kind == "code" else ""


@dataclass(frozen=True)
class _CodeEntry:
    hit: Hit
    path: str
    symbols: tuple[str, ...]
    what: str
    anchor: Anchor | None = None


def _code_entries(inp: ComposeInput, lang: str) -> list[_CodeEntry]:
    """One entry per anchor (a long anchor comes back as several chunks), in retrieval order."""
    out: list[_CodeEntry] = []
    seen: set[str] = set()
    for h in inp.anchors:
        if h.kind not in ("anchor", "code"):
            continue
        a = anchor_of(h, inp.code_anchors)
        key = a.id if a else h.doc_id
        if key in seen:
            continue
        seen.add(key)
        if a is not None:
            out.append(_CodeEntry(h, a.path, a.symbols, a.what(lang), a))
        else:
            path, symbols, what = _chunk_anchor_fields(h, lang)
            if symbols or what:
                out.append(_CodeEntry(h, path, tuple(symbols), what))
    # An anchor that names an identifier from the question ("global_batch_size", "MeshContext") is
    # the answer, whatever its rank; anchors about the question's topics come next, and when there
    # are a few of those the others are noise.
    named = _identifiers(inp.query.text)
    topics = set(inp.query.topics)

    def names(e: _CodeEntry) -> int:
        text = (e.anchor.text if e.anchor is not None else " ".join((e.path, *e.symbols, e.what))).lower()
        return sum(n in text for n in named)

    def on_topic(e: _CodeEntry) -> bool:
        return names(e) > 0 or (e.anchor is not None and bool(topics & set(e.anchor.topics)))

    out = sorted(out, key=lambda e: -names(e))  # stable: retrieval order otherwise
    relevant = [e for e in out if on_topic(e)]
    if len(relevant) >= 2:
        out = relevant
    return out[:_MAX_CODE_ANCHORS]


def _code_lines(w: _Writer, entries: Sequence[_CodeEntry]) -> list[str]:
    """A file per bullet; when one file holds several of the anchors, its symbols are nested under it."""
    by_path: dict[str, list[_CodeEntry]] = {}
    for e in entries:
        by_path.setdefault(e.path, []).append(e)
    lines: list[str] = []
    for path, group in by_path.items():
        items = []
        for e in group:
            n = w.citer.add(e.hit) + 1
            w.citer.cited.add(n)
            syms = ", ".join(f"`{s}`" for s in dict.fromkeys(e.symbols[:4]))
            what = e.what or ""
            if len(group) == 1:
                text = w.say("code_item", path=path, symbols=(" — " + syms) if syms else "", what=what)
            else:
                text = w.say("code_symbol_item", symbols=syms or f"`{path}`", what=what)
            items.append(with_citation(text.rstrip(": ：") if not what else text, [n]))
        if len(group) == 1:
            lines.append(f"- {items[0]}")
        else:
            lines.append(f"- `{path}`")
            lines += [f"  - {i}" for i in items]
    return lines


def _first_sentence(text: str, limit: int = 220) -> str:
    body = " ".join(line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith(("#", "---")))
    m = re.search(r"^(.+?[.。])(\s|$)", body)
    s = (m.group(1) if m else body)[:limit]
    return s.rstrip(".。") if s else ""


def _compose_code_location(w: _Writer, inp: ComposeInput) -> Composed:
    entries = _code_entries(inp, w.lang)
    if entries:
        w.heading("code")
        w.lines += _code_lines(w, entries) + [""]
    else:
        w.para(w.say("code_none"))
    topics = inp.query.topics
    defaults = [k for t in topics for k in w.p.code_topic_facts.get(t, ())]
    pool = set(defaults) | {k for t in topics for section in (w.p.topic_facts, w.p.limitations) for k in section.get(t, ())}
    q = inp.query.text.lower()
    cued = [k for k, cues in w.p.code_cues.items() if k in pool and any(c in q for c in cues)]
    facts = [f for f in (w.fact(k) for k in dict.fromkeys(cued + defaults)) if f][:_MAX_CODE_FACTS]
    w.bullets(facts, heading="background")
    w.sources()
    return Composed(w.render(), None, None, None, w.uncited)


def _python_snippet(plan: Plan, *, mixed_precision: bool, world_comment: str) -> str:
    """The plan's config as the Python API builds it, starting with the process group."""
    dist = plan.distributed or {}
    cls = {"fsdp2": "FSDP2Config", "megatron_fsdp": "MegatronFSDPConfig", "ddp": "DDPConfig"}.get(plan.strategy, "FSDP2Config")
    flags = []
    if plan.strategy == "fsdp2" and dist.get("sequence_parallel") is True:
        flags.append("sequence_parallel=True")
    mp = mixed_precision and plan.strategy == "fsdp2"
    if mp:
        # the defaults, written out: the user edits the dtypes they want to change
        flags.append("mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32, "
                     "output_dtype=torch.bfloat16)")
    sizes = [f"{k}={dist[k]}" for k in ("tp_size", "pp_size", "cp_size", "ep_size", "dp_replicate_size")
             if isinstance(dist.get(k), int) and dist[k] > 1]
    lines = ["import torch", "from torch.distributed.fsdp import MixedPrecisionPolicy"] if mp else []
    lines += [
        "from nemo_automodel.components.distributed import (",
        f"    DistributedSetup, {cls}, ParallelismSizes, initialize_distributed,",
        ")",
        "",
        'dist_env = initialize_distributed("nccl")',
        "setup = DistributedSetup.build(",
    ]
    if len(flags) == 1 and len(flags[0]) > 60:
        lines += [f"    strategy={cls}(", f"        {flags[0]},", "    ),"]
    else:
        lines.append(f"    strategy={cls}({', '.join(flags)}),")
    lines.append(f"    parallelism_sizes=ParallelismSizes({', '.join(sizes)}),")
    if isinstance(dist.get("pipeline"), dict) and _size(dist, "pp_size") > 1:
        lines.append(f"    pipeline_config={dict(dist['pipeline'])!r},")
    if isinstance(dist.get("moe"), dict) and _size(dist, "ep_size") > 1:
        lines.append(f"    moe_parallel_config={dict(dist['moe'])!r},")
    ac = dist.get("activation_checkpointing")
    if ac not in (None, False):
        lines.append(f"    activation_checkpointing={ac!r},")
    lines.append("    world_size=dist_env.world_size," + (f"  # {world_comment}" if world_comment else ""))
    lines.append(")")
    return "\n".join(lines)


def _compose_python_api(w: _Writer, inp: ComposeInput) -> Composed:
    query, plan = inp.query, inp.plan
    topics = list(dict.fromkeys([*query.topics, *_wanted(query)]))
    asked = [k for t in topics for k in w.p.api_topic_facts.get(t, ())]
    general = ["api_build", "api_configs", "api_from_pretrained"]
    if "api_sizes_strategy" in asked:
        general.remove("api_configs")  # the asked-for fact already says where each setting goes
    keys = list(dict.fromkeys(asked + general))
    w.bullets([w.fact(k, required=k in asked or k in ("api_build", "api_configs")) for k in keys])
    shown = report = None
    if plan is not None and plan.report.ok and plan.yaml:
        w.heading("api")
        world = plan.report.world_size or plan.world_size
        w.code(_python_snippet(plan, mixed_precision="mixed_precision" in topics,
                               world_comment=w.say("api_world_comment", world=world) if world else ""), lang="python")
        r = plan.report
        w.heading("yaml", " — " + w.say("verdict_ok_warn" if r.warnings else "verdict_ok", world=r.world_size or plan.world_size,
                                         gpn=r.gpus_per_node or plan.gpus_per_node, mesh=w.mesh(r), n=len(r.warnings)))
        w.code(plan.yaml)
        shown, report = plan.yaml, r
    w.sources()
    return Composed(w.render(), shown, report, plan.strategy if plan else None, w.uncited)


def scope_topic(question: str, phrases: Phrases) -> str | None:
    q = question.lower()
    if "activation checkpoint" in q or "激活检查点" in q:
        q = q.replace("activation checkpoint", "").replace("激活检查点", "")
    for topic, needles in phrases.scope_match.items():
        if any(n in q for n in needles):
            return topic
    return None


def _compose_out_of_scope(w: _Writer, inp: ComposeInput) -> Composed:
    topic = scope_topic(inp.query.text, w.p)
    label = w.p.text["scope_topics"][topic][w.lang] if topic else w.say("out_of_scope_generic")
    sentence = w.say("out_of_scope", topic=label)
    n = w.citer.cite(("scope",), (), sentence)
    # A short answer lists only the chunk it stands on, not every retrieved one.
    w.citer.sources = [w.citer.sources[n - 1]] if n else []
    w.para(with_citation(sentence, [1]) if n else sentence)
    w.sources()
    return Composed(w.render(), None, None, None, w.uncited)


def _compose_nonsense(w: _Writer, inp: ComposeInput) -> Composed:
    w.citer.sources = []
    w.para(w.say("nonsense"))
    return Composed(w.render(), None, None, None, [])


def _compose_retrieved(w: _Writer, inp: ComposeInput) -> Composed:
    """No plan and no known topic: the first sentence of the best chunks, each cited."""
    items = []
    for i, h in enumerate(w.citer.sources[:3], 1):
        s = _first_sentence(h.text)
        if s:
            w.citer.cited.add(i)
            items.append(with_citation(s, [i]))
    w.bullets(items)
    w.sources()
    return Composed(w.render(), None, None, None, w.uncited)


def compose(inp: ComposeInput, citer: Citer, phrases: Phrases) -> Composed:
    """The offline answer for any intent."""
    w = _Writer(inp.query.lang, phrases, citer)
    if inp.query.injection:
        w.para("_" + w.say("injection") + "_")
    intent = inp.query.intent
    if inp.diagnosis is not None:
        return _compose_diagnose(w, inp)
    if intent == "nonsense":
        return _compose_nonsense(w, inp)
    if intent == "out_of_scope":
        return _compose_out_of_scope(w, inp)
    if intent == "limitations":
        return _compose_limitations(w, inp)
    if intent == "howto":
        return _compose_howto(w, inp)
    if intent == "code_location":
        return _compose_code_location(w, inp)
    if intent == "python_api":
        return _compose_python_api(w, inp)
    if intent == "sizing":
        return _compose_plan_answer(w, inp, fields=False, rationale=True)
    return _compose_plan_answer(w, inp, fields=True, rationale=intent == "strategy")
