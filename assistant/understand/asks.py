"""The asks of a question, in the order asked: "What are dp_size and ep_shard, and how many
grad-acc steps?" is three quantities; "will it hang?" over a pasted config is a verdict, then a
diagnosis. The words live in `asks.yaml`; here is only how they combine.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

from assistant.datafile import read_yaml
from assistant.understand.fact_cues import answers_itself
from assistant.understand.follow_on import asked_again, elliptic, follow_on_sizes, referenced_layout, short_size
from assistant.understand.gibberish import keyword_soup, looks_like_gibberish
from assistant.understand.inverse import solve_target
from assistant.understand.intent import load_table, neutralised
from assistant.understand.params import MAX_PROSE_CHARS, extract_params, history_spans, normalize, reports_claim, tame
from assistant.understand.pasted import split_pasted
from assistant.understand.query import SIZE_KEYS, Ask, Pasted
from assistant.understand.spelling import respelled
from assistant.validator.fields import field_table
from assistant.validator.upstream_errors import match_upstream_error

_TABLE_PATH = Path(__file__).with_name("asks.yaml")
MAX_ASKS = 6  # more than this is a list of topics, not questions; the first ones are answered
_IDENT = re.compile(r"`([^`\n]{2,80})`|(?<![A-Za-z0-9_])(_?[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[A-Z][a-z]+(?:[A-Z][A-Za-z0-9]*)+)(?![A-Za-z0-9_])")
_QUESTION_FORM = re.compile(r"[?？]\s*$|^\W*(?:what|how|where|when|who|why|which|can|could|is|are|do|does|will|would|should|tell|give|write|recommend)\b"
                            r"|吗|么\s*$|呢|咋|怎么|怎样|如何|什么|哪|为什么|能不能|可以|推荐|帮我|不\s*$|多少|几(?:个|张|步|次)", re.I)

# "good idea?", "合理吗": a verdict that asks for advice, so a warning (TP across nodes) answers it too
GOOD_IDEA = re.compile(r"\bgood\s+(?:idea|choice|plan)\b|\bbad\s+idea\b|\bwise\b|\bsensible\b|\breasonable\b"
                       r"|好主意|坏主意|合理|合适|好不好", re.I)
# an apostrophe inside a word ("We're", "What's") opens or closes no quote
_QUOTED = re.compile(r"(?:[\"“‘「]|(?<!\w)')([^\"'”’」\n]{8,200})(?:[\"”’」]|'(?!\w))")


@dataclass(frozen=True)
class AskTable:
    split: re.Pattern
    kinds: dict[str, tuple[re.Pattern, ...]]
    suppress: dict[str, frozenset[str]]
    quantity_targets: tuple[tuple[str, re.Pattern], ...]
    from_intent: dict[str, str]
    domain: re.Pattern
    to_intent: dict[str, str]
    advice: re.Pattern | None = None  # a verdict asked as advice: target "advice"


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
        advice=re.compile(data["advice"], re.I),
    )


def rescued_intent(question: str, intent: str) -> str:
    """A "nonsense" verdict from the intent table overruled when the question names the domain and
    asks something ("How do I set fp16 params with fp32 gradient reduction?")."""
    if intent != "nonsense":
        return intent
    t = load_asks()
    prose = _prose(question)
    if not t.domain.search(prose):
        return intent
    for clause in clauses(prose):
        kinds = _kinds_in(clause)
        if kinds:
            return t.to_intent.get(kinds[0][1], intent)
    return intent


# A forum post wrapped at a fixed width ("What does the default mp_policy use for\ngradient reduction?"):
# a line that ends inside an English sentence and a next line that goes on in lower case are one line,
# or the cut at the line break makes two half-questions. A list item, a capital, a question mark or a
# colon still starts a clause of its own. cues.sentence_of cuts the question's sentences by the same rule.
SOFT_WRAP = re.compile(r"(?<=[A-Za-z0-9,)`'\"])[ \t]*\n[ \t]*(?=[a-z`]|\((?!\d))")


def _prose(text: str) -> str:
    """The text clauses are cut from. A full-width comma ends a Chinese clause ("给我 yaml，dp 顺便说下")
    and NFKC would make it an ASCII one, so it becomes a clause break first; a full stop ends a clause
    even with no space after it ("16 机反而能跑。想问一下：... 改变了什么"); a soft-wrapped English line
    is joined to the next."""
    text = SOFT_WRAP.sub(" ", text.replace("，", "；").replace("。", "。 "))
    return tame(normalize(text)[:MAX_PROSE_CHARS])


# "（lbs 还是 6）": a bracketed aside; its closing bracket after a number is no list marker ("6）" would cut
# the clause there). Its closing bracket is hidden from the cut and put back after; "(2)" stays a marker.
_ASIDE_PAIR = re.compile(r"([（(])([^()（）\n]{2,60})[)）]")
_HIDDEN_CLOSE = "\u207e"


def clauses(prose: str) -> list[str]:
    t = load_asks()
    hidden = _ASIDE_PAIR.sub(lambda m: m.group(0) if m.group(2).strip().isdigit() else f"{m.group(1)}{m.group(2)}{_HIDDEN_CLOSE}",
                             respelled(prose))
    parts = [_LEADING_LINK.sub("", _ENUM_LABEL.sub("", p.strip(" \t,，、:："))).replace(_HIDDEN_CLOSE, ")")
             for p in t.split.split(hidden)]
    return [p for p in parts if p and re.search(r"\w", p)]


# "Question 1: what tp/pp would you suggest?", "Q2: ...", "问题2：...": the enumeration label is no part of the ask
_ENUM_LABEL = re.compile(r"^(?:(?:question|q)\s*\d{1,2}|问题\s*\d{1,2})\s*[:：.)）]\s*", re.I)


# "..., and could I use ep 16 instead?": the link word opens the clause, the ask follows it
_LEADING_LINK = re.compile(r"^(?:(?:and|or|but|so|also|plus|then)\b[\s,]*)+|^(?:那么|那|而且|并且|还有|另外|能的话|可以的话|行的话)[\s,]*", re.I)


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


# "with pp_size 2 and ep_size 2: does ep multiply ...": the sizes before the colon set the scene, the
# part after it asks; a size's short name there ("ep") names its field
_ASKING_PART = re.compile(r"[:：]\s*(?P<ask>[^:：]+)$")
_SIZE_SHORT = re.compile(r"\b(tp|pp|cp|ep|dp)\b(?!\s*[=:]?\s*\d)", re.I)


def _identifier(clause: str) -> str | None:
    q = _QUOTED.search(clause)
    if q:
        return q.group(1).strip()
    part = _ASKING_PART.search(clause)
    if part:
        asking = part.group("ask")
        field = next((r.key for r in field_table().mentioned(asking) if not r.is_strategy_name), None)
        short = _SIZE_SHORT.search(asking)
        if field or short:
            return field or f"{short.group(1).lower()}_size"
    field = next((r.key for r in field_table().mentioned(clause) if not r.is_strategy_name), None)
    if field:
        return field  # "minimax LoRA ...: do I need a distributed.pipeline block": the field, not "LoRA"
    m = _IDENT.search(clause)
    if m:
        return (m.group(1) or m.group(2)).strip()
    # "顺便问 ddp 能不能开 cp": the strategy the clause asks about, not the field a clause before it named
    # ("can I put it under fsdp2?" asks about "it", the field named before)
    if _PRONOUN.search(clause):
        return None
    return next((r.key for r in field_table().mentioned(clause) if r.is_strategy_name), None)


@lru_cache(maxsize=2048)
def _kinds_cached(clause: str) -> tuple[tuple[int, str], ...]:
    return tuple(_kinds_uncached(clause))


def _kinds_in(clause: str) -> list[tuple[int, str]]:
    """(position, kind) of every kind a clause's cues ask, in order (cached: the ask model's pre-pass
    and the clause loop read the same clauses)."""
    return list(_kinds_cached(clause))


def _kinds_uncached(clause: str) -> list[tuple[int, str]]:
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
                            r"|\brequires?\b|Error\b|\binvalid\b|>=|\bcannot\b|必须|整除|不支持|倍数", re.I)
# "报错说 ep_size 必须整除 ...，可我是 ...": an error message reported without quotes, up to the clause's end
_REPORTED = re.compile(r"(?:报错(?:说|提示|信息是)?|提示|\berror\s+says|\bit\s+says|\bcomplains?\s+that)\s*[:：]?\s*"
                       r"(?P<msg>[^，,。;；\n?？\"'“”]{8,160})", re.I)


def _marked(clause: str, whole: str) -> bool:
    """Somewhere in `whole`, `clause` is followed by a question mark (closing brackets and spaces
    between). Plain string search: a pattern built from each clause was a new regex per clause, per
    question, and those evicted the vocabulary patterns from re's cache."""
    start = whole.find(clause)
    while start >= 0:
        i = start + len(clause)
        while i < len(whole) and (whole[i].isspace() or whole[i] in ")）"):
            i += 1
        if i < len(whole) and whole[i] in "?？":
            return True
        start = whole.find(clause, start + 1)
    return False


