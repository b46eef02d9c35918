"""Shared checks on an answer's text: sentences, negations, YAML shown, citations, language."""
from __future__ import annotations

import re

import yaml

from assistant.compose.gate.check import looks_like_config, yaml_blocks

NEG_EN = re.compile(r"\b(no|not|cannot|can't|rejects?|rejected|lacks?|only|nor|neither|never|fails?|without|instead)\b|"
                    r"has no|is no option", re.I)
NEG_ZH = re.compile(r"不支持|不能|不接受|拒绝|不行|没有|不要|不适合|只是|仅|无法|不是|也不")
CITE = re.compile(r"\[(\d+)\]")


def prose(text: str) -> str:
    """The answer without fenced code blocks and without the sources list."""
    out, in_block = [], False
    for line in text.splitlines():
        if re.match(r"^\s{0,3}(```|~~~)", line):
            in_block = not in_block
            continue
        if not in_block:
            out.append(line)
    body = "\n".join(out)
    return re.split(r"\n\*\*(Sources|来源)\*\*", body)[0]


def sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?。！？])\s+|\n+", prose(text))
    return [p.strip() for p in parts if p.strip()]


def sentences_with(text: str, *patterns: str) -> list[str]:
    return [s for s in sentences(text) if all(re.search(p, s, re.I) for p in patterns)]


def negated(sentence: str, lang: str) -> bool:
    return bool((NEG_ZH if lang == "zh" else NEG_EN).search(sentence))


def shown_configs(text: str) -> list[dict]:
    out = []
    for tag, body in yaml_blocks(text):
        if looks_like_config(tag, body):
            out.append(yaml.safe_load(body))
    return out


def dist_of(cfg: dict) -> dict:
    return cfg.get("distributed", cfg) if isinstance(cfg, dict) else {}


def citations(text: str) -> list[int]:
    return [int(n) for n in CITE.findall(prose(text))]


def cjk_ratio(text: str) -> float:
    p = re.sub(r"`[^`]*`", "", prose(text))
    cjk = len(re.findall(r"[\u4e00-\u9fff]", p))
    latin = len(re.findall(r"[A-Za-z]", p))
    return cjk / max(1, cjk + latin)
