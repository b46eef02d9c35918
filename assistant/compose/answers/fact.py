"""Fact: what a field, feature or strategy does, needs or lacks, answered by the fact itself.

Order of sources: a strategy's limits (the verdict "No: `megatron_fsdp` cannot do PP" first), the
feature facts the question names, else the kb sentences the retriever found. A fact answer shows a
config only when the user gave numbers to size one for.
"""
from __future__ import annotations

import re
from typing import Sequence

from assistant.compose.answers.base import AnswerKind, ComposeInput, Part
from assistant.compose.answers.from_kb import retrieved
from assistant.compose.answers.quantity_lines import quantity_line
from assistant.compose.answers.recommendation import (
    config_sections, declined, say_declined, show_plan_yaml, wanted,
)
from assistant.compose.citations import with_citation
from assistant.compose.knowledge.extract import select_sentences
from assistant.compose.knowledge.field_facts import asked_kinds, field_facts, inert_lines, judges_value
from assistant.compose.writer import FEATURE_ORDER, Writer, features_of
from assistant.planner.plan import Plan
from assistant.understand.cues import read, read_unclaimed, read_with
from assistant.understand.query import Query
from assistant.understand.stated import recipe_of
from assistant.validator.fields import field_table

_MAX_TOPIC_FACTS = 2
_PRODUCT_NAMES = frozenset({"nemo", "automodel", "nemo_automodel", "megatron", "pytorch", "deepspeed"})
_FEATURE_KEYS = frozenset({"tp_size", "pp_size", "cp_size", "ep_size", "dp_replicate_size", "sequence_parallel",
                           "activation_checkpointing", "pipeline", "moe"})
_MAX_HOWTO_FACTS = 4
_ABOUT_A_NAME = frozenset({"same", "options", "case"})  # asks about a strategy name itself


def _facts(w: Writer, inp: ComposeInput, keys: Sequence[str], limit: int | None = None) -> list[str]:
    """The facts as cited sentences, each followed by its rule on the user's stated sizes; at most
    `limit`, and only those are marked as said (a later ask of the question may need the rest)."""
    out = []
    for key in keys:
        if limit is not None and len(out) >= limit:
            break
        f = w.fact(key)
        if f:
            out.append(_worked(w, inp, key, f))
    return out


def _worked(w: Writer, inp: ComposeInput, key: str, said: str) -> str:
    """The fact followed by its rule on the user's stated sizes and sequence length, when it has one."""
    sizes = dict(inp.query.situation.stated.sizes)
    if inp.query.situation.seq_len:
        sizes["seq_len"] = inp.query.situation.seq_len
    worked = w.p.worked_out(key, w.lang, sizes)
    return said + (w.space + worked if worked else "")


def _named_topic_facts(w: Writer, inp: ComposeInput, ask) -> list[str]:
    """Feature facts about an identifier the question names, when it asks none of the field
    reference's kinds ("with packing, must local_batch_size be 1?" is the packing fact, not the
    meaning of local_batch_size)."""
    if asked_kinds(read(ask, inp.query).field_question):
        return []
    q = read(inp.query)
    keys = [k for t in inp.query.topics for k in w.p.topic_facts.get(t, ())]
    return [k for k in keys if any("_" in t and q.says_any_case(t) for t in w.p.facts[k].terms)]


def _cued(w: Writer, said) -> list[str]:
    """Facts the words of a reading single out ("pad" -> the packing-with-CP padding rule)."""
    return w.p.cued(said)


def _asked_first(w: Writer, keys: Sequence[str], said) -> list[str]:
    """Facts the reading's words cue, then facts about an identifier it names ("must
    local_batch_size be 1?"): they answer it and go first; the rest keep their order."""
    cued = set(_cued(w, said))

    def named(key: str) -> bool:
        # "(dp_size × cp_size) % ep_size" names the EP rule, not dp_size (says_any_case masks formulas)
        return any("_" in t and said.says_any_case(t) for t in w.p.facts[key].terms)

    return [k for k in keys if k in cued] + [k for k in keys if k not in cued and named(k)] + \
        [k for k in keys if k not in cued and not named(k)]


def _plan_is_relevant(plan: Plan | None, query: Query, feats: Sequence[str]) -> bool:
    if plan is None:
        return False
    p = query.params
    # the user gave a cluster or a model: they want the facts applied to it; a question about a
    # feature alone gets the facts, not a config it did not ask for
    return bool(p.world_size or p.nodes or p.model or p.model_size_b)


