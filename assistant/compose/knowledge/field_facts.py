"""Direct answers to fact questions about named fields, rendered from the field reference.

The question decides which fact leads (its default, its allowed values, which strategies accept
it, whether two names are the same thing, whether a block is read, whether a value it names is
accepted, what it does): understand/field_question.py reads that (a `FieldQuestion`, from
`cues.Reading.field_question`); the sentences are templates in field_phrases.yaml filled from
assistant/validator/fields.yaml.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

from assistant.datafile import read_yaml
from assistant.understand.field_question import FieldQuestion
from assistant.validator import schedules
from assistant.validator.coerce import translate_value
from assistant.validator.rules import dtype_known
from assistant.validator.fields import CANONICAL_STRATEGIES, FieldRef, FieldTable, field_table

_PHRASES = Path(__file__).with_name("field_phrases.yaml")
_STRATEGY_DATACLASSES = ("FSDP2Config", "MegatronFSDPConfig", "DDPConfig")
MAX_FIELDS = 4  # "what do a, b, c and d do?": each named field gets its sentence, up to this many


@dataclass(frozen=True)
class _Phrases:
    text: dict[str, dict[str, str]]
    max_asks: int
    decisions: tuple[str, ...]
    suppress: dict[str, frozenset[str]]

    def say(self, phrase: str, lang: str, **values: Any) -> str:
        entry = self.text[phrase]
        return (entry["zh"] if lang == "zh" else entry["en"]).format(**values)


@dataclass(frozen=True)
class _NamedValue:
    """A value the question names for a field, as written, and the reference's verdict on it."""
    ref: FieldRef
    raw: str
    pos: int
    ok: bool
    read_as: Any  # what upstream reads it as (the config loader's translation, a value alias)


@lru_cache(maxsize=1)
def _phrases() -> _Phrases:
    data = read_yaml(_PHRASES)
    return _Phrases(data["text"], int(data["max_asks"]), tuple(data["decisions"]),
                    {k: frozenset(v) for k, v in data["suppress"].items()})


def asked_kinds(fq: FieldQuestion) -> list[str]:
    """The fact kinds a question asks for, in the order it asks them (same, read, options, accept,
    advice, allowed, default, meaning)."""
    return list(fq.kinds)


def judges_value(fq: FieldQuestion) -> bool:
    """Whether the question names a value for a field and asks if it is accepted ("`dp_size: none`,
    won't that error?"): the field reference's verdict on that value answers it."""
    refs = list(fq.refs)
    if not refs or "advice" in fq.kinds:
        return False
    return _value_in_question(_Renderer(_phrases(), field_table(), "en", fq, refs)) is not None


def _value_in_question(r: "_Renderer") -> "_NamedValue | None":
    """The named value to judge: one the field rejects, or one the question asks about."""
    value = r.named_value()
    if value is not None and (not value.ok or r.fq.value_asked or r.compared(value) is not None):
        return value
    return None


@dataclass(frozen=True)
class FieldFacts:
    """The sentences that answer the asks (each asked kind, in order: they all belong in the lead),
    then the supporting ones (what the field does, the note beside it, the upstream file)."""
    answer: tuple[str, ...]
    support: tuple[str, ...]


def field_fact_lines(refs: Sequence[FieldRef], fq: FieldQuestion, lang: str) -> list[str]:
    """Sentences that answer the question about `refs` (from FieldTable.mentioned), the asked fact
    first, then what the field does, the fact worth knowing beside it, and the upstream file."""
    facts = field_facts(refs, fq, lang)
    return list(facts.answer + facts.support)


def field_facts(refs: Sequence[FieldRef], fq: FieldQuestion, lang: str) -> FieldFacts:
    """`field_fact_lines`, told apart into the asked facts and the supporting ones."""
    refs = list(dict.fromkeys(refs))
    if not refs:
        return FieldFacts((), ())
    lang = "zh" if lang == "zh" else "en"
    p, table = _phrases(), field_table()
    r = _Renderer(p, table, lang, fq, refs)
    asks = list(fq.asks)
    kinds = {kind for _, kind in asks}
    if not r.names:
        asks = [(pos, kind) for pos, kind in asks if not p.suppress.get(kind, frozenset()) & kinds]
    # "FSDP2 in capitals?" asks about the spelling; "should I ...?" is advice, unless it names a value
    # the user believes they must set ("I have to set reduce_dtype: float32 myself?")
    value = None
    if "case" not in kinds and ("advice" not in kinds or fq.value_needed):
        value = _value_in_question(r)
        if value is not None:
            asks.append((value.pos, "value"))
    # a value the field rejects is the answer's "no" whatever else is asked ("partial with fsdp2?")
    rejected = value is not None and not value.ok if "value" in {k for _, k in asks} else False
    asks.sort(key=lambda pk: (not (rejected and pk[1] == "value"), pk[1] not in p.decisions, pk[0]))
    lines: list[str] = []
    answered = 0
    for pos, kind in asks or [(0, "meaning")]:
        if kind in r.done:
            continue
        got = getattr(r, kind)(pos)
        if got:
            lines.extend(got)
            r.done.add(kind)
            answered += 1
        if answered >= p.max_asks:
            break
    if not lines:
        lines.extend(r.meaning(0))
    support: list[str] = []
    for line in r.support():
        if line and not any(line in earlier for earlier in lines + support):  # a note the lead already quoted
            support.append(line)
    return FieldFacts(tuple(lines), tuple(support))


