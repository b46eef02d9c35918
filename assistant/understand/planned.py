"""The asks a question is answered by, planned once after understanding (issue 18: compose/ answers
them as given and re-decides none): each ask read again with what the whole question says (a clause
alone can mislead), kinds another ask already covers dropped, a config's numbers asked on their own.
The engine calls `planned_asks(query)`; every reading goes through cues.Reading.
"""
from __future__ import annotations

import re

from assistant.understand.asks import load_asks
from assistant.understand.cues import fact_roles, read, read_prose
from assistant.understand.query import ASK_KINDS, FEATURES, SIZE_KEYS, Ask

# Kinds another kind of the same question already covers: one config answer, not two.
_COVERED_BY = {"recommendation": ("config",), "nonsense": tuple(k for k in ASK_KINDS if k != "nonsense")}

# sizes and blocks: "should I use tp_size 2?" asks for a layout, not a field's reference
_LAYOUT_KEYS = frozenset({"tp_size", "pp_size", "cp_size", "ep_size", "dp_size", "dp_replicate_size", "pipeline", "moe"})


def _cues(said, keys) -> bool:
    return any(k in keys for k in read(said).cued_facts)


def _refused(query) -> bool:
    """The question's words single out a fact that says the feature asked about cannot be used."""
    return _cues(query, fact_roles().refusing)


def planned_asks(query) -> tuple[Ask, ...]:
    """The asks to answer, in order: the query's asks (a hand-built query without any asks what its
    intent means) reconciled with the question's intent where the clause-level reading is weaker than
    the whole question's, and without kinds another ask already covers. compose/ answers them as given."""
    return plan_asks(asks_given(query), query)


def asks_given(query) -> tuple[Ask, ...]:
    """The query's asks; a hand-built query without any is answered by the ask its intent means."""
    asks = tuple(a for a in query.asks if a.kind in ASK_KINDS)
    return asks or (Ask(load_asks().from_intent.get(query.intent, "fact"), query.text),)


def plan_asks(asks: tuple, query) -> tuple:
    """The asks to answer: reconciled with the question's intent where the clause-level reading is
    weaker than the whole question's, and without kinds another ask already covers."""
    if len(asks) == 1 and asks[0].kind == "nonsense":
        return asks  # understanding found nothing asked (keyboard mash): nothing to reconcile
    sit = query.situation
    if read(query).off_topic and not (sit.stated.sizes or sit.stated.options or sit.pasted.configs
                                         or sit.pasted.errors or sit.world_size):
        # "帮我写个周报，内容就是这周调了调 FSDP2": other work that names the domain in passing
        return (Ask("out_of_scope", query.text),)
    # a fact about a feature keeps its kind when another ask already judges the layout or asks for one
    judged_elsewhere = any(a.kind in ("verdict", "recommendation") for a in asks)
    asks = tuple(_reconciled(a, query, judged_elsewhere) for a in asks)
    asks = _changed(asks, query)
    if query.intent == "limitations" and not any(a.kind in ("verdict", "fact") for a in asks):
        asks = (Ask("verdict", query.text),) + asks  # "does megatron_fsdp support cp_size? ..."
    errors = bool(query.situation.pasted.errors or read(query).upstream_error)
    if errors:
        # a pasted or quoted upstream error is what the question is about: its explanation comes first,
        # and "what does that mean?" is that explanation
        asks = tuple(a for a in asks if a.kind != "fact" or read(a).fields)
        # "from the Python API:" introducing the paste names where it ran; it requests no config
        asks = tuple(a for a in asks if a.kind != "config" or read(a).request) or (Ask("diagnosis", query.text),)
        # "megatron_fsdp 能开 dp_replicate_size 吗？... 报 `ValueError: ...`，这个报错什么意思": a yes/no asked
        # first is answered first; the explanation of the error follows it
        # (only a verdict whose clause stands before the error the prose quotes: after an error pasted or
        # quoted first, or in a clause that carries the error's words, the explanation leads)
        first = asks[0] if asks and asks[0].kind == "verdict" and not read(asks[0]).upstream_error \
            and _before_error(asks[0].text, query) else None
        if not any(a.kind in ("diagnosis", "location") for a in asks):
            asks = (Ask("diagnosis", query.text),) + asks
        asks = tuple(sorted(asks, key=lambda a: (a is not first, a.kind != "diagnosis")))
    if _has_numbers(query):
        # "4 nodes of 8 GPUs ... What do I set?": a clause that asks for a config and a fact about no
        # field is a request for the config of the user's situation
        config_texts = {a.text for a in asks if a.kind == "config" and not read(a).yaml_as_place}
        asks = tuple(a for a in asks if not (a.kind == "fact" and a.target is None and a.text in config_texts))
    # "where is 'X' raised?": the location answers it; the same clause read as a fact would repeat it
    located = {a.text for a in asks if a.kind == "location"}
    asks = tuple(a for a in asks if not (a.kind == "fact" and a.text in located)) or asks
    # "how many GPUs do I need to fine-tune Llama 3.1 70B?": a clause that asks for a named number is
    # that number's question, not also a fact about no field
    counted = {a.text for a in asks if a.kind == "quantity" and a.target is not None}
    asks = tuple(a for a in asks if not (a.kind == "fact" and a.target is None and a.text in counted
                                         and not read(a).fields))
    fact_texts = {a.text for a in asks if a.kind == "fact"}
    # "我 yaml 里写的 moe: 还会生效吗", "in my yaml tp_size is 2, what happens?": the YAML as the place
    # a setting is written asks for no config
    asks = tuple(a for a in asks if not (a.kind == "config" and (a.text in fact_texts or len(asks) > 1
                                                                 and read(a).yaml_as_place)))
    if not _has_numbers(query):
        # without a cluster, a model or sizes, "should I turn it off?" / "in my yaml" after a fact ask
        # is that fact's question, not a request for a layout
        fact_clauses = {a.text for a in asks if a.kind == "fact"}
        if fact_clauses:
            asks = tuple(a for a in asks if a.kind not in ("recommendation", "config") or a.text not in fact_clauses
                         and (a.kind == "config" or read(a).strategy_word))
    if query.intent == "python_api" and not errors:
        # "how do I pass MoE settings from Python?": the Python API (with its facts) is the config asked for
        asks = tuple(Ask("config", a.text) if a.kind in ("fact", "recommendation") else a for a in asks)
    if _refused(query) and any(a.kind in ("verdict", "recommendation", "config") for a in asks):
        # "this tied-embedding model with pp_size 2: does it run?": the model, not the layout, says no;
        # the fact that it cannot is the answer, not a verdict on sizes or a PP layout
        asks = tuple(Ask("fact", a.text, a.target) if a.kind in ("verdict", "recommendation", "config") else a
                     for a in asks)
    if _has_numbers(query):
        asks = _numbers_in_requests(asks)
    kinds = {a.kind for a in asks}
    out = tuple(a for a in asks if not any(k in kinds for k in _COVERED_BY.get(a.kind, ())))
    # one config, one recommendation: a second would only repeat the first
    once = [a for i, a in enumerate(out) if a.kind not in _ONCE or all(b.kind != a.kind for b in out[:i])]
    return _config_after_numbers(list(dict.fromkeys(once)))