def howto(w: Writer, inp: ComposeInput, *, with_config: bool = True, lead: bool = True,
          asked=None) -> Part | None:
    """The facts of the features and subjects the question names; None when it names none. With the
    user's cluster or model (and `with_config`), the plan sized for it follows."""
    query, plan = inp.query, inp.plan
    feats = wanted(query)
    topic_keys = [t for t in query.topics if t in w.p.topic_facts and t not in feats]
    first = [t for t in topic_keys if t in w.p.lead_topics]
    groups = first + feats + [t for t in topic_keys if t not in first]
    if not groups:
        return None
    relevant = with_config and _plan_is_relevant(plan, query, feats)
    notes = declined(plan, query, features_of(plan.distributed or {})) if relevant else []
    if notes:
        say_declined(w, notes)  # "how do I use EP for Mixtral?": that it cannot comes first
    # a fact two of the named features share (packing with CP: the padding rule) is about the
    # question; then the features' facts in turn, the first of each, then the second of each
    per_group = [w.p.topic_facts.get(g, ()) for g in groups]
    keys = list(dict.fromkeys(k for ks in per_group for k in ks))
    shared = {k: sum(k in ks for ks in per_group) for k in keys}
    rank = {k: min(ks.index(k) for ks in per_group if k in ks) for k in keys}
    keys.sort(key=lambda k: (-shared[k], rank[k]))
    # a fact the question's words single out answers a part of it: it comes on top of the topics' share
    # the ask's clause as understood ("a pipline block" read as "pipeline")
    said = read_with(query, asked)
    limit = _MAX_HOWTO_FACTS + min(1, len(set(_cued(w, said)) & set(keys)))
    facts = _facts(w, inp, _asked_first(w, keys, said), limit)
    if facts and lead:
        w.answer(facts.pop(0))
    w.bullets(facts)
    if relevant:
        return config_sections(w, plan, query, fields=False, rationale=False, declined_said=bool(notes), lead=False)
    return Part()


def _limitation_strategies(query: Query) -> list[str]:
    named = query.params.strategy
    if named in ("megatron_fsdp", "ddp", "fsdp2"):
        return [named]
    return ["megatron_fsdp", "ddp"]


def _limitation_features(query: Query) -> list[str]:
    """The features asked about; "selective AC" is its own feature here, since strategies differ on it."""
    feats = wanted(query)
    if "ac_selective" in query.topics:
        feats = [f for f in feats if f != "ac"] + ["ac_selective"]
    return feats


_PARALLEL_FEATURES = frozenset({"tp", "pp", "cp", "ep", "sp", "hsdp"})


def together(w: Writer, inp: ComposeInput) -> Part | None:
    """Several features asked about in one layout, all of which the strategy (the one named, else
    fsdp2) has: yes, and the rules that tie their sizes. A missing one is `limitations`' "no"."""
    # parallelisms only: packing or AC with CP has conditions of its own, which the kb facts carry
    feats = [f for f in _limitation_features(inp.query) if f in _PARALLEL_FEATURES and f in w.p.feature_names]
    said = read(inp.query)
    if len(feats) < 2 or not said.together or not said.possible:
        return None
    strategy = inp.query.params.strategy or "fsdp2"
    if any(f in w.p.strategy_lacks.get(strategy, {}) for f in feats):
        return None
    names = [w.p.feature(f, w.lang) for f in feats]
    joined = ("、".join(names[:-1]) + "和" if w.lang == "zh" else ", ".join(names[:-1]) + " and ") + names[-1]
    w.answer(w.say("limits_together", strategy=strategy, features=joined))
    ties = ["world_divisible"] if {"tp", "pp", "cp"} & set(feats) else []
    ties += ["ep_divides"] if "ep" in feats else []
    ties += [w.p.topic_facts[f][0] for f in feats if w.p.topic_facts.get(f)]
    w.bullets([w.fact(k) for k in dict.fromkeys(ties)][:_MAX_TOPIC_FACTS])
    return Part(strategy=strategy)


def _limits_key(key: str, feats, denied) -> str:
    """limits_no / limits_yes, or their negative-question forms when every feature of the line was asked
    in the negative (claims.Claim.denied: "can't do pp", "不能开 pp", "doesn't support TP, right?")."""
    if feats and set(feats) <= set(denied):
        return {"limits_no": "limits_no_confirmed", "limits_yes": "limits_yes_contrary"}[key]
    return key


