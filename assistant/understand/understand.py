"""A question (and its conversation) becomes a `Query`: language, intent, parameters, topics, the
text to retrieve with, and whether it tried to override the rules.

Follow-ups carry the parameters of earlier user turns: "what if only 4 nodes?" after "70B on
8 nodes x 8 GPUs" is 70B on 4 nodes x 8 GPUs. Assistant turns are never read for parameters, so
nothing the assistant said (or was tricked into saying) becomes a user constraint.
"""
from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable

from assistant.config import KB_DIR
from assistant.index.glossary import Glossary, load_glossary
from assistant.understand.advice import advice_reader, with_advice
from assistant.understand.ask_model import ClauseEncoders, clause_reader
from assistant.understand.asks import clauses, detect_asks, rescued_intent
from assistant.understand.follow_on import layouts
from assistant.understand.intent import detect_injection, score_intents
from assistant.understand.language import resolve_language
from assistant.understand.scale import find_scale
from assistant.understand.numbers import blank
from assistant.understand.params import (MAX_PROSE_CHARS, MAX_QUESTION_CHARS, claimed_spans, extract_params, load_vocab,
                                         mask_formulas,
                                         normalize, spell_out, with_topology)
from assistant.understand.pasted import split_pasted
from assistant.understand.query import SIZE_KEYS, Ask, Params, Query, Situation, Stated
from assistant.understand.stated import stated_layout
from assistant.understand.spelling import zh_respelled
from assistant.understand.target_model import target_reader, with_targets

MAX_HISTORY_TURNS = 20  # older turns are dropped: a follow-up refers to the recent conversation
_FOLLOW_UP_CONTEXT_CHARS = 500  # of the previous question, added to a follow-up's retrieval text
# Below this intent score a follow-up with parameters keeps the intent of the turn it follows.
_WEAK_INTENT = 2.0
_FOLLOW_UP = re.compile(
    r"^\s*(?:what\s+(?:if|about)|and\s+(?:if|with|for|on)|how\s+about|same\s+(?:but|with|for)|now\s+(?:with|for|on)|instead|with\s+only|only\s+\d)"
    r"|^\s*(?:如果|那|那么|换成|改成|改为|要是|假如|同样|只有|若)",
    re.I,
)


# The YAML key a topic is configured by: retrieval finds the chunk that names it.
_IDENTIFIERS = {
    "tp": "tp_size", "pp": "pp_size", "cp": "cp_size", "ep": "ep_size", "hsdp": "dp_replicate_size",
    "sp": "sequence_parallel", "ac": "activation_checkpointing", "packing": "packed_sequence_size",
    "mixed_precision": "mp_policy", "grad_sync": "defer_fsdp_grad_sync", "moe": "moe_mesh",
}


def _turn_fields(turn) -> tuple[str, str]:
    if isinstance(turn, dict):
        return str(turn.get("role", "")), str(turn.get("content", ""))
    return str(getattr(turn, "role", "")), str(getattr(turn, "content", ""))


@lru_cache(maxsize=256)
def _read_turn(content: str) -> tuple[Params, str]:
    """An earlier user turn's parameters and intent; pure, so a conversation re-read each turn costs once."""
    p = extract_params(content)
    return p, score_intents(content, p).intent


@lru_cache(maxsize=4)
def _default_glossary(path: Path) -> Glossary:
    try:
        return load_glossary(path)
    except (OSError, ValueError):
        return Glossary()


def _topics(text: str, params: Params) -> tuple[str, ...]:
    v = load_vocab()
    found: list[str] = []
    masked = mask_formulas(text)  # "(dp_size × cp_size) % ep_size" is the EP rule, not CP asked about
    for feat, pat in v.features.items():
        if pat.search(masked):
            found.append(feat)
    for name, pat in v.strategies.items():
        if pat.search(text) and name not in found:
            found.append(name)
    for name, pat in v.topics.items():
        if pat.search(text) and name not in found:
            found.append(name)
    if params.is_moe and "moe" not in found:
        found.append("moe")
    for feat in sorted(params.wanted | params.unwanted):
        if feat not in found:
            found.append(feat)
    return tuple(found)


