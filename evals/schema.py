"""Eval cases as typed data, and the loaders for our case files and the upstream `evals.json`.

Our format (YAML with a top-level `cases:` list, or JSONL with one case per line):

    defaults: {category: sizing}          # optional, merged under every case of the file
    cases:
      - id: sizing-en-70b-64
        lang: en                          # en | zh
        category: sizing
        question: "..."
        world_size: 64                    # optional, sent like `meshwise ask --world-size`
        gpus_per_node: 8                  # optional, sent like `--gpus-per-node`
        history:                          # optional; a user turn with no assistant turn after it
          - {role: user, content: "..."}  # gets its answer from the engine at run time
        expect:
          world_size: 64                  # the world the answer must assume (default: world_size)
          strategy: fsdp2
          facts: [dp_formula, {name: tp_in_node, any: ['...', ['...', '...']]}]
          forbid: [f_megatron_for_pp]
          yaml: {distributed.tp_size: 8, distributed.pp_size: {in: [2, 4]}}
          yaml_forbid: [{distributed.strategy: megatron_fsdp, distributed.pp_size: {gt: 1}}]
          yaml_shown: true                # true: a YAML must be shown; false: none may be shown
          valid: false                    # the verdict on the configuration asked about
          rule_codes: [MW-E-EP-DIVIDES, [MW-E-X, MW-E-Y]]   # each item: one code or alternatives
          dp_size: 2
          sources: [pipeline-parallel]    # kb base ids that retrieval should surface
          intent: [diagnose]              # accepted intents
          intent_not: [out_of_scope]
          lead: [verdict_no]              # facts that must match in the answer's first paragraph
          max_chars: 1500                 # answer text without its sources block, at most N chars
          judged: {distributed.tp_size: 4, distributed.pp_size: {in: [1, null]}}  # on Answer.judged
          judged_absent: true             # Answer.judged must be None (nothing validated)
          asks: [verdict, quantity]       # ask kinds that must be among Answer.asks

Tuning cases live in evals/cases/ (the default set); held-out cases in evals/heldout/ use the same
format and run only when named (`meshwise eval --set evals/heldout`).

Facts and forbidden claims named by string come from `evals/facts.yaml`. An alternative inside a
pattern group is either one regex (searched in the whole text) or a list of regexes that must all
match inside one sentence.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Literal
from assistant.answer import Turn  # a case's history is the same turns the engine takes

import yaml

from assistant.config import EVALS_DIR

Lang = Literal["en", "zh"]
LANGS: tuple[str, ...] = ("en", "zh")
MAX_FILE_BYTES = 4 * 1024 * 1024  # case files are small; refuse anything that is clearly not one

FACTS_FILE = EVALS_DIR / "facts.yaml"
UPSTREAM_BEHAVIORS_FILE = EVALS_DIR / "upstream_behaviors.yaml"
CASES_DIR = EVALS_DIR / "cases"
HELDOUT_DIR = EVALS_DIR / "heldout"  # never part of the default set: scored once, not tuned against

CATEGORIES: tuple[str, ...] = (
    "strategy",
    "sizing",
    "diagnosis",
    "limitations",
    "requirements",
    "pitfalls",
    "code_location",
    "python_api",
    "followup",
    "out_of_scope",
    "adversarial",
    "upstream",
)
# Issue 11's question-first kinds; `real_user` holds questions taken from upstream issues and forums.
QUESTION_FIRST_CATEGORIES: tuple[str, ...] = ("verdict", "quantity", "field_fact", "pasted_log", "multipart", "real_user")
CATEGORIES += QUESTION_FIRST_CATEGORIES

# The ask kinds an answer reports in `Answer.asks` (the contract with the engine).
ASK_KINDS: tuple[str, ...] = (
    "verdict", "quantity", "fact", "location", "recommendation", "config", "diagnosis", "out_of_scope", "nonsense",
)


class CaseFormatError(ValueError):
    """A case file that does not follow the format; the message names the file and the case."""


@dataclass(frozen=True)
class PatternGroup:
    """One fact (or one forbidden claim): satisfied when any alternative matches.

    Each alternative is a tuple of regexes; a 1-tuple is searched in the whole text, a longer tuple
    must match entirely inside one sentence. `mask` regexes are blanked out before matching (to let
    a forbidden "dp*cp" pattern ignore the correct "dp*cp*tp"). For forbidden claims, `excuse` says
    when a sentence is not making the claim: "near" (default) when it contrasts the claim with the
    code ("the doc says X, but ...") or a negation sits right around it ("do not use X"); "sentence"
    when a negation appears anywhere in the sentence (for lists of rejected names); "never".
    """

    name: str
    alternatives: tuple[tuple[str, ...], ...]
    note: str = ""
    mask: tuple[str, ...] = ()
    excuse: str = "near"


@dataclass(frozen=True)
class FieldCheck:
    """One condition on a YAML value at a dotted path (`distributed.tp_size`).

    op: eq | in | gt | ge | lt | present | absent. An absent path reads as None, so `in: [1, null]`
    accepts "1 or not set".
    """

    path: str
    op: str
    value: Any = None


@dataclass(frozen=True)
class Expectation:
    world_size: int | None = None
    gpus_per_node: int | None = None
    strategy: str | None = None
    facts: tuple[PatternGroup, ...] = ()
    forbid: tuple[PatternGroup, ...] = ()
    yaml_fields: tuple[FieldCheck, ...] = ()
    yaml_forbid: tuple[tuple[FieldCheck, ...], ...] = ()
    yaml_shown: bool | None = None
    valid: bool | None = None
    rule_codes: tuple[tuple[str, ...], ...] = ()
    dp_size: int | None = None
    sources: tuple[str, ...] = ()
    intent: tuple[str, ...] = ()
    intent_not: tuple[str, ...] = ()
    model: str | None = None
    gpu: str | None = None
    lead: tuple[PatternGroup, ...] = ()
    max_chars: int | None = None
    judged: tuple[FieldCheck, ...] = ()
    judged_absent: bool | None = None
    asks: tuple[str, ...] = ()


@dataclass(frozen=True)
class Case:
    id: str
    lang: Lang
    category: str
    question: str
    expect: Expectation
    world_size: int | None = None
    gpus_per_node: int | None = None
    history: tuple[Turn, ...] = ()
    source: str = ""  # file the case came from
    note: str = ""

    @property
    def assumed_world_size(self) -> int | None:
        return self.expect.world_size or self.world_size

    @property
    def assumed_gpus_per_node(self) -> int | None:
        return self.expect.gpus_per_node or self.gpus_per_node


@dataclass(frozen=True)
class FactLibrary:
    facts: dict[str, PatternGroup] = field(default_factory=dict)
    forbidden: dict[str, PatternGroup] = field(default_factory=dict)


# ----------------------------------------------------------------------------- reading files


def _read_text(path: Path) -> str:
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise CaseFormatError(f"{path}: {size} bytes is over the {MAX_FILE_BYTES}-byte limit for eval files")
    return path.read_text(encoding="utf-8")


def _load_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(_read_text(path))
    except yaml.YAMLError as exc:
        raise CaseFormatError(f"{path}: not valid YAML: {exc}") from exc


# ----------------------------------------------------------------------------- pattern groups


def _alternatives(raw: Any, where: str) -> tuple[tuple[str, ...], ...]:
    if not isinstance(raw, list) or not raw:
        raise CaseFormatError(f"{where}: `any` must be a non-empty list")
    out = []
    for alt in raw:
        parts = (alt,) if isinstance(alt, str) else tuple(alt) if isinstance(alt, list) else None
        if not parts or not all(isinstance(p, str) and p for p in parts):
            raise CaseFormatError(f"{where}: each alternative is a regex or a list of regexes, got {alt!r}")
        for p in parts:
            try:
                re.compile(p)
            except re.error as exc:
                raise CaseFormatError(f"{where}: bad regex {p!r}: {exc}") from exc
        out.append(parts)
    return tuple(out)


def _excuse_mode(v: Any, where: str) -> str:
    mode = {True: "near", False: "never"}[v] if isinstance(v, bool) else v
    if mode not in ("near", "sentence", "never"):
        raise CaseFormatError(f"{where}: excuse must be near, sentence or never, got {v!r}")
    return mode


def pattern_group(name: str, raw: dict, where: str) -> PatternGroup:
    if not isinstance(raw, dict) or "any" not in raw:
        raise CaseFormatError(f"{where}: a pattern group needs `any:`")
    unknown = set(raw) - {"name", "any", "note", "mask", "excuse"}
    if unknown:
        raise CaseFormatError(f"{where}: unknown keys {sorted(unknown)}")
    mask = tuple(raw.get("mask") or ())
    for p in mask:
        re.compile(p)
    return PatternGroup(
        name=str(raw.get("name") or name),
        alternatives=_alternatives(raw["any"], where),
        note=str(raw.get("note") or ""),
        mask=mask,
        excuse=_excuse_mode(raw.get("excuse", "near"), where),
    )


def load_fact_library(path: Path = FACTS_FILE) -> FactLibrary:
    data = _load_yaml(path) or {}
    lib = FactLibrary()
    for section, target in (("facts", lib.facts), ("forbidden", lib.forbidden)):
        for name, raw in (data.get(section) or {}).items():
            target[name] = pattern_group(name, raw, f"{path}: {section}.{name}")
    overlap = set(lib.facts) & set(lib.forbidden)
    if overlap:
        raise CaseFormatError(f"{path}: names used both as fact and forbidden claim: {sorted(overlap)}")
    return lib


def _groups(raw: Any, lib: dict[str, PatternGroup], where: str, kind: str) -> tuple[PatternGroup, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise CaseFormatError(f"{where}: `{kind}` must be a list")
    out = []
    for i, item in enumerate(raw):
        if isinstance(item, str):
            if item not in lib:
                raise CaseFormatError(f"{where}: unknown {kind} name {item!r} (not in facts.yaml)")
            out.append(lib[item])
        else:
            out.append(pattern_group(f"{kind}[{i}]", item, f"{where}: {kind}[{i}]"))
    return tuple(out)


# ----------------------------------------------------------------------------- YAML field checks

_OPS = {"eq", "in", "gt", "ge", "lt", "present", "absent"}


def field_checks(raw: Any, where: str) -> tuple[FieldCheck, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise CaseFormatError(f"{where}: YAML field expectations must be a mapping of dotted paths")
    out = []
    for path, spec in raw.items():
        if isinstance(spec, dict):
            if len(spec) != 1 or next(iter(spec)) not in _OPS:
                raise CaseFormatError(f"{where}: {path}: use one of {sorted(_OPS)}, got {spec!r}")
            op, value = next(iter(spec.items()))
            if op == "in" and not isinstance(value, list):
                raise CaseFormatError(f"{where}: {path}: `in` needs a list")
            out.append(FieldCheck(str(path), op, tuple(value) if op == "in" else value))
        else:
            out.append(FieldCheck(str(path), "eq", spec))
    return tuple(out)


# ----------------------------------------------------------------------------- cases

_CASE_KEYS = {"id", "lang", "category", "question", "world_size", "gpus_per_node", "history", "expect", "note"}
_EXPECT_KEYS = {
    "world_size", "gpus_per_node", "strategy", "facts", "forbid", "yaml", "yaml_forbid", "yaml_shown",
    "valid", "rule_codes", "dp_size", "sources", "intent", "intent_not", "model", "gpu",
    "lead", "max_chars", "judged", "judged_absent", "asks",
}


def _opt_int(v: Any, where: str) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise CaseFormatError(f"{where}: expected a positive integer, got {v!r}")
    return v


def _str_tuple(v: Any) -> tuple[str, ...]:
    if v is None:
        return ()
    return (str(v),) if isinstance(v, str) else tuple(str(x) for x in v)


def expectation(raw: Any, lib: FactLibrary, where: str) -> Expectation:
    raw = raw or {}
    if not isinstance(raw, dict):
        raise CaseFormatError(f"{where}: `expect` must be a mapping")
    unknown = set(raw) - _EXPECT_KEYS
    if unknown:
        raise CaseFormatError(f"{where}: unknown expect keys {sorted(unknown)}")
    codes = []
    for c in raw.get("rule_codes") or ():
        alts = _str_tuple(c)
        if not alts or not all(re.fullmatch(r"MW-[EW]-[A-Z0-9-]+", a) for a in alts):
            raise CaseFormatError(f"{where}: bad rule code {c!r}")
        codes.append(alts)
    forbid_yaml = raw.get("yaml_forbid") or []
    if not isinstance(forbid_yaml, list):
        raise CaseFormatError(f"{where}: `yaml_forbid` must be a list of mappings")
    valid = raw.get("valid")
    if valid is not None and not isinstance(valid, bool):
        raise CaseFormatError(f"{where}: `valid` must be true, false or absent")
    judged_absent = raw.get("judged_absent")
    if judged_absent is not None and not isinstance(judged_absent, bool):
        raise CaseFormatError(f"{where}: `judged_absent` must be true, false or absent")
    if judged_absent and raw.get("judged"):
        raise CaseFormatError(f"{where}: `judged` and `judged_absent: true` contradict each other")
    asks = _str_tuple(raw.get("asks"))
    bad_asks = [a for a in asks if a not in ASK_KINDS]
    if bad_asks:
        raise CaseFormatError(f"{where}: unknown ask kinds {bad_asks}; use {list(ASK_KINDS)}")
    return Expectation(
        world_size=_opt_int(raw.get("world_size"), f"{where}: expect.world_size"),
        gpus_per_node=_opt_int(raw.get("gpus_per_node"), f"{where}: expect.gpus_per_node"),
        strategy=raw.get("strategy"),
        facts=_groups(raw.get("facts"), lib.facts, where, "facts"),
        forbid=_groups(raw.get("forbid"), lib.forbidden, where, "forbid"),
        yaml_fields=field_checks(raw.get("yaml"), where),
        yaml_forbid=tuple(field_checks(f, where) for f in forbid_yaml),
        yaml_shown=raw.get("yaml_shown"),
        valid=valid,
        rule_codes=tuple(codes),
        dp_size=_opt_int(raw.get("dp_size"), f"{where}: expect.dp_size"),
        sources=_str_tuple(raw.get("sources")),
        intent=_str_tuple(raw.get("intent")),
        intent_not=_str_tuple(raw.get("intent_not")),
        model=raw.get("model"),
        gpu=raw.get("gpu"),
        lead=_groups(raw.get("lead"), lib.facts, where, "lead"),
        max_chars=_opt_int(raw.get("max_chars"), f"{where}: expect.max_chars"),
        judged=field_checks(raw.get("judged"), where),
        judged_absent=judged_absent,
        asks=asks,
    )


def _history(raw: Any, where: str) -> tuple[Turn, ...]:
    if not raw:
        return ()
    if not isinstance(raw, list):
        raise CaseFormatError(f"{where}: `history` must be a list of turns")
    turns = []
    for t in raw:
        if not isinstance(t, dict) or t.get("role") not in ("user", "assistant") or not isinstance(t.get("content"), str):
            raise CaseFormatError(f"{where}: each history turn needs role user|assistant and a content string")
        turns.append(Turn(t["role"], t["content"]))
    return tuple(turns)


def case_from_dict(raw: dict, lib: FactLibrary, *, source: str = "", defaults: dict | None = None) -> Case:
    merged = {**(defaults or {}), **raw}
    cid = merged.get("id")
    where = f"{source}: case {cid!r}"
    if not isinstance(cid, str) or not cid:
        raise CaseFormatError(f"{source}: a case without an id")
    unknown = set(merged) - _CASE_KEYS
    if unknown:
        raise CaseFormatError(f"{where}: unknown keys {sorted(unknown)}")
    lang = merged.get("lang")
    if lang not in LANGS:
        raise CaseFormatError(f"{where}: lang must be one of {LANGS}")
    category = merged.get("category")
    if category not in CATEGORIES:
        raise CaseFormatError(f"{where}: category must be one of {CATEGORIES}, got {category!r}")
    question = merged.get("question")
    if not isinstance(question, str) or not question.strip():
        raise CaseFormatError(f"{where}: empty question")
    return Case(
        id=cid,
        lang=lang,
        category=category,
        question=question.strip("\n"),
        expect=expectation(merged.get("expect"), lib, where),
        world_size=_opt_int(merged.get("world_size"), f"{where}: world_size"),
        gpus_per_node=_opt_int(merged.get("gpus_per_node"), f"{where}: gpus_per_node"),
        history=_history(merged.get("history"), where),
        source=source,
        note=str(merged.get("note") or ""),
    )


def load_case_file(path: Path, lib: FactLibrary | None = None) -> list[Case]:
    """One file of our format: YAML (`cases:` list, optional `defaults:`) or JSONL."""
    lib = lib or load_fact_library()
    path = Path(path)
    if path.suffix == ".jsonl":
        rows, defaults = [], {}
        for n, line in enumerate(_read_text(path).splitlines(), 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise CaseFormatError(f"{path}:{n}: not JSON: {exc}") from exc
    else:
        data = _load_yaml(path) or {}
        if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
            raise CaseFormatError(f"{path}: expected a mapping with a `cases:` list")
        rows, defaults = data["cases"], data.get("defaults") or {}
    return [case_from_dict(r, lib, source=path.name, defaults=defaults) for r in rows]


# ----------------------------------------------------------------------------- upstream evals.json


def _norm_behavior(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().rstrip(".").lower()


def load_upstream_behaviors(path: Path = UPSTREAM_BEHAVIORS_FILE) -> tuple[dict[str, dict], dict[str, dict]]:
    """(behaviour text -> expectation fragment, upstream task id -> extra expectation)."""
    data = _load_yaml(path) or {}
    behaviors = {_norm_behavior(k): (v or {}) for k, v in (data.get("behaviors") or {}).items()}
    tasks = {str(k): (v or {}) for k, v in (data.get("tasks") or {}).items()}
    return behaviors, tasks


def _merge_fragments(fragments: Iterable[dict]) -> dict:
    """Union of expectation fragments: lists concatenate (deduplicated), mappings merge, scalars must agree."""
    out: dict[str, Any] = {}
    for frag in fragments:
        for k, v in frag.items():
            if k not in out:
                out[k] = list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict) else v
            elif isinstance(v, list):
                out[k] += [x for x in v if x not in out[k]]
            elif isinstance(v, dict):
                out[k].update(v)
            elif out[k] != v:
                raise CaseFormatError(f"upstream behaviours disagree on {k}: {out[k]!r} vs {v!r}")
    return out


def upstream_cases(path: Path, lib: FactLibrary | None = None, behaviors_path: Path = UPSTREAM_BEHAVIORS_FILE) -> list[Case]:
    """Load the upstream `evals.json` (question, ground_truth, expected_behavior) as English cases.

    Each behaviour becomes explicit checks through the mapping file. A behaviour the mapping does not
    know becomes a fact that cannot match, so it shows up as a failure instead of passing silently.
    """
    lib = lib or load_fact_library()
    try:
        tasks = json.loads(_read_text(Path(path)))
    except json.JSONDecodeError as exc:
        raise CaseFormatError(f"{path}: not JSON: {exc}") from exc
    if not isinstance(tasks, list):
        raise CaseFormatError(f"{path}: expected a list of tasks")
    behaviors, extras = load_upstream_behaviors(behaviors_path)
    cases = []
    for task in tasks:
        tid = str(task.get("id") or "")
        if not tid or not isinstance(task.get("question"), str):
            raise CaseFormatError(f"{path}: a task needs an id and a question")
        fragments = []
        for b in task.get("expected_behavior") or []:
            frag = behaviors.get(_norm_behavior(b))
            if frag is None:
                frag = {"facts": [{"name": f"unmapped behaviour: {b}", "any": [r"(?!x)x"]}]}
            fragments.append(frag)
        extra = extras.get(tid, {})
        fragments.append(extra)  # its world_size is what the answer should assume, not a request flag
        raw = {
            "id": f"upstream-{tid}",
            "lang": "en",
            "category": "upstream",
            "question": task["question"],
            "note": str(task.get("ground_truth") or ""),
            "expect": _merge_fragments(fragments),
        }
        cases.append(case_from_dict(raw, lib, source=Path(path).name))
    return cases


# ----------------------------------------------------------------------------- sets


def is_upstream_file(path: Path) -> bool:
    return Path(path).suffix == ".json"


def load_set(paths: Iterable[Path], lib: FactLibrary | None = None) -> list[Case]:
    """Cases from files and directories (a directory: its *.yaml, *.yml, *.jsonl, *.json files)."""
    lib = lib or load_fact_library()
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files += sorted(x for x in p.iterdir() if x.suffix in (".yaml", ".yml", ".jsonl", ".json"))
        elif p.is_file():
            files.append(p)
        else:
            raise CaseFormatError(f"{p}: no such eval set")
    cases: list[Case] = []
    for f in files:
        cases += upstream_cases(f, lib) if is_upstream_file(f) else load_case_file(f, lib)
    seen: set[str] = set()
    for c in cases:
        if c.id in seen:
            raise CaseFormatError(f"duplicate case id {c.id!r} ({c.source})")
        seen.add(c.id)
    return cases


def default_set_paths(upstream_skill_dir: Path | None = None) -> list[Path]:
    """All our case files, plus the upstream evals.json when the skill folder is present."""
    from assistant.config import UPSTREAM_SKILL_DIR

    paths = [CASES_DIR]
    upstream = (upstream_skill_dir or UPSTREAM_SKILL_DIR) / "evals" / "evals.json"
    if upstream.is_file():
        paths.append(upstream)
    return paths
