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

import yaml

from assistant.understand.params import MAX_PROSE_CHARS, normalize, tame
from assistant.understand.query import Intent, Params

_TABLE_PATH = Path(__file__).with_name("intents.yaml")


@dataclass(frozen=True)
class IntentTable:
    priority: tuple[str, ...]
    neutralise: re.Pattern
    rules: dict[str, tuple[tuple[re.Pattern, float], ...]]
    domain: tuple[re.Pattern, ...]
    injection: tuple[re.Pattern, ...]


@dataclass(frozen=True)
class IntentScore:
    intent: Intent
    score: float  # the winner's score; 0 when nothing matched and a default was taken
    scores: dict[str, float]


@lru_cache(maxsize=1)
def load_table(path: Path = _TABLE_PATH) -> IntentTable:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    rules = {
        name: tuple((re.compile(r["p"], re.I), float(r["w"])) for r in entries)
        for name, entries in data["intents"].items()
    }
    return IntentTable(
        priority=tuple(data["priority"]),
        neutralise=re.compile("|".join(f"(?:{p})" for p in data["neutralise"]), re.I),
        rules=rules,
        domain=tuple(re.compile(p, re.I) for p in data["domain"]),
        injection=tuple(re.compile(p, re.I) for p in data["injection"]),
    )


def detect_injection(text: str) -> bool:
    """True when the text tries to switch off or talk around the rules ("ignore the validator")."""
    t = normalize(text)
    return any(p.search(t) for p in load_table().injection)


def _has_params(p: Params) -> bool:
    return any(
        v is not None
        for v in (p.model, p.model_size_b, p.nodes, p.gpus_per_node, p.world_size, p.gpu, p.seq_len, p.strategy,
                  p.tp_size, p.pp_size, p.cp_size, p.ep_size, p.global_batch_size, p.yaml_text)
    ) or bool(p.wanted or p.unwanted)


def score_intents(question: str, params: Params) -> IntentScore:
    table = load_table()
    text = normalize(question)
    if params.yaml_text:
        text = text.replace(params.yaml_text.strip(), " ")
    text = tame(text[:MAX_PROSE_CHARS])
    prose = table.neutralise.sub(" ", text)
    # "忽略校验" must not count as a request to check something: injection phrases score nothing.
    for pat in table.injection:
        prose = pat.sub(" ", prose)
    scores = {name: 0.0 for name in table.rules}
    for name, rules in table.rules.items():
        for pat, weight in rules:
            if pat.search(prose):
                scores[name] += weight

    # Context the tables cannot see.
    if params.yaml_text:
        scores["diagnose"] += 4.0
    if params.strategy in ("megatron_fsdp", "ddp") and (params.wanted - {"ac", "mixed_precision", "grad_sync"}):
        # "megatron_fsdp with PP?" / "ddp 能开 TP 吗": a named limited strategy plus a feature is a limits question
        if scores["limitations"] > 0 or re.search(r"\?|？|吗|呢", text):
            scores["limitations"] += 2.0
    scenario = any(v is not None for v in (params.model_size_b, params.model, params.world_size, params.nodes))
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