def _merge(current: Params, earlier: Params) -> Params:
    merged = current.merged_over(earlier)
    # A follow-up that restates the node count or GPUs per node (and not the total) changes the total.
    if current.world_size is None and (current.nodes is not None or current.gpus_per_node is not None):
        merged = replace(merged, world_size=None)
    elif current.world_size is not None and current.nodes is None and current.gpus_per_node is None:
        merged = replace(merged, nodes=None)
    # A new model named replaces everything about the old one.
    if current.model is not None or current.model_size_b is not None:
        merged = replace(
            merged,
            model=current.model,
            model_size_b=current.model_size_b,
            active_size_b=current.active_size_b,
            is_moe=current.is_moe,
            num_experts=current.num_experts,
        )
    # An exclusion now overrides a wish before, and the reverse ("now with PP").
    wanted = (earlier.wanted - current.unwanted) | current.wanted
    unwanted = (earlier.unwanted - current.wanted) | current.unwanted
    merged = replace(merged, wanted=frozenset(wanted), unwanted=frozenset(unwanted))
    return with_topology(merged)


def _with_request(p: Params, own: Params, *, world_size: int | None, gpus_per_node: int | None,
                  model: str | None, gpu: str | None) -> tuple[Params, Situation]:
    """The request's explicit values win over the text; where each number came from is kept."""
    over = {k: v for k, v in (("world_size", world_size), ("gpus_per_node", gpus_per_node), ("gpu", gpu),
                               ("model", model)) if v is not None}
    if world_size is not None and gpus_per_node is None and p.nodes and p.gpus_per_node \
            and p.nodes * p.gpus_per_node != world_size:
        over["nodes"] = None  # the explicit total wins over a node count read from the text
    if over:
        p = replace(p, **over)
    if world_size is not None:
        world_source = "request"
    elif p.world_size is None:
        world_source = None
    elif p.nodes and p.gpus_per_node and own.world_size == p.world_size and own.nodes and own.gpus_per_node:
        world_source = "nodes*gpus"
    else:
        world_source = "text"
    gpn_source = "request" if gpus_per_node is not None else ("text" if p.gpus_per_node is not None else None)
    return p, Situation(
        world_size=p.world_size, world_source=world_source, nodes=p.nodes, gpus_per_node=p.gpus_per_node,
        gpus_per_node_source=gpn_source, model=p.model, gpu=p.gpu, seq_len=p.seq_len,
        global_batch_size=p.global_batch_size, local_batch_size=p.local_batch_size,
        pp_microbatch_size=p.pp_microbatch_size,
    )


def _asks_carried(asks: tuple[Ask, ...], question: str, before: str, intent: str) -> tuple[Ask, ...]:
    """"And with pp 2 as well?" after "what's dp?": an elliptical follow-up asks again what the turn
    before asked (its numbers and verdicts), about the changed situation."""
    if any(a.kind in _OWN_ASK_KINDS for a in asks):
        return asks
    earlier = detect_asks(before, split_pasted(normalize(before)), intent, has_layout=True)
    if not any(a.kind in ("quantity", "verdict") for a in earlier):
        return asks
    return tuple(dict.fromkeys(Ask(a.kind, question, a.target or a.borrowed) for a in earlier
                               if a.kind in ("quantity", "verdict", "config")))


_OWN_ASK_KINDS = frozenset({"quantity", "verdict", "location", "diagnosis", "out_of_scope", "nonsense"})


