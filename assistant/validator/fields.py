"""The field reference (fields.yaml) as typed rows, and the lookups that answer "which field is this".

The validator derives its accepted-key lists and size / batch defaults from the same table
(rules.py), so a key the reference describes is exactly a key the validator accepts.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from assistant.datafile import read_yaml

_FILE = Path(__file__).with_name("fields.yaml")
CANONICAL_STRATEGIES: tuple[str, ...] = ("fsdp2", "megatron_fsdp", "ddp")
_REQUIRED = ("key", "section", "type", "strategies", "upstream", "en", "zh")
# Identifiers with their dotted paths and hyphenated spellings (`moe.mp_policy`, `megatron-fsdp`).
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[.\-][A-Za-z0-9_]+)*")
MAX_TEXT_CHARS = 20_000
_BLOCK_WINDOW = 24  # characters before a key in which a block name ("moe 里那个") says which block it is in


@dataclass(frozen=True)
class FieldRef:
    key: str
    section: str  # dotted path of the mapping the key lives in: distributed, distributed.moe, step_scheduler
    type: str
    default: Any = field(compare=False)  # a mapping for mp_policy; rows are told apart by path
    allowed: tuple[Any, ...]
    meaning_en: str
    meaning_zh: str
    strategies: tuple[str, ...]  # canonical strategy names whose recipes accept the key
    aliases: tuple[str, ...]
    upstream: str  # file under nemo_automodel/ (or torch) and symbol
    dataclasses: tuple[str, ...] = ()  # upstream dataclasses declaring it; for a strategy name, the one it selects
    note_en: str = ""
    note_zh: str = ""
    value_strategies: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False)
    ignored_by: tuple[str, ...] = ()
    value_aliases: dict[str, Any] = field(default_factory=dict, compare=False)
    terms: tuple[str, ...] = ()  # words that name the field in prose ("mixed precision", "混合精度")
    # what a recipe puts in place of the default at run time (pp_batch_size <- local_batch_size)
    runtime_en: str = ""
    runtime_zh: str = ""
    lowercased: bool = False  # upstream lowercases the value before the lookup (`strategy: FSDP2`)
    # the sizes at which the field does nothing whatever its value (sequence_parallel at tp_size 1), and why
    inert_when: dict[str, int] = field(default_factory=dict, compare=False)
    inert_en: str = ""
    inert_zh: str = ""

    @property
    def path(self) -> str:
        return f"{self.section}.{self.key}"

    @property
    def is_strategy_name(self) -> bool:
        return self.section == "distributed.strategy"

    def meaning(self, lang: str) -> str:
        return self.meaning_zh if lang == "zh" else self.meaning_en

    def note(self, lang: str) -> str:
        return self.note_zh if lang == "zh" else self.note_en

    def inert(self, lang: str) -> str:
        return self.inert_zh if lang == "zh" else self.inert_en

    def runtime(self, lang: str) -> str:
        return self.runtime_zh if lang == "zh" else self.runtime_en


@dataclass(frozen=True)
class Section:
    name: str
    upstream: str
    meaning_en: str
    meaning_zh: str
    read_when_key: str | None = None  # the block is read only when this size is above read_when_above
    read_when_above: int | None = None

    def meaning(self, lang: str) -> str:
        return self.meaning_zh if lang == "zh" else self.meaning_en

    @property
    def block_key(self) -> str:
        """The key that holds this block in its parent mapping (`moe` for distributed.moe)."""
        return self.name.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class FieldTable:
    refs: tuple[FieldRef, ...]
    sections: dict[str, Section]
    _by_name: dict[str, tuple[FieldRef, ...]] = field(default_factory=dict, repr=False)
    _by_term: dict[str, tuple[FieldRef, ...]] = field(default_factory=dict, repr=False)
    _terms: re.Pattern[str] | None = field(default=None, repr=False)

    def get(self, key: str) -> list[FieldRef]:
        """Every row a name denotes: a key (`reshard_after_forward` is in two blocks), an alias
        (`mfsdp`), or a dotted path (`moe.reshard_after_forward`, `distributed.pp_size`)."""
        return list(self._lookup(key.strip().strip("`").rstrip(":").lower()))

    def mentioned(self, text: str) -> list[FieldRef]:
        """Rows named in a question, in order of first mention. A plain-word key (`moe`, `dtype`,
        `pipeline`) counts only when written as code (backticks, a trailing colon, a dotted path) or
        followed by a block word ("the moe block", "pipeline 块"), so
        "pipeline parallelism" does not name the `pipeline:` block; a row's `terms` ("mixed precision",
        "激活检查点") name it in words. A key that lives in several blocks is narrowed to the block the
        question names ("reshard_after_forward in moe:")."""
        return [r for _, r in self.mentions(text)]

    def mentions(self, text: str) -> list[tuple[int, FieldRef]]:
        """(position, row) of each row `mentioned` finds, by first mention."""
        text = text[:MAX_TEXT_CHARS]
        low = text.lower()
        named_blocks = {s.rsplit(".", 1)[-1] for s in self.sections if s != "distributed"
                        if word_pattern(s.rsplit(".", 1)[-1]).search(low)}
        found: list[tuple[int, FieldRef]] = []
        local: dict[str, set[str]] = {}  # token -> the blocks its own mentions are narrowed to
        pending: list[tuple[int, str, tuple[FieldRef, ...]]] = []  # mentions no block right before names
        for m in _IDENT.finditer(text):
            token = m.group(0).lower()
            refs = self._lookup(token)
            if not refs and re.search(r"[.\-]", token):
                # "fsdp2-only", "tp_size-wise": the parts may still be names
                refs = tuple(r for part in re.split(r"[.\-]", token) if not _plain_word(part)
                             for r in self._lookup(part))
            if not refs:
                continue
            if _plain_word(token) and not refs[0].is_strategy_name and not _written_as_code(text, m.start(), m.end()):
                continue
            if len(refs) > 1 and "." not in token:
                # "fsdp2 顶层的 reshard_after_forward ... moe 里那个 reshard_after_forward": each mention is
                # narrowed by the block named just before it; a mention with none is the other row
                window = low[max(0, m.start() - _BLOCK_WINDOW):m.start()]
                near = {b for b in named_blocks if word_pattern(b).search(window)}
                narrowed = tuple(r for r in refs if r.section.rsplit(".", 1)[-1] in near)
                if narrowed:
                    local.setdefault(token, set()).update(near)
                    found.extend((m.start(), r) for r in narrowed)
                else:
                    pending.append((m.start(), token, refs))
                continue
            found.extend((m.start(), r) for r in refs)
        for pos, token, refs in pending:
            if token in local:
                others = tuple(r for r in refs if r.section.rsplit(".", 1)[-1] not in local[token])
            else:
                others = tuple(r for r in refs if r.section.rsplit(".", 1)[-1] in named_blocks)
            found.extend((pos, r) for r in (others or refs))
        if self._terms is not None:
            for m in self._terms.finditer(low):
                found.extend((m.start(), r) for r in self._by_term[_squash(m.group(0))])
        out: dict[FieldRef, int] = {}
        for pos, r in sorted(found, key=lambda pr: pr[0]):
            out.setdefault(r, pos)
        return [(pos, r) for r, pos in out.items()]

    def dataclass_fields(self, dataclass_name: str) -> tuple[str, ...]:
        """The field names a dataclass declares, in this file's order (strategy names excluded)."""
        return tuple(r.key for r in self.refs if dataclass_name in r.dataclasses and not r.is_strategy_name)

    def strategy_map(self) -> dict[str, str]:
        """Every accepted `strategy:` spelling -> the dataclass it selects (upstream _STRATEGY_MAP)."""
        out: dict[str, str] = {}
        for r in self.refs:
            if r.is_strategy_name:
                for name in (r.key, *r.aliases):
                    out[name] = r.dataclasses[0]
        return out

    def canonical_strategy(self) -> dict[str, str]:
        """Dataclass -> its canonical strategy name (for messages and fixes)."""
        return {r.dataclasses[0]: r.key for r in self.refs if r.is_strategy_name}

    def defaults(self, section: str, upstream_symbol: str | None = None) -> dict[str, Any]:
        """key -> default for a section's rows, optionally only those read through one upstream symbol
        (`_PARALLELISM_DEFAULTS`)."""
        return {r.key: r.default for r in self.refs
                if r.section == section and (upstream_symbol is None or r.upstream.endswith(upstream_symbol))}

    def block_of(self, ref: FieldRef) -> Section | None:
        """The block a row opens (the `moe` key -> distributed.moe), if it is a block key."""
        return self.sections.get(ref.path)

    def _lookup(self, name: str) -> tuple[FieldRef, ...]:
        if name in self._by_name:
            return self._by_name[name]
        if "." in name:
            head, _, key = name.rpartition(".")
            cands = self._by_name.get(key, ())
            hit = tuple(r for r in cands if r.section == head or r.section.endswith("." + head)
                        or (head == "distributed" and r.section == "distributed"))
            if not hit:
                # `megatron_fsdp.overlap_grad_reduce`: a strategy's own option sits flat under `distributed:`
                # (the strategy's config class takes it), so a strategy name is a block in words only
                strategy = head.rpartition(".")[2]
                hit = tuple(r for r in cands if r.section == "distributed" and strategy in r.strategies)
            return hit
        return ()


