"""Parameters from a free-text question, in English or Chinese.

"70B on 8 nodes x 8 GPUs, TP+PP", "64 张 H100，序列长度 32k，不要流水线", "Qwen3-30B-A3B on two
machines": model and its size, MoE or dense and the expert count, nodes, GPUs per node, total GPUs,
GPU type and memory, sequence length, sizes the user fixed (`tp_size 8`), batch sizes, features
wanted and excluded, the strategy named, and a YAML pasted into the question. The words live in
`vocab.yaml`; here is only how they combine.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from assistant.datafile import read_yaml
from assistant.memo import per_question

from assistant.understand import catalog
from assistant.understand.numbers import NUMBER, ZH_NUMBER, blank, parse_number
from assistant.defaults import DEFAULT_GPUS_PER_NODE
from assistant.understand.query import Params
from assistant.understand.scale import Scale, find_scale
from assistant.understand.pasted import split_pasted


MAX_QUESTION_CHARS = 20_000  # longer input is cut: nobody asks a sizing question this long
# Parameters come from the prose around a pasted YAML; beyond this many characters (a pasted log, say)
# the regexes would only cost time, so the rest is not read.
MAX_PROSE_CHARS = 2_000
_VOCAB_PATH = Path(__file__).with_name("vocab.yaml")
_K = 1024  # "32k" tokens means 32768 in every recipe and paper this domain uses


@dataclass(frozen=True)
class Vocab:
    features: dict[str, re.Pattern]
    topics: dict[str, re.Pattern]  # subjects that are never a wish (mesh, batch, pp_schedule ...)
    negation_en: re.Pattern
    negation_zh: re.Pattern
    negation_after_en: re.Pattern
    negation_after_zh: re.Pattern
    strategies: dict[str, re.Pattern]
    strategy_negation_en: re.Pattern
    strategy_negation_zh: re.Pattern
    moe: re.Pattern
    dense: re.Pattern
    gpus: dict[str, tuple[re.Pattern, int | None]]  # type -> (pattern, memory_gb when the GPU table lacks it)
    gpu_any: str  # regex fragment matching any GPU type name
    gpu_words: str
    zh_gpu_classifier: str
    node_words: str
    zh_node_words: str
    seq_before: str
    seq_after: str
    inquiry_before_en: re.Pattern
    inquiry_after_en: re.Pattern
    inquiry_before_zh: re.Pattern
    inquiry_before_zh_question: re.Pattern
    inquiry_after_zh_question: re.Pattern


def _alt(patterns: list[str]) -> re.Pattern:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.I)


@lru_cache(maxsize=1)
def load_vocab(path: Path = _VOCAB_PATH) -> Vocab:
    data = read_yaml(path)
    gpus = {
        name: (re.compile(rf"(?<![a-z0-9]){spec['pattern']}s?(?![a-z0-9])", re.I),
               int(spec["memory_gb"]) if "memory_gb" in spec else None)
        for name, spec in data["gpus"].items()
    }
    gpu_any = "|".join(f"(?:{spec['pattern']})" for spec in data["gpus"].values())
    return Vocab(
        features={k: _alt(v) for k, v in data["features"].items()},
        topics={k: _alt(v) for k, v in data["topics"].items()},
        negation_en=re.compile(data["negation"]["en"], re.I),
        negation_zh=re.compile(data["negation"]["zh"]),
        negation_after_en=re.compile(data["negation_after"]["en"], re.I),
        negation_after_zh=re.compile(data["negation_after"]["zh"]),
        strategies={k: _alt(v) for k, v in data["strategies"].items()},
        strategy_negation_en=re.compile(data["strategy_negation"]["en"], re.I),
        strategy_negation_zh=re.compile(data["strategy_negation"]["zh"]),
        moe=_alt(data["moe"]),
        dense=_alt(data["dense"]),
        gpus=gpus,
        gpu_any=rf"(?<![a-z0-9])(?:{gpu_any})s?(?![a-z0-9])",
        gpu_words=data["gpu_words"],
        zh_gpu_classifier=data["zh_gpu_classifier"],
        node_words=data["node_words"],
        zh_node_words=data["zh_node_words"],
        seq_before=data["seq_before"],
        seq_after=data["seq_after"],
        inquiry_before_en=re.compile(data["inquiry"]["before_en"], re.I),
        inquiry_after_en=re.compile(data["inquiry"]["after_en"], re.I),
        inquiry_before_zh=re.compile(data["inquiry"]["before_zh"]),
        inquiry_before_zh_question=re.compile(data["inquiry"]["before_zh_question"]),
        inquiry_after_zh_question=re.compile(data["inquiry"]["after_zh_question"]),
    )


_KINDS_EN = r"(?:tensor|pipeline|context|expert|sequence|data)"
_SHARED_EN = re.compile(rf"\b({_KINDS_EN})\s*(and|plus|\+|/|&|or|,)\s*(?=(?:{_KINDS_EN}\s*(?:and|plus|\+|/|&|or|,)\s*)*{_KINDS_EN}[\s_-]*parallel)", re.I)
_KINDS_ZH = r"(?:张量|流水线|上下文|专家|序列|数据)"
_SHARED_ZH = re.compile(rf"({_KINDS_ZH})\s*(和|与|加|\+|/|、|及|或)\s*(?=(?:{_KINDS_ZH}\s*(?:和|与|加|\+|/|、|及|或)\s*)*{_KINDS_ZH}并行)")


def normalize(text: str) -> str:
    """NFKC (full-width digits and letters become ASCII) and `×` as `x`."""
    t = unicodedata.normalize("NFKC", text[:MAX_QUESTION_CHARS])
    return t.replace("×", "x").replace("✕", "x")


_LONG_RUNS = re.compile(r"\d{13,}|[零〇一二两俩三四五六七八九十百千万]{9,}")


def tame(prose: str) -> str:
    """Digit runs longer than any count drop out: every number pattern would otherwise re-scan them
    from each position (quadratic time on a pasted hash or a row of digits)."""
    return _LONG_RUNS.sub(" ", prose)


def spell_out(prose: str) -> str:
    """"tensor and pipeline parallelism" -> "tensor parallelism and pipeline parallelism" (both languages)."""
    t = _SHARED_EN.sub(lambda m: f"{m.group(1)} parallelism {m.group(2)} ", prose)
    return _SHARED_ZH.sub(lambda m: f"{m.group(1)}并行{m.group(2)}", t)


# --- helpers ---------------------------------------------------------------------------------------

def _num(tok: str | None) -> int | None:
    return parse_number(tok) if tok else None


def _size_b(num: str, unit: str) -> float:
    v = float(num)
    unit = unit.lower()
    if unit in ("t", "trillion", "万亿"):
        return v * 1000
    if unit in ("m", "million"):
        return v / 1000
    if unit == "亿":
        return v / 10
    return v


# --- model -------------------------------------------------------------------------------------------

_MOE_SIZE = re.compile(r"(?<![A-Za-z0-9_.])(\d+(?:\.\d+)?)\s*b\s*[-_ ]?\s*a\s*(\d+(?:\.\d+)?)\s*b(?![a-z0-9])", re.I)
_MIXTRAL = re.compile(r"(?<![A-Za-z0-9_.])(\d+)\s*x\s*(\d+(?:\.\d+)?)\s*b(?![a-z0-9])", re.I)
_SIZE = re.compile(
    r"(?<![A-Za-z0-9_.])(\d+(?:\.\d+)?)\s*(b|bn|billion|t|trillion)(?![a-z0-9])(?!\s*(?:tokens?|samples?))"
    r"|(?<![A-Za-z0-9_.])(\d+(?:\.\d+)?)\s*(m|million)\s*(?=-?\s*(?:param|model|参数|模型))"
    r"|(\d+(?:\.\d+)?)\s*(万亿|亿)\s*(?:参数|params?|模型|的模型)?",
    re.I,
)
_ACTIVE = re.compile(r"(\d+(?:\.\d+)?)\s*b\s*(?:active|activated|激活)|(?:active|activated|激活(?:参数)?)\s*(?:params?|parameters?)?\s*[:=]?\s*(\d+(?:\.\d+)?)\s*b", re.I)
_EXPERTS = re.compile(
    rf"({NUMBER})\s*(?:个\s*)?-?\s*(?:routed\s+|total\s+)?experts?\b|({NUMBER})\s*个?\s*(?:路由)?专家"
    r"|(?:num_experts|n_routed_experts|num_routed_experts|experts?|专家数(?:量)?)\s*[:=是为]?\s*(\d+)",
    re.I,
)


@dataclass(frozen=True)
class _ModelFound:
    key: str | None = None
    size_b: float | None = None
    active_b: float | None = None
    is_moe: bool | None = None
    experts: int | None = None


def _model(text: str, v: Vocab) -> _ModelFound:
    found = catalog.find_model(text)
    key = found[0] if found else None
    size = active = None
    is_moe: bool | None = None
    experts = None
    m = _MOE_SIZE.search(text)
    if m:
        size, active, is_moe = float(m.group(1)), float(m.group(2)), True
    else:
        m = _MIXTRAL.search(text)
        if m:
            # "8x7B": eight experts of a 7B shape; n*s bounds the total (shared attention makes it less)
            experts, is_moe = int(m.group(1)), True
            size = float(m.group(1)) * float(m.group(2))
        for sm in _SIZE.finditer(text):
            if m and m.start() <= sm.start() < m.end():
                continue
            num = sm.group(1) or sm.group(3) or sm.group(5)
            unit = sm.group(2) or sm.group(4) or sm.group(6)
            if size is None:
                size = _size_b(num, unit)
            break
    am = _ACTIVE.search(text)
    if am and active is None:
        active = float(am.group(1) or am.group(2))
        is_moe = True
    em = _EXPERTS.search(text)
    if em:
        n = _num(em.group(1) or em.group(2) or em.group(3))
        if n and n > 1:
            experts, is_moe = n, True
    if v.moe.search(text):
        is_moe = True
    elif is_moe is None and v.dense.search(text):
        is_moe = False
    if key:
        info = catalog.model_info(key)
        if info:
            # the table's published counts beat the rounded name ("8x7B" is 46.7B, not 56B)
            size = info.total_b if info.total_b is not None else size
            active = info.active_b if info.active_b is not None else active
            experts = info.num_experts if info.num_experts is not None else experts
            is_moe = info.is_moe or bool(is_moe)
    return _ModelFound(key, size, active, is_moe, experts)


# --- GPUs and nodes --------------------------------------------------------------------------------

@dataclass
class _Topo:
    nodes: int | None = None
    gpn: int | None = None
    total: int | None = None


def _gpu_type(text: str, v: Vocab) -> tuple[str | None, int | None, int | None]:
    """(GPU type, memory stated in GB or None, memory to assume) of the first GPU named."""
    best = None
    for name, (pat, mem) in v.gpus.items():
        m = pat.search(text)
        if m and (best is None or (m.start(), -(m.end() - m.start())) < (best[1], -best[3])):
            best = (name, m.start(), mem, m.end() - m.start())
    if not best:
        mem_only = re.search(r"(\d{2,3})\s*(?:g|gb|gib)\s*(?:显存|memory|hbm|vram|的卡|卡|gpus?)", text, re.I)
        mem_only = mem_only or re.search(r"(?:显存|memory|hbm|vram)\s*(?:is|of|为|是|:)?\s*(\d{2,3})\s*(?:g|gb|gib)\b", text, re.I)
        return None, (int(mem_only.group(1)) if mem_only else None), None
    name, start, default_mem, length = best
    around = text[max(0, start - 12): start + length + 16]
    mm = re.search(rf"(?:{v.gpus[name][0].pattern})\s*[-_ ]?\s*(\d{{2,3}})\s*(?:g|gb|gib)(?![a-z])", around, re.I) or re.search(
        r"(\d{2,3})\s*(?:g|gb|gib)\s*(?:显存\s*)?(?:的\s*)?" + rf"(?:{v.gpus[name][0].pattern})", around, re.I
    )
    stated = int(mm.group(1)) if mm else None
    return name, stated, default_mem


def _topology(text: str, v: Vocab) -> _Topo:
    t = text
    topo = _Topo()
    gw, cls, nw, znw = v.gpu_words, v.zh_gpu_classifier, v.node_words, v.zh_node_words
    # every pattern below ends in a GPU or node word: without one there is nothing to read
    if not re.search(rf"{gw}|{nw}|{znw}|{v.gpu_any}|world|机|张|块", text, re.I):
        return topo
    gpu_noun = rf"(?:(?:nvidia\s+)?(?:{v.gpu_any})(?:\s*[-_]?\s*\d{{2,3}}\s*(?:g|gb|gib)(?![a-z]))?\s*)?{gw}|(?:nvidia\s+)?(?:{v.gpu_any})(?:\s*[-_]?\s*\d{{2,3}}\s*(?:g|gb|gib)(?![a-z]))?"
    n = rf"({NUMBER}|a|an)"

    def take(pattern: str, flags=re.I):
        nonlocal t
        m = re.search(pattern, t, flags)
        if m:
            t = blank(t, m.span())
        return m

    # world size stated as such
    m = take(r"world[\s_-]*size\s*(?:of|is|=|:|为|是)?\s*(\d+)|--world-size[\s=]+(\d+)")
    if m:
        topo.total = int(m.group(1) or m.group(2))

    # Chinese compact forms: 单机8卡, 4机32卡, 2 机 16 卡, 双机, 单卡
    m = take(rf"({ZH_NUMBER}|\d+|单|双)\s*(?:(?:台|个)\s*)?(?:机器?|节点)\s*(?:，|,|、)?\s*(?:共\s*)?(?:每\s*(?:台|机|节点)\s*)?({ZH_NUMBER}|\d+)\s*{cls}?\s*(?:卡|gpu|{v.gpu_any})", re.I)
    if m:
        nodes, cards = _num(m.group(1)), _num(m.group(2))
        if nodes and cards:
            topo.nodes = nodes
            if "每" in m.group(0) or cards <= 8 or cards % nodes:
                topo.gpn = cards
            else:
                topo.total, topo.gpn = cards, cards // nodes
    # "8 nodes x 8 GPUs", "4 nodes with 8 H100s each", "2 machines of 8 cards", "8 节点 每节点 8 卡"
    if topo.nodes is None:
        m = take(
            rf"{n}\s*(?:{nw}|{znw})\s*(?:,|，|、)?\s*(?:x|\*|with|of|each\s+with|each\s+having|having|containing|each|,)?\s*(?:每\s*(?:个|台|一个|一台)?\s*(?:节点|机器|台|机|服务器)?\s*(?:有|各|配|带|上)?\s*)?(?:各\s*)?{n}\s*(?:x\s*)?{cls}?\s*(?:{gpu_noun})(?:\s*(?:each|per\s+(?:node|machine|host|server)|apiece|a\s+piece))?"
        )
        if m:
            topo.nodes, topo.gpn = _num(m.group(1)) or 1, _num(m.group(2))
            # "8 nodes, 64 GPUs": with nothing that says "per node", a count above a node's 8 that the
            # nodes divide is the total, as in the Chinese "8 机 64 卡" above
            per_node = re.search(r"\bx\b|\*|with|of|each|having|containing|per|apiece|piece|每|各", m.group(0), re.I)
            if topo.gpn and not per_node and topo.gpn > 8 and topo.gpn % topo.nodes == 0:
                topo.total, topo.gpn = topo.gpn, topo.gpn // topo.nodes
    # "8 GPUs x 4 nodes", "8 cards per node across 4 machines"
    if topo.nodes is None:
        m = take(rf"{n}\s*{cls}?\s*(?:{gpu_noun})\s*(?:x|\*|times|on\s+each\s+of|per\s+node\s*(?:x|\*|on|across|,)?)\s*{n}\s*(?:{nw}|{znw})")
        if m:
            topo.gpn, topo.nodes = _num(m.group(1)), _num(m.group(2))
    # "16 GPUs across 2 nodes", "32 张卡分布在 4 台机器上" (a total spread over nodes)
    if topo.nodes is None:
        m = take(rf"{n}\s*{cls}?\s*(?:{gpu_noun})\s*(?:across|over|on|in|spread\s+over|split\s+over|分布在|分在|在)\s*{n}\s*(?:{nw}|{znw})")
        if m:
            topo.total, topo.nodes = _num(m.group(1)), _num(m.group(2))
    # "8x8 H100", "4 x 8 GPUs" (nodes x GPUs per node)
    if topo.nodes is None:
        m = take(rf"(?<![\d.])(\d+)\s*x\s*(\d+)\s*{cls}?\s*(?:{gpu_noun})")
        if m:
            topo.nodes, topo.gpn = int(m.group(1)), int(m.group(2))
    # "4 8-GPU nodes", "8-GPU nodes"
    m = take(rf"(?:{n}\s+)?(\d+)[\s-]*(?:gpu|card|卡)\s*(?:{nw}|{znw})")
    if m:
        topo.gpn = topo.gpn or int(m.group(2))
        if m.group(1):
            topo.nodes = topo.nodes or _num(m.group(1))
    # GPUs per node on their own
    if topo.gpn is None:
        m = take(
            rf"{n}\s*{cls}?\s*(?:{gpu_noun})\s*(?:per|/|each|on\s+each|in\s+each|a|every)\s*(?:{nw}|节点|台|机器?)"
            rf"|(?:each|every|per)\s+(?:{nw})\s*(?:has|with|having|contains|holds|of)?\s*{n}\s*{cls}?\s*(?:{gpu_noun})"
            rf"|(?:每\s*(?:个|台)?\s*(?:节点|机器|台|机|服务器|node))\s*(?:有|上|配|带|是|各)?\s*{n}\s*{cls}?\s*(?:{gpu_noun})?"
            rf"|{n}\s*{cls}?\s*(?:卡|gpu)\s*/\s*(?:节点|机|台|node)"
        )
        if m:
            topo.gpn = _num(next(g for g in m.groups() if g))
    # nodes on their own: "8 nodes", "两台机器", "4 个节点", "single node", "单机", "双机"
    if topo.nodes is None:
        m = take(
            rf"(?<![A-Za-z0-9_.]){n}[\s-]*(?:{nw})(?![A-Za-z0-9_])|({NUMBER})\s*(?:{znw})|(单机|双机|单节点|单台)"
            # "8 机训练": a bare 机 after a count is a machine (not 机制, 机型, 机房 ...)
            rf"|({NUMBER})\s*机(?![器制型房械构会率理密])"
        )
        if m:
            if m.group(3):
                topo.nodes = 1 if m.group(3).startswith("单") else 2
            else:
                topo.nodes = _num(m.group(1) or m.group(2) or m.group(4))
    # total GPUs: "64 GPUs", "64 张 H100", "64 H100s", "8xH100", "单卡", "a single GPU"
    if topo.total is None:
        m = take(
            rf"(?<![A-Za-z0-9_.])(?:{n}|(\d+)\s*x)\s*{cls}?\s*(?:{gpu_noun})|(单卡|一张卡|单\s*gpu|单个\s*gpu)"
            # "换成 128 张呢": in this domain a bare count of 张/块 is GPUs
            rf"|({NUMBER})\s*(?:张|块)(?=\s*(?:呢|吧|的话|了|行吗|可以吗|[,.?!;]|$))"
        )
        if m:
            if m.group(3):
                topo.total = 1
            else:
                topo.total = _num(m.group(1) or m.group(2) or m.group(4))
    return _finish_topology(topo)


def _scaled(old: _Topo, scale: Scale | None) -> tuple[_Topo, int | None]:
    """(the target topology, the world size it replaces) for a change the question asks about; the
    GPUs per node stay those of the present cluster."""
    if scale is None:
        return old, None
    nodes = scale.from_nodes or old.nodes
    gpn = old.gpn
    total = scale.from_total or (old.total if not scale.from_nodes else None)
    before = _finish_topology(_Topo(nodes, gpn, total))
    prior = before.total or (before.nodes * DEFAULT_GPUS_PER_NODE if before.nodes and gpn is None else None)
    if scale.to_nodes:
        target = _Topo(scale.to_nodes, gpn, scale.to_nodes * (gpn or DEFAULT_GPUS_PER_NODE))
    elif scale.to_total:
        target = _Topo(None, gpn, scale.to_total)
    elif prior:
        factor = scale.factor or 1.0
        target = _Topo(int(before.nodes * factor) if before.nodes and before.nodes * factor >= 1 else None, gpn,
                       max(1, int(prior * factor)))
    else:
        return before, None
    return _finish_topology(target), prior


def _finish_topology(topo: _Topo) -> _Topo:
    # "0 GPUs" states nothing usable; the planner's defaults (and their assumption notes) apply instead
    nodes, gpn, total = (v if v and v > 0 else None for v in (topo.nodes, topo.gpn, topo.total))
    if total is not None and nodes and gpn is None and total % nodes == 0:
        gpn = total // nodes
    if total is not None and gpn and nodes is None and total % gpn == 0 and total >= gpn:
        nodes = total // gpn
    if total is None and nodes and gpn:
        total = nodes * gpn
    if total is not None and nodes == 1 and gpn is None:
        gpn = total
    return _Topo(nodes, gpn, total)


# --- sequence length, sizes, batches -------------------------------------------------------------

def _seq_len(text: str, v: Vocab) -> int | None:
    val = r"(\d{1,3}(?:,\d{3})+(?!\d)|\d+(?:\.\d+)?)\s*(k|m)?(?![a-z0-9])"
    m = re.search(rf"(?:{v.seq_before})\s*(?:of|is|=|:|to|at|为|是|达到|到|有|约|about|around|~)?\s*(?:about|around|约|~)?\s*{val}", text, re.I)
    if not m:
        m = re.search(rf"(?<![A-Za-z0-9_.]){val}\s*(?:{v.seq_after})", text, re.I)
    if not m:
        # a bare "128k"/"32K" in a question about training is a sequence length
        m = re.search(r"(?<![A-Za-z0-9_.])(\d+)\s*(k)(?![a-z0-9])(?!\s*(?:steps?|samples?|iter|examples?|步|条|个样本|次))", text, re.I)
    if not m:
        return None
    num, unit = m.group(1).replace(",", ""), (m.group(2) or "").lower()
    value = float(num) * (_K if unit == "k" else _K * _K if unit == "m" else 1)
    if value < 128 or value > 16 * _K * _K:
        return None
    return int(value)


# Between a size's name and its value: "tp_size=8", "ep_size 能设 16", "tp_size 写了 4", "dp_replicate_size 直接写 16", "ep_size 还能用 8", "ep 想直接开 32", "can ep_size be 16"
_SIZE_VERB = (
    r"(?:(?:想|要)?(?:还|也|就|直接)?(?:能不能|可不可以|能否|可否|能|可以|要|想)?\s*(?:设置为|设置成|设为|设成|设到|设|用|开到|开满|开|取|改成|改为|调到|调成|减到|降到|加到|增加到|提到|升到|拉满到|拉满|拉到|变成|换成|缩到|扩到|写成|写为|写|填成|填|为|是)"
    r"|(?:我们?)?\s*(?:设的是|用的是|设成了|设了|开的是|开了|填的是|写的是|写了|填了)"
    r"|(?:reduced|increased|dropped|lowered|raised|bumped|changed|cut|went|going|moved)\s+(?:down\s+|up\s+)?to"
    r"|(?:maxed\s+out|capped|kept|set|fixed|left)\s+at"
    r"|(?:can|could|should|must)?\s*(?:be\s+set\s+to|be|equal\s+to|equals)|=|:|is|of|to)"
)
_SIZE_NAMES = {"tp": "tp", "pp": "pp", "cp": "cp", "ep": "ep", "dp_replicate": "dp_replicate"}
_ZH_SIZE_NAMES = {"tp": "张量并行", "pp": "(?:流水线|管线|管道)(?:并行)?", "cp": "上下文并行", "ep": "专家并行"}
_EN_SIZE_NAMES = {
    "tp": r"tensor[\s_-]*(?:model[\s_-]*)?parallel(?:ism)?",
    "pp": r"pipeline(?:[\s_-]*parallel(?:ism)?)?",
    "cp": r"context[\s_-]*parallel(?:ism)?",
    "ep": r"expert[\s_-]*parallel(?:ism)?",
}


# Several sizes given one value: "pp and cp both 1", "tp=cp=1", "cp 和 pp 都是 1", "tp、cp 都设 1".
_SHARED_KEY = r"(?:tp|pp|cp|ep)(?:_size)?"
_SHARED_SEP = r"\s*(?:,|/|&|\band\b|\bor\b|、|和|与|以及|及|跟)\s*"
_SHARED_PLURAL = re.compile(
    rf"(?<![a-z_])(?P<keys>{_SHARED_KEY}(?:{_SHARED_SEP}{_SHARED_KEY})+)\s*(?:sizes?\s*)?"
    r"(?:(?:are|were|is)\s+(?:both|all|each)(?:\s+set\s+to|\s+at|\s*=)?|(?:both|all|each)(?:\s+set\s+to|\s+at|\s+equal(?:\s+to)?|\s*=|\s+are)?"
    r"|are(?:\s+set\s+to)?|都(?:是|为|设为|设成|设|等于|取|用)?|均(?:为|是|设为|设)?|全(?:是|为|设为)?|同为)"
    r"\s*(?:=|为|是)?\s*(?P<value>\d+)(?![\d.x])",
    re.I,
)
# "pp/cp = 1", "tp, cp: 1": a list joined by a slash or comma, then one value ("tp and pp=2" is pp alone).
_SHARED_LIST = re.compile(
    rf"(?<![a-z_])(?P<keys>{_SHARED_KEY}(?:\s*(?:/|,|、)\s*{_SHARED_KEY})+)\s*(?:sizes?\s*)?(?:=|:)\s*(?P<value>\d+)(?![\d.x])",
    re.I,
)
_CHAINED_EQ = re.compile(rf"(?<![a-z_])(?P<keys>{_SHARED_KEY}(?:\s*=\s*{_SHARED_KEY})+)\s*=\s*(?P<value>\d+)(?![\d.x])", re.I)


def _shared_sizes(text: str) -> tuple[dict[str, int], str]:
    """Sizes stated together with one value, and the text with those phrases blanked."""
    out: dict[str, int] = {}
    for pat in (_CHAINED_EQ, _SHARED_PLURAL, _SHARED_LIST):
        for m in list(pat.finditer(text)):
            val = int(m.group("value"))
            if not 1 <= val <= 65536:
                continue
            for key in re.findall(r"tp|pp|cp|ep", m.group("keys"), re.I):
                out.setdefault(key.lower(), val)
            text = blank(text, m.span())
    return out, text


# "tp 八", "pp 设成两": a Chinese numeral right after a size's name is that size in digits
_ZH_AFTER_KEY = re.compile(rf"((?<![a-z_])(?:tp|pp|cp|ep)(?:_size)?\s*{_SIZE_VERB}?\s*)({ZH_NUMBER})(?![下些点般起样直])", re.I)


def _sizes(text: str) -> dict[str, int]:
    text = _ZH_AFTER_KEY.sub(lambda m: f"{m.group(1)}{parse_number(m.group(2)) or m.group(2)}", text)
    out, text = _shared_sizes(text)
    for key in ("tp", "pp", "cp", "ep", "dp_replicate"):
        if key in out:
            continue
        pats = [
            rf"(?<![a-z_]){key}(?:_size)?\s*{_SIZE_VERB}?\s*(\d+)(?!\.\d|\d|x)",
            rf"(\d+)\s*[-‐]?\s*(?:way|路|卡)\s*{key}\b",
        ]
        if key in _EN_SIZE_NAMES:
            pats += [
                rf"(\d+)[\s-]*(?:way|fold|degree)\s*{_EN_SIZE_NAMES[key]}",
                rf"{_EN_SIZE_NAMES[key]}\s*(?:size|degree|of|=|:)?\s*(?:of|is|=)?\s*(\d+)(?!\.\d|\d|x)(?!\s*(?:gpus?|nodes?|卡|张|个))",
                rf"(\d+)\s*路?\s*{_ZH_SIZE_NAMES[key]}",
                rf"{_ZH_SIZE_NAMES[key]}\s*(?:度|大小|规模|size)?\s*(?:=|:|为|是|设为|设成|取|开到|开)?\s*(\d+)(?!\.\d|\d|x)",
            ]
        if key == "dp_replicate":
            pats.append(r"hsdp\s*(?:replicas?|replicate)?\s*(?:=|:|of|为)?\s*(\d+)(?!\.\d|\d|x)")
        # "ep_size 要是比卡数还大，比如设成 32", "tp, if I set it to 16": the value a few words after the name
        pats.append(rf"(?<![a-z_]){key}(?:_size)?\b(?:(?!\b(?:tp|pp|cp|ep|dp)(?:_size)?\b)[^\d。.;；?？\n]){{1,24}}?"
                    r"(?:设成|设为|设到|改成|改为|调到|set\s+(?:it\s+)?to|make\s+it)\s*(\d+)(?!\.\d|\d|x)")
        for p in pats:
            m = _stated_match(p, text)
            if m:
                val = int(m.group(1))
                if 1 <= val <= 65536:
                    out[key] = val
                break
    return out


def _stated_match(pattern: str, text: str) -> re.Match | None:
    """The first mention of a size that is not ruled out by a later one: "we can't use TP=3 ..., so we
    went with tp 1" states tp 1. A size only ever mentioned negated ("why can't I use tp 3?") is still the
    one asked about."""
    found = list(re.finditer(pattern, text, re.I))
    if len(found) < 2:
        return found[0] if found else None
    v = load_vocab()
    kept = [m for m in found if not _negated(text[:m.start()], v.negation_en, v.negation_zh)]
    return kept[0] if kept else found[0]


_DP_SIZE = re.compile(
    r"(?<![a-z_])dp(?:_size)?\s*(?:=|:|to|为|是|设为|设成|写成|写的是|写了|填成|填的是|填了|设了)?\s*(\d+)(?!\.\d|\d|x)"
    r"|(\d+)\s*(?:x\s*)?(?:data[\s_-]*parallel(?:ism)?|dp)[\s_-]*(?:replicas?|ranks|groups?|copies|degree|size|ways?)"
    r"|(\d+)[\s-]*(?:way|fold)\s+data[\s_-]*parallel"
    r"|data[\s_-]*parallel(?:ism)?\s*(?:size|degree)\s*(?:of|=|is|:)?\s*(\d+)(?!\.\d|\d|x)"
    r"|数据并行\s*(?:度|大小|规模|副本数?)?\s*(?:=|:|为|是|设为|取)?\s*(\d+)(?!\.\d|\d|x)"
    r"|(\d+)\s*(?:个|路|份)\s*(?:数据并行|dp)|(\d+)\s*数据并行",
    re.I,
)


_PP_MICROBATCH = re.compile(
    rf"(?:\bpp[\s_-]*micro[\s_-]*batch(?:[\s_-]*size)?|pipeline[\s_-]*micro[\s_-]*batch(?:[\s_-]*size)?|流水线\s*微批(?:次)?(?:大小)?)\s*{_SIZE_VERB}?\s*(\d+)(?!\.\d|\d|x)",
    re.I,
)


def _pp_microbatch(text: str) -> int | None:
    m = _PP_MICROBATCH.search(text)
    val = int(m.group(1)) if m else None
    return val if val and 1 <= val <= 65536 else None


def _dp_size(text: str) -> int | None:
    m = _DP_SIZE.search(text)
    if not m:
        return None
    val = int(next(g for g in m.groups() if g))
    return val if 1 <= val <= 65536 else None


# "global_batch_size 还是 256", "local batch stays at 2": a batch size kept as it was is still stated
_KEPT = (r"保持|还是|仍是|仍然是|依然是|不变(?:，|,)?\s*(?:是|为)?|(?:is\s+)?still(?:\s+at)?|stays?(?:\s+at)?|kept\s+at"
         r"|remains?(?:\s+at)?")


# "local" written for local_batch_size, with its number: "local 现在是 2", "local is 4" (a change, "local 改成 8",
# is a condition of its clause, asks.py local_changed)
_LOCAL_SHORT = re.compile(r"(?<![\w.-])local\s*(?:现在|目前|now|currently|right\s+now)?\s*(?:=|:|：|is|of|为|是|设的|写的)?\s*(\d+)(?![\w.])", re.I)


def _batches(text: str) -> tuple[int | None, int | None]:
    gbs = re.search(
        r"(?:global[\s_-]*batch(?:[\s_-]*size)?|\bgbs\b|全局\s*(?:batch(?:[\s_-]*size)?|批(?:次)?大小|批量)|总\s*batch(?:[\s_-]*size)?|总批(?:次)?大小)\s*(?:=|:|is|of|为|是|设为|写的|设的|写成|" + _KEPT + r"|(?:set|drop(?:ped)?|raise[ds]?|lower(?:ed)?|bump(?:ed)?|change[ds]?|cut|go(?:es)?|increase[ds]?|decrease[ds]?|reduce[ds]?)?\s*to|改成|改为|降到|减到|换成|调到|设成|加到|提到)?\s*(\d+)"
        r"|(\d+)\s*(?:global[\s_-]*batch)",
        text, re.I,
    )
    lbs = re.search(
        r"(?:local[\s_-]*batch(?:[\s_-]*size)?|(?<!pp_)(?<!pp )(?<!pipeline )micro[\s_-]*batch(?:[\s_-]*size)?|\blbs\b|\bmbs\b|per[\s_-]*(?:gpu|device|rank)[\s_-]*batch(?:[\s_-]*size)?|每\s*(?:张)?\s*(?:卡|gpu)\s*(?:的)?\s*(?:batch(?:[\s_-]*size)?|批(?:次)?大小)|局部\s*(?:batch(?:[\s_-]*size)?|批(?:次)?大小)|本地\s*batch)\s*(?:=|:|is|of|为|是|设为|" + _KEPT + r")?\s*(\d+)",
        text, re.I,
    )
    g = int(gbs.group(1) or gbs.group(2)) if gbs else None
    lo = int(lbs.group(1)) if lbs else None
    # "global 64 / local 2", "全局 64，局部 2": the pair names both without the word batch
    pair = re.search(r"\bglobal(?:[\s_-]*batch(?:[\s_-]*size)?)?\s*(?:=|:|of)?\s*(\d+)\s*(?:/|,|，|and|;)?\s*(?:and\s+)?local(?:[\s_-]*batch(?:[\s_-]*size)?)?\s*(?:=|:|of)?\s*(\d+)"
                     r"|全局\s*(?:=|:|为)?\s*(\d+)\s*[/,，、]?\s*(?:局部|本地|每卡)\s*(?:=|:|为)?\s*(\d+)", text, re.I)
    if pair:
        g = g if g is not None else int(pair.group(1) or pair.group(3))
        lo = lo if lo is not None else int(pair.group(2) or pair.group(4))
    if g is not None and lo is None:
        # "global_batch_size 256，local 现在是 2": beside a global batch, "local" alone is local_batch_size
        short = _LOCAL_SHORT.search(text)
        lo = int(short.group(1)) if short else None
    if g is None:
        bare = re.search(r"(?<![\w])batch[\s_-]*size\s*(?:=|:|is|of|为|是)?\s*(\d+)|批(?:次)?大小\s*(?:=|:|为|是)?\s*(\d+)", text, re.I)
        if bare and not lbs:
            g = int(bare.group(1) or bare.group(2))
    return g, lo


# --- features and strategy -----------------------------------------------------------------------

def _negated(prefix: str, en: re.Pattern, zh: re.Pattern) -> bool:
    # Only the clause the mention sits in: "we use TP, no PP" negates PP, not TP.
    clause = re.split(r"[,.;:!?，。；：！？\n]|\b(?:but|and|with|plus)\b|但|而且|并且|同时", prefix)[-1]
    clause = clause[-40:]
    # Chained exclusions share one negation: "no PP or CP", "不要 TP 和 PP".
    chain = re.sub(r"(?:\b(?:tp|pp|cp|ep|sp|hsdp)\b|张量并行|流水线(?:并行)?|上下文并行|专家并行)\s*(?:,|/|or|nor|、|或|和)?\s*$", "", clause.rstrip(), flags=re.I)
    while chain != clause.rstrip():
        clause = chain
        chain = re.sub(r"(?:\b(?:tp|pp|cp|ep|sp|hsdp)\b|张量并行|流水线(?:并行)?|上下文并行|专家并行)\s*(?:,|/|or|nor|、|或|和)?\s*$", "", clause.rstrip(), flags=re.I)
    return bool(en.search(clause) or zh.search(clause))


# A feature name chained to the one being read ("TP or PP", "张量并行和流水线并行") shares its framing.
_CHAINED = (
    r"(?:\b(?:tp|pp|cp|ep|sp|hsdp)\b|(?:tensor|pipeline|context|expert|sequence)[\s_-]*parallel(?:ism)?"
    r"|张量并行|流水线(?:并行)?|上下文并行|专家并行|序列并行)"
)
_CHAIN_SEP = r"(?:,|/|\+|&|\bor\b|\bnor\b|\band\b|、|或|和|以及|及)"
_CHAIN_TAIL = re.compile(rf"{_CHAINED}\s*{_CHAIN_SEP}?\s*$", re.I)
_CHAIN_HEAD = re.compile(rf"^\s*{_CHAIN_SEP}\s*{_CHAINED}", re.I)


def _past_chain(after: str) -> str:
    """The words after a mention once the feature names chained to it are skipped: "cp 和 pp 都不想开",
    "TP and PP both off" frame every name of the chain."""
    while (m := _CHAIN_HEAD.match(after)):
        after = after[m.end():]
    return after


def _inquired(prefix: str, suffix: str, v: Vocab) -> bool:
    """True when the mention is asked about rather than asked for: "do I need TP at all?", "要不要开 TP"."""
    before = re.split(r"[.;!?。；！？\n]", prefix)[-1][-80:]
    while (stripped := _CHAIN_TAIL.sub("", before.rstrip())) != before.rstrip():
        before = stripped
    after = _past_chain(suffix[:60])
    if v.inquiry_before_en.search(before) or v.inquiry_after_en.match(after) or v.inquiry_before_zh.search(before):
        return True
    return bool(v.inquiry_before_zh_question.search(before) and v.inquiry_after_zh_question.match(after))


# Size names inside arithmetic ("ep_size must divide dp_size * cp_size", "(dp*cp*tp) % ep") are the
# formula, not a wish for that parallelism.
_FORMULA_NAME = r"(?:dp_shard|dp_replicate|world|dp|tp|pp|cp|ep)(?:_size)?"
# normalize() writes "×" as "x": between two size names it is the product ("(dp_size x cp_size)")
_TIMES = r"(?:[*×%]|\bx\b)"
_FORMULA = re.compile(
    rf"(?<![A-Za-z0-9_])\(?\s*{_FORMULA_NAME}(?:\s*\)?\s*{_TIMES}\s*\(?\s*{_FORMULA_NAME})+\s*\)?(?:\s*[*×%]\s*\d+)?(?![A-Za-z0-9_])"
    rf"|(?<![A-Za-z0-9_])(?:world_size|{_FORMULA_NAME}_size)\s*/\s*\(?\s*{_FORMULA_NAME}(?:\s*[*×]\s*{_FORMULA_NAME})*\s*\)?"
    rf"|[%]\s*\(?\s*{_FORMULA_NAME}\b",
    re.I,
)


def mask_formulas(text: str) -> str:
    """The text with its size arithmetic blanked: "dp*cp*tp" names the rule, not a feature asked about."""
    return _FORMULA.sub(lambda m: " " * len(m.group(0)), text)


def _features(text: str, v: Vocab, sizes: dict[str, int]) -> tuple[frozenset[str], frozenset[str]]:
    wanted: set[str] = set()
    unwanted: set[str] = set()
    text = mask_formulas(text)
    for feat, pat in v.features.items():
        for m in pat.finditer(text):
            negated = _negated(text[: m.start()], v.negation_en, v.negation_zh)
            # "no TP at all": a negation before the feature outranks the "at all" after it, not an
            # inquiry before it ("要不要开 TP", whose 不要 is no negation)
            if _inquired(text[: m.start()], "" if negated else text[m.end():], v):
                continue
            after = _past_chain(text[m.end():m.end() + 60])
            if negated \
                    or v.negation_after_en.match(after) or v.negation_after_zh.match(after):
                unwanted.add(feat)
            else:
                wanted.add(feat)
    for key, val in sizes.items():
        feat = "hsdp" if key == "dp_replicate" else key
        if val > 1:
            wanted.add(feat)
            unwanted.discard(feat)
        else:
            unwanted.add(feat)
            wanted.discard(feat)
    # A feature both asked for and excluded ("no PP ... PP?") counts as excluded: the safer reading.
    wanted -= unwanted
    return frozenset(wanted), frozenset(unwanted)


def _strategy(text: str, v: Vocab) -> str | None:
    named: list[tuple[int, str]] = []
    for name, pat in v.strategies.items():
        for m in pat.finditer(text):
            if name == "fsdp2" and re.search(r"megatron[\s_-]*$", text[: m.start()], re.I):
                continue  # the "fsdp" of "megatron fsdp"
            if _negated(text[: m.start()], v.strategy_negation_en, v.strategy_negation_zh):
                continue
            named.append((m.start(), name))
    distinct = {n for _, n in named}
    if len(distinct) == 1:
        return distinct.pop()
    return None


# --- history ---------------------------------------------------------------------------------------

# A sentence that tells what ran before ("之前 Megatron 里 tp 8 ...", "We ran this with Megatron-LM
# before (...)", "previously we had tp 2"): the layout left behind. It opens with one of these words,
# or says "before" / "used to" / "previously" as an adverb of its own verb; "Coming from Megatron, where
# a run ... failed" tells of the framework left behind, as "之前在 Megatron 里" does.
_HISTORY = re.compile(
    r"^\W*(?:(?:我们|我|we|i)\s*)?(?:之前|以前|原来|原先|本来|先前|上次|一开始|起初|最初|早先|previously|originally|earlier|at\s+first|last\s+time"
    r"|(?:coming|came|migrating|moving)\s+(?:over\s+)?from)"
    r"|\b(?:used\s+to|previously|originally)\b|\bbefore\s*(?=[(,;:]|\.(?:\s|$)|$)"
    r"|^\W*we\s+had\b|\b(?:was|were)\s+(?:working|running|training)\s+(?:fine\s+)?(?:with|on)\b",
    re.I,
)
# Where the story turns to the run asked about; a history span ends at one of these or at a sentence end.
_NOW = re.compile(r"现在|目前|如今|这次|这回|搬到|迁到|迁移到|换到|\bnow\b|\bcurrently\b|\bthis\s+time\b"
                  r"|\bmov(?:e|ed|ing)\s+to\b|\bswitch(?:ed|ing)?\s+to\b|\bport(?:ed|ing)?\s+to\b", re.I)
_SENTENCE_END = re.compile(r"[。!?！？;；\n]|\.(?=\s|$)")


def history_spans(prose: str) -> list[tuple[int, int]]:
    """The spans of `prose` that describe an earlier run, not the one asked about."""
    spans: list[tuple[int, int]] = []
    cuts = sorted({0, len(prose), *(m.end() for m in _SENTENCE_END.finditer(prose)), *(m.start() for m in _NOW.finditer(prose))})
    for a, b in zip(cuts, cuts[1:]):
        if _HISTORY.search(prose[a:b]) and not _NOW.match(prose, a):
            spans.append((a, b))
    return spans


# A sentence that reports what someone else claims ("A colleague says that needs 64 GPUs", "同事说要 64
# 张卡", "I was told ...") or ran ("A teammate set ep_size: 32 and it crashed", "师兄试过 ep_size 64"): its
# numbers are the claim or the other run asked about, not the user's cluster or layout.
_CLAIMED = re.compile(
    r"\b(?:a|my|our|the|one)\s+(?:\w+\s+)?(?:colleague|co-?worker|teammate|team\s*mate|friend|boss|manager|lead|reviewer|senior)s?"
    r"\s+(?:(?:also|keeps?|still)\s+)?(?:says?|said|claims?|claimed|thinks?|thought|told\s+(?:me|us)|insists?|insisted|reckons?|believes?|swears?"
    r"|set|tried|used|ran|configured|put|had)\b"
    r"|\b(?:someone|somebody|people|others|they)\s+(?:(?:on|in)\s+\w+\s+)?(?:says?|said|claims?|claimed|told\s+(?:me|us))\b"
    r"|\b(?:i|we)\s+(?:was|were|have\s+been|got)\s+told\b|\b(?:i|we)\s+(?:heard|read\s+somewhere)\b"
    r"|(?:同事|朋友|老板|领导|组长|师兄|前辈|别人|有人|网上|群里)(?:们)?\s*(?:都|也|一直)?\s*(?:说|认为|觉得|讲|告诉我|坚持|(?:之前|以前|上周)?\s*(?:试过|用过|设过|配过|跑过))|听说|据说|听人说",
    re.I,
)


def reports_claim(text: str) -> bool:
    """The text reports another person's claim ("同事说 ... 也行", "someone said ep 16 works")."""
    return _CLAIMED.search(text) is not None


