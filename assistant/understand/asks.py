"""The asks of a question, in the order asked: "What are dp_size and ep_shard, and how many
grad-acc steps?" is three quantities; "will it hang?" over a pasted config is a verdict, then a
diagnosis. The words live in `asks.yaml`; here is only how they combine.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from assistant.datafile import read_yaml
from assistant.understand.gibberish import looks_like_gibberish
from assistant.understand.intent import load_table, neutralised
from assistant.understand.params import MAX_PROSE_CHARS, normalize, tame
from assistant.understand.query import Ask, Pasted

_TABLE_PATH = Path(__file__).with_name("asks.yaml")
MAX_ASKS = 6  # more than this is a list of topics, not questions; the first ones are answered
_IDENT = re.compile(r"`([^`\n]{2,80})`|(?<![A-Za-z0-9_])(_?[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[A-Z][a-z]+(?:[A-Z][A-Za-z0-9]*)+)(?![A-Za-z0-9_])")
_QUESTION_FORM = re.compile(r"[?？]\s*$|^\W*(?:what|how|where|when|who|why|which|can|could|is|are|do|does|will|would|should|tell|give|write|recommend)\b"
                            r"|吗|么\s*$|呢|咋|怎么|怎样|如何|什么|哪|为什么|能不能|可以|推荐|帮我|不\s*$", re.I)

_QUOTED = re.compile(r"[\"'“‘「]([^\"'”’」\n]{8,200})[\"'”’」]")


@dataclass(frozen=True)
class AskTable:
    split: re.Pattern
    kinds: dict[str, tuple[re.Pattern, ...]]
    suppress: dict[str, frozenset[str]]
    quantity_targets: tuple[tuple[str, re.Pattern], ...]
    from_intent: dict[str, str]
    domain: re.Pattern
    to_intent: dict[str, str]


@lru_cache(maxsize=1)
def load_asks(path: Path = _TABLE_PATH) -> AskTable:
    data = read_yaml(path)
    return AskTable(
        split=re.compile(data["split"], re.I),
        kinds={k: tuple(re.compile(p, re.I) for p in v) for k, v in data["kinds"].items()},
        suppress={k: frozenset(v) for k, v in (data.get("suppress") or {}).items()},
        quantity_targets=tuple((k, re.compile("|".join(f"(?:{p})" for p in v), re.I))
                               for k, v in data["quantity_targets"].items()),
        from_intent=dict(data["from_intent"]),
        domain=re.compile(data["domain"], re.I),
        to_intent=dict(data["to_intent"]),
    )


def rescued_intent(question: str, intent: str) -> str:
    """A "nonsense" verdict from the intent table overruled when the question names the domain and
    asks something ("How do I set fp16 params with fp32 gradient reduction?")."""
    if intent != "nonsense":
        return intent
    t = load_asks()
    prose = tame(normalize(question)[:MAX_PROSE_CHARS])
    if not t.domain.search(prose):
        return intent
    for clause in clauses(prose):
        kinds = _kinds_in(clause)
        if kinds:
            return t.to_intent.get(kinds[0][1], intent)
    return intent


def clauses(prose: str) -> list[str]:
    t = load_asks()
    parts = [p.strip(" \t,，、:：") for p in t.split.split(prose)]
    return [p for p in parts if p and re.search(r"\w", p)]


def _quantity_targets(clause: str) -> list[str]:
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []
    for name, pat in load_asks().quantity_targets:
        for m in pat.finditer(clause):
            if any(a <= m.start() < b for a, b in taken):
                continue  # "dp_shard" already read as dp_shard is not also a dp_size
            found.append((m.start(), name))
            taken.append(m.span())
            break
    return [n for _, n in sorted(found)]


def _identifier(clause: str) -> str | None:
    q = _QUOTED.search(clause)
    if q:
        return q.group(1).strip()
    m = _IDENT.search(clause)
    if m:
        return (m.group(1) or m.group(2)).strip()
    return None


def _kinds_in(clause: str) -> list[tuple[int, str]]:
    t = load_asks()
    hits: dict[str, int] = {}
    for kind, pats in t.kinds.items():
        for p in pats:
            m = p.search(clause)
            if m and (kind not in hits or m.start() < hits[kind]):
                hits[kind] = m.start()
    for kind, over in t.suppress.items():
        if kind in hits and over & hits.keys():
            del hits[kind]
    return sorted((pos, kind) for kind, pos in hits.items())


def _out_of_scope(clause: str) -> bool:
    table = load_table()
    clause = neutralised(clause, table)  # "activation checkpointing" is no checkpoint question
    return any(r.pattern.search(clause) for r in table.rules.get("out_of_scope", ()))


_ERROR_WORDING = re.compile(r"\bmust\b|\bnot supported\b|\bdivisible\b|\bmultiple of\b|\bunknown\b|\bnot\s+compatible\b"
                            r"|\brequires?\b|Error\b|\binvalid\b|>=|\bcannot\b", re.I)


_CAPABILITY_SUBJECT = re.compile(
    r"\b(?:fsdp2|megatron[_-]?fsdp|mfsdp|ddp|tp|pp|cp|ep|hsdp|dp_replicate(?:_size)?|sequence[_ ]parallel\w*|tensor|pipeline"
    r"|context|expert|activation[_ ]checkpointing|selective|packing|packed\w*)\b|张量并行|流水线|上下文并行|专家并行|序列并行|激活检查点",
    re.I)
_REFERS = re.compile(r"\b(?:it|this|that|these|those|my|the\s+(?:config|layout|setup|yaml|recipe|job|run))\b|这个|这样|我的|该配置|这套", re.I)


_CAPABILITY_VERB = re.compile(r"\b(?:support|supports|work\s+with|works\s+with|do|does|accept|accepts|take|handle|compatible|allow)\b"
                              r"|支持|能开|能用|兼容|可以开|能不能开|能配", re.I)


def _capability(clause: str) -> bool:
    """"does dp_replicate_size also work with ddp?": a strategy or feature asked about in terms of what it
    supports, no numbers, no "it" ("Is DDP okay?" after a cluster is a verdict on that cluster)."""
    return (not re.search(r"\d", clause) and _CAPABILITY_SUBJECT.search(clause) is not None
            and _CAPABILITY_VERB.search(clause) is not None and _REFERS.search(clause) is None)


def detect_asks(question: str, pasted: Pasted, intent: str, *, has_layout: bool = False,
                states_layout: bool = False) -> tuple[Ask, ...]:
    """One Ask per thing asked, in order; the intent decides only when no clause asks anything.

    A yes/no question with no layout to judge ("does megatron_fsdp support PP?") asks a fact about a
    strategy or field, not a verdict on a config; a quoted error message is also diagnosed. Keyboard
    mash around a domain word ("tp tp asdkj qwe") asks nothing unless it also states a layout, pastes
    a config or an error (`states_layout`)."""
    if looks_like_gibberish(question) and not states_layout:
        return (Ask("nonsense", question.strip()[:200]),)
    if intent == "nonsense":
        # A real question about something else is out of scope and is told so; keyboard mash is nonsense.
        kind = "out_of_scope" if _QUESTION_FORM.search(normalize(question)) else "nonsense"
        return (Ask(kind, question.strip()[:200]),)  # type: ignore[arg-type]
    prose = tame(normalize(pasted.prose)[:MAX_PROSE_CHARS])
    asks: list[Ask] = []
    seen: set[tuple[str, str | None]] = set()

    def add(kind: str, text: str, target: str | None) -> None:
        if (kind, target) not in seen and len(asks) < MAX_ASKS:
            seen.add((kind, target))
            asks.append(Ask(kind, text, target))  # type: ignore[arg-type]

    for clause in clauses(prose):
        kinds = _kinds_in(clause)
        if _out_of_scope(clause) and not any(k in ("quantity", "verdict", "location") for _, k in kinds):
            add("out_of_scope", clause, None)
            continue
        for _, kind in kinds:
            if kind == "quantity":
                for target in _quantity_targets(clause) or [None]:
                    add("quantity", clause, target)
            elif kind in ("fact", "location"):
                target = _identifier(clause) or (pasted.errors[0].strip().splitlines()[-1][:200]
                                                 if kind == "location" and pasted.errors else None)
                add(kind, clause, target)
            elif kind == "verdict" and (not has_layout or _capability(clause)):
                add("fact", clause, _identifier(clause))
            elif kind == "verdict":
                add(kind, clause, _identifier(clause))
            else:
                add(kind, clause, None)
    if not asks and looks_like_gibberish(prose):
        return (Ask("nonsense", question.strip()[:200]),)
    if not asks:
        kind = load_asks().from_intent.get(intent, "fact")
        add(kind, prose.strip()[:300] or question.strip()[:300], None)
    quoted = next((m.group(1).strip() for m in _QUOTED.finditer(prose) if _ERROR_WORDING.search(m.group(1))), None)
    if quoted and not any(a.kind == "diagnosis" for a in asks):
        add("diagnosis", prose.strip()[:300], quoted)  # an error message quoted in prose is explained too
    if (pasted.configs or pasted.errors) and not any(a.kind == "diagnosis" for a in asks):
        # Something pasted is always looked at: after the asked verdict or location, the diagnosis.
        add("diagnosis", prose.strip()[:300], None)
    return tuple(asks)