def limitations(w: Writer, inp: ComposeInput) -> Part:
    query, plan = inp.query, inp.plan
    feats = _limitation_features(query)
    strategies = _limitation_strategies(query)
    unwanted = read(query).claim.denied
    all_missing: list[str] = []

    for strategy in strategies:
        lacks = w.p.strategy_lacks.get(strategy, {})
        missing = [f for f in feats if f in lacks]
        all_missing += missing
        if missing:
            w.answer(w.say(_limits_key("limits_no", missing, unwanted), strategy=strategy, features=w.features(missing)))
            supported = [f for f in feats if f not in lacks and f in w.p.feature_names]
            if supported and strategy != "fsdp2":  # "TP? And PP?": each part answered
                w.answer(w.say(_limits_key("limits_yes", supported, unwanted), strategy=strategy,
                               features=w.features(supported)))
                w.answer(w.fact(w.p.strategy_can[strategy]) if strategy in w.p.strategy_can else None)
        elif feats and strategy != "fsdp2":
            w.answer(w.say(_limits_key("limits_yes", feats, unwanted), strategy=strategy, features=w.features(feats)))
            # what the supported feature is and asks of the config, in one line each
            w.bullets([w.fact(w.p.topic_facts[f][0]) for f in feats if w.p.topic_facts.get(f)])
        elif strategy != "fsdp2":
            w.answer(w.say("limits_list", strategy=strategy))
        keys = list(w.p.limitations.get(strategy, ()))
        if missing:  # the asked-about gaps, then one more of the picture
            first = list(dict.fromkeys(lacks[f] for f in missing))
            keys = (first + [k for k in keys if k not in first])[:len(first) + 1]
        w.bullets([w.fact(k, required=k in (lacks.get(f) for f in missing) or k in ("ddp_simple",)) for k in keys],
                  heading="limits" if strategy != "fsdp2" and len(strategies) > 1 else None)

    part = Part(strategy=plan.strategy if plan else "fsdp2")
    named_ok = (len(strategies) == 1 and plan is not None and plan.strategy == strategies[0] and plan.report.ok
                and bool(plan.yaml) and not any(f in w.p.strategy_lacks.get(strategies[0], {}) for f in feats))
    if named_ok:
        shown, report = show_plan_yaml(w, plan)
        part = Part(shown, report, plan.strategy)
    elif strategies != ["fsdp2"]:
        w.heading("instead")
        instead = next((w.p.instead_facts[f] for f in all_missing if f in w.p.instead_facts),
                       w.p.instead_facts.get("default", "fsdp2_for_all"))
        w.para(w.fact(instead, required=True))
        sit = query.situation
        numbers = sit.world_size or sit.nodes or sit.model or query.params.model_size_b
        if numbers and plan is not None and plan.report.ok and plan.yaml and plan.strategy == "fsdp2":
            r = plan.report
            w.para(w.say("verdict_ok_warn" if r.warnings else "verdict_ok", world=r.world_size or plan.world_size,
                         gpn=r.gpus_per_node or plan.gpus_per_node, mesh=w.mesh(r), n=len(r.warnings)))
            w.code(plan.yaml)
            part = Part(plan.yaml, r, plan.strategy)
        ddp_lacks = w.p.strategy_lacks.get("ddp", {})
        if "ddp" not in strategies and (not feats or any(f in ddp_lacks for f in feats)):
            w.para(w.say("not_ddp_either") + w.space + (w.fact("ddp_simple", required=True) or ""))
    return part


def located(w: Writer, inp: ComposeInput) -> Part | None:
    """A question about a code symbol ("does `create_distributed_setup_from_config` create the
    process group?"): what its code anchor says it does."""
    from assistant.compose.answers.location import code_entries, entry_text

    named = read(inp.query).identifiers - _PRODUCT_NAMES
    entries = [e for e in code_entries(inp, w.lang) if e.anchor is not None
               and any(n in e.anchor.text.lower() for n in named)]
    if not entries:
        return None
    w.answer(entry_text(w, entries[0], alone=True))
    return Part()