def claimed_spans(prose: str) -> list[tuple[int, int]]:
    """The sentences of `prose` that report another person's claim."""
    cuts = sorted({0, len(prose), *(m.end() for m in _SENTENCE_END.finditer(prose))})
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if _CLAIMED.search(prose[a:b])]


def _current(found: Params, now: Params) -> Params:
    """The whole question's reading, with what the sentences outside the history restate winning."""
    keys = ("tp_size", "pp_size", "cp_size", "ep_size", "dp_replicate_size", "dp_size", "pp_microbatch_size",
            "global_batch_size", "local_batch_size", "seq_len", "gpu", "gpu_memory_gb")
    vals = {k: getattr(now, k) for k in keys if getattr(now, k) is not None}
    if any(getattr(now, k) is not None for k in ("nodes", "gpus_per_node", "world_size")):
        vals.update(nodes=now.nodes, gpus_per_node=now.gpus_per_node, world_size=now.world_size)
    if now.model is not None or now.model_size_b is not None:
        vals.update(model=now.model, model_size_b=now.model_size_b, active_size_b=now.active_size_b,
                    is_moe=now.is_moe, num_experts=now.num_experts)
    if vals or now.strategy:
        # the strategy of the run left behind is not the one asked about ("之前 Megatron 里 ...，搬到 AutoModel")
        vals["strategy"] = now.strategy
    vals["wanted"] = (found.wanted - now.unwanted) | now.wanted
    vals["unwanted"] = (found.unwanted - now.wanted) | now.unwanted
    return replace(found, **vals)


