"""What a question asks about the fields it names, read once (issue 18: compose/ matches no pattern on
the question): the fact kinds it asks in order (default, allowed values, strategies, same, read,
options, advice, case ...), the values it names for a field, the sizes it states, the strategy
spellings it writes. compose/knowledge/field_facts.py answers from a `FieldQuestion`
(`cues.Reading.field_question`); the cue patterns are field_question.yaml.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

from assistant.datafile import read_yaml
from assistant.validator.fields import FieldRef, field_table, word_pattern

_FILE = Path(__file__).with_name("field_question.yaml")
MAX_QUESTION_CHARS = 4000
_SENTENCE_STOP = re.compile(r"[。？！?!;；]")
_EMPTY_BLOCK = re.compile(r"(?<![\w.])([a-z_]+)\s*:\s*\{\s*\}")
_SWITCH_OFF = re.compile(r"\b(?:off|disable)\b|关闭|关掉|禁用|怎么关|如何关", re.IGNORECASE)


@dataclass(frozen=True)
class _Cues:
    asks: tuple[tuple[str, tuple[re.Pattern[str], ...]], ...]
    not_asked: dict[str, tuple[re.Pattern[str], ...]]
    value_needed: tuple[re.Pattern[str], ...]
    value_asked: tuple[re.Pattern[str], ...]
    value_cues: tuple[str, ...]
    not_values: frozenset[str]
    differ: re.Pattern[str]


@lru_cache(maxsize=1)
def _cues() -> _Cues:
    d = read_yaml(_FILE)

    def pats(items) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(p, re.IGNORECASE) for p in items)

    return _Cues(tuple((kind, pats(ps)) for kind, ps in d["asks"].items()),
                 {k: pats(v) for k, v in d["not_asked"].items()}, pats(d["value_needed"]), pats(d["value_asked"]),
                 tuple(d["value_cues"]), frozenset(str(w) for w in d["not_values"]),
                 re.compile(d["differ_words"], re.IGNORECASE))


@lru_cache(maxsize=None)
def _cue_pattern(cue: str, key: str) -> re.Pattern:
    """A value cue for one field, compiled once (cues x fields is bounded; see fields.word_pattern)."""
    return re.compile(cue.replace("{key}", re.escape(key)), re.IGNORECASE)


class FieldQuestion:
    """One question (its first MAX_QUESTION_CHARS) as the field reference's answer reads it."""

    def __init__(self, text: str):
        self._q = text[:MAX_QUESTION_CHARS]

    @cached_property
    def asks(self) -> tuple[tuple[int, str], ...]:
        """(position, kind) of every kind the question asks, in the order it asks them; `meaning_weak`
        ("what is X?") counts as `meaning` only when nothing else matched."""
        c, q = _cues(), self._q
        found: dict[str, int] = {}
        for kind, pats in c.asks:
            if any(p.search(q) for p in c.not_asked.get(kind, ())):
                continue
            starts = [m.start() for p in pats for m in [p.search(q)] if m]
            if starts:
                found[kind] = min(starts)
        if self.empty_blocks and set(found) <= {"meaning_weak"}:
            # "with just `pipeline: {}`, what schedule do I get?": a block written empty and asked about
            # asks what its fields default to
            found = {"default": self._q.find(f"{self.empty_blocks[0]}")}
        if len(found) > 1:
            found.pop("meaning_weak", None)
        order = {kind: i for i, (kind, _) in enumerate(c.asks)}
        return tuple(sorted(((pos, "meaning" if k == "meaning_weak" else k) for k, pos in found.items()),
                            key=lambda pk: (pk[0], order.get(pk[1], 0))))

    @cached_property
    def empty_blocks(self) -> tuple[str, ...]:
        """The block keys the question writes empty, `moe: {}`, `pipeline: {}` (fields.yaml's blocks), in order."""
        blocks = {b.block_key for b in field_table().sections.values() if b.block_key}
        return tuple(dict.fromkeys(m.group(1) for m in _EMPTY_BLOCK.finditer(self._q) if m.group(1) in blocks))

    @cached_property
    def kinds(self) -> tuple[str, ...]:
        """The fact kinds asked, in the order asked (same, read, options, accept, advice, allowed, default, meaning)."""
        return tuple(dict.fromkeys(kind for _, kind in self.asks))

    @cached_property
    def value_needed(self) -> bool:
        """"I have to set reduce_dtype: float32 myself?": a value the user believes they must set."""
        return any(p.search(self._q) for p in _cues().value_needed)

    @cached_property
    def value_asked(self) -> bool:
        """Whether a value named is asked about ("is that fine?", "会不会报错") or believed needed."""
        return any(p.search(self._q) for p in _cues().value_asked) or self.value_needed

    @cached_property
    def compares(self) -> bool:
        """Whether the question compares ("same as", "vs", "区别"), whatever else it asks."""
        return any(p.search(self._q) for kind, pats in _cues().asks if kind == "same" for p in pats)

    @cached_property
    def asks_difference(self) -> bool:
        """"is there any difference": a comparison asked as a difference, answered "no difference"."""
        return _cues().differ.search(self._q) is not None

    @cached_property
    def bare_words(self) -> tuple[tuple[int, str], ...]:
        """(position, word) of every bare word that could be a value ("none", "null", "on", "~")."""
        return tuple((m.start(), m.group(0)) for m in re.finditer(r"(?<![\w.])[A-Za-z_~][A-Za-z0-9_]*(?![\w])", self._q))

    @cached_property
    def refs(self) -> tuple[FieldRef, ...]:
        """The field rows the question names, each once, in order of first mention."""
        return tuple(dict.fromkeys(field_table().mentioned(self._q)))

    @cached_property
    def mentions(self) -> tuple[tuple[int, FieldRef], ...]:
        """(position, row) of each identifier and term the question names."""
        return tuple(field_table().mentions(self._q))

    @cached_property
    def _lower(self) -> str:
        return self._q.lower()

    def first_index(self, key: str) -> int:
        """Where the key is first written as a word (-1 when it is not)."""
        m = word_pattern(key.lower()).search(self._lower)
        return m.start() if m else -1

    def same_sentence(self, a: int, b: int) -> bool:
        """No sentence end between two positions (a >= 0)."""
        lo, hi = sorted((a, b))
        return a >= 0 and not _SENTENCE_STOP.search(self._q, lo, hi)

    def switch_off_near(self, pos: int) -> bool:
        """"How do I turn off X?": the ask at `pos` (its next 40 characters) switches something off."""
        return _SWITCH_OFF.search(self._q[pos:pos + 40]) is not None

    @cached_property
    def strategy_spellings(self) -> tuple[str, ...]:
        """The strategy names the question writes (`fsdp2`, `mfsdp`, `megatron_fsdp`), lower case, once each."""
        names = field_table().strategy_map()
        return tuple(dict.fromkeys(w for w in re.findall(r"[a-z0-9_\-]+", self._lower) if w in names))

    @cached_property
    def capitalised_strategies(self) -> tuple[str, ...]:
        """Strategy names written with capitals (`FSDP2`), as written."""
        names = field_table().strategy_map()
        return tuple(w for w in re.findall(r"[A-Za-z0-9_\-]+", self._q) if w.lower() in names and w != w.lower())

    def named_strategy_value(self, values) -> str | None:
        """The first of a field's values with their own strategy list that the question names
        (`activation_checkpointing: selective`)."""
        return next((v for v in values if word_pattern(v.lower()).search(self._lower)), None)

    def stated_size(self, key: str) -> int | None:
        """The value the question gives a size (`ep_size is 1`, `ep_size=1`, `ep 1`, `ep_size 设为 1`)."""
        stem = re.escape(key.removesuffix("_size"))
        for m in re.finditer(rf"(?<![a-z0-9_]){stem}(?:_size)?`?\s*(?:is|was|=|:|of|to|at|为|是|设为|设成|设置为|等于|==|写的|写了|写成)?"
                             rf"\s*(?:(-?\d+)\b|(null|none|~)(?![\w]))", self._q, re.IGNORECASE):
            if m.group(1) is not None:
                return int(m.group(1))
            # "ep_size: null" / "ep_size 写的 null": upstream falls back to the default (_dist_utils
            # _PARALLELISM_DEFAULTS), a number only for the sizes that have one (dp_size null is inferred)
            default = next((r.default for r in field_table().get(key) if not r.is_strategy_name), None)
            if isinstance(default, int) and not isinstance(default, bool):
                return default
        return None

    @cached_property
    def inert_refs(self) -> tuple[FieldRef, ...]:
        """The fields named that do nothing at the sizes the question states (fields.yaml `inert_when`:
        "tp_size 1 with sequence_parallel true")."""
        return tuple(r for r in self.refs
                     if r.inert_when and all(self.stated_size(k) == v for k, v in r.inert_when.items()))

    @property
    def value_cue_count(self) -> int:
        return len(_cues().value_cues)

    def named_values(self, rank: int, key: str) -> tuple[tuple[int, str], ...]:
        """(position, value as written) the value cue of this rank (strongest first) names for the key,
        in order; words that are no value ("it", "the") and the key itself left out."""
        c = _cues()
        out = []
        for m in _cue_pattern(c.value_cues[rank], key).finditer(self._q):
            group = "v" if m.group("v") else "w"  # a cue pattern may name the value `w` in a second branch
            raw = m.group(group).rstrip(".-")
            # a quoted word is a value whatever it is ("on" in `activation_checkpointing: "on"`)
            quoted = m.start(group) > 0 and self._q[m.start(group) - 1] in "\"'“‘"
            if raw.lower() in c.not_values and not quoted or raw.lower() == key:
                continue
            out.append((m.start(group), raw))
        return tuple(out)