def _announces(clause: str, whole: str) -> bool:
    """"几个问题：1）...", "Three questions: ...": the clause ends at a colon that opens what follows, and
    names no size or field of its own: it announces the asks, it is not one."""
    start = whole.find(clause)
    if start < 0:
        return False
    rest = whole[start + len(clause):].lstrip(" \t")
    return rest[:1] in (":", "：") and not _quantity_targets(clause) and not field_table().mentioned(clause) \
        and not re.search(r"\d", clause)


_ERROR_CLASS = re.compile(r"\b\w*(?:Error|Exception)\s*:")


def _reports_error(clause: str) -> bool:
    """The clause is an upstream error line as pasted ("`ValueError: ddp does not support tensor
    parallelism`。", "AssertionError: pp_batch_size 6 // ..."), with at most a few words around it."""
    m = _ERROR_CLASS.search(clause)
    return m is not None and m.start() <= 12 and bool(match_upstream_error(clause))


def _quoted_errors_whole(prose: str) -> str:
    """The prose with each quoted error message the clause cut would split ("decoder world_size (4) is
    not divisible by ..." breaks at its "(4)") put as one placeholder: the message's words are what is
    asked about, never clauses of their own; `quoted_error` still diagnoses the message itself."""
    def whole(m: re.Match) -> str:
        inner = m.group(1)
        return '"…"' if _ERROR_WORDING.search(inner) and len(clauses(inner)) > 1 else m.group(0)
    return _QUOTED.sub(whole, prose)


def quoted_error(text: str) -> str | None:
    """An error message quoted in prose ("I get \"ep_size must divide ...\""), without its quotes."""
    quoted = next((m.group(1).strip() for m in _QUOTED.finditer(text) if _ERROR_WORDING.search(m.group(1))), None)
    reported = next((m.group("msg").strip() for m in _REPORTED.finditer(text) if _ERROR_WORDING.search(m.group("msg"))), None)
    return quoted or reported


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


_SPLIT = "layers_per_stage"  # the layers per stage answers whether they divide evenly over the stages
# sizes upstream infers from the others (layers_per_stage: pipelining/functional.py splits the layers itself)
_DERIVED = frozenset({"dp_size", "dp_shard", "ep_shard", "dp_replicate", _SPLIT})
_NEED = re.compile(r"\b(?:need|have)\s+to\b|\bmyself\b|\bby\s+hand\b|要不要|是不是要|需不需要|用不用|自己写|手动", re.I)
_ALTERNATIVE = re.compile(r"\s*(?:or\b|还是)", re.I)  # a clause offered as the other side of the one before
_ASIDE = re.compile(r"\([^()]{1,60}\)")
_BARE_LAYOUT_QUESTION = re.compile(r"[?？]\s*$")
_ASKING_WORD = re.compile(r"\b(?:what|how|which|why|where|when|does|do|is|are|can|could|should|would|will|mean)\b"
                          r"|吗|么|什么|怎么|咋|多少|几|哪|呢|([\u4e00-\u9fff])不\1", re.I)  # 会不会, 能不能: A-not-A asks