_ERROR_NAME = re.compile(r"\b\w*(?:Error|Exception)\b")  # ValueError, AssertionError, RuntimeError ...


def _before_error(clause: str, query) -> bool:
    """The clause stands in the question before the first error name quoted in its prose."""
    if query.situation.pasted.errors:
        return False
    at, err = query.text.find(clause), _ERROR_NAME.search(query.text)
    return at >= 0 and err is not None and at < err.start()


def _changed(asks: tuple, query) -> tuple:
    """"go from 1 node to 4, what do I change?", "扩到 8 机要改什么": a change of cluster size asks what it
    does to the layout: the quantities of the target world (dp before and after, grad-acc), not a field
    fact, a new recommendation or a config. A verdict, named quantity or a diagnosis of something failing stays."""
    if not getattr(query.params, "prior_world_size", None) or not query.situation.stated.sizes:
        return asks
    swap = ("fact", "recommendation", "config", "verdict")  # "anything to change?" reads as a yes/no
    pasted = query.situation.pasted
    prose = read_prose(query)
    if not pasted.errors and not prose.quoted_error and all(k != "diagnosis" for k in prose.cue_kinds):
        # nothing failing is pasted, quoted or told ("一启动就挂"): a diagnosis the ask model read in "要改什么"
        # has no error to explain, so it asks what the change does too
        swap += ("diagnosis",)
    # the clause asks what changes, or is the change itself ("now make it 8 nodes")
    out = tuple(Ask("quantity", a.text, "dp_size") if (a.kind in swap and not (a.kind == "verdict" and read(a).yes_no)
                                                       and (read(a).change_asked or read(a).scale)
                                                       and not read(a).requests_yaml)
                or (a.kind == "quantity" and a.target is None) else a for a in asks)
    return tuple(dict.fromkeys(out))


def _config_after_numbers(asks: list) -> tuple:
    """"合法吗？给我 yaml，dp 顺便说下": the config's "your layout as YAML:" line stands just above its
    YAML, so the verdicts and numbers on that layout come before it; an out-of-scope note comes last."""
    config = [a for a in asks if a.kind == "config"]
    rest = [a for a in asks if a.kind != "config"]
    judged = [i for i, a in enumerate(rest) if a.kind in ("verdict", "quantity")]
    if config and judged and asks.index(config[0]) < asks.index(rest[judged[-1]]):
        asks = rest[:judged[-1] + 1] + config + rest[judged[-1] + 1:]
    return tuple(sorted(asks, key=lambda a: a.kind == "out_of_scope"))


