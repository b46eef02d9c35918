"""Extractive answers: the kb sentences, inside the retrieved chunks, that answer the question.

Each chunk's Markdown is read as prose (front matter, headings, code blocks and tables skipped, list
markers dropped, wrapped lines joined) and cut into whole sentences. A sentence scores by the
question's words it shares, weighted by how rare they are among the candidates, with identifiers
(`create_distributed_setup_from_config`, `ep_size`) counting most; a sentence that opens with a
pronoun ("It does not start the process group") borrows the identifiers of the one before it.
Tokens come from the BM25 channel's tokenizer (assistant/index/lexical.py: identifiers kept whole, Chinese
segmented by jieba), so the question is read the same way retrieval read it; the question's side
(its terms, identifiers, stated values) is read in understand/question_terms.py (`Reading.terms`).
"""
from __future__ import annotations

import math
import re
from pathlib import Path
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Sequence

from assistant.datafile import read_yaml
from assistant.retrieve.hit import Hit
from assistant.understand.cues import Reading
from assistant.understand.question_terms import glossary, tokens as tokens_of

# Chunks of our own kb; upstream skill text and code chunks are not quoted as answers.
QUOTABLE_KINDS = frozenset({"doc", "pitfall", "faq", "anchor", "example"})
MAX_CHUNK_CHARS = 20_000
IDENTIFIER_WEIGHT = 3.0
# A sentence whose condition on a size agrees with the value the question states ("ep_size is 1" and
# "with `ep_size <= 1` it is dropped") gains; one that only states the opposite case loses.
AGREES, DISAGREES = 1.35, 0.75
CONFLICTS = 0.25  # the sentence names a value the question excludes
SAME_EXAMPLE = 1.15  # an example config with the question's value (`tp_size: 16` for "tp_size 16")
SUBJECT_BONUS = 0.2  # a sentence whose first words name what the question asks about ("HSDP splits ...")
DEFINITION_BONUS = 2.0  # "what is HSDP?": the sentence that spells it out or says what it is
QUANTITY_BONUS = 1.5  # "how many microbatches?": the sentence with the formula
_CUES = Path(__file__).with_name("extract_cues.yaml")

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_TABLE = re.compile(r"^\s*\|")
_LIST = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_QUOTE = re.compile(r"^\s*>\s?")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_LABEL = re.compile(r"^\*\*[^*\n]{1,40}\*\*\s*")  # "**Symptom.** ", "**原因。**"
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
# English sentence ends: . ! ? followed by space and a capital, a backtick, a digit or a bracket.
_EN_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[A-Z`\"(\[\d\x00])")  # \x00: a masked code span
_ZH_END = re.compile(r"(?<=[。！？])")
_ABBREV = re.compile(r"\b(?:e\.g|i\.e|etc|vs|cf|approx|incl)\.", re.IGNORECASE)
_PRONOUN = re.compile(r"^(?:it|this|that|they|these|those|its|both|each|either|它|这|该|其|此|两者)(?![a-z])", re.IGNORECASE)
_MIN_CHARS = {"en": 25, "zh": 10}
_ZH_CONTINUATION = frozenset("时的了和与及或而但且就也都着过吗呢，、；）")  # characters no Chinese sentence starts with
_RULE_CODE = re.compile(r"\bMW-[EW]-[A-Z0-9-]+\b")  # its parts ("hsdp", "strategy") are not what a sentence is about


@dataclass(frozen=True)
class Picked:
    sentence: str
    hit: Hit
    score: float


def select_sentences(said: Reading, hits: Sequence[Hit], lang: str, limit: int = 2, *,
                     tokenizer: Callable[[str], list[str]] | None = None) -> list[Picked]:
    """Up to `limit` sentences from `hits` that answer the question read (`said.terms`), best first (a
    picked sentence that opens with a pronoun follows the picked sentence it refers to). `tokenizer`
    defaults to the BM25 channel's; the engine may pass its retriever's to share jieba's dictionary."""
    asked = said.terms
    if limit <= 0 or asked.empty:
        return []
    tok = tokenizer or _default_tokenizer()
    quotable = [h for h in hits if h.kind in QUOTABLE_KINDS]
    own = [h for h in quotable if h.lang == lang]
    pool = own or quotable
    q_terms = asked.terms(tok)
    if not q_terms:
        return []
    idents = asked.identifiers(tok)
    own_terms = {t for t, f in q_terms.items() if f == 1.0}
    stated = asked.stated
    cues = _cue_data()
    defines, counts = asked.defines, asked.counts

    cands: list[tuple[int, int, str, set[str], Hit]] = []  # (hit rank, position, sentence, tokens, hit)
    for rank, hit in enumerate(pool):
        prev: frozenset[str] = frozenset()
        for pos, (sentence, tokens, quotable) in enumerate(_chunk_sentences(hit.text[:MAX_CHUNK_CHARS], tok)):
            own_tokens = tokens
            if _PRONOUN.match(sentence):
                tokens = tokens | {t for t in prev if t in idents}  # "It does not ..." speaks of the one before
            prev = own_tokens
            if quotable:
                cands.append((rank, pos, sentence, set(tokens), hit))
    if not cands:
        return []

    n = len(cands)
    df: dict[str, int] = {}
    for *_, tokens, _h in cands:
        for t in tokens & q_terms.keys():
            df[t] = df.get(t, 0) + 1

    def weight(t: str) -> float:
        idf = math.log(1 + n / (1 + df.get(t, 0)))
        return idf * q_terms[t] * (IDENTIFIER_WEIGHT if t in idents else 1.0)

    scored: list[tuple[float, int, int, str, Hit]] = []
    for rank, pos, sentence, tokens, hit in cands:
        shared = tokens & q_terms.keys()
        if not _enough(shared, own_terms, idents):
            continue
        s = sum(weight(t) for t in shared) / math.log2(2 + len(tokens) / 12)
        if set(tok(sentence[:40])[:3]) & own_terms:
            s *= 1.0 + SUBJECT_BONUS
        s *= _condition_factor(sentence, stated)
        if _conflicts(tokens, own_terms, cues.exclusive):
            s *= CONFLICTS
        if defines and _defines(sentence, own_terms, tok):
            s *= DEFINITION_BONUS
        if counts and cues.quantity_sentence.search(sentence):
            s *= QUANTITY_BONUS
        s *= 1.0 + 0.15 / (1 + rank)  # the retriever's order breaks near-ties
        scored.append((s, rank, pos, sentence, hit))
    scored.sort(key=lambda x: (-x[0], x[1], x[2]))

    picked: list[tuple[float, int, int, str, Hit]] = []
    seen: set[str] = set()
    for item in scored:
        key = re.sub(r"\W+", "", item[3].lower())
        if key in seen:
            continue
        seen.add(key)
        picked.append(item)
        if len(picked) == limit:
            break
    picked = _reading_order(picked)
    return [Picked(sentence, hit, round(s, 4)) for s, _r, _p, sentence, hit in picked]


def split_sentences(markdown: str) -> list[str]:
    """The prose sentences of a Markdown chunk, whole, in order."""
    out: list[str] = []
    for para in _paragraphs(markdown):
        out.extend(_sentences(para))
    return out


# ---- Markdown as prose ------------------------------------------------------------------------

def _paragraphs(text: str) -> list[str]:
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":  # front matter
        end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
        if end is not None:
            lines = lines[end + 1:]
    paras: list[str] = []
    cur: list[str] = []
    fence: str | None = None

    def flush() -> None:
        if cur:
            paras.append(_join(cur))
            cur.clear()

    for line in lines:
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1) == fence:
                fence = None
            continue
        if m:
            flush()
            fence = m.group(1)
            continue
        if not line.strip() or _HEADING.match(line) or _TABLE.match(line) or line.strip().startswith("<!--"):
            flush()
            continue
        line = _QUOTE.sub("", line)
        if _LIST.match(line):
            flush()
            line = _LIST.sub("", line)
        cur.append(line.strip())
    flush()
    return paras


def _join(lines: list[str]) -> str:
    out = lines[0]
    for line in lines[1:]:
        # wrapped Chinese joins without a space
        out += line if (_CJK.search(out[-1:]) and _CJK.search(line[:1])) else " " + line
    return out.strip()


def _sentences(para: str) -> list[str]:
    # Protect code spans and abbreviations from the sentence splitter, then put them back.
    spans: list[str] = []

    def hide(m: re.Match[str]) -> str:
        spans.append(m.group(0))
        return f"\x00{len(spans) - 1}\x00"

    masked = _ABBREV.sub(hide, _CODE_SPAN.sub(hide, _LABEL.sub("", para)))
    parts: list[str] = []
    for chunk in _EN_END.split(masked):
        parts.extend(p for p in _ZH_END.split(chunk) if p.strip())

    def unhide(s: str) -> str:
        while "\x00" in s:
            s = re.sub(r"\x00(\d+)\x00", lambda m: spans[int(m.group(1))], s)
        return s

    return [unhide(p).strip() for p in parts if p.strip()]


def _quotable_sentence(sentence: str) -> bool:
    lang = "zh" if _CJK.search(sentence) else "en"
    if len(sentence) < _MIN_CHARS[lang] or sentence.endswith((":", "：", ",", "，")):
        return False  # an introduction to a list or code block, or a fragment
    if lang == "zh" and sentence[0] in _ZH_CONTINUATION:
        return False  # "时 moe_mesh 为 (2, 8)。": the tail of a sentence a chunk boundary cut
    if _cue_data().pointer_sentence.search(sentence):
        return False  # "See `context-parallel`.": points elsewhere, answers nothing
    if not re.search(r"[.!?。！？][\"')\]`*_]*$", sentence):
        return False  # no sentence end: a label or a list fragment ("`mp_policy` (bf16 params ...)")
    head = _CODE_SPAN.sub("x", sentence[:60])
    close = re.search(r"[)）]", head)
    if close and not re.search(r"[(（]", head[:close.start()]):
        return False  # starts inside a parenthesis: a chunk boundary cut the sentence
    first = sentence.lstrip("*_\"'(")[:1]
    return not (first.isalpha() and first.islower() and first.isascii())  # the tail of a sentence a code block cut