# "what happens if I leave dp_size empty with tp 4 on 10 GPUs?": on a stated layout, what the run does
_WHAT_HAPPENS = re.compile(r"\bwhat\s+(?:happens|will\s+happen|would\s+happen)\b|会怎样|会怎么样|会如何|会发生什么|会咋样", re.I)
# "dp_size 不填", "leave dp_size null", "don't set dp_size": a derived size left for upstream to infer
_LEFT_UNSET = re.compile(
    r"\b(?P<a>dp_size|dp_shard(?:_size)?|ep_shard(?:_size)?|dp)\b[^?？,，。;；]{0,30}?(?:\b(?:null|none|empty|unset|blank|out|left\s+out)\b"
    r"|不填|不写|不设|留空|空着|省略|不指定|没写|没填|没设|为空|设成\s*null|写\s*null)"
    r"|(?:\b(?:leave|leaving|omit|omitting|skip|skipping|(?:don'?t|do\s+not|never|not)\s+(?:set|setting|specify|specifying|write|writing|give|giving))"
    r"|不填|不写|不设|不指定|省略)\s*(?:the\s+|a\s+|my\s+)?`?(?P<b>dp_size|dp_shard(?:_size)?|ep_shard(?:_size)?|dp)\b", re.I)
_UNSET_TARGET = {"dp": "dp_size", "dp_size": "dp_size", "dp_shard": "dp_shard", "dp_shard_size": "dp_shard",
                 "ep_shard": "ep_shard", "ep_shard_size": "ep_shard"}


def left_unset(text: str) -> str | None:
    """The derived size the question leaves unset ("dp_size 不填", "leave dp_size null"), as a quantity
    target; None when it leaves none."""
    m = _LEFT_UNSET.search(text)
    return _UNSET_TARGET.get((m.group("a") or m.group("b")).lower()) if m else None


# \b only after the English words: between two Chinese characters there is no word boundary ("要是把 tp
# 提到 8" is a condition too)
_CONDITION = re.compile(r"^\W*(?:(?:if|when|whenever|suppose|assuming)\b|如果|假如|要是|假设)", re.I)
# "And with ep_size 8 on these 16 GPUs, what's ep_shard_size?": sizes stated just before a quantity ask
_WITH_SIZES = re.compile(r"^\W*with\b(?=[^,?]*\d)", re.I)
_PRONOUN = re.compile(r"\b(?:it|that|this|them|they|its)\b|它|这个|那个|该(?:字段|选项|参数)", re.I)
_INSTEAD = re.compile(r"\binstead\b|\bswitch(?:ed)?\s+to\b|\bgo\s+(?:down|up)\s+to\b"
                      r"|\b(?:change|drop|lower|reduce|raise|increase|bump|set|move|cut)\s+(?:\w+\s+){0,2}to\s+"
                      r"(?:(?:tp|pp|cp|ep|dp)(?:_size)?\s*[=:]?\s*)?\d"  # "drop pp to 3", "drop to ep 4"
                      r"|\b(?:what|how)\s+about\b|(?:换|改)(?:成|到|为)|如果改|要是改", re.I)


def _asks_in_scope(clause: str, kinds: list[tuple[int, str]]) -> bool:
    """A clause that names a neighbouring topic still asks about our part when it asks a number, a
    verdict or a code location, or asks anything about a `distributed:` field it names ("how do I
    write the sbatch script" asks about the script)."""
    found = {k for _, k in kinds}
    if found & {"verdict", "location"} or "quantity" in found and _quantity_targets(clause):
        return True  # "lora 的 rank 设多少合适" asks a number, but none of ours
    return bool(found) and any(not r.is_strategy_name for r in field_table().mentioned(clause))


def _claimed_sizes(statement: str) -> str | None:
    """The parallel sizes a statement reports someone else claims ("同事说 dp_replicate_size 直接写 16 也行"),
    as `instead_sizes` writes them; None when it reports no claim (the user's own layout, "64 卡 pp 4 ep 16，
    行不行", is judged as stated) or states no size."""
    if not reports_claim(statement):
        return None
    p = extract_params(statement)
    sizes = [f"{k}={getattr(p, k)}" for k in SIZE_KEYS if isinstance(getattr(p, k, None), int)]
    return ",".join(sizes) or None


# "改成 ep 32 行不行，行的话每卡几个 expert": the clause after "if so" asks on the alternative just proposed
# (clauses() strips the link word, so it is read in the text before the clause)
_IF_SO = re.compile(r"(?:能的话|可以的话|行的话|可行的话|\bif\s+(?:so|yes|it\s+does|that\s+works)\b)[\s,，]*$", re.I)


def _if_so(whole: str, at: int) -> bool:
    """The clause that starts at `at` in `whole` follows an "if so" ("行的话")."""
    return at > 0 and _IF_SO.search(whole[max(0, at - 20):at]) is not None


_DROPPABLE = ("tp", "pp", "cp", "ep")


def _follow_on_values(clause: str, named: str | None, named_size: str | None) -> str | None:
    """The values an elliptic follow-on puts in place, as `Ask.layout` writes them: its sizes ("ep4 pp2
    呢"), an alternative ("tp 改成 4 的话呢"), a field changed ("And local to 4?"), a bare number for the
    field named before ("取 2 的话呢"), a size turned off, a strategy switched to; None when it states none."""
    return (follow_on_sizes(clause) or instead_sizes(clause) or _field_value(clause) or _bare_value(clause, named)
            or _dropped_sizes(clause) or _without_named(clause, named_size) or _sizes_of(clause))


# "without it", "不设的话": the size named before (or in the clause) taken away; "it" is the field named before
_WITHOUT = re.compile(r"\bwithout\b|\b(?:don'?t|do\s+not|not)\s+(?:set|setting|use|using)\b|不设|不加|不开|不写|不填|不用|去掉", re.I)


def _without_named(text: str, named: str | None) -> str | None:
    """"And what is dp_shard without it?" after "dp_replicate_size: 2", "不设的话呢": the parallel size the
    clause takes away, at 1 (as upstream reads an unset size), written as `instead_sizes` writes them;
    the size it names itself, else the one named before it; None when it takes none away or sets one."""
    if not _WITHOUT.search(text or ""):
        return None
    p = extract_params(text)
    if any(isinstance(getattr(p, k, None), int) for k in SIZE_KEYS):
        return None  # "without pp, with tp 4": a size set is a layout of its own (instead_sizes reads it)
    own = next((r.key for r in field_table().mentioned(text) if r.key in SIZE_KEYS), None)
    key = own or (named if named in SIZE_KEYS and (_PRONOUN.search(text) or not field_table().mentioned(text)) else None)
    return f"{key}=1" if key and key != "dp_size" else None