# what the field reference states outright (whether a strategy accepts a field is, with sizes, the validator's)
_STATED_FACTS = frozenset({"default", "allowed", "options", "same"})
_ONCE = ("config", "recommendation", "nonsense", "out_of_scope")
# quantities a config request can name beside it ("give me the YAML and tell me the resulting dp_size")
_NOT_ALONGSIDE = frozenset({"size_choice", "memory", "world_size", "nodes"})


def _numbers_in_requests(asks: tuple) -> tuple:
    """A config clause that also names a quantity of the layout (asks.yaml's quantity targets) asks
    that number too: the quantity is its own ask after the config, not dropped with the clause."""
    out: list = []
    for a in asks:
        out.append(a)
        if a.kind != "config":
            continue
        p = read(a).params
        for name in read(a).quantity_targets:
            if name in _NOT_ALONGSIDE or getattr(p, name, None) is not None:
                continue
            if not any(b.kind == "quantity" and b.target == name for b in asks):
                out.append(Ask("quantity", a.text, name))
    return tuple(out)


def _strategy_takes_field(ask) -> bool:
    """A yes/no clause that names a strategy and one of its option fields (not a size or block)."""
    said = read(ask)
    # a switch the clause supposes ("if I switch strategy to ddp, ..."); a field asked about alone
    # ("can I put bucket_cap_mb under fsdp2?") is the field's fact
    if not said.condition or not said.last_part_yes_no or not said.params.strategy:
        return False
    return any(r.section == "distributed" and not r.is_strategy_name and r.key not in _LAYOUT_KEYS | {"strategy"}
               for r in said.fields)


def _about_a_feature(ask) -> bool:
    """A fact asked about a field that is no size ("is activation_checkpointing available with ddp?",
    "does sequence_parallel do anything at tp_size 1?") or about what a strategy supports ("does
    megatron_fsdp support dp_replicate too?"): beside an ask that judges the stated sizes or asks for a
    layout, the field's or the strategy's fact answers it; alone ("Can ddp do context parallelism? I'd
    set cp_size 2 on 8 GPUs") it is the verdict on those sizes."""
    if read(ask).capability:
        return True
    return any(r.key == ask.target and not r.is_strategy_name and r.key not in _LAYOUT_KEYS
               for r in read(ask).fields)


_PARALLELISMS = frozenset({"tp", "pp", "cp", "ep", "sp", "hsdp"})


def _capability_clause(said) -> bool:
    """"megatron_fsdp 是真不能开 pp 吗", "ddp 能开 cp 吗": the clause names a strategy and a parallelism of its
    own, which that strategy's limits answer (answers/fact.py), not a verdict on the sizes stated beside it
    when the layout is judged anyway (another ask's verdict, or the diagnosis of what was pasted)."""
    p = said.params
    return p.strategy is not None and bool((p.wanted | p.unwanted) & _PARALLELISMS)


def _has_numbers(query) -> bool:
    sit = query.situation
    return bool(sit.world_size or sit.nodes or sit.model or query.params.model_size_b or sit.stated.sizes
                or sit.pasted.configs)


def _sizes_written(query) -> bool:
    """The user wrote a size as a number ("tp4pp2"), not only excluded a feature (its size 1)."""
    return any(isinstance(getattr(query.params, k, None), int) for k in SIZE_KEYS)