def _fact_ask(inp: ComposeInput, ask):
    """Whose words the fact ask is: its own clause's, unless the clause alone names no field or asks
    no fact of one ("填多少", "Is that accepted?" after the sentence that names it): then the question's
    (the ask or the query; both carry `.text`)."""
    if not getattr(ask, "text", "") or ask.text == inp.query.text:
        return inp.query
    own, whole = read(ask).field_question, read(inp.query).field_question
    if read(ask).fields and (asked_kinds(own) or judges_value(own)):
        # "what does X default to, and can I put it under fsdp2?": a part no other ask took is this
        # field's question too
        rest = read_unclaimed(inp.query, [ask, *(a for a in inp.asks if a is not ask)])
        return inp.query if asked_kinds(rest.field_question) else ask
    return inp.query if asked_kinds(whole) or judges_value(whole) else ask


def fields(w: Writer, inp: ComposeInput, ask) -> Part | None:
    """A question that names fields (`reshard_after_forward`, `mfsdp`) is answered from the field
    reference: the asked fact (default, allowed values, strategies, aliases, read or not) first."""
    asked_ask = _fact_ask(inp, ask)
    said = read(asked_ask)
    fq = said.field_question
    table = field_table()
    refs = list(said.fields)
    if not refs and "case" in asked_kinds(fq):
        # "is the strategy field case sensitive?" names the key in words: the keys upstream lowercases
        refs = [r for r in table.refs if r.lowercased]
    # a size given a value ("tp_size 4 的时候 sequence_parallel 有什么用") is the user's setting, not the
    # subject, when the question names another field
    unvalued = [r for r in refs if r.is_strategy_name or fq.stated_size(r.key) is None]
    if any(not r.is_strategy_name for r in unvalued):
        refs = unvalued
    if all(r.is_strategy_name for r in refs):
        # the clause names only a strategy ("AutoModel 默认也是这样吗？"): the field is named elsewhere
        # in the question ("梯度 reduce 用啥精度")
        refs = list(dict.fromkeys(refs + list(read(inp.query).fields)))
    # a strategy named in passing ("FSDP2's default mixed precision") is not a question about the name;
    # its aliases, its options and the spelling of its name are
    if not any(not r.is_strategy_name for r in refs) and not set(asked_kinds(fq)) & _ABOUT_A_NAME:
        return None
    facts = field_facts(refs, fq, w.lang)
    lines = list(facts.answer + facts.support)
    if not lines:
        return None
    if not asked_kinds(fq) and not judges_value(fq):
        # the reference has no fact of the kind asked ("should I turn it off?", "does ddp read it?"):
        # the kb sentence that answers the question leads, the field's meaning follows
        picked = select_sentences(read(asked_ask), w.citer.sources, w.lang, limit=1)
        if picked:
            w.answer(with_citation(picked[0].sentence, [w.citer.add(picked[0].hit) + 1]))
            w.citer.cited.add(w.citer.add(picked[0].hit) + 1)
            w.bullets(lines[:2])
            return Part()
    for line in facts.answer or lines[:1]:  # each asked fact is a direct answer: all of them lead
        w.answer(line)
    # what it is and the one note beside the asked facts; the rest is in the reference
    w.bullets(list(facts.support)[:max(1, 3 - len(facts.answer))] if facts.answer else lines[1:3])
    return Part()


def _answering(w: Writer, inp: ComposeInput, ask=None) -> bool:
    """A fact the question's words single out that answers it by itself ("tie_word_embeddings ... pp?",
    "does CP keep my attention_mask?"): it leads, the features' facts follow as the body. In a message
    of several asks only this ask's own clause cues it: the words of another ask answer that one."""
    keys = [k for k in _cued(w, read(inp.query)) if k in w.p.answering_facts]
    others = [a for a in inp.asks if a is not ask and a.kind in ("fact", "quantity") and bool(a.text)]
    if ask is not None and getattr(ask, "text", "") and others:
        own = [k for k in _cued(w, read(ask)) if k in w.p.answering_facts]
        elsewhere = {k for a in others for k in _cued(w, read(a))}
        if not own and any(f"facts.{k}" in w.stated for k in keys):
            # an earlier ask of the question said it ("..., or are they the same GPUs?"); a clause that
            # names a field of its own ("what dtype goes between stages when pipeline.dtype is unset?")
            # asks about that field
            return not any(not r.is_strategy_name for r in read(ask).fields)
        keys = own or [k for k in keys if k not in elsewhere]
    if not keys:
        return False
    if f"facts.{keys[0]}" in w.stated:
        return True  # an earlier ask of the question said it ("..., or are they the same GPUs?")
    said = w.fact(keys[0], required=True)
    if not said:
        return False
    w.answer(_worked(w, inp, keys[0], said))
    _answer_quantity(w, inp, w.p.answering_quantities.get(keys[0]))
    if keys[0] in w.p.refusing_facts:  # the feature cannot be used: its facts and config are beside the point
        return True
    howto(w, inp, with_config=False, lead=False)
    return True