def _dropped_sizes(text: str) -> str | None:
    """"把 pp 去掉以后 dp_size 是多少", "without TP, what's dp?": the sizes the clause turns off, at 1, as
    `instead_sizes` writes them; None when it turns none off (or also sets one)."""
    p = extract_params(text)
    if any(isinstance(getattr(p, k, None), int) for k in SIZE_KEYS):
        return None
    off = [f"{f}_size=1" for f in _DROPPABLE if f in p.unwanted]
    return ",".join(off) or None


def instead_sizes(clause: str) -> str | None:
    """"could I use ep 16 instead?", "能不能换成 tp 4": the sizes of the alternative the user asks about,
    as `ep_size=16` (several joined by commas); None when the clause proposes no other size."""
    if not _INSTEAD.search(clause):
        return None
    p = extract_params(clause)
    sizes = [f"{k}={getattr(p, k)}" for k in SIZE_KEYS if isinstance(getattr(p, k, None), int)]
    return ",".join(sizes) or None


_GBS = re.compile(r"\bgbs\b|\bglobal[\s_-]*batch", re.I)  # global_batch_size as users write it


def _values_target(clause: str, about: str) -> str | None:
    """"pp_size 能取哪几个", "nearest valid global batch sizes": `values:<field>` for the field whose
    allowed values the clause asks (named in it, else in the clause it goes on from); None otherwise."""
    targets = _quantity_targets(clause)
    if "allowed_values" not in targets or "max_ep" in targets:
        return None  # the largest ep_size has its own answer (the experts cap it too)
    for text in (clause, about):
        if _GBS.search(text):
            return "values:global_batch_size"
        # a number's values are counted; a name's ("activation_checkpointing 能填哪些值") are the field's facts
        field = next((r.key for r in field_table().mentioned(text) if not r.is_strategy_name), None) \
            or short_size(text)  # "ep 可以取哪些值": a size by its short name
        if field and field_table().get(field)[0].type.startswith("int"):
            return f"values:{field}"
        if field:
            return None
    return None


# "取 2 的话每步几个 microbatch", "写 2 的话 dp_shard 是多少", "How many microbatches with 4?", "如果改成 128": a bare number put in place of
# the value of the field the question just named
_BARE_VALUE = re.compile(r"(?:(?:取|设(?:成|为)?|写(?:成|为)?|用|改(?:成|为|到)|换(?:成|到)|调(?:成|到)|是)\s*(?P<zh>\d+)\s*(?:的话|时|呢)"
                         r"|(?:如果|要是|假如)\s*(?:改|换|设|调)(?:成|为|到)\s*(?P<zh2>\d+)(?!\s*[a-z\u4e00-\u9fff%])"
                         r"|\b(?:with|at|to)\s+(?P<en>\d+)\s*(?:[?？,]|$|\s+(?:instead|then|how|what)\b))", re.I)


def _bare_value(text: str, named: str | None) -> str | None:
    """`<field>=<n>` for a clause that puts a bare number in place of the named field's value; None when
    the clause states none, or no integer field was named before."""
    m = _BARE_VALUE.search(text or "")
    rows = field_table().get(named) if m is not None and named else []
    if not rows or not rows[0].type.startswith("int"):
        return None
    return f"{named}={int(m.group('zh') or m.group('zh2') or m.group('en'))}"


# "local 改成 4 的话呢", "if I bump local to 8": "local" with a change to a number is local_batch_size
_LOCAL_CHANGED = re.compile(r"(?<![\w.-])local\s*(?:to|=|成|为|到|改成|改为|设成|设为|调到|加到|提到|换成)\s*(\d+)(?![\w.])", re.I)


def _field_value(text: str) -> str | None:
    """"If I drop pp_microbatch_size to 1": `pp_microbatch_size=1` for a condition that sets a number field
    other than the parallel sizes (those `_sizes_of` reads); None otherwise."""
    rows = [r for r in field_table().mentioned(text or "") if not r.is_strategy_name]
    if not rows:
        local = _LOCAL_CHANGED.search(text or "")
        return f"local_batch_size={int(local.group(1))}" if local else None
    if rows[0].key in SIZE_KEYS or not rows[0].type.startswith("int"):
        return None
    m = re.search(rf"{re.escape(rows[0].key)}`?\s*(?:to|=|:|成|为|到|改成|改为|设成|设为)?\s*(\d+)\b", text)
    return f"{rows[0].key}={int(m.group(1))}" if m else None


def _sizes_of(text: str) -> str | None:
    """The parallel sizes a condition states ("if I drop to tp_size 2": `tp_size=2`), as `instead_sizes`
    writes them; None when it states none."""
    if not text:
        return None
    p = extract_params(text)
    # "要是换回 fsdp2、保留 dp_replicate_size 2": the strategy the condition switches to, with the sizes
    strategy = [f"strategy={p.strategy}"] if getattr(p, "strategy", None) else []
    return ",".join(strategy + [f"{k}={getattr(p, k)}" for k in SIZE_KEYS if isinstance(getattr(p, k, None), int)]) or None


_YAML_STRATEGY = re.compile(r"^\s*strategy:\s*[\"']?(fsdp2|megatron_fsdp|ddp)\b", re.M)


def _others_sizes(clause: str, previous: str) -> str | None:
    """"A teammate set ep_size: 32 and it crashed, what would that error be about?": the sizes of the
    other person's run the clause (or the clause before it) reports, as `instead_sizes` writes them."""
    told = next((t for t in (clause, previous) if t and reports_claim(t)), None)
    return _sizes_of(told) if told else None


def _switched_to(condition: str, strategies: list) -> str | None:
    """"Does megatron_fsdp take cp? If we switch, does dp stay the same?": a condition that states no
    strategy or size of its own is asked on the strategy named last when that is another one than the
    user's (the first named, the pasted config's first of all), as `strategy=<name>`; None otherwise."""
    if not condition or _sizes_of(condition) or not strategies or strategies[-1] == strategies[0]:
        return None
    return f"strategy={strategies[-1]}"