# ---- the question ------------------------------------------------------------------------------

@lru_cache(maxsize=2048)
def _chunk_sentences(text: str, tok: Callable[[str], list[str]]) -> tuple[tuple[str, frozenset[str], bool], ...]:
    """A chunk's sentences with their tokens, cached: the same kb chunks come back question after
    question, and segmenting Chinese is most of the work."""
    return tuple((s, frozenset(tokens_of(_RULE_CODE.sub(" ", s), tok)), _quotable_sentence(s))
                 for s in split_sentences(text))


_CONDITION = re.compile(r"(?<![A-Za-z0-9_])([a-z][a-z0-9]*_[a-z0-9_]+)`?\s*(<=|>=|<|>|==|=|:)?\s*`?\s*(\d+)(?![\d.])")
_OPS = {"<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b, "<": lambda a, b: a < b, ">": lambda a, b: a > b}


def _condition_factor(sentence: str, stated: dict[str, int]) -> float:
    if not stated:
        return 1.0
    agree = disagree = example = False
    for m in _CONDITION.finditer(sentence):
        key, op, n = m.group(1).lower(), m.group(2), int(m.group(3))
        if key not in stated:
            continue
        if op in (":", "="):
            # `tp_size: 16` is an example config: the same value is a hint, another value no condition
            example = example or stated[key] == n
            continue
        holds = _OPS[op](stated[key], n) if op in _OPS else stated[key] == n
        agree, disagree = agree or holds, disagree or not holds
    return AGREES if agree else DISAGREES if disagree else SAME_EXAMPLE if example else 1.0


def _conflicts(tokens: set[str], question: set[str], exclusive) -> bool:
    """The question names one of a set of exclusive values and the sentence only another one."""
    for sets in exclusive:
        asked = [alt for alt in sets if alt & question]
        if len(asked) == 1 and not asked[0] & tokens and any(alt & tokens for alt in sets if alt is not asked[0]):
            return True
    return False


def _defines(sentence: str, terms: set[str], tok: Callable[[str], list[str]]) -> bool:
    """"Hybrid sharded data parallel (HSDP) splits ...", "`dp_size` is the ...", "HSDP 是 ..."."""
    for m in re.finditer(r"[(（]([^()（）]{1,40})[)）]", sentence):
        if set(tok(m.group(1))) & terms and m.start() < 80:
            return True
    head = sentence[:60]
    m = re.search(r"\s(?:is|are|means|refers to)\s|是|指的?是|表示", head)
    return bool(m and set(tok(head[:m.start()])) & terms)


def _enough(shared: set[str], q_terms: set[str], idents: set[str]) -> bool:
    """An identifier the question names must be there; otherwise two of its words."""
    if idents:
        return bool(shared & idents)
    return len(shared) >= 2 or (len(q_terms) <= 2 and len(shared) == len(q_terms))


def _reading_order(picked: list[tuple[float, int, int, str, Hit]]) -> list[tuple[float, int, int, str, Hit]]:
    if len(picked) == 2:
        a, b = picked
        # "It does not start the process group" reads after the sentence that names "it"
        if a[4].id == b[4].id and b[2] == a[2] - 1 and _PRONOUN.match(a[3]):
            return [b, a]
    return picked


@dataclass(frozen=True)
class _CueData:
    exclusive: tuple[tuple[frozenset[str], ...], ...]
    quantity_sentence: re.Pattern[str]
    pointer_sentence: re.Pattern[str]


@lru_cache(maxsize=1)
def _cue_data() -> _CueData:
    data = read_yaml(_CUES)
    return _CueData(tuple(tuple(frozenset(str(w).lower() for w in alt) for alt in sets) for sets in data.get("exclusive") or ()),
                    re.compile(data["quantity_sentence"]), re.compile(data["pointer_sentence"], re.IGNORECASE))


@lru_cache(maxsize=1)
def _default_tokenizer() -> Callable[[str], list[str]]:
    from assistant.index.lexical import LexicalTokenizer

    gloss = glossary()
    return LexicalTokenizer(gloss.zh_terms if gloss is not None else ())