def understand(
    question: str,
    history: Iterable = (),
    lang: str = "auto",
    *,
    glossary: Glossary | None = None,
    world_size: int | None = None,
    gpus_per_node: int | None = None,
    model: str | None = None,
    gpu: str | None = None,
    encoders: ClauseEncoders | None = None,
    on_retrieval_text: Callable[[str], None] | None = None,
) -> Query:
    """Language, intent, parameters (carried over from earlier user turns, overridden by the request's
    explicit values), the situation, the asks, topics, retrieval text. `on_retrieval_text` is told the
    retrieval text as soon as it is known, before the asks are read (the engine starts its embedding)."""
    question = zh_respelled((question or "")[:MAX_QUESTION_CHARS])
    turns = [_turn_fields(t) for t in history][-MAX_HISTORY_TURNS:]
    earlier_user = [zh_respelled(content) for role, content in turns if role == "user" and content.strip()]

    own = extract_params(question)
    carried = Params()
    prev_intent = None
    for content in earlier_user:
        p, turn_intent = _read_turn(content)
        carried = _merge(p, carried)
        if turn_intent != "nonsense":
            prev_intent = turn_intent
    params = _merge(own, carried) if earlier_user else with_topology(own)
    if earlier_user and own.prior_world_size is None and carried.world_size and params.world_size != carried.world_size \
            and find_scale(normalize(question))[1] is not None:
        # "now make it 8 nodes": the change replaces the world of the turns before
        params = replace(params, prior_world_size=carried.world_size)

    scored = score_intents(question, own)
    intent = scored.intent
    is_follow_up = bool(earlier_user) and (
        _FOLLOW_UP.search(normalize(question)) is not None or (scored.score < _WEAK_INTENT and own != Params())
    )
    intent = rescued_intent(question, intent)
    if is_follow_up and prev_intent and scored.score < _WEAK_INTENT:
        intent = prev_intent
    elif intent == "nonsense" and earlier_user and own != Params():
        intent = prev_intent or "strategy"

    if glossary is None:
        glossary = _default_glossary(KB_DIR / "glossary.yaml")
    text_for_topics = spell_out(normalize(question)[:MAX_PROSE_CHARS])
    topics = _topics(text_for_topics, params)
    retrieval = glossary.expand(question.strip())
    if is_follow_up:
        # "what if only 4 nodes?" retrieves nothing by itself: the question it follows says what about
        retrieval = f"{retrieval} {glossary.expand(earlier_user[-1].strip()[:_FOLLOW_UP_CONTEXT_CHARS])}"
    # Feature and strategy topics add the key that configures them; subject topics (mesh, batch ...)
    # are already in the question's own words.
    extra = [_IDENTIFIERS.get(t, t) for t in topics if t not in load_vocab().topics or t in _IDENTIFIERS]
    extra = [e for e in dict.fromkeys(extra) if e.lower() not in retrieval.lower()]
    if extra:
        retrieval = f"{retrieval} {' '.join(extra)}"
    if on_retrieval_text is not None:
        on_retrieval_text(retrieval)

    params, situation = _with_request(params, own, world_size=world_size, gpus_per_node=gpus_per_node,
                                      model=model, gpu=gpu)
    pasted = split_pasted(normalize(question))
    situation = replace(situation, stated=stated_layout(params, pasted.prose), pasted=pasted)
    has_layout = bool(situation.stated.sizes or pasted.configs or pasted.errors or situation.world_size)
    asks = detect_asks(question, pasted, intent, has_layout=has_layout,
        states_layout=bool(situation.stated.any() or pasted.configs or pasted.errors),
        read=clause_reader(encoders))
    # "good idea?", "靠谱吗", "any problem with that?" in words no cue lists: the fitted advice reader
    asks = with_advice(asks, advice_reader(encoders), split=clauses, prose=pasted.prose,
                       has_layout=bool(situation.stated.sizes or pasted.configs))
    # a quantity ask whose clause no target pattern holds ("模型被复制了几份"): the fitted target reader
    asks = with_targets(asks, target_reader(encoders), has_layout=has_layout)
    if is_follow_up and scored.score < _WEAK_INTENT:
        asks = _asks_carried(asks, question, earlier_user[-1], prev_intent or intent)
    asked = {a.target for a in asks if a.kind == "quantity" and a.target}
    stated = unquestioned(others_run(own_sizes(situation.stated, asks, question), asks, pasted.prose), asked,
                          pasted.prose)
    if stated is not situation.stated:
        dropped = set(situation.stated.sizes) - set(stated.sizes)
        situation = replace(situation, stated=stated)
        params = replace(params, **{k: None for k in dropped if k in SIZE_KEYS})
    return Query(
        text=question,
        # a pasted log is English whatever the asker writes: the language is the prose's around it
        lang=resolve_language(pasted.prose if pasted.errors and pasted.prose.strip() else question, lang),
        intent=intent,
        params=params,
        topics=topics,
        retrieval_text=retrieval,
        injection=detect_injection(question),
        situation=situation,
        asks=asks,
    )