def _size_map(text: str) -> dict[str, str]:
    """The parallel sizes a text states, by key (`_sizes_of`'s, the strategy aside)."""
    return {k: v for k, v in (part.split("=", 1) for part in (_sizes_of(text) or "").split(",") if "=" in part)
            if k != "strategy"}


def _retold(clause: str, told: dict[str, str]) -> str | None:
    """"ep_size 8: works fine. I then tried ep_size 32 and it fails": the sizes of a clause that tells
    another value of a size the statements before it told (the run that failed is this one, not the
    one that works), as `_sizes_of` writes them; None when it retells none."""
    mine = _size_map(clause)
    return _sizes_of(clause) if any(k in told and told[k] != v for k, v in mine.items()) else None


def _tried_sizes(told: str, clause: str) -> str | None:
    """"I also tried dp_replicate_size: 8 and got a ValueError, what am I missing?": the sizes the
    statement between the last ask and a diagnosis ask states, when the asking clause states none: the
    run that failed is that layout, not the one pasted (the caller asks only beside a pasted config, or
    when the statement tells another value of a size a statement before it told: "ep_size 8: works
    fine. I then tried ep_size 32 and it fails"; otherwise "my numbers are ep 16, dp 4, tp 4" is the
    user's layout itself); None otherwise."""
    return None if not told or _sizes_of(clause) else _sizes_of(told)


def _clause_asks(clause: str, about: str, kinds: list[tuple[int, str]], own: str | None, ident: str | None,
                 error: str | None, has_layout: bool, modelled: bool = False) -> list[tuple[str, str, str | None]]:
    """(kind, text, target) for each kind one clause asks. `about` is the clause with the one that
    named its field; `ident` the identifier it is about (its own, or the one "it" refers to).
    `modelled`: the kind is the ask model's reading, learned from clauses labelled with the kind they
    ask, so a verdict it reads with no layout stated ("megatron_fsdp 可以设置 defer_fsdp_grad_sync 吗") stays
    one; a cue's verdict with no layout to judge is a fact."""
    out: list[tuple[str, str, str | None]] = []
    advice = has_layout and load_asks().advice is not None and bool(load_asks().advice.search(clause))
    if advice:
        # "tp 16 on two nodes, good idea?", "tp 8 pp 2，建议这样吗": a verdict that weighs the warnings
        kinds = [(p, k) for p, k in kinds if k not in ("recommendation", "verdict", "fact")] + [(len(clause), "verdict")]
    # "之前 ... 改成 pp_size=8 才训起来" tells what was done; only a clause that asks proposes an alternative
    alt = instead_sizes(clause) if has_layout and (kinds or _ASKING_WORD.search(clause)) else None
    if alt:
        # "or should I drop pp to 3?": a verdict on that change, not a wish for a layout of ours
        kinds = [(p, k) for p, k in kinds if k != "recommendation"]
        kinds = kinds if any(k == "verdict" for _, k in kinds) else kinds + [(len(clause), "verdict")]
    values = _values_target(clause, about)
    if values:
        # "Which pp_microbatch_size values are allowed?": the values asked, not a verdict on the layout
        kinds = [(p, k) for p, k in kinds if k not in ("verdict", "fact", "quantity")] + [(0, "quantity")]
    for _, kind in kinds:
        if kind == "quantity" and values:
            out.append(("quantity", clause, values))
        elif kind == "quantity":
            # "dp_size 我写的 none，实际会是多少": the size the clause before named is the one a cue's bare
            # "how much" asks (a clause only the model reads as a quantity keeps its own reading)
            targets = _quantity_targets(clause) or (_quantity_targets(about) if about != clause and not modelled else [])
            out += [("quantity", clause, target) for target in targets or [None]]
        elif kind == "fact" and has_layout and _WHAT_HAPPENS.search(clause) and re.search(r"\d", clause):
            out.append(("verdict", clause, own))  # "what happens with tp 4 on 10 GPUs?": what the run does
        elif kind in ("fact", "location"):
            target = ident or (error if kind == "location" else None)
            out.append((kind, about if kind == "fact" else clause, target))
            if kind == "fact" and has_layout and target in _DERIVED and (_NEED.search(clause) or _ALTERNATIVE.match(clause)):
                # "with pp 4 on 32 GPUs, do I set dp_size myself?", and "能跑吗，还是要配 layers_per_stage？" (the
                # other side of "does it run as it is"): whether to set a size upstream derives, and its value
                out.append(("quantity", clause, target))
            elif kind == "fact" and has_layout and _SPLIT in _quantity_targets(clause):
                # "46 层在这边也必须能被 4 整除吗": whether the layers must divide evenly is the split at those sizes
                out.append(("quantity", clause, _SPLIT))
        elif kind == "verdict" and alt:
            out.append((kind, clause, alt))  # "could I use ep 16 instead?": the user's layout with that change
        elif kind == "verdict" and not modelled and (not has_layout or _capability(clause)):
            out.append(("fact", about, ident))
        elif kind == "verdict" and advice:
            out.append((kind, clause, "advice"))
        else:
            out.append((kind, clause, own if kind == "verdict" else None))
    return out


# The fitted model's reading of a question's clauses (ask_model.clause_reader): each clause's
# probability per label, one batch per question; None answers by the rules alone. The stored model's
# reader also carries its fitted thresholds (`min_probability`, `statement_probability`,
# `override_probability`).
ClauseReader = Callable[[Sequence[str]], list[dict[str, float]]]
_MODEL_KINDS = frozenset({"verdict", "quantity", "fact", "location", "recommendation", "config", "diagnosis",
                          "out_of_scope", "nonsense"})
# the kinds the model may read in place of a cue's: the answer kinds (a cue's clause is in scope)
_OVERRIDE_KINDS = frozenset({"verdict", "quantity", "fact", "location", "recommendation", "config", "diagnosis"})
DEFAULT_MIN_PROBABILITY = 0.45  # without a fitted threshold (a reader that carries none)
NEVER = 1.01  # an override threshold no probability reaches