class _Renderer:
    def __init__(self, p: _Phrases, table: FieldTable, lang: str, fq: FieldQuestion, refs: list[FieldRef]):
        self.p, self.t, self.lang, self.fq = p, table, lang, fq
        self.names = [r for r in refs if r.is_strategy_name]
        fields = [r for r in refs if not r.is_strategy_name]
        # A block key (`moe`) is context when a key inside that block is named too, unless the question
        # writes the block empty (`pipeline: {}`): then the block's defaults are asked
        inner = {r.section for r in fields}
        self.subjects = [r for r in fields if not (table.block_of(r) and r.path in inner
                                                   and r.key not in fq.empty_blocks)] or fields
        self.done: set[str] = set()
        self.meant: set[str] = set()
        self.main: FieldRef = (self.subjects or self.names)[0]  # the row the supporting lines are about
        seen = {r.path: pos for pos, r in fq.mentions}  # identifiers and terms
        self._at = {r.path: seen.get(r.path, fq.first_index(r.key)) for r in self.subjects}

    def say(self, phrase: str, **values: Any) -> str:
        return self.p.say(phrase, self.lang, **values)

    def subject_at(self, pos: int) -> FieldRef | None:
        """The field the ask at `pos` is about: the one named last before it, else the first after."""
        if not self.subjects:
            return None
        before = [r for r in self.subjects if 0 <= self._at[r.path] <= pos]
        return max(before, key=lambda r: self._at[r.path]) if before else self.subjects[0]

    # ---- the asks ---------------------------------------------------------------------------------

    def same(self, pos: int) -> list[str]:
        spellings = list(self.fq.strategy_spellings)
        if len(spellings) >= 2:
            owners = {self.t.strategy_map()[s] for s in spellings}
            names = self._join([f"`{s}`" for s in spellings], "list_and")
            if len(owners) == 1:
                ref = self.t.get(spellings[0])[0]
                return [self.say("same_strategy", names=names, dataclass=ref.dataclasses[0], key=ref.key)]
            parts = [self.say("strategy_part", key=s, dataclass=self.t.strategy_map()[s]) for s in spellings]
            # how they differ is what each one does: its line per strategy, after the one-line answer
            self.meant.update(self.t.get(s)[0].path for s in spellings)
            return [self.say("different_strategies", names=names, parts=self.say("part_sep").join(parts))] + [
                self.say("strategy_meaning", key=s, dataclass=self.t.strategy_map()[s],
                         meaning=self.t.get(s)[0].meaning(self.lang)) for s in spellings]
        if len(self.subjects) >= 2:
            two = self.subjects[:2]
            names = self._join([f"`{r.path}`" for r in two], "list_and")
            parts = [self.say("field_part", path=r.path, owner=self._owner(r), default=_show(r.default)) for r in two]
            self.done.add("default")
            return [self.say("different_fields", names=names, parts=self.say("part_sep").join(parts))]
        return []

    def read(self, pos: int) -> list[str]:
        for ref in self.subjects + self.names:
            block = self.t.block_of(ref) or self.t.sections.get(ref.section)
            if block is None or block.read_when_key is None:
                continue
            holder = self.t.get(block.name)[0]  # the `moe` / `pipeline` key itself carries the drop note
            value = self.fq.stated_size(block.read_when_key)
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

    def options(self, pos: int) -> list[str]:
        if self.names:
            strategy = self.names[0]
            dc = strategy.dataclasses[0]
            defaults = self.t.defaults("distributed")
            keys = [k for k in self.t.dataclass_fields(dc) if k != "activation_checkpointing"]
            self.done.add("default")  # each key is listed with its default
            return [self.say("options", strategy=strategy.key, dataclass=dc,
                             keys=self._join([self._with_default(k, defaults.get(k)) for k in keys], "list_and"))]
        for ref in self.subjects:
            block = self.t.block_of(ref)
            if block is not None:
                self.done.add("default")
                return [self.say("options_block", block=block.block_key, keys=self._block_keys(block))]
        return []

    def _with_default(self, key: str, default: Any) -> str:
        return self.say("key_default", key=key, default=_show(default))

    def _block_keys(self, block) -> str:
        """`ignore_router_for_ac` (`true`), ...: a block's keys with their defaults (fields.yaml)."""
        return self._join([self._with_default(r.key, r.default) for r in self.t.refs if r.section == block.name],
                          "list_and")

    def accept(self, pos: int) -> list[str]:
        # "它能用 activation_checkpointing: selective 吗": the field the ask's own words name
        inside = [r for r in self.subjects if 0 <= self._at[r.path] - pos <= 40 and self._same_sentence(pos, self._at[r.path])]
        ref = inside[0] if inside else self.subject_at(pos)
        if ref is None:
            return []
        self.main = ref
        if self.names:
            strategy = self.names[0].key
            value = self.fq.named_strategy_value(ref.value_strategies)
            if strategy in ref.strategies and value is not None and strategy not in ref.value_strategies[value]:
                return [self.say("accept_value_no", strategy=strategy, key=ref.key, value=value,
                                 strategies=self._strategies(ref.value_strategies[value]))]
            if strategy in ref.ignored_by:
                return [self.say("accept_ignored", strategy=strategy, key=ref.key)]
            if strategy in ref.strategies:
                return [self.say("accept_yes", strategy=strategy, key=ref.key)]
            return [self.say(f"accept_no_{_category(ref)}", strategy=strategy, key=ref.key, path=ref.path,
                             dataclass=self._owner(ref), strategies=self._strategies(ref.strategies))]
        if set(ref.strategies) == set(CANONICAL_STRATEGIES) and _category(ref) != "size":
            return [self.say("strategies_all", path=ref.path, strategies=self._strategies(ref.strategies))]
        others = [s for s in CANONICAL_STRATEGIES if s not in ref.strategies]
        return [self.say(f"strategies_{_category(ref)}", key=ref.key, path=ref.path, dataclass=self._owner(ref),
                         strategies=self._strategies(ref.strategies), others=self._strategies(others))]

    def runtime(self, pos: int) -> list[str]:
        """"Where does pp_batch_size get its value at run time?": what the recipe puts in its place."""
        ref = self.subject_at(pos)
        if ref is None or not ref.runtime(self.lang):
            return []
        self.main = ref
        self.done.add("advice")
        return [self.say("advice_runtime", path=ref.path, runtime=ref.runtime(self.lang))]

    def enable(self, pos: int) -> list[str]:
        """"How do I turn on find_unused_parameters?": the key and the value to write, for a switch."""
        ref = self.subject_at(pos)
        if ref is None or not ref.type.startswith("bool"):
            return []
        off = self.fq.switch_off_near(pos)
        self.main = ref
        self.done.add("default")
        return [self.say("enable_set", key=ref.key, value="false" if off else "true", section=ref.section,
                         owner=self._owner(ref), default=_show(ref.default))]

    def advice(self, pos: int) -> list[str]:
        ref = self.subject_at(pos)
        if ref is None:
            return []
        if ref.runtime(self.lang):  # "do I fill in pp_batch_size myself?": the recipe does
            self.main = ref
            return [self.say("advice_runtime", path=ref.path, runtime=ref.runtime(self.lang))]
        section = self.t.sections.get(ref.path)
        if section is not None and section.read_when_key is not None:
            # "需不需要写 pipeline 块": whether a block is needed is when it is read (its meaning says so);
            # its note is what happens to it otherwise
            self.main = ref
            return [self.say("advice", path=ref.path, note=ref.meaning(self.lang))]
        if not ref.note(self.lang):
            return []
        self.main = ref
        return [self.say("advice", path=ref.path, note=ref.note(self.lang))]

    def compared(self, named: "_NamedValue") -> tuple[str, Any] | None:
        """The other value of the same field a comparison question names ("`none` vs `null`", "\"on\" the
        same as true?") and what upstream reads it as; None when the question compares nothing."""
        if not self.fq.compares:
            return None
        ref = named.ref
        spelled = {_show(a).lower() for a in ref.allowed} | set(ref.value_aliases) | {"null", "none", "~", "true", "false"}
        for start, word in self.fq.bare_words:
            if word.lower() in spelled and word.lower() != named.raw.lower() and start != named.pos:
                verdict = _judge(ref, word)
                if verdict is not None and verdict[0]:
                    return word, verdict[1]
        return None

    def value(self, pos: int) -> list[str]:
        named = self.named_value()
        if named is None:
            return []
        ref, raw, ok, conv = named.ref, named.raw, named.ok, named.read_as
        self.main = ref
        other = self.compared(named) if ok else None
        if other is not None:
            b, conv_b = other
            # a field's own spellings ("on") are its normaliser's; the rest the loader's translate_value
            source = ref.upstream if {raw.lower(), b.lower()} & set(ref.value_aliases) \
                else "config/loader.py translate_value"
            if _show(conv).lower() == _show(conv_b).lower():
                key = "value_same_no_difference" if self.fq.asks_difference else "value_same_yes"
                return [self.say(key, a=raw, b=b, conv=_show(conv), source=source)]
            return [self.say("value_differ", a=raw, b=b, ca=_show(conv), cb=_show(conv_b), source=source)]
        is_default = ok and _is_default(ref, conv)
        if is_default and self.fq.value_needed:
            self.done.add("default")
            return [self.say("value_default", path=ref.path, value=raw)]
        if ok:
            shown = _show(conv)
            as_ = self.say("value_as", conv=shown) if shown.lower() != raw.lower() else ""
            if is_default:
                self.done.add("default")
                as_ += self.say("value_is_default")
            return [self.say("value_ok", path=ref.path, value=raw, as_=as_)]
        values = self._join([f"`{_show(v)}`" for v in ref.allowed], "list_last") or f"`{ref.type}`"
        out = [self.say("value_bad", path=ref.path, value=raw, values=values)]
        suggestion = _suggest(ref, raw)
        if suggestion:
            out.append(self.say("value_suggest", suggest=suggestion))
        self.done.add("allowed")  # the values were just listed
        return out

    def named_value(self) -> _NamedValue | None:
        """The value the question names for a field that the reference can judge (strongest cue first,
        then the earliest)."""
        best = None
        for rank in range(self.fq.value_cue_count):
            for ref in self.subjects:
                for start, raw in self.fq.named_values(rank, ref.key):
                    if self.t.get(raw) and raw.lower() not in {_show(a).lower() for a in ref.allowed}:
                        continue
                    verdict = _judge(ref, raw)
                    if verdict is None or (_category(ref) == "size" and isinstance(translate_value(raw), int)):
                        continue  # a size with a number states the layout; the verdict path judges it
                    cand = (rank, start, _NamedValue(ref, raw, start, *verdict))
                    if best is None or cand[:2] < best[:2]:
                        best = cand
                    break
            if best is not None:
                return best[2]
        return None

    def allowed(self, pos: int) -> list[str]:
        out = []
        first = self.subject_at(pos)
        for ref in ([first] if first else []) + [r for r in self.subjects if r is not first][:MAX_FIELDS - 1]:
            if ref.allowed:
                values = self._join([f"`{_show(v)}`" for v in ref.allowed], "list_last")
                out.append(self.say("allowed", path=ref.path, values=values, default=_show(ref.default)))
            else:
                out.append(self.say("allowed_open", path=ref.path, type=f"`{ref.type}`", default=_show(ref.default)))
        if out:
            self.done.add("default")
        return out

    def default(self, pos: int) -> list[str]:
        subjects = self.subjects[:MAX_FIELDS]
        if "default" in self.done or not subjects:
            return []
        if len(subjects) >= 2 and len({r.key for r in subjects}) == 1:
            parts = [self.say("default_part", section=r.section, key=r.key, default=_show(r.default)) for r in subjects]
            return [self.say("default_both", key=subjects[0].key, parts=self.say("part_sep").join(parts))]
        first = self.subject_at(pos) or subjects[0]
        block = self.t.block_of(first)
        if block is not None and not isinstance(first.default, dict):
            # "what does an empty `moe: {}` default to?": the defaults of the block's fields (a block whose
            # key has a default of its own, mp_policy's policy, answers with that)
            # the fields that default to a value, then the rest in one word: short enough to lead beside a verdict
            rows = [r for r in self.t.refs if r.section == block.name]
            valued = [self._with_default(r.key, r.default) for r in rows if r.default is not None]
            rest = self.say("default_block_rest") if len(valued) < len(rows) else ""
            return [self.say("default_block", block=block.block_key, owner=block.upstream.rsplit(" ", 1)[-1],
                             keys=self._join(valued, "list_and"), rest=rest)]
        # "X 默认是几？它能用 Y 吗？": the default asked in one sentence is about the fields that sentence names
        here = [r for r in subjects if self._same_sentence(self._at[r.path], pos)]
        ordered = [first] + [r for r in (here if first in here else subjects) if r is not first]
        if len(ordered) == 1:
            line = self.say("default", path=first.path, default=_show(first.default))
        elif len({_show(r.default) for r in ordered}) == 1:
            # "what do a and b default to?": one sentence, so the lead holds both
            line = self.say("default_same", names=self._join([f"`{r.path}`" for r in ordered], "list_and"),
                            default=_show(first.default))
        else:
            parts = [self.say("default_path_part", path=r.path, default=_show(r.default)) for r in ordered]
            line = self.say("default_many", parts=self.say("part_sep").join(parts))
        # a default the recipe replaces at run time is not what runs: say what does, in the same answer
        runtime = [self.say("runtime", path=r.path, runtime=r.runtime(self.lang)) for r in ordered if r.runtime(self.lang)]
        return [self.say("sentence_sep").join([line, *runtime])]

    def case(self, pos: int) -> list[str]:
        """Whether a name may be written in capitals (`strategy: FSDP2`): the field reference says
        which keys upstream lowercases before the lookup."""
        lowered = [r for r in self.t.refs if r.lowercased]
        if not lowered:
            return []
        ref = lowered[0]
        names = self.t.strategy_map()
        spelled = list(self.fq.capitalised_strategies)
        if not spelled:
            return [self.say("case_rule", path=ref.path)]
        name = spelled[0]
        return [self.say("case_yes", path=ref.path, name=name, lower=name.lower(), dataclass=names[name.lower()])]

    def meaning(self, pos: int) -> list[str]:
        out = []
        for ref in (self.subjects or self.names)[:MAX_FIELDS]:
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
        note = main.note(self.lang)
        if note:
            # with several fields answered, say which one the note is about
            out.append(self.say("advice", path=main.path, note=note) if len(self.subjects) > 1 else note)
        section = self.t.sections.get(main.section)
        if "read_rule" not in self.done and section is not None and section.read_when_key:
            holder = self.t.get(section.name)[0]
            out.append(self.say("read_rule", block=section.block_key, cond=section.read_when_key,
                                above=section.read_when_above, note=holder.note(self.lang)))
        out.append(self.say("upstream", upstream=main.upstream))
        return out

    # ---- helpers ------------------------------------------------------------------------------------

    def _same_sentence(self, a: int, b: int) -> bool:
        return self.fq.same_sentence(a, b)

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


