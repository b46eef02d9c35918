"""Which language a question is written in: Chinese or English.

Chinese questions routinely carry English identifiers and terms (`tp_size`, "pipeline parallelism",
`megatron_fsdp`), so a plain letter count would call them English. Identifiers and code are removed
first, a Chinese character counts as much as an English word, and Chinese function words or
full-width punctuation decide mixed cases in favour of Chinese.
"""
from __future__ import annotations

import re
from typing import Literal

Lang = Literal["en", "zh"]

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_FENCE = re.compile(r"```.*?(```|$)", re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
# Identifiers: anything with an underscore, a dot-path or a digit inside is code, not prose.
_IDENT = re.compile(r"\b[A-Za-z0-9]*[_.\d][A-Za-z0-9_.\-]*\b")
_WORD = re.compile(r"[A-Za-z]{2,}")
# Grammar that only a Chinese sentence has; one of these plus a few Chinese characters is Chinese.
_ZH_MARKERS = re.compile(r"[吗呢吧的了么]|怎么|如何|什么|哪|是否|能否|可以|需要|应该|请|我|用|和|与|在|要|，|。|？|！|：|；")


def detect_language(text: str) -> Lang:
    """`zh` when Chinese dominates the prose of `text` (identifiers and code ignored), else `en`."""
    if not text:
        return "en"
    prose = _FENCE.sub(" ", text)
    prose = _INLINE_CODE.sub(" ", prose)
    prose = _IDENT.sub(" ", prose)
    cjk = len(_CJK.findall(prose))
    if cjk == 0:
        return "en"
    words = len(_WORD.findall(prose))
    if cjk >= words:
        return "zh"
    if cjk >= 2 and _ZH_MARKERS.search(prose):
        return "zh"
    return "en"


def resolve_language(text: str, requested: str = "auto") -> Lang:
    """The caller's explicit choice wins; `auto` (or anything unknown) detects from the text."""
    if requested in ("en", "zh"):
        return requested  # type: ignore[return-value]
    return detect_language(text)