def _answer_quantity(w: Writer, inp: ComposeInput, target: str | None) -> None:
    """The leading fact's quantity on the user's own layout ("EP shares ranks" -> ep_shard = 8 / 8 = 1),
    then the rule it breaks, if any (the concept was asked; the verdict comes second)."""
    sit = inp.query.situation
    recipe = recipe_of(sit)
    if not target or recipe is None or not sit.world_size:
        return
    from assistant.compose.knowledge.diagnose import judge_stated
    from assistant.validator import UnusableInput, validate

    d = judge_stated(recipe, world_size=sit.world_size, gpus_per_node=sit.gpus_per_node or inp.gpus_per_node,
                     validate=validate, unusable=UnusableInput)
    if d.report is None or not d.judged:
        return
    line = quantity_line(w, target, d.report, d.judged, said=read(inp.query))
    if line:
        w.answer(line)
    if d.report.errors:
        w.answer(w.finding(d.report.errors[0]))


def _capability_asked(inp: ComposeInput, fq) -> bool:
    """"MegatronFSDP has no PP ... does it have no TP either?": a strategy with limits and the features
    asked about, and no field-reference kind asked: the strategy's limits answer it."""
    return (inp.query.params.strategy in ("megatron_fsdp", "ddp") and bool(wanted(inp.query))
            and not asked_kinds(fq) and not judges_value(fq))


def _clause_capability(w: Writer, inp: ComposeInput, ask) -> Part | None:
    """"megatron_fsdp 支持 cp 吗", "顺便问 ddp 能不能开 cp": the one strategy and the parallelisms the ask's own
    clause names, answered by that strategy's limits; the question's other strategies and fields (a
    pasted layout, a later ask) are other asks'. None when the clause names no strategy or no such
    feature, or asks a field-reference kind other than "accepts" or about a value, and when the question
    is about that strategy and its features alone (`limitations` answers it whole, with the way out)."""
    text = getattr(ask, "text", "")
    said = read(ask)
    strategy = said.params.strategy
    feats = [f for f in FEATURE_ORDER if f in _PARALLEL_FEATURES | {"ac"} and f in w.p.feature_names
             and f in said.params.wanted | said.params.unwanted]
    # "支持 cp 吗" asks whether the strategy accepts the feature, which its limits answer; other kinds
    # ("默认值", "是什么") are the field reference's
    fq = said.field_question
    if not text or strategy not in w.p.strategy_lacks or not feats or set(asked_kinds(fq)) - {"accept"} \
            or judges_value(fq) or any(not r.is_strategy_name for r in said.fields):
        return None  # a field the clause names ("does dp_replicate_size work with ddp") has its own reference
    named = [r for r in read(inp.query).fields if not r.is_strategy_name and r.key not in _FEATURE_KEYS]
    if strategy == inp.query.params.strategy and not named:
        return None  # the question's own strategy and features: its limits answer, with what to use instead
    if "ac" in feats and "ac_selective" in inp.query.topics:
        feats = [f if f != "ac" else "ac_selective" for f in feats]  # strategies differ on selective AC
    lacks = w.p.strategy_lacks[strategy]
    missing, supported = [f for f in feats if f in lacks], [f for f in feats if f not in lacks]
    sep = "、" if w.lang == "zh" else ", "
    unwanted = said.claim.denied
    if missing:
        w.answer(w.say(_limits_key("limits_no", missing, unwanted), strategy=strategy,
                       features=sep.join(w.p.feature(f, w.lang) for f in missing)))
    if supported:
        w.answer(w.say(_limits_key("limits_yes", supported, unwanted), strategy=strategy,
                       features=sep.join(w.p.feature(f, w.lang) for f in supported)))
    w.bullets([w.fact(lacks[f], required=True) for f in missing][:1])
    return Part()


def _strategy_on_field(w: Writer, inp: ComposeInput) -> None:
    """"Why does ddp ignore dp_size?": what the named strategy does with the named field leads."""
    strategy = inp.query.params.strategy
    if _limitation_features(inp.query):
        return  # "can megatron_fsdp do PP, EP or sequence_parallel?": its limits answer, all at once
    keys = {r.key for r in read(inp.query).fields if not r.is_strategy_name}
    for k in w.p.limitations.get(strategy or "", ()):
        if any(f"`{key}`" in w.p.facts[k].en for key in keys):
            w.answer(w.fact(k))