def _judge(ref: FieldRef, raw: str) -> tuple[bool, Any] | None:
    """Whether `ref` accepts the value as written (after the config loader's translation), and what it
    is read as; None when the reference cannot tell (an open type such as a path or a mapping)."""
    low = raw.lower()
    # YAML reads `null` / `~` as None before the config loader sees it
    conv = None if low in ("null", "~") else translate_value(raw)
    if ref.allowed:
        allowed = {_show(a).lower(): a for a in ref.allowed}
        if low in allowed:
            return True, allowed[low]
        if low in ref.value_aliases:
            return True, ref.value_aliases[low]
        if _show(conv).lower() in allowed:
            return True, conv
        return False, conv
    if conv is None:
        if _category(ref) == "size":
            return True, ref.default  # parse_distributed_section: a null size falls back to its default
        return ("null" in ref.type), conv
    if isinstance(conv, str) and ref.type.startswith("dtype"):
        return dtype_known(conv), conv
    if isinstance(conv, bool):
        return (ref.type.startswith("bool")), conv
    if isinstance(conv, int) and ref.type.split(" ")[0] in ("int", "float"):
        return True, conv
    return None


def _is_default(ref: FieldRef, conv: Any) -> bool:
    return not isinstance(ref.default, dict) and _show(conv).lower() == _show(ref.default).lower()


def _suggest(ref: FieldRef, raw: str) -> str | None:
    if tuple(ref.allowed) == schedules.RUNNABLE_LOWER:
        return schedules.suggest(raw)
    close = difflib.get_close_matches(raw.lower(), [_show(a).lower() for a in ref.allowed], n=1, cutoff=0.7)
    return close[0] if close else None


def inert_lines(fq: FieldQuestion, lang: str) -> list[tuple[FieldRef, str]]:
    """Each field the question names that does nothing at the sizes it states ("tp_size 1 with
    sequence_parallel true"), with the sentence that says so in the field reference's words and the
    user's value (as named_value reads it; `true` when none is named)."""
    out = []
    for r in fq.inert_refs:
        named = _Renderer(_phrases(), field_table(), lang, fq, [r]).named_value()
        out.append((r, r.inert(lang).format(value=_show(named.read_as) if named is not None else "true")))
    return out


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
