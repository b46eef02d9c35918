"""Direct answers to fact questions about named fields, rendered from the field reference.

The question decides which fact leads (its default, its allowed values, which strategies accept
it, whether two names are the same thing, whether a block is read, what it does); the sentences are
templates in field_phrases.yaml filled from assistant/validator/fields.yaml.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

from assistant.datafile import read_yaml
from assistant.validator.fields import CANONICAL_STRATEGIES, FieldRef, FieldTable, field_table

_PHRASES = Path(__file__).with_name("field_phrases.yaml")
MAX_QUESTION_CHARS = 4000
_STRATEGY_DATACLASSES = ("FSDP2Config", "MegatronFSDPConfig", "DDPConfig")


@dataclass(frozen=True)
class _Phrases:
    asks: tuple[tuple[str, tuple[re.Pattern[str], ...]], ...]
    text: dict[str, dict[str, str]]
    max_asks: int

    def say(self, phrase: str, lang: str, **values: Any) -> str:
        entry = self.text[phrase]
        return (entry["zh"] if lang == "zh" else entry["en"]).format(**values)


@lru_cache(maxsize=1)
def _phrases() -> _Phrases:
    data = read_yaml(_PHRASES)
    asks = tuple((kind, tuple(re.compile(p, re.IGNORECASE) for p in pats)) for kind, pats in data["asks"].items())
    return _Phrases(asks, data["text"], int(data["max_asks"]))


def asked_kinds(question: str) -> list[str]:
    """The fact kinds a question asks for, in answer order (same, read, accept, allowed, default, meaning)."""
    q = question[:MAX_QUESTION_CHARS]
    return [kind for kind, pats in _phrases().asks if any(p.search(q) for p in pats)]


def field_fact_lines(refs: Sequence[FieldRef], question: str, lang: str) -> list[str]:
    """Sentences that answer the question about `refs` (from FieldTable.mentioned), the asked fact
    first, then what the field does, the fact worth knowing beside it, and the upstream file."""
    refs = list(dict.fromkeys(refs))
    if not refs:
        return []
    lang = "zh" if lang == "zh" else "en"
    p, table = _phrases(), field_table()
    question = question[:MAX_QUESTION_CHARS]
    r = _Renderer(p, table, lang, question, refs)
    kinds = asked_kinds(question) or ["meaning"]
    lines: list[str] = []
    for kind in kinds:
        got = getattr(r, kind)()
        if got:
            lines.extend(got)
            r.done.add(kind)
        if len(r.done) >= p.max_asks:
            break
    if not lines:
        lines.extend(r.meaning())
    for line in r.support():
        if line and not any(line in earlier for earlier in lines):  # a note the lead already quoted
            lines.append(line)
    return lines


class _Renderer:
    def __init__(self, p: _Phrases, table: FieldTable, lang: str, question: str, refs: list[FieldRef]):
        self.p, self.t, self.lang, self.q = p, table, lang, question
        self.names = [r for r in refs if r.is_strategy_name]
        fields = [r for r in refs if not r.is_strategy_name]
        # A block key (`moe`) is context when a key inside that block is named too.
        inner = {r.section for r in fields}
        self.subjects = [r for r in fields if not (table.block_of(r) and r.path in inner)] or fields
        self.done: set[str] = set()
        self.meant: set[str] = set()
        self.main: FieldRef = (self.subjects or self.names)[0]  # the row the supporting lines are about

    def say(self, phrase: str, **values: Any) -> str:
        return self.p.say(phrase, self.lang, **values)

    # ---- the asks ---------------------------------------------------------------------------------

    def same(self) -> list[str]:
        spellings = _strategy_spellings(self.q, self.t)
        if len(spellings) >= 2:
            owners = {self.t.strategy_map()[s] for s in spellings}
            names = self._join([f"`{s}`" for s in spellings], "list_and")
            if len(owners) == 1:
                ref = self.t.get(spellings[0])[0]
                return [self.say("same_strategy", names=names, dataclass=ref.dataclasses[0], key=ref.key)]
            parts = [self.say("strategy_part", key=s, dataclass=self.t.strategy_map()[s]) for s in spellings]
            return [self.say("different_strategies", names=names, parts=self.say("part_sep").join(parts))]
        if len(self.subjects) >= 2:
            two = self.subjects[:2]
            names = self._join([f"`{r.path}`" for r in two], "list_and")
            parts = [self.say("field_part", path=r.path, owner=self._owner(r), default=_show(r.default)) for r in two]
            self.done.add("default")
            return [self.say("different_fields", names=names, parts=self.say("part_sep").join(parts))]
        return []

    def read(self) -> list[str]:
        for ref in self.subjects + [r for r in self.t.refs if r in self.names]:
            block = self.t.block_of(ref) or self.t.sections.get(ref.section)
            if block is None or block.read_when_key is None:
                continue
            holder = self.t.get(block.name)[0]  # the `moe` / `pipeline` key itself carries the drop note
            value = _stated_size(self.q, block.read_when_key)
            fill = dict(block=block.block_key, cond=block.read_when_key, above=block.read_when_above,
                        note=holder.note(self.lang))
            if value is None:
                line = self.say("read_rule", **fill)
            elif value <= block.read_when_above:
                line = self.say("read_no", value=value, **fill)
            else:
                line = self.say("read_yes", value=value, **fill)
            self.done.add("read_rule")
            self.main = ref
            return [line]
        return []

    def accept(self) -> list[str]:
        if not self.subjects:
            return []
        ref = self.subjects[0]
        if self.names:
            strategy = self.names[0].key
            value = _named_value(self.q, ref)
            if strategy in ref.strategies and value is not None and strategy not in ref.value_strategies[value]:
                return [self.say("accept_value_no", strategy=strategy, key=ref.key, value=value,
                                 strategies=self._strategies(ref.value_strategies[value]))]
            if strategy in ref.ignored_by:
                return [self.say("accept_ignored", strategy=strategy, key=ref.key)]
            if strategy in ref.strategies:
                return [self.say("accept_yes", strategy=strategy, key=ref.key)]
            kind = _category(ref)
            return [self.say(f"accept_no_{kind}", strategy=strategy, key=ref.key, path=ref.path,
                             dataclass=self._owner(ref), strategies=self._strategies(ref.strategies))]
        if set(ref.strategies) == set(CANONICAL_STRATEGIES) and _category(ref) != "size":
            return [self.say("strategies_all", path=ref.path, strategies=self._strategies(ref.strategies))]
        others = [s for s in CANONICAL_STRATEGIES if s not in ref.strategies]
        return [self.say(f"strategies_{_category(ref)}", key=ref.key, path=ref.path, dataclass=self._owner(ref),
                         strategies=self._strategies(ref.strategies), others=self._strategies(others))]

    def allowed(self) -> list[str]:
        out = []
        for ref in self.subjects[:2]:
            if ref.allowed:
                values = self._join([f"`{_show(v)}`" for v in ref.allowed], "list_last")
                out.append(self.say("allowed", path=ref.path, values=values, default=_show(ref.default)))
            else:
                out.append(self.say("allowed_open", path=ref.path, type=f"`{ref.type}`", default=_show(ref.default)))
        if out:
            self.done.add("default")
        return out

    def default(self) -> list[str]:
        subjects = self.subjects[:3]
        if "default" in self.done or not subjects:
            return []
        if len(subjects) >= 2 and len({r.key for r in subjects}) == 1:
            parts = [self.say("default_part", section=r.section, key=r.key, default=_show(r.default)) for r in subjects]
            return [self.say("default_both", key=subjects[0].key, parts=self.say("part_sep").join(parts))]
        return [self.say("default", path=r.path, default=_show(r.default)) for r in subjects[:2]]

    def meaning(self) -> list[str]:
        out = []
        for ref in (self.subjects or self.names)[:2]:
            if ref.path not in self.meant:
                self.meant.add(ref.path)
                out.append(self.say("meaning", path=ref.key if ref.is_strategy_name else ref.path,
                                    meaning=ref.meaning(self.lang)))
        return out

    # ---- what follows the answer --------------------------------------------------------------------

    def support(self) -> list[str]:
        main = self.main
        out = []
        if "meaning" not in self.done and main.path not in self.meant:
            self.meant.add(main.path)
            out.append(self.say("meaning", path=main.key if main.is_strategy_name else main.path,
                                meaning=main.meaning(self.lang)))
        if main.note(self.lang):
            out.append(main.note(self.lang))
        section = self.t.sections.get(main.section)
        if "read_rule" not in self.done and section is not None and section.read_when_key:
            holder = self.t.get(section.name)[0]
            out.append(self.say("read_rule", block=section.block_key, cond=section.read_when_key,
                                above=section.read_when_above, note=holder.note(self.lang)))
        out.append(self.say("upstream", upstream=main.upstream))
        return out

    # ---- helpers ------------------------------------------------------------------------------------

    def _join(self, items: list[str], last: str) -> str:
        if len(items) <= 1:
            return "".join(items)
        return self.say("list_sep").join(items[:-1]) + self.say(last) + items[-1]

    def _strategies(self, names: Sequence[str]) -> str:
        return self._join([f"`{s}`" for s in names], "list_and")

    def _owner(self, ref: FieldRef) -> str:
        owners = [d for d in ref.dataclasses if d in _STRATEGY_DATACLASSES] or list(ref.dataclasses)
        return self._join([f"`{d}`" for d in owners], "list_and") if owners else f"`{ref.section}`"


def _category(ref: FieldRef) -> str:
    if ref.upstream.endswith("_PARALLELISM_DEFAULTS"):
        return "size"
    if ref.section == "distributed" and set(ref.dataclasses) & set(_STRATEGY_DATACLASSES):
        return "field"
    return "block"


def _strategy_spellings(question: str, table: FieldTable) -> list[str]:
    names = table.strategy_map()
    out: list[str] = []
    for m in re.finditer(r"[a-z0-9_\-]+", question.lower()):
        if m.group(0) in names and m.group(0) not in out:
            out.append(m.group(0))
    return out


def _named_value(question: str, ref: FieldRef) -> str | None:
    """A value with its own strategy list that the question names (`activation_checkpointing: selective`)."""
    low = question.lower()
    return next((v for v in ref.value_strategies
                 if re.search(rf"(?<![a-z0-9_]){re.escape(v.lower())}(?![a-z0-9_])", low)), None)


def _stated_size(question: str, key: str) -> int | None:
    """The value the question gives a size (`ep_size is 1`, `ep_size=1`, `ep 1`, `ep_size 设为 1`)."""
    stem = re.escape(key.removesuffix("_size"))
    m = re.search(rf"(?<![a-z0-9_]){stem}(?:_size)?`?\s*(?:is|was|=|:|of|to|at|为|是|设为|设成|设置为|等于|==)?\s*(-?\d+)\b",
                  question, re.IGNORECASE)
    return int(m.group(1)) if m else None


def _show(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_show(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    return str(value)