@lru_cache(maxsize=None)
def word_pattern(word: str) -> re.Pattern:
    """`word` (lower case) as a whole name in lower-cased text. Compiled once per name: the names are the
    schema's and the kb's (a bounded set), and building them per question evicted the vocabulary
    patterns of understand/ from re's 512-entry cache (thousands of recompiles per eval run)."""
    return re.compile(rf"(?<![a-z0-9_]){re.escape(word)}(?![a-z0-9_])")


def _plain_word(token: str) -> bool:
    return bool(re.fullmatch(r"[a-z]+", token))


# "the moe block", "这个 moe 块", "pipeline 段": a plain-word key the block word after it names as the block
_BLOCK_WORD = re.compile(r"\s*(?:blocks?|sections?|块|段|配置块)\b|\s*(?:块|段)", re.I)


def _written_as_code(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start else ""
    after = text[end] if end < len(text) else ""
    return before == "`" or after in (":", "：", "`") or bool(_BLOCK_WORD.match(text, end))


def _as_tuple(value: Any) -> tuple[Any, ...]:
    if value is None:
        return ()
    return tuple(value) if isinstance(value, list) else (value,)


def _ref(row: dict[str, Any]) -> FieldRef:
    missing = [k for k in _REQUIRED if k not in row]
    if missing:
        raise ValueError(f"{_FILE.name}: entry {row.get('key')!r} lacks {missing}")
    strategies = CANONICAL_STRATEGIES if row["strategies"] == "all" else tuple(row["strategies"])
    allowed = _as_tuple(row.get("allowed"))
    if row.get("allowed_from") == "schedules":
        from assistant.validator import schedules

        allowed = schedules.RUNNABLE_LOWER
    elif row.get("allowed_from") is not None:
        raise ValueError(f"{_FILE.name}: entry {row['key']!r}: unknown allowed_from {row['allowed_from']!r}")
    value_strategies = {str(v): tuple(ss) for v, ss in (row.get("value_strategies") or {}).items()}
    ignored_by = tuple(row.get("ignored_by") or ())
    named = set(strategies) | {x for ss in value_strategies.values() for x in ss} | set(ignored_by)
    unknown = named - set(CANONICAL_STRATEGIES)
    if unknown:
        raise ValueError(f"{_FILE.name}: entry {row['key']!r} names unknown strategies {sorted(unknown)}")
    return FieldRef(
        key=str(row["key"]), section=str(row["section"]), type=str(row["type"]), default=row.get("default"),
        allowed=allowed, meaning_en=row["en"], meaning_zh=row["zh"], strategies=strategies,
        aliases=tuple(str(a) for a in _as_tuple(row.get("aliases"))), upstream=str(row["upstream"]),
        dataclasses=tuple(_as_tuple(row.get("dataclasses"))), note_en=row.get("note_en", ""),
        note_zh=row.get("note_zh", ""), value_strategies=value_strategies, ignored_by=ignored_by,
        value_aliases={str(k).lower(): v for k, v in (row.get("value_aliases") or {}).items()},
        terms=tuple(str(t) for t in row.get("terms") or ()),
        runtime_en=row.get("runtime_en", ""), runtime_zh=row.get("runtime_zh", ""),
        lowercased=bool(row.get("lowercased", False)),
        inert_when={str(k): int(v) for k, v in (row.get("inert_when") or {}).items()},
        inert_en=row.get("inert_en", ""), inert_zh=row.get("inert_zh", ""),
    )


def load_table(path: Path = _FILE) -> FieldTable:
    data = read_yaml(path)
    sections = {name: Section(name, s["upstream"], s["en"], s["zh"], (s.get("read_when") or {}).get("key"),
                              (s.get("read_when") or {}).get("above")) for name, s in data["sections"].items()}
    refs = tuple(_ref(row) for row in data["fields"])
    by_name: dict[str, list[FieldRef]] = {}
    for r in refs:
        if r.section not in sections:
            raise ValueError(f"{path.name}: entry {r.key!r} is in unknown section {r.section!r}")
        # a strategy is also named by the dataclass it selects ("which options does MegatronFSDPConfig take?")
        names = (r.key, *r.aliases, *(r.dataclasses if r.is_strategy_name else ()))
        for name in names:
            by_name.setdefault(name.lower(), []).append(r)
    seen = set()
    for r in refs:
        if r.path in seen:
            raise ValueError(f"{path.name}: {r.path} is listed twice")
        seen.add(r.path)
    by_term: dict[str, list[FieldRef]] = {}
    for r in refs:
        for t in r.terms:
            by_term.setdefault(_squash(t.lower()), []).append(r)
    alternatives = sorted(by_term, key=len, reverse=True)  # longest first: "pipeline microbatch size"
    terms = re.compile("|".join(_term_pattern(t) for t in alternatives)) if alternatives else None
    return FieldTable(refs, sections, {k: tuple(v) for k, v in by_name.items()},
                      {k: tuple(v) for k, v in by_term.items()}, terms)


def _squash(term: str) -> str:
    """A term as looked up: lowercase, no spaces, hyphens or underscores ("mixed-precision")."""
    return re.sub(r"[\s_\-]+", "", term.lower())


def _term_pattern(squashed: str) -> str:
    # between the letters of an English term any run of spaces, hyphens or underscores may stand
    body = r"[\s_\-]*".join(re.escape(ch) for ch in squashed) if squashed.isascii() else \
        r"\s*".join(re.escape(ch) for ch in squashed)
    return rf"(?<![a-z0-9_]){body}(?![a-z0-9_])" if squashed.isascii() else body


@lru_cache(maxsize=1)
def field_table() -> FieldTable:
    return load_table()
