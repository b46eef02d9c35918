"""Recipe settings outside `distributed:` that a story states in prose ("we pack sequences to 8k",
"packed_sequence_size: 4096", "attention 用的默认 sdpa"), as dotted recipe paths.

Read exactly (a number beside a packing word, the backend name `sdpa` beside an attention word),
never guessed: a check that depends on one (CP with packing on SDPA, MW-W-CP-PACKING-SDPA) fires
only on what the user wrote. The judged layout takes them where the pasted config leaves them unset.
"""
from __future__ import annotations

import re
from typing import Any

# a packed length: the field name with its number, or a packing word then "to 8k" / "到 4096" / "packed 2048"
_PACKED = re.compile(
    r"packed_sequence_size`?\s*(?:=|:|：|of|is|to|为|是|设成|设为|改成)?\s*`?(?P<a>\d+)\s*(?P<ka>[kK])?(?![\w.])"
    r"|\b(?:pack(?:s|ed|ing)?)\b(?:\s+(?:our|the|all|every|each|them|it|everything))?(?:\s+(?:sequences?|samples?|examples?|data))?"
    r"\s*(?:to|into|at|up\s+to|到|成)?\s*(?P<b>\d+)\s*(?P<kb>[kK])?(?![\w.])(?!\s*(?:samples?|sequences?|examples?|docs?|documents?|条|个|篇))"
    r"|(?:打包|拼接)(?:到|成)\s*(?P<c>\d+)\s*(?P<kc>[kK])?(?![\w.])",
    re.I)
# SDPA named as the attention in use; "instead of sdpa", "不用 sdpa" name the one not used
_SDPA = re.compile(r"(?<![\w])sdpa(?![\w])", re.I)
_ATTENTION = re.compile(r"attention|attn|注意力", re.I)
_NOT_USED = re.compile(r"(?:instead\s+of|not|rather\s+than|away\s+from|不用|不是|而不是|别用|换掉)\s*(?:the\s+)?(?:default\s+)?`?$", re.I)


def settings_in(prose: str) -> dict[str, Any]:
    """The recipe settings the prose states: {"packed_sequence.packed_sequence_size": 8192, ...}."""
    out: dict[str, Any] = {}
    m = _PACKED.search(prose or "")
    if m:
        for num, k in (("a", "ka"), ("b", "kb"), ("c", "kc")):
            if m.group(num):
                value = int(m.group(num)) * (1024 if m.group(k) else 1)
                if value >= 128:  # a packed length; "packing 1" or a count is none
                    out["packed_sequence.packed_sequence_size"] = value
                break
    for sentence in re.split(r"[。！？!?\n]|\.\s", prose or ""):
        s = _SDPA.search(sentence)
        if s and _ATTENTION.search(sentence) and not _NOT_USED.search(sentence[:s.start()].rstrip()):
            out["model.attn_implementation"] = "sdpa"
            break
    return out