def own_sizes(stated: Stated, asks: tuple[Ask, ...], question: str) -> Stated:
    """The stated sizes without those only another layout asked about proposes: in "tp 2 on 16 GPUs,
    what's dp_size? and with cp 2?" or "tp 4: valid? and with tp 8 pp 2, what's dp?" the cp 2 and the
    pp 2 are the asks' layouts (Ask.layout, a verdict's size target), not the user's. A size the first
    layout the question writes names stays the user's."""
    proposed: dict[str, int] = {}
    for a in asks:
        for sizes in (a.layout, a.target if a.kind == "verdict" else None):
            for kv in (sizes or "").split(","):
                k, _, v = kv.partition("=")
                if k in SIZE_KEYS and v.isdigit():
                    proposed.setdefault(k, int(v))
    if not proposed or not stated.sizes:
        return stated
    listed = layouts(question)
    if len(listed) < 2:
        return stated  # one layout written: the sizes are the user's
    later = {(k, v) for lay in listed[1:] for k, v in lay.items()}
    sizes = {k: v for k, v in stated.sizes.items() if k in listed[0] or proposed.get(k) != v or (k, v) not in later}
    return stated if sizes == dict(stated.sizes) else replace(stated, sizes=sizes)


def others_run(stated: Stated, asks: tuple[Ask, ...], prose: str) -> Stated:
    """"Can I leave ep_size out on 16 GPUs? A teammate set ep_size: 32 and it crashed, why?": the sizes of
    another person's run (a diagnosis ask's layout, read in the clause that reports it) are that run's, not
    the user's, when the rest of the question states the user's own setup and does not say them again."""
    theirs = {kv.partition("=")[0]: kv.partition("=")[2] for a in asks if a.kind == "diagnosis" and a.layout
              for kv in a.layout.split(",")}
    spans = claimed_spans(prose)
    if not theirs or not stated.sizes or not spans:
        return stated
    rest = prose
    for span in spans:
        rest = blank(rest, span)
    own = extract_params(rest)
    if not (own.world_size or own.strategy):
        return stated  # the whole story is theirs: their run is the layout asked about
    sizes = {k: v for k, v in stated.sizes.items() if theirs.get(k) != str(v) or getattr(own, k, None) is not None}
    return stated if sizes == dict(stated.sizes) else replace(stated, sizes=sizes)


_QUOTED_SPAN = re.compile(r"[\"'“‘「][^\"'”’」\n]{1,200}[\"'”’」]")


def unquestioned(stated: Stated, asked: set[str], prose: str) -> Stated:
    """Drop a size the question asks about when it was read only inside a quotation: in "a table lists
    'pp4·ep8·dp2': what is dp_size really?" the 2 is the label under question, not the user's dp_size."""
    doubtful = {k for k in stated.sizes if k in asked or k.removesuffix("_size") in asked}
    if not doubtful or not _QUOTED_SPAN.search(prose or ""):
        return stated
    outside = extract_params(_QUOTED_SPAN.sub(" ", prose))
    drop = {k for k in doubtful if getattr(outside, k, None) is None}
    if not drop:
        return stated
    return replace(stated, sizes={k: v for k, v in stated.sizes.items() if k not in drop})