def cue_kinds(clause: str) -> list[tuple[int, str]]:
    """(position, kind) of the kinds a clause's exact cues ask, an aside ("tp 4 pp 2 (pipeline 默认)") and
    a quoted message ("... is supported only for FSDP2") taken out: they are not how it is asked."""
    return _kinds_in(_QUOTED.sub(" ", _ASIDE.sub(" ", clause)))


def _undecided(clause: str) -> bool:
    """A clause none of the exact cues decides: what the model reads."""
    return not _CONDITION.match(clause) and not cue_kinds(clause)


_STATEMENT_SURE = 0.9  # the model's reading of `context` that outweighs a verdict or fact cue on a statement


def _stated_not_asked(clause: str, kinds: list[tuple[int, str]], p: dict[str, float], marked: bool) -> bool:
    """A clause with no question mark and no question form that a verdict or fact cue matched, but the
    model reads as a statement with confidence ("We are not allowed to use ddp ..., and we can't go above
    tp 2 either.", "公司模板强制 fsdp2，ddp 不让用"): context. A diagnosis cue alone is read the same way: a
    story of a fix or a report read elsewhere ("Following up on the CP mesh fix I saw merged") states
    context; a failure of the user's own run is what the model reads as diagnosis, not context."""
    if marked or _QUESTION_FORM.search(clause) or any(k not in ("verdict", "fact", "diagnosis") for _, k in kinds):
        return False
    return p.get("context", 0.0) >= _STATEMENT_SURE


def model_kind(p: dict[str, float], clause: str, min_probability: float,
               statement_probability: float = NEVER) -> str | None:
    """The model's reading of a clause no cue decides: its most likely ask kind when that is more likely
    than `context` and at least the threshold fitted on the training data for the clause's form
    (`min_probability` for a question form, `statement_probability` for a statement: "we have 2 nodes of
    8 H100" is context unless the model is sure it asks); else a clause in a question form is an
    `unknown` ask (kept, never dropped) unless `context` is the likelier reading, and a statement is
    context (None)."""
    asked = max((k for k in p if k in _MODEL_KINDS), key=p.get)
    context = p.get("context", 0.0)
    question = _QUESTION_FORM.search(clause) is not None
    if p[asked] > context and p[asked] >= (min_probability if question else statement_probability):
        return asked
    if not question or context >= min_probability and context >= p[asked]:
        return None
    return "unknown"


def overruled_kind(p: dict[str, float], cue: str, override_probability: float) -> str | None:
    """The kind the model reads in place of the one kind a clause's cues read ("tp 要不要开" cues a fact,
    the model reads advice: a recommendation): another answer kind with at least `override_probability`
    (fitted on the cross-validated reading of the labelled clauses); None keeps the cue's."""
    asked = max((k for k in p if k in _OVERRIDE_KINDS), key=p.get)
    return asked if asked != cue and p[asked] >= override_probability else None


def _judged_anyway(asks: list, prose: str) -> bool:
    """A pasted config the asks compute numbers on, in a story that tells of no failure ("跑得好好的",
    "stable for three days"): the numbers and the judged layout answer it, a diagnosis would only repeat
    the verdict at length (a verdict alone, "will it hang?", keeps the diagnosis of what fails)."""
    return any(a.kind == "quantity" for a in asks) and all(k != "diagnosis" for _, k in cue_kinds(prose))


