"""A change of cluster size the question asks about: "go from 1 node to 4 nodes", "we're moving to 6
nodes", "if I double the GPUs", "从 2 机扩到 8 机", "机器减半到 2 机". The target is the situation
to judge; the count it replaces is kept so the answer can say what changes (dp 2 -> 8)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from assistant.understand.numbers import NUMBER, blank, parse_number

_N = rf"({NUMBER})"
_NODE = r"(?:nodes?|machines?|hosts?|servers?|boxes)\b|台\s*(?:机器|服务器|节点)?|个\s*节点|节点|机器?"
_GPU = r"(?:gpus?|cards?|devices?|ranks?)\b|张\s*(?:卡|gpu)?|块\s*(?:卡|gpu)?|卡"
_UNIT = rf"({_NODE}|{_GPU})"
_MOVE_EN = (r"(?:go(?:ing)?|mov(?:e|ing)|scal(?:e|ing)(?:\s+(?:up|out|down))?|expand(?:ing)?|grow(?:ing)?|switch(?:ing)?|"
            r"jump(?:ing)?|bump(?:ing)?|increas(?:e|ing)|extend(?:ing)?|migrat(?:e|ing)|shrink(?:ing)?|reduc(?:e|ing)|"
            r"cut(?:ting)?|drop(?:ping)?|upgrad(?:e|ing)|chang(?:e|ing)|add(?:ing)?\s+nodes|go(?:ing)?\s+(?:up|down))\s+to|make\s+it|now\s+(?:on|with|use|using)")
_MOVE_ZH = r"(?:扩容|扩展|扩|增加|加|减少|减半|减|缩减|缩|降|升|上)\s*(?:到|成)|换成|换到|换为|改成|改到|改为|变成|变为"
# "from 1 node to 4 nodes", "从 2 机扩到 8 机": both counts stated
_FROM_TO = re.compile(rf"(?:\bfrom|从)\s*{_N}\s*{_UNIT}\s*(?:[,，]?\s*(?:all\s+the\s+way\s+)?(?:up\s+|down\s+)?to\b|(?:{_MOVE_ZH})|到)\s*{_N}\s*{_UNIT}?", re.I)
# "moving to 6 nodes", "now make it 8 nodes", "扩到 3 台机器", "减半到 2 机"
_TO = re.compile(rf"\b(?:{_MOVE_EN})\s+(?:(?:use|using|run\s+on|on)\s+)?{_N}\s*{_UNIT}|(?:{_MOVE_ZH})\s*{_N}\s*{_UNIT}", re.I)
# "double the GPUs", "halve the nodes", "GPU 翻倍", "机器减半"
_FACTOR = re.compile(r"\b(double|triple|quadruple|halve|twice)\s+(?:the\s+|my\s+|our\s+)?(?:number\s+of\s+|amount\s+of\s+|count\s+of\s+)?(?:gpus?|nodes?|machines?|cards?|cluster|hardware)"
                     r"|(?:卡|gpu|机器|节点|机)\w{0,3}?(翻倍|加倍|翻一倍|减半)|(翻倍|加倍|减半)", re.I)
_FACTORS = {"double": 2.0, "twice": 2.0, "triple": 3.0, "quadruple": 4.0, "halve": 0.5,
            "翻倍": 2.0, "加倍": 2.0, "翻一倍": 2.0, "减半": 0.5}


@dataclass(frozen=True)
class Scale:
    """The target of a change: a node count, a GPU total, or a factor on the present cluster."""
    to_nodes: int | None = None
    to_total: int | None = None
    factor: float | None = None
    from_nodes: int | None = None
    from_total: int | None = None


def _is_node(unit: str | None) -> bool | None:
    if not unit:
        return None
    return bool(re.match(_NODE, unit, re.I)) and not re.match(_GPU, unit, re.I)


def find_scale(text: str) -> tuple[str, Scale | None]:
    """(the text with the target's words blanked, the change) ; the text is unchanged without one."""
    m = _FROM_TO.search(text)
    if m:
        old, old_unit, new, new_unit = parse_number(m.group(1)), m.group(2), parse_number(m.group(3)), m.group(4)
        node = _is_node(new_unit) if new_unit else _is_node(old_unit)
        old_node = _is_node(old_unit)
        if old and new:
            s = Scale(to_nodes=new if node else None, to_total=None if node else new,
                      from_nodes=old if old_node else None, from_total=None if old_node else old)
            return blank(text, m.span()), s
    m = _TO.search(text)
    if m:
        n, unit = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        new = parse_number(n)
        if new:
            node = _is_node(unit)
            return blank(text, m.span()), Scale(to_nodes=new if node else None, to_total=None if node else new)
    m = _FACTOR.search(text)
    if m:
        word = next(g for g in m.groups() if g).lower()
        return blank(text, m.span()), Scale(factor=_FACTORS[word])
    return text, None