def write(w: Writer, inp: ComposeInput, ask) -> Part:
    if inert := inert_lines(read(ask, inp.query).field_question, w.lang):
        # the setting does nothing at the user's sizes: that is the answer; what the field does follows
        for _, line in inert:
            w.answer(line)
        w.bullets([r.meaning(w.lang) for r, _ in inert][:2])
        return Part()
    if (part := _clause_capability(w, inp, ask)) is not None:
        return part
    if _answering(w, inp, ask):
        return Part()
    _strategy_on_field(w, inp)
    if read(ask, inp.query).neighbour_topic is not None and not read(inp.query).names_domain \
            and not read(inp.query).fields:
        # "do I have to write model code for the new Qwen3?": a neighbouring topic, told where upstream
        # documents it, not the nearest distributed-training fact
        return Part(handoff="out_of_scope")
    # a strategy's limits answer "can ddp do cp_size?"; a field the limits do not cover
    # ("find_unused_parameters") is answered from the field reference
    named = [r for r in read(inp.query).fields if not r.is_strategy_name and r.key not in _FEATURE_KEYS]
    asked_ask = _fact_ask(inp, ask)
    fq = read(asked_ask).field_question
    if not named and (inp.query.intent == "limitations" or _capability_asked(inp, fq)):
        return together(w, inp) or limitations(w, inp)
    # a field-reference kind asked ("what pp_schedule do I get if I set none?") outranks cue words
    # and a value named for a field with "is that accepted?" ("`pp_size: none`, won't it error?") is
    # that field's verdict, whatever topic the field belongs to
    judged = judges_value(fq)
    if not judged and (part := together(w, inp)) is not None:
        return part
    if _about_a_module(inp, ask):
        # "distributed: strategy: fsdp2, tp_size: 4. What does it do with the lm_head under TP?": the
        # clause asks about a model module, not about the fields the layout beside it names
        picked = select_sentences(read(ask), w.citer.sources, w.lang)
        if picked:
            return retrieved(w, inp, ask)
    cued = [] if asked_kinds(fq) or judged else (_cued(w, read(inp.query)) or _named_topic_facts(w, inp, ask))
    # a topic narrower than a feature leads, unless the question also names a field of its own ("zero_dp_strategy")
    topical = any(t in w.p.lead_topics for t in inp.query.topics) and not judged and not named
    if not cued and not topical and fields(w, inp, ask) is not None:
        # the feature facts of what the question names, and what its strategy does with the field
        # what the named strategy does with the field first ("does ddp read dp_size?"), then the features'
        keys = list(w.p.limitations.get(inp.query.params.strategy or "", ()))
        keys += [k for t in inp.query.topics for k in w.p.topic_facts.get(t, ())]
        w.bullets(_facts(w, inp, _asked_first(w, list(dict.fromkeys(keys)), read(inp.query)), _MAX_TOPIC_FACTS))
        return Part()
    # another ask of the question judges or shows the user's layout (a diagnosis too: "写成 2.0 了，会咋样？
    # 报错吗"): this one states the fact only
    covered = any(a.kind in ("verdict", "quantity", "config", "diagnosis") for a in inp.asks if a is not ask)
    part = howto(w, inp, with_config=not covered, asked=asked_ask) or located(w, inp)
    if part is not None:
        return part
    sit = inp.query.situation
    if inp.plan is not None and (sit.world_size or sit.model or inp.query.params.model_size_b):
        # "350M on 4 GPUs, is DDP okay?": a question about the user's own setup, answered by the plan
        return Part(handoff="recommendation")
    return retrieved(w, inp, ask)


_MODULE = re.compile(r"^(?:lm_head|embed_tokens|[a-z]+_proj|\w*norm\w*|router|gate|experts?)$", re.I)


def _about_a_module(inp: ComposeInput, ask) -> bool:
    """The fact ask's own identifier is a module of the model (`lm_head`, `embed_tokens`), no field."""
    target = getattr(ask, "target", None) or ""
    return bool(_MODULE.match(target)) and not field_table().mentioned(target) and bool(getattr(ask, "text", ""))


def _needs(query: Query) -> frozenset[str]:
    return frozenset({"anchors"}) if read(query).identifiers - _PRODUCT_NAMES else frozenset()


KIND = AnswerKind("fact", frozenset({"plan", "retrieval"}), write, _needs)