# --- entry point -------------------------------------------------------------------------------------

@per_question()  # the question and then each of its clauses are read again by the asks (asks.py)
def extract_params(question: str) -> Params:
    """Everything the question states, in English or Chinese; absent facts stay None. Numbers of an
    earlier run the question tells about count only where the question does not restate them."""
    found = _extract(question)
    prose = split_pasted(normalize(question)).prose[:MAX_PROSE_CHARS]
    # an earlier run's numbers and a number someone else claims count only where the question does not
    # restate its own
    # a claim that states no number ("a colleague claims ddp supports tp", "听说 megatron_fsdp 开不了 cp") says
    # what a strategy does, not what another person ran: its strategy is the one the question is about
    spans = history_spans(prose) + [(a, b) for a, b in claimed_spans(prose)
                                    if re.search(NUMBER, prose[a:b], re.I)]
    if not spans:
        return found
    now_text = prose
    for a, b in spans:
        now_text = blank(now_text, (a, b))
    if not re.search(r"\w", now_text):
        return found  # the whole question is the story: nothing restated
    return _current(found, _extract(now_text))


def _extract(question: str) -> Params:
    v = load_vocab()
    text = normalize(question)
    # Numbers are read from the question's own words: a pasted log's "non_pp_size=12" is upstream's
    # arithmetic, not a size the user chose, and a pasted config is read whole by the validator.
    pasted = split_pasted(text)
    yaml_text = pasted.configs[0] if pasted.configs else None
    prose = spell_out(tame(pasted.prose[:MAX_PROSE_CHARS]))
    found = _model(prose, v)
    gpu_type, gpu_mem, default_mem = _gpu_type(prose, v)
    # A model name's size ("70B") and a GPU's memory ("80G") are no counts: hide them from topology.
    topo_text = _SIZE.sub(lambda m: " " * len(m.group(0)), _MOE_SIZE.sub(lambda m: " " * len(m.group(0)), prose))
    topo_text, scale = find_scale(topo_text)
    topo, prior_world = _scaled(_topology(topo_text, v), scale)
    sizes = _sizes(prose)
    wanted, unwanted = _features(prose, v, sizes)
    gbs, lbs = _batches(prose)
    gpu_key = catalog.resolve_gpu(gpu_type, gpu_mem) if gpu_type else None
    if gpu_key and default_mem is None:
        default_mem = catalog.gpu_memory_gb(gpu_key)  # a table GPU: its memory lives in kb/gpus.yaml only
    return Params(
        model=found.key,
        model_size_b=found.size_b,
        active_size_b=found.active_b,
        is_moe=found.is_moe,
        num_experts=found.experts,
        nodes=topo.nodes,
        gpus_per_node=topo.gpn,
        world_size=topo.total,
        gpu=gpu_key,
        seq_len=_seq_len(prose, v),
        wanted=wanted,
        unwanted=unwanted,
        strategy=_strategy(prose, v),
        yaml_text=yaml_text,
        tp_size=sizes.get("tp"),
        pp_size=sizes.get("pp"),
        cp_size=sizes.get("cp"),
        ep_size=sizes.get("ep"),
        dp_replicate_size=sizes.get("dp_replicate"),
        dp_size=_dp_size(prose),
        pp_microbatch_size=_pp_microbatch(prose),
        global_batch_size=gbs,
        local_batch_size=lbs,
        gpu_memory_gb=gpu_mem if gpu_mem is not None else (default_mem if gpu_type else None),
        prior_world_size=prior_world,
    )


def with_topology(p: Params) -> Params:
    """Recompute the dependent counts after a follow-up changed one of them ("only 4 nodes")."""
    topo = _finish_topology(_Topo(p.nodes, p.gpus_per_node, p.world_size))
    return replace(p, nodes=topo.nodes, gpus_per_node=topo.gpn, world_size=topo.total)
