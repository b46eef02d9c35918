"""The option values a config request names ("param bf16, reduce fp32", "with it turned off",
"把 activation checkpointing 打开"), read from the question's prose: the other keys of `distributed:`
the user wants written (sizes are the stated layout's, stated.py). compose/knowledge/wished.py writes
them into the config shown; it reads them through `cues.Reading.wished`.
"""
from __future__ import annotations

import re
from typing import Any

from assistant.understand.asks import clauses
from assistant.understand.params import normalize
from assistant.validator.fields import field_table

# dtype words -> the spelling upstream's dtype_from_str accepts ("fp32" is not one of them)
_DTYPES = {"bf16": "bfloat16", "bfloat16": "bfloat16", "fp16": "float16", "float16": "float16", "half": "float16",
           "fp32": "float32", "float32": "float32", "float": "float32"}
_DTYPE = r"(?:torch\.)?(?P<dt>bf16|bfloat16|fp16|float16|half|fp32|float32|float)\b"
_GLUE = r"\s*(?:_?dtype)?\s*(?:in|as|to|at|=|:|用|为|是|设为|设成|改成|走)?\s*"
# the mp_policy key -> the words that name its role, before or after the dtype
_ROLES = {
    "param_dtype": r"(?:param(?:eter)?s?|weights?|参数|权重)",
    "reduce_dtype": r"(?:reduce|reduction|grad(?:ient)?s?(?:\s+reduc\w*)?|(?:梯度)?[归规]约|梯度)",
    "output_dtype": r"(?:outputs?|输出)",
}
_OFF = re.compile(r"\b(?:off|disabled?|false)\b|关(?:掉|闭)|禁用|不(?:要)?开", re.I)
_ON = re.compile(r"\b(?:turn(?:ed)?\s+on|switch(?:ed)?\s+on|enabled?|true)\b|打开|开启|启用", re.I)
_IT = re.compile(r"\b(?:it|that|this\s+one)\b|它|这个", re.I)
# "is it off by default?" asks what the default is; it wishes nothing
_ASKS_DEFAULT = re.compile(r"\bby\s+default\b|\bdefaults?\b|默认|缺省", re.I)


def mixed_precision(text: str) -> dict[str, str]:
    """mp_policy dtypes named with their role, either order: "param bf16", "fp32 gradient reduction"."""
    out: dict[str, str] = {}
    for key, role in _ROLES.items():
        m = re.search(rf"(?<![a-z]){role}{_GLUE}{_DTYPE}", text, re.I) or \
            re.search(rf"{_DTYPE}\s*(?:for\s+(?:the\s+)?|(?:来|用来|用于)?做|用于|来)?\s*{role}", text, re.I)
        if m:
            out[key] = _DTYPES[m.group("dt").lower()]
    return out


def _switches(text: str) -> dict[str, bool]:
    """Boolean fields of `distributed:` set on or off, by name or, in a clause of their own, by "it"."""
    table = field_table()
    named = [r for r in table.mentioned(text) if r.section == "distributed" and r.type == "bool"]
    out: dict[str, bool] = {}
    for clause in clauses(text):
        here = [r for r in table.mentioned(clause) if r.section == "distributed" and r.type == "bool"]
        targets = here or (named if len(named) == 1 and _IT.search(clause) else [])
        if not targets or _ASKS_DEFAULT.search(clause):
            continue
        off, on = _OFF.search(clause), _ON.search(clause)
        if bool(off) != bool(on):  # both in one clause: not a clear wish
            out.update({r.key: bool(on) for r in targets})
    return out


def wished_values(text: str) -> tuple[tuple[str, Any], ...]:
    """(dotted key below `distributed:`, value) the text wishes written: mp_policy dtypes, then switches."""
    text = normalize(text)
    out: dict[str, Any] = {f"mp_policy.{k}": v for k, v in mixed_precision(text).items()}
    out.update(_switches(text))
    return tuple(out.items())