def _reconciled(ask, query, judged_elsewhere: bool = False):
    """One ask, read again with what the whole question says (a clause alone can mislead)."""
    sit = query.situation
    said = read(ask)
    if ask.kind == "diagnosis" and not sit.pasted.errors and said.fix_by_setting:
        # "... OOMs at step 10. Does setting activation_checkpointing: true fix this?": what that setting
        # does to the failure is asked, not a verdict on the sizes told beside it
        field = next((r.key for r in said.fields if not r.is_strategy_name), None)
        if field is not None:
            return Ask("fact", ask.text, field)
    if ask.kind not in ("out_of_scope", "nonsense") and query.intent == "out_of_scope" and not sit.stated.any() \
            and not sit.pasted.configs and not sit.pasted.errors and not set(query.topics) & set(FEATURES):
        return Ask("out_of_scope", ask.text)  # "what LoRA rank?" asks a number, but not one of ours
    if ask.kind == "out_of_scope" and said.neighbour_topic is None and not said.off_topic and (
            query.intent not in ("out_of_scope", "nonsense") or sit.pasted.errors or sit.stated.any()):
        # "activation checkpointing", a torch CheckpointError: not checkpoint saving; the clause asks
        # what its words ask ("激活检查点怎么开" is a config)
        if sit.pasted.errors:
            return Ask("diagnosis", ask.text, ask.target)
        kinds = [k for k in said.kinds if k != "out_of_scope"]
        return Ask(kinds[0] if kinds else "fact", ask.text, ask.target)
    if ask.kind == "verdict" and ask.aspect != "advice" and ask.target != "advice" and not _sizes_written(query) \
            and not (sit.world_size or sit.nodes or sit.model or query.params.model_size_b) \
            and not sit.pasted.configs and not sit.pasted.errors and _capability_clause(read(query)):
        # "A teammate claims megatron_fsdp cannot do EP. Is that really true?": the only "size" is the excluded
        # feature's 1 and there is no setup to judge ("70B 单机 8 卡，纯 fsdp2 不开 tp/pp，会爆显存吗" is one);
        # what the strategy can do is the fact asked, its limits answer it
        return Ask("fact", ask.text, query.params.strategy)
    if ask.kind in ("quantity", "verdict") and not _has_numbers(query) and _cues(query, fact_roles().answering):
        return Ask("fact", ask.text, ask.target)  # "is dp_replicate_size the number of nodes?": a fact answers it
    if ask.kind == "quantity" and not sit.pasted.configs and not sit.pasted.errors and (
            said.why or (said.definition and not _has_numbers(query))):
        # "为啥 ddp 不认 dp_size?", "what is ep_shard and when is it above 1?": a reason or a definition,
        # not a number of ours
        return Ask("fact", ask.text)
    if ask.kind == "quantity" and ask.target == "size_choice" and not _has_numbers(query):
        return Ask("fact", ask.text)  # "tp_size 设多大有什么讲究": how to choose, without a setup to choose for
    if ask.kind in ("quantity", "recommendation") and said.size_choice is not None and _has_numbers(query):
        named = said.size_choice
        if named and named not in sit.stated.sizes:
            return Ask("recommendation", ask.text, named)  # "ep 设多少": the size is ours to choose
    if ask.kind == "quantity" and ask.target is None and (
            query.intent in ("howto", "limitations", "code_location") or not _has_numbers(query)
            or not read(query).quantity_targets):
        return Ask("fact", ask.text)  # "pad to a multiple of how much?": a number the docs state, not one we derive
    if ask.kind == "verdict" and said.what_happens and read(query).field_question.inert_refs:
        # "tp_size=1 and enable_async_tensor_parallel: true, what happens?": nothing, at those sizes; the
        # field's inert fact is what the run does (read on the whole question, which names the field)
        return Ask("fact", query.text, ask.target)
    if ask.kind == "fact" and _strategy_takes_field(ask):
        # "if I switch strategy to ddp, can I keep enable_fsdp2_prefetch?": whether that strategy takes the
        # field is the validator's verdict on exactly that (verdict._strategy_with_fields)
        return Ask("verdict", ask.text, ask.target)
    if ask.kind == "fact" and said.layout_wish:
        return Ask("recommendation", ask.text)
    if ask.kind == "fact" and sit.stated.sizes and query.intent in ("strategy", "limitations", "diagnose") \
            and not said.needs and not set(said.field_question.kinds) & _STATED_FACTS \
            and not _cues(ask, (*fact_roles().quantities, *fact_roles().answering)) and not said.worth \
            and not said.mechanism and not (judged_elsewhere and _about_a_feature(ask)) \
            and not ((judged_elsewhere or sit.pasted.configs or sit.pasted.errors or not _sizes_written(query))
                     and _capability_clause(said)):
        # "does pp_schedule X need layers_per_stage?", "what's the default for reshard_after_forward?" stay facts,
        # and so does "ep 8, tp 2: does EP multiply with TP?" (the concept, worked on the user's sizes), and a
        # clause an answering fact answers ("... does the stage dtype follow?"); "megatron_fsdp 真的不能开 pp 吗"
        # stays a fact too: its only "size" is the excluded feature's 1, which no one asked to judge
        return Ask("verdict", ask.text)  # "hsdp 能和 tp 一起用不？32 卡，dp_replicate 2、tp 4": the layout, judged
    if ask.kind == "recommendation" and _sizes_written(query) and query.intent in ("sizing", "strategy"):
        # "tp4pp2 16卡 dp?": the sizes are given; the number asked is what follows from them (an exclusion,
        # "cp 和 pp 都不想开，有啥省显存的配法", only constrains the layout still ours to recommend)
        target = next(iter(said.quantity_targets), None)
        if target is not None:
            return Ask("quantity", ask.text, target)
    if ask.kind == "recommendation" and not _has_numbers(query) and any(
            not r.is_strategy_name and r.key not in _LAYOUT_KEYS for r in said.fields):
        # "when should I set patch_inner_model to false?": advice about a field, answered from its reference
        return Ask("fact", ask.text, ask.target)
    return ask
