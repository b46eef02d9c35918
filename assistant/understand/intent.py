"""What a question asks for, and whether it tries to change the rules.

Keyword tables (`intents.yaml`, English and Chinese) score each intent; a few contextual boosts
that need the extracted parameters are applied here; the highest score wins and the table's
priority order breaks ties. A question with no domain word and no parameter is nonsense.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from assistant.datafile import read_yaml

from assistant.understand.params import MAX_PROSE_CHARS, load_vocab, normalize, tame
from assistant.understand.query import Intent, Params
from assistant.validator.capabilities import STRATEGY_NAMES, capabilities


_TABLE_PATH = Path(__file__).with_name("intents.yaml")


@dataclass(frozen=True)
class Rule:
    pattern: re.Pattern
    weight: float
    # Where the weight goes when no strategy is named: {"scenario": intent, "other": intent}; None keeps it.
    without_strategy: dict[str, str] | None = None
    only_limited_strategy: bool = False  # counts only when megatron_fsdp or ddp is named
    when_sized: str | None = None  # where the weight goes when the question states a world size or sizes


@dataclass(frozen=True)
class IntentTable:
    priority: tuple[str, ...]
    neutralise: re.Pattern
    neutralise_also: re.Pattern | None  # words that mean the neutralised phrase once it is in the question
    rules: dict[str, tuple[Rule, ...]]
    domain: tuple[re.Pattern, ...]
    injection: tuple[re.Pattern, ...]
    off_topic: tuple[re.Pattern, ...]
    strategy_lacks: dict[str, frozenset[str]]


@dataclass(frozen=True)
class IntentScore:
    intent: Intent
    score: float  # the winner's score; 0 when nothing matched and a default was taken
    scores: dict[str, float]


@lru_cache(maxsize=1)
def load_table(path: Path = _TABLE_PATH) -> IntentTable:
    data = read_yaml(path)
    rules = {
        name: tuple(
            Rule(re.compile(r["p"], re.I), float(r["w"]), r.get("without_strategy"), bool(r.get("only_limited_strategy")),
                 r.get("when_sized"))
            for r in entries
        )
        for name, entries in data["intents"].items()
    }
    return IntentTable(
        priority=tuple(data["priority"]),
        neutralise=re.compile("|".join(f"(?:{p})" for p in data["neutralise"]), re.I),
        neutralise_also=re.compile("|".join(f"(?:{p})" for p in data["neutralise_also"]), re.I)
        if data.get("neutralise_also") else None,
        rules=rules,
        domain=tuple(re.compile(p, re.I) for p in data["domain"]),
        injection=tuple(re.compile(p, re.I) for p in data["injection"]),
        off_topic=tuple(re.compile(p, re.I) for p in data.get("off_topic") or ()),
        # the strategies that lack a feature, and which: the validator's capability table
        strategy_lacks={n: frozenset(capabilities(n).refusals) for n in STRATEGY_NAMES if capabilities(n).refusals},
    )


def detect_injection(text: str) -> bool:
    """True when the text tries to switch off or talk around the rules ("ignore the validator")."""
    t = normalize(text)
    return any(p.search(t) for p in load_table().injection)


def _has_params(p: Params) -> bool:
    return any(
        v is not None
        for v in (p.model, p.model_size_b, p.nodes, p.gpus_per_node, p.world_size, p.gpu, p.seq_len, p.strategy,
                  p.tp_size, p.pp_size, p.cp_size, p.ep_size, p.dp_size, p.pp_microbatch_size, p.global_batch_size, p.yaml_text)
    ) or bool(p.wanted or p.unwanted)


def _names_strategy(prose: str, params: Params) -> bool:
    return params.strategy is not None or any(p.search(prose) for p in load_vocab().strategies.values())


def neutralised(text: str, table: IntentTable | None = None) -> str:
    """The text without the phrases that would mislead another intent; once one of them is there, its
    short forms go too ("what does activation_checkpointing actually checkpoint?" is no checkpoint question)."""
    table = table or load_table()
    out, n = table.neutralise.subn(" ", text)
    if n and table.neutralise_also is not None:
        out = table.neutralise_also.sub(" ", out)
    return out


def score_intents(question: str, params: Params) -> IntentScore:
    table = load_table()
    text = normalize(question)
    if params.yaml_text:
        text = text.replace(params.yaml_text.strip(), " ")
    text = tame(text[:MAX_PROSE_CHARS])
    prose = neutralised(text, table)
    scores = {name: 0.0 for name in table.rules}
    if not params.yaml_text and any(p.search(prose) for p in table.off_topic):
        # "write me a haiku about GPUs" borrows a domain word and asks for nothing this assistant does
        return IntentScore("nonsense", 0.0, scores)
    # "忽略校验" must not count as a request to check something: injection phrases score nothing.
    for pat in table.injection:
        prose = pat.sub(" ", prose)
    scenario = any(v is not None for v in (params.model_size_b, params.model, params.world_size, params.nodes))
    sized = scenario or any(v is not None for v in (params.tp_size, params.pp_size, params.cp_size, params.ep_size,
                                                     params.dp_replicate_size, params.global_batch_size))
    named = _names_strategy(prose, params)
    limited = params.strategy in table.strategy_lacks
    for name, rules in table.rules.items():
        for rule in rules:
            if rule.only_limited_strategy and not limited:
                continue
            if rule.pattern.search(prose):
                target = name
                if rule.without_strategy and not named:
                    target = rule.without_strategy["scenario" if sized else "other"]
                if rule.when_sized and sized:
                    target = rule.when_sized
                scores[target] += rule.weight

    # Context the tables cannot see.
    if params.yaml_text:
        scores["diagnose"] += 4.0
    if limited and (params.wanted - {"ac", "mixed_precision", "grad_sync"}):
        # "megatron_fsdp with PP?" / "ddp 能开 TP 吗": a named limited strategy plus a feature it lacks is a
        # limits question; plus a feature it has, only when asked in terms of support ("megatron_fsdp 支持
        # cp 吗" is, "megatron_fsdp with tp 2 and cp 2: what's dp_size?" is not)
        lacking = params.wanted & table.strategy_lacks[params.strategy]
        if scores["limitations"] > 0 or (lacking and re.search(r"\?|？|吗|呢", text)):
            scores["limitations"] += 2.0
    if params.strategy == "fsdp2" and params.wanted and scores["limitations"] > 0 and not limited:
        # fsdp2 lacks none of the features: "can FSDP2 do pure replication (dp_replicate_size = dp_size)?"
        # asks for that feature's own rules
        scores["howto"] += scores["limitations"]
        scores["limitations"] = 0.0
    if scenario:
        scores["strategy"] += 1.0
        # "what is the best layout for 70B on 64 GPUs" is a recommendation, not a definition
        scores["howto"] = max(0.0, scores["howto"] - 1.5)
    if params.wanted and not scenario:
        scores["howto"] += 0.5

    best = max(scores.values())
    if best <= 0:
        if not _has_params(params) and not any(p.search(prose) for p in table.domain):
            return IntentScore("nonsense", 0.0, scores)
        default: Intent = "strategy" if scenario else "howto"
        return IntentScore(default, 0.0, scores)
    if not _has_params(params) and not any(p.search(prose) for p in table.domain) and scores["out_of_scope"] <= 0:
        # "what is the weather" scores a little for howto yet says nothing about training
        return IntentScore("nonsense", 0.0, scores)
    order = {name: i for i, name in enumerate(table.priority)}
    winner = min((n for n, s in scores.items() if s == best), key=lambda n: order.get(n, len(order)))
    return IntentScore(winner, best, scores)  # type: ignore[arg-type]


def classify_intent(question: str, params: Params) -> Intent:
    return score_intents(question, params).intent