def detect_asks(question: str, pasted: Pasted, intent: str, *, has_layout: bool = False,
                states_layout: bool = False, read: ClauseReader | None = None,
                min_probability: float | None = None, statement_probability: float | None = None,
                override_probability: float | None = None) -> tuple[Ask, ...]:
    """One Ask per thing asked, in order; the intent decides only when no clause asks anything.

    A yes/no question with no layout to judge ("does megatron_fsdp support PP?") asks a fact about a
    strategy or field, not a verdict on a config; a quoted error message is also diagnosed. Keyboard
    mash around a domain word ("tp tp asdkj qwe") asks nothing unless it also states a layout, pastes
    a config or an error (`states_layout`).

    `read` is the fitted ask model: it reads every clause no cue decides, and a clause whose cues read
    one kind, which it may overrule; its thresholds are the reader's own unless given here."""
    if min_probability is None:
        min_probability = getattr(read, "min_probability", DEFAULT_MIN_PROBABILITY)
    if statement_probability is None:
        statement_probability = getattr(read, "statement_probability", NEVER)
    if override_probability is None:
        override_probability = getattr(read, "override_probability", NEVER)
    if looks_like_gibberish(question) and not states_layout or keyword_soup(question):
        # soup has no number to state a size with: a strategy named in it ("fsdp tp blah") is no layout
        return (Ask("nonsense", question.strip()[:200]),)
    if intent == "nonsense":
        # A real question about something else is out of scope and is told so; keyboard mash is nonsense.
        kind = "out_of_scope" if _QUESTION_FORM.search(normalize(question)) else "nonsense"
        return (Ask(kind, question.strip()[:200]),)  # type: ignore[arg-type]
    # the prose is split again from the question as typed: NFKC has already made its full-width commas ASCII
    prose = _prose(split_pasted(question).prose if "，" in question else pasted.prose)
    asks: list[Ask] = []
    seen: set[tuple[str, str | None, str | None]] = set()

    def add(kind: str, text: str, target: str | None, layout: str | None = None, borrowed: str | None = None) -> None:
        # the same number asked twice is one ask (on another layout it is another); two questions about
        # one field are two
        key = (kind, target or borrowed, text if kind in ("fact", "unknown") or borrowed else layout)  # two unsure clauses are two asks
        if key not in seen and len(asks) < MAX_ASKS:
            seen.add(key)
            aspect = "advice" if kind == "verdict" and GOOD_IDEA.search(text) else None
            asks.append(Ask(kind, text, target, aspect, layout, borrowed))  # type: ignore[arg-type]

    named: str | None = None  # the identifier the clauses so far are about: what "it" refers to
    named_size: str | None = None  # the last parallel size named: what "without it" takes away
    named_in = ""  # the clause that named it
    previous = ""  # the clause before this one
    previous_stated = False  # the clause before asked nothing: a statement ("同事说 dp_replicate_size 写 16 也行")
    asked_elsewhere: set[str] = set()  # out-of-scope clauses that ask something ("how do I launch it on Slurm?")
    condition = ""  # "If I leave ep_size: null in the YAML, is that read as 1?": the condition is part of the ask
    whole = _quoted_errors_whole(prose)
    cut = clauses(whole)
    # a clause the cut ended at its question mark asks by its form, whatever its first word ("and in
    # which order are ...?")
    marked = {c for c in cut if _marked(c, whole)}
    # the clauses that tell of an earlier run ("Coming from Megatron, where a run ... failed with "…"",
    # "之前在 Megatron 里 ... 报过 ..."): a failure told there is diagnosed after the asks about this run
    spans = history_spans(whole)
    told_before = {c for c in cut if any(a <= whole.find(c) < b for a, b in spans)}
    quoted = quoted_error(prose)
    # what the model reads: every clause no cue decides, and (when a fitted threshold lets it overrule
    # one) every clause whose cues read a single kind; one batch for the whole question
    to_read = [c for c in cut if _undecided(c) or override_probability <= 1.0
               and len({k for _, k in cue_kinds(c)}) == 1] if read is not None else []
    # the cue-decided statements (no question mark, no question form) the model also reads: a stated
    # constraint or story that a cue word ("allowed", "ddp") made look like an ask
    stated = [c for c in cut if c not in marked and not _QUESTION_FORM.search(c) and c not in to_read
              and not _CONDITION.match(c)] if read is not None else []
    batch = to_read + stated
    modelled_all = dict(zip(batch, read(batch))) if batch else {}
    modelled = {c: modelled_all[c] for c in to_read}
    last_clause_asks: list[Ask] = []  # the asks the clause before added: an elliptic follow-on repeats them
    tried = ""  # the last statement since the last ask that states sizes ("I also tried dp_replicate_size: 8")
    told: dict[str, str] = {}  # the sizes the statements before `tried` state: the run that works
    retold = False  # `tried` states another value of a size a statement before it states ("then tried ep_size 32")
    cursor = 0  # where the clause before ended in `whole`: a clause said twice is found at its own place
    # the strategies named so far, the pasted config's first: "if we switch" switches to the last other one
    strategies = [m.group(1) for c in pasted.configs if (m := _YAML_STRATEGY.search(c))]
    for clause in cut:
        at = whole.find(clause, cursor)
        cursor = at + len(clause) if at >= 0 else cursor
        if (named_strategy := extract_params(clause).strategy) and not _CONDITION.match(clause):
            strategies.append(named_strategy)
        if _announces(clause, whole):
            continue
        clause_retold = _retold(clause, told)  # before this clause's own sizes count as told
        if clause not in marked and not _QUESTION_FORM.search(clause) and _sizes_of(clause):
            retold = clause_retold is not None
            told.update(_size_map(clause))
            tried = clause
        # "ep8 pp4 的话 dp 是多少？ep4 pp2 呢？", "what's dp_size? and with cp 2?", "梯度累积几步？local 改成 4 的话呢":
        # the asks before, again on the values this clause puts in place (follow_on.py reads which);
        # "with tp 8 pp 2, what's dp?" asks a number of its own and is a condition
        # ("如果改成 128，梯度累积几步？": a condition the clause after it asks on, unless asked by its own mark)
        own_mark = clause in marked or clause.rstrip().endswith("呢")
        values = _follow_on_values(clause, named, named_size) if has_layout and elliptic(clause, clause in marked) \
            and (own_mark or not _CONDITION.match(clause)) and not _quantity_targets(clause) \
            and {k for _, k in cue_kinds(clause)} <= {"verdict"} else None
        again = asked_again(last_clause_asks, asks, bool(_field_value(clause))) if values else []
        if again:
            for a in again:
                if a.kind == "quantity":
                    add("quantity", clause, a.target, values, a.borrowed)
                else:
                    add("verdict", clause, values)
            last_clause_asks = again
            previous, tried, previous_stated = clause, "", False
            continue
        added = len(asks)
        if clause not in marked and not _QUESTION_FORM.search(clause) and _reports_error(clause):
            continue  # "报 `ValueError: ddp does not support ...`。": the error itself; its diagnosis answers it
        kinds = cue_kinds(clause)
        if kinds and clause in modelled_all and _stated_not_asked(clause, kinds, modelled_all[clause], clause in marked):
            previous, previous_stated = clause, True  # "we can't go above tp 2 either.": a constraint stated, not a question
            continue
        if _CONDITION.match(clause):
            kinds = [(p, k) for p, k in kinds if k != "config"]  # "if I write tp_size: 2.0 in the YAML": a condition
            if not kinds:
                condition = clause
                continue
        raw = clause
        by_model = False  # the clause's kind is the model's reading, not a cue's
        if kinds and raw in modelled and len({k for _, k in kinds}) == 1:
            overruled = overruled_kind(modelled[raw], kinds[0][1], override_probability)
            kinds, by_model = ([(0, overruled)], True) if overruled else (kinds, False)
        # "要是把 tp_size 提到 8，dp 和梯度累积分别变成多少": a quantity asked on the sizes its condition or its
        # "instead" puts in place of the user's
        layout = (_field_value(condition) or _sizes_of(condition) or _switched_to(condition, strategies)
                  or instead_sizes(raw)
                  or _field_value(raw) or _bare_value(condition or raw, named) or _dropped_sizes(condition or raw)
                  or _without_named(condition or raw, named_size)
                  or (_sizes_of(previous) if _WITH_SIZES.match(previous) else None)
                  or (instead_sizes(previous) if _if_so(whole, at) else None)) if has_layout else None
        clause, condition = (f"{condition}, {clause}" if condition else clause), ""
        if not kinds and raw in modelled:
            # no cue decides it: the model reads its kind; a clause that asks with no kind is `unknown`
            kind = model_kind(modelled[raw], f"{raw}?" if raw in marked else raw, min_probability,
                              statement_probability)
            if kind == "unknown" and not _QUESTION_FORM.search(raw):
                kind = None  # asked only by its question mark and read with no confidence: context, as before
            if kind in ("unknown", "out_of_scope"):
                add(kind, clause, None)
                if kind == "out_of_scope" and _QUESTION_FORM.search(clause):
                    asked_elsewhere.add(clause)
                previous, previous_stated = clause, False
                continue
            kinds = [(0, kind)] if kind else []
            by_model = True
        own = _identifier(clause)
        if _out_of_scope(clause) and not _asks_in_scope(clause, kinds):
            # a clause about LoRA or Slurm that asks nothing in scope; one that does ("minimax LoRA with
            # ep=32 ...: do I need a pipeline block", "... what dp do I get?") asks that
            add("out_of_scope", clause, None)
            if _QUESTION_FORM.search(clause):
                asked_elsewhere.add(clause)
            continue
        # "activation_checkpointing 能填哪些值？写 partial 可以不": a fact about a field not said again is
        # read with the clause that named it
        # ("cp 2 的话序列长度有要求吗？需要能被什么整除？": the clause before, when none named one)
        context = named_in if named is not None else previous
        # (not a clause whose own words single out a fact that answers it: "每个 cp rank 处理多少 token",
        # which is about neither the story before it nor the field that story named)
        itself = answers_itself(clause)
        about = f"{context}, {clause}" if own is None and context and not _PRONOUN.search(clause) \
            and not itself else clause
        error = pasted.errors[0].strip().splitlines()[-1][:200] if pasted.errors else None
        # "tp 2 pp 2, tp 4 pp 1 or tp 8 pp 1 ... the second option": the listed layout the clause points at
        listed = referenced_layout(raw, whole) if has_layout else None
        # "同事说 dp_replicate_size 直接写 16 也行，真的吗", "someone said ep 16 works. is that right?": a verdict
        # that states no size and names nothing of its own judges the sizes the statement before it claims
        claimed = _claimed_sizes(previous) if previous_stated and own is None and not re.search(r"\d", raw) else None
        count = len(asks)
        for kind, text, target in _clause_asks(clause, about, kinds, own, own if itself else own or named, error,
                                               has_layout, by_model):
            if kind == "diagnosis" and raw in told_before and quoted and not (pasted.configs or pasted.errors):
                continue  # the quoted message is diagnosed last (below), as the story's, not this run's
            if listed and kind == "verdict":
                target = listed
            borrowed = None
            if kind == "quantity" and target and target not in _quantity_targets(clause):
                # "ep_shard_size 是几？每张卡上分到几个 expert？": the quantity of the field named before is what the
                # clause asks only when the target reader finds nothing of the clause's own (understand.py)
                target, borrowed = None, target
            if kind == "quantity" and target in (None, "allowed_values") and own is None:
                # "which ep_size values work? What is the largest of those?": the values asked just before
                target = next((a.target for a in last_clause_asks if (a.target or "").startswith("values:")), target)
            if kind == "verdict" and target is None and claimed:
                target = claimed
            solved = solve_target(raw, previous) if kind == "quantity" else None
            if solved:
                # "what local_batch_size gives grad-acc 4?": the input that makes the output come out as asked
                add(kind, text, *solved)
                continue
            add(kind, text, target, (listed or layout) if kind == "quantity" else
                _tried_sizes(tried, raw) if kind == "diagnosis" and pasted.configs else
                ((_tried_sizes(tried, raw) if retold else None) or clause_retold or _others_sizes(raw, previous))
                if kind == "diagnosis" else None, borrowed)
        last_clause_asks = asks[added:]
        if own:
            named, named_in = own, clause
            named_size = own if own in SIZE_KEYS else named_size
        if clause in marked or _QUESTION_FORM.search(clause):
            tried = ""
        previous, previous_stated = clause, len(asks) == count
    unsure: list[Ask] = []
    if asks and all(a.kind == "unknown" for a in asks):
        # nothing read with confidence anywhere: the first ask is the one the whole question's intent
        # means (below); the other clauses stay `unknown` asks after it
        unsure, asks, seen = asks[1:], [], set()
    if not asks and looks_like_gibberish(prose):
        return (Ask("nonsense", question.strip()[:200]),)
    if any(a.kind != "out_of_scope" for a in asks):
        # the in-scope answers first; a neighbouring topic only mentioned ("my Slurm job runs ...") is
        # context, one that is asked about gets its one sentence after them
        asks = [a for a in asks if a.kind != "out_of_scope"] + \
            [a for a in asks if a.kind == "out_of_scope" and a.text in asked_elsewhere]
    unset = left_unset(prose) if has_layout else None
    first_verdict = next((i for i, a in enumerate(asks) if a.kind == "verdict"), None)
    if unset and first_verdict is not None and not any(a.kind == "quantity" and a.target == unset for a in asks):
        # "dp_size 不填的话，12 卡 tp 2 会怎样？": the verdict, then the size upstream infers for it
        asks.insert(first_verdict + 1, Ask("quantity", asks[first_verdict].text, unset))
        del asks[MAX_ASKS:]
    fallback = load_asks().from_intent.get(intent, "fact")
    if not asks and has_layout and fallback in ("recommendation", "fact") and _BARE_LAYOUT_QUESTION.search(prose) \
            and not _ASKING_WORD.search(prose) and not _LEADING_LINK.match(prose.strip()):
        # "fsdp2 + cp 4 + tp 2 on 8 gpus??": only the layout and a question mark, so the layout is asked
        # about ("and with pp 2 as well?" asks again what the turn before asked)
        fallback = "verdict"
    if not asks:
        kind = fallback
        text = prose.strip()[:300] or question.strip()[:300]
        # "..., which pipeline microbatch size gives 8 microbatches?" read with no confident kind: still an
        # inverse quantity when its exact parts say so
        solved = solve_target(text) if kind in ("quantity", "fact", "recommendation") and has_layout else None
        add("quantity" if solved else kind, text, *(solved or (None,)))
        asks += unsure[:MAX_ASKS - len(asks)]
    if quoted and not any(a.kind == "diagnosis" for a in asks):
        add("diagnosis", prose.strip()[:300], quoted)  # an error message quoted in prose is explained too
    if (pasted.configs or pasted.errors) and not any(a.kind == "diagnosis" for a in asks) \
            and (pasted.errors or not _judged_anyway(asks, prose)):
        # Something pasted is always looked at: after the asked verdict or location, the diagnosis; a
        # config pasted beside a verdict or a number asked of it, with no failure told, is judged by those
        add("diagnosis", prose.strip()[:300], None)
    return tuple(asks)
