"""Score one answer against one eval case. Pure: no engine, no I/O; the validator is a pure function.

The answer may be an `assistant.answer.Answer` or its `to_json()` dict (`meshwise ask --json`).
A case passes when every check that its expectation asks for passes: required facts, no forbidden
claim, strategy, YAML fields, validity of every YAML shown, verdict, rule codes, dp_size, intent,
language, and the question-first checks: the lead paragraph, the body length, the layout the answer
judged (`Answer.judged`) and the asks it detected (`Answer.asks`). An answer without `judged` / `asks`
(an engine that predates them) fails those checks instead of crashing the run. Retrieval (recall@5,
reciprocal rank) is measured but does not decide the pass; body length and YAML shown are recorded
for the report.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import yaml

from evals.schema import Case, Expectation, FieldCheck, PatternGroup
from assistant.defaults import DEFAULT_GPUS_PER_NODE, DEFAULT_WORLD_SIZE  # a shown YAML's world when none is named

MAX_YAML_BYTES = 256 * 1024

DIST_KEYS = frozenset(
    {
        "strategy", "dp_size", "dp_replicate_size", "tp_size", "pp_size", "cp_size", "ep_size", "pipeline", "moe",
        "sequence_parallel", "activation_checkpointing", "activation_checkpointing_scope", "defer_fsdp_grad_sync",
        "mp_policy", "tp_plan",
    }
)
_STRATEGY_ALIASES = {"megatron-fsdp": "megatron_fsdp", "mfsdp": "megatron_fsdp"}

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.S)
_CODE = re.compile(r"\bMW-[EW]-[A-Z0-9]+(?:-[A-Z0-9]+)*\b")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_\-]*")
_SENTENCE_SPLIT = re.compile(r"(?<=[。！？!?])|\n|(?<=\.)\s+")

# A forbidden claim is excused when its sentence contrasts it with the code or reports it as the (wrong)
# doc wording, or when a negation sits inside or right around the claim ("do not use X", "X 不支持 Y").
_CONTRAST = re.compile(
    r"\bbut\b|\bhowever\b|\bwhereas\b|\binstead\b|rather than|\bwrong|incorrect|\bdoc(?:s|umentation)?\b|skill\.md"
    r"|但|然而|而是|而不是|而非|文档|错误",
    re.I | re.A,
)
_NEGATION = re.compile(
    r"\bnot?\b|n't\b|\bnever\b|\bcannot\b|\breject|\bunknown\b|\binvalid|\berror|\bfail|\bavoid"
    r"|不|没|无法|别|勿|并非|拒绝|报错|避免|未知|无效|非法|禁止",
    re.I | re.A,
)
_NEG_BEFORE, _NEG_AFTER = 12, 25  # characters around a claim in which a negation excuses it


# A sentence that gives the verdict "this configuration is broken" (conditional sentences, which state
# a rule, do not count: "if world_size is not divisible ..., startup fails").
# A verdict word opens its sentence: before it only punctuation and spaces (with re.A, \W would also
# skip Chinese, so "不会报错" would read as "会报错").
_INVALID_VERDICT = re.compile(
    r"^[^\w\u3400-\u9fff]*(?:invalid|not valid|rejected)\b|^[^\w\u3400-\u9fff]*(?:无效|不合法|不可行)|^[^\w\u3400-\u9fff]*no\b\W{0,3}(?:[:,—–-]|it\b|this\b|that\b)"
    r"|^[^\w\u3400-\u9fff]*(?:不行|不可以|不能(?:跑|用|这样)|跑不起来|启动不了|起不来|会报错|启动会?(?:失败|报错))|\bfails? \d+ checks?|\b(?:config(?:uration)?|setup|yaml|recipe|this|it) (?:is|would be|will be) (?:invalid|not valid|rejected)"
    r"|\bwill (?:fail|be rejected) (?:at|on) (?:startup|start-up|launch)|\bnot feasible\b|\binfeasible\b"
    r"|\bno (?:valid )?config(?:uration)? (?:passes|is valid)|\bis not divisible by\b|\bisn't divisible by\b"
    r"|\bis not a multiple of\b|\bisn't a multiple of\b"
    r"|不可行|(?:配置|yaml|它|这个?)\s*(?:是)?(?:无效|不合法|不能用|通不过|过不了)|未通过.{0,8}校验|没有.{0,10}通过校验"
    r"|不能被.{0,40}整除|无法被.{0,40}整除|除不尽|不是.{0,30}的?(?:整数)?倍数|启动时(?:就)?会?(?:失败|报错)",
    re.I | re.A,
)
_CONDITIONAL = re.compile(r"\bif\b|\bwhen(?:ever)?\b|\bunless\b|\botherwise\b|如果|若|否则|的话|一旦|假如", re.I | re.A)
# A sentence that reports a validator warning (MW-W-*, and no error code) describes a config that runs.
_WARNING_ONLY = re.compile(r"^(?!.*\bMW-E-).*\bMW-W-", re.S)
_CITATION_LINE = re.compile(r"^\s*\[\d+\]\s.*$", re.M)
_SOURCES_HEADING = re.compile(r"^[ \t]*\*\*(?:Sources|来源)\*\*", re.M)
LEAD_MAX_CHARS = 400
_MISSING = object()  # an answer attribute the engine does not produce (yet)

ValidateFn = Callable[..., Any]

# ASCII word boundaries: `\bpp\b` must also match in "用pp切分", where Unicode \b would not.
FLAGS = re.I | re.A


# ----------------------------------------------------------------------------- results


@dataclass
class Check:
    name: str
    passed: bool
    detail: str = ""


@dataclass
class CaseScore:
    id: str
    lang: str
    category: str
    passed: bool
    checks: list[Check] = field(default_factory=list)
    missing_facts: list[str] = field(default_factory=list)
    forbidden_hits: list[str] = field(default_factory=list)
    strategy_ok: bool | None = None
    yaml_blocks: int = 0  # YAML configs shown (the user's own input excluded)
    yaml_invalid: list[str] = field(default_factory=list)
    body_chars: int | None = None  # answer text without the sources block
    shows_yaml: bool | None = None  # any YAML shown, the user's own quoted back included
    validity_ok: bool | None = None
    dp_ok: bool | None = None
    language_ok: bool = True
    recall_at_5: float | None = None
    reciprocal_rank: float | None = None
    answer_language: str | None = None
    answer_intent: str | None = None
    answer_strategy: str | None = None
    latency_ms: float | None = None
    error: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


# ----------------------------------------------------------------------------- answer view


@dataclass(frozen=True)
class AnswerView:
    """The parts of an answer the scorer reads, from an `Answer` or its JSON form."""

    text: str
    language: str | None
    intent: str | None
    strategy: str | None
    yaml: str | None
    validation_ok: bool | None
    validation_codes: tuple[str, ...]
    source_base_ids: tuple[str, ...]
    params: dict
    judged: Any = _MISSING  # Answer.judged: a config mapping, None, or _MISSING when not reported
    asks: Any = _MISSING  # Answer.asks: a tuple of ask kinds, or _MISSING when not reported


def base_doc_id(doc_id: str) -> str:
    """`hsdp.zh` -> `hsdp`; a chunk id `hsdp.zh#3` -> `hsdp`."""
    doc_id = doc_id.split("#", 1)[0]
    return doc_id.rsplit(".", 1)[0] if "." in doc_id else doc_id


def _validation_parts(v: Any) -> tuple[bool | None, tuple[str, ...]]:
    if v is None:
        return None, ()
    if isinstance(v, dict):
        findings = [*(v.get("errors") or ()), *(v.get("warnings") or ())]
        return v.get("ok"), tuple(f.get("code", "") for f in findings if isinstance(f, dict))
    return getattr(v, "ok", None), tuple(getattr(v, "codes", ()) or ())


def view(answer: Any) -> AnswerView:
    if isinstance(answer, dict):
        ok, codes = _validation_parts(answer.get("validation"))
        sources = tuple(base_doc_id(str(s.get("doc_id") or s.get("id") or "")) for s in answer.get("sources") or ())
        return AnswerView(
            text=str(answer.get("answer") or answer.get("text") or ""),
            language=answer.get("language"),
            intent=answer.get("intent"),
            strategy=answer.get("strategy"),
            yaml=answer.get("yaml"),
            validation_ok=ok,
            validation_codes=codes,
            source_base_ids=sources,
            params=dict(answer.get("params") or {}),
            judged=answer.get("judged", _MISSING),
            asks=_asks(answer.get("asks", _MISSING)),
        )
    ok, codes = _validation_parts(getattr(answer, "validation", None))
    return AnswerView(
        text=answer.text or "",
        language=answer.language,
        intent=answer.intent,
        strategy=answer.strategy,
        yaml=answer.yaml,
        validation_ok=ok,
        validation_codes=codes,
        source_base_ids=tuple(base_doc_id(h.doc_id or h.id) for h in answer.sources),
        params=dict(answer.params or {}),
        judged=getattr(answer, "judged", _MISSING),
        asks=_asks(getattr(answer, "asks", _MISSING)),
    )


def _asks(raw: Any) -> Any:
    if raw is _MISSING or raw is None:
        return _MISSING if raw is _MISSING else ()
    return (str(raw),) if isinstance(raw, str) else tuple(str(a) for a in raw)


# ----------------------------------------------------------------------------- text helpers


def normalize(text: str) -> str:
    """Width-fold, drop Markdown emphasis, code ticks and citation-list lines ("[3] Title - path": a
    source's title states nothing), spell multiplication one way."""
    t = _CITATION_LINE.sub("", unicodedata.normalize("NFKC", text or ""))
    for ch in ("×", "✕", "∗", "⋅"):
        t = t.replace(ch, "*")
    return t.replace("`", "").replace("**", "")


def answer_body(text: str) -> str:
    """The answer text without its sources block (from the `**Sources**` / `**来源**` line on)."""
    m = _SOURCES_HEADING.search(text or "")
    return (text or "")[: m.start()].rstrip() if m else (text or "").rstrip()


# An italic notice ("_Assumed:_ ...", "_the question tries to change the rules_"), not an answer that
# opens with a private name such as `_create_moe_mesh` written without backticks.
_NOTICE_LINE = re.compile(r"^\s*_(?:[^_\n]+_\s*$|[^_\s][^_\n]*:_)")


def lead_of(text: str) -> str:
    """The answer's first paragraph: leading notice lines (`_..._`) dropped, up to the first blank
    line, at most LEAD_MAX_CHARS characters."""
    lines = (text or "").splitlines()
    i = 0
    while i < len(lines) and (not lines[i].strip() or _NOTICE_LINE.match(lines[i])):
        i += 1
    para = []
    for line in lines[i:]:
        if not line.strip():
            break
        para.append(line)
    return "\n".join(para)[:LEAD_MAX_CHARS]


def sentences(text: str) -> list[str]:
    return [s for s in (x.strip() for x in _SENTENCE_SPLIT.split(text)) if s]


def _masked(text: str, mask: tuple[str, ...]) -> str:
    for m in mask:
        text = re.sub(m, " ", text, flags=FLAGS)
    return text


def _alt_matches(alt: tuple[str, ...], text: str, sents: list[str]) -> str | None:
    """The matching text (a sentence for conjunctions) or None."""
    if len(alt) == 1:
        m = re.search(alt[0], text, FLAGS)
        return m.group(0) if m else None
    for s in sents:
        if all(re.search(p, s, FLAGS) for p in alt):
            return s
    return None


def fact_present(group: PatternGroup, text: str) -> bool:
    t = _masked(normalize(text), group.mask)
    sents = sentences(t)
    return any(_alt_matches(alt, t, sents) for alt in group.alternatives)


def _excused(mode: str, sentence: str, start: int, end: int) -> bool:
    if mode == "never":
        return False
    if mode == "sentence":
        return bool(_CONTRAST.search(sentence) or _NEGATION.search(sentence))
    if _CONTRAST.search(sentence):
        return True
    return _NEGATION.search(sentence[max(0, start - _NEG_BEFORE) : end + _NEG_AFTER]) is not None


def forbidden_hit(group: PatternGroup, text: str) -> str | None:
    """The sentence that makes the forbidden claim, or None. Evaluated sentence by sentence."""
    t = _masked(normalize(text), group.mask)
    for s in sentences(t):
        for alt in group.alternatives:
            spans = [m.span() for m in (re.search(p, s, FLAGS) for p in alt) if m]
            if len(spans) < len(alt):
                continue
            if _excused(group.excuse, s, min(a for a, _ in spans), max(b for _, b in spans)):
                continue
            return s[:200]
    return None


def cjk_ratio(text: str) -> tuple[int, float]:
    """(CJK characters, CJK share of the prose) with code and paths removed.

    Two CJK characters weigh about one English word, so the share compares like with like.
    """
    prose = _FENCE.sub(" ", text or "")
    prose = re.sub(r"`[^`\n]*`", " ", prose)
    prose = re.sub(r"\S*[/\\]\S*", " ", prose)  # paths and URLs
    cjk = len(_CJK.findall(prose))
    words = len(_WORD.findall(prose))
    weight = cjk / 2
    return cjk, (weight / (weight + words) if cjk + words else 0.0)


def language_of(text: str) -> str:
    cjk, share = cjk_ratio(text)
    # Four CJK characters make a short Chinese verdict ("不行：`ddp` 不支持 TP") a Chinese answer; two do not.
    return "zh" if cjk >= 4 and share >= 0.4 else "en" if share <= 0.15 else "mixed"


# ----------------------------------------------------------------------------- YAML helpers


@dataclass(frozen=True)
class YamlBlock:
    text: str
    data: Any  # parsed value, or None when it did not parse
    parse_error: str | None = None


def _parse(text: str) -> tuple[Any, str | None]:
    if len(text.encode("utf-8")) > MAX_YAML_BYTES:
        return None, "over size cap"
    try:
        return yaml.safe_load(text), None
    except yaml.YAMLError as exc:
        return None, str(exc).splitlines()[0]


def is_config(data: Any) -> bool:
    """A mapping that is a recipe with `distributed:` or a bare distributed mapping."""
    return isinstance(data, dict) and ("distributed" in data or bool(DIST_KEYS & set(map(str, data))))


def fenced_yaml_blocks(text: str) -> list[YamlBlock]:
    """YAML shown in Markdown fences: blocks tagged yaml/yml, and untagged ones that parse as a config."""
    out = []
    for lang, body in _FENCE.findall(text or ""):
        lang = lang.lower()
        if lang in ("yaml", "yml"):
            data, err = _parse(body)
            out.append(YamlBlock(body, data, err))
        elif not lang:
            data, err = _parse(body)
            if err is None and is_config(data):
                out.append(YamlBlock(body, data))
    return out


_RAW_START = re.compile(r"^(distributed|strategy|tp_size|pp_size|cp_size|ep_size|dp_size|step_scheduler|model)\s*:")
_RAW_CONT = re.compile(r"^(\s+\S|\s*#|\s*$|[A-Za-z_][\w.-]*\s*:)")


def user_yaml_blocks(text: str) -> list[Any]:
    """Parsed YAML the user pasted: fenced blocks, else an unfenced run of YAML lines."""
    blocks = [b.data for b in fenced_yaml_blocks(text) if b.data is not None]
    if blocks:
        return blocks
    lines = (text or "").splitlines()
    for i, line in enumerate(lines):
        if _RAW_START.match(line):
            j = i + 1
            while j < len(lines) and _RAW_CONT.match(lines[j]):
                j += 1
            while j > i:
                data, err = _parse("\n".join(lines[i:j]))
                # one line of prose that opens like a key ("strategy: megatron-fsdp (with the dash) on 16
                # GPUs - valid?") is a question, not a pasted config
                prose = j == i + 1 and isinstance(data, dict) and any(isinstance(v, str) and " " in v.strip()
                                                                      for v in data.values())
                if err is None and is_config(data) and not prose:
                    return [data]
                j -= 1
            break
    return []


def _submapping(small: Any, big: Any) -> bool:
    if isinstance(small, dict) and isinstance(big, dict):
        return bool(small) and all(k in big and (small[k] == big[k] or _submapping(small[k], big[k])) for k in small)
    return False


def _forms(data: Any) -> list[Any]:
    """A value and, for a whole recipe, its distributed section."""
    out = [data]
    if isinstance(data, dict) and isinstance(data.get("distributed"), dict):
        out.append(data["distributed"])
    return out


def is_user_input(data: Any, user_blocks: list[Any]) -> bool:
    """True when a shown block is (part of) what the user pasted: diagnoses may quote it."""
    return any(a == b or _submapping(a, b) for u in user_blocks for a in _forms(data) for b in _forms(u))


def lookup(data: Any, path: str) -> Any:
    """Dotted-path value; a bare distributed mapping answers `distributed.*` paths too."""
    root = data if isinstance(data, dict) and "distributed" in data else {"distributed": data}
    cur: Any = root
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _norm_value(v: Any) -> Any:
    if isinstance(v, str):
        s = v.strip().lower()
        if s in ("none", "null", "~"):
            return None
        if s in ("true", "false"):
            return s == "true"
        if re.fullmatch(r"-?\d+", s):
            return int(s)
        return _STRATEGY_ALIASES.get(s, s)
    return v


def field_ok(check: FieldCheck, data: Any) -> bool:
    v = _norm_value(lookup(data, check.path))
    if check.op == "present":
        return v is not None
    if check.op == "absent":
        return v is None
    if check.op == "eq":
        return v == _norm_value(check.value)
    if check.op == "in":
        return v in [_norm_value(x) for x in check.value]
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return False
    return {"gt": v > check.value, "ge": v >= check.value, "lt": v < check.value}[check.op]


def _default_validate() -> ValidateFn:
    from assistant.validator import validate

    return validate


def run_validator(validate_fn: ValidateFn, data: Any, *, world_size: int, gpus_per_node: int, model=None, gpu=None):
    """(ok, error codes, dp_size, note). Any exception counts as a failed validation."""
    kwargs: dict[str, Any] = {"world_size": world_size, "gpus_per_node": gpus_per_node}
    if model:
        kwargs["model"] = model
    if gpu:
        kwargs["gpu"] = gpu
    try:
        rep = validate_fn(data, **kwargs)
    except Exception as exc:  # UnusableInput or a validator bug: either way not a valid config
        if model or gpu:  # an unknown model/GPU name must not turn a sound config into a failure
            return run_validator(validate_fn, data, world_size=world_size, gpus_per_node=gpus_per_node)
        return False, (), None, f"{type(exc).__name__}: {getattr(exc, 'message', exc)}"
    codes = tuple(f.code for f in rep.errors)
    dp = rep.derived.dp_size if rep.derived is not None else None
    return bool(rep.ok), codes, dp, ""


# ----------------------------------------------------------------------------- scoring


def _assumed(case: Case, ans: AnswerView, validation_world: int | None) -> tuple[int, int, str]:
    world = case.assumed_world_size or ans.params.get("world_size") or validation_world or DEFAULT_WORLD_SIZE
    gpn = case.assumed_gpus_per_node or ans.params.get("gpus_per_node") or DEFAULT_GPUS_PER_NODE
    src = "case" if case.assumed_world_size else "answer" if ans.params.get("world_size") else "default"
    return int(world), int(gpn), src


def _dp_from_text(text: str, dp: int) -> bool:
    t = normalize(text)
    pat = rf"\bdp(?:_size)?\b[^\n。;；]{{0,80}}?(?:=|为|是|等于|:)\s*{dp}\b(?!\s*[*/.])"
    return re.search(pat, t, FLAGS) is not None


def retrieval_scores(expected: tuple[str, ...], got: tuple[str, ...]) -> tuple[float | None, float | None]:
    if not expected:
        return None, None
    want = set(expected)
    top5 = set(got[:5])
    recall = len(want & top5) / len(want)
    rr = next((1.0 / (i + 1) for i, b in enumerate(got) if b in want), 0.0)
    return recall, rr


def score(case: Case, answer: Any, *, validate_fn: ValidateFn | None = None) -> CaseScore:
    ans = view(answer)
    exp = case.expect
    res = CaseScore(
        id=case.id, lang=case.lang, category=case.category, passed=False,
        answer_language=ans.language, answer_intent=ans.intent, answer_strategy=ans.strategy,
    )
    checks = res.checks
    text = ans.text
    full_text = text + ("\n" + ans.yaml if ans.yaml and ans.yaml not in text else "")

    # The user's own YAML (question and earlier user turns): diagnoses may show it unchanged.
    user_text = "\n".join([case.question, *(t.content for t in case.history if t.role == "user")])
    user_blocks = user_yaml_blocks(user_text)

    # Every YAML shown: fenced blocks in the text, plus the answer's `yaml` when not already there.
    shown = fenced_yaml_blocks(text)
    if ans.yaml and all(b.text.strip() != ans.yaml.strip() for b in shown):
        data, err = _parse(ans.yaml)
        shown.insert(0, YamlBlock(ans.yaml, data, err))
    configs = [b for b in shown if b.parse_error or is_config(b.data)]
    own = [b for b in configs if not (b.parse_error is None and is_user_input(b.data, user_blocks))]

    # Text for forbidden claims: without the user's quoted blocks.
    forbid_text = full_text
    for b in configs:
        if b not in own:
            forbid_text = forbid_text.replace(b.text, " ")

    # Facts and forbidden claims.
    for g in exp.facts:
        if not fact_present(g, full_text):
            res.missing_facts.append(g.name)
    if exp.facts:
        checks.append(Check("facts", not res.missing_facts, ", ".join(res.missing_facts)))
    for g in exp.forbid:
        hit = forbidden_hit(g, forbid_text)
        if hit:
            res.forbidden_hits.append(f"{g.name}: {hit}")
    if exp.forbid:
        checks.append(Check("forbid", not res.forbidden_hits, " | ".join(res.forbidden_hits)))

    # YAML validity of everything shown (the user's own input excluded).
    validate_fn = validate_fn or _default_validate()
    world, gpn, world_src = _assumed(case, ans, None)
    model = exp.model or ans.params.get("model")
    gpu = exp.gpu or ans.params.get("gpu")
    verdicts: list[tuple[YamlBlock, bool, tuple[str, ...], int | None]] = []
    for b in own:
        if b.parse_error:
            verdicts.append((b, False, (), None))
            res.yaml_invalid.append(f"unparseable YAML: {b.parse_error}")
            continue
        ok, codes, dp, note = run_validator(validate_fn, b.data, world_size=world, gpus_per_node=gpn, model=model, gpu=gpu)
        verdicts.append((b, ok, codes, dp))
        if not ok:
            res.yaml_invalid.append(f"world_size={world} ({world_src}): {', '.join(codes) or note}")
    res.yaml_blocks = len(own)
    if own:
        checks.append(Check("yaml_valid", not res.yaml_invalid, " | ".join(res.yaml_invalid)))

    if exp.yaml_shown is not None:
        n = len(configs) if exp.yaml_shown else len(shown)
        checks.append(Check("yaml_shown", (n > 0) == exp.yaml_shown, f"{n} YAML block(s) shown"))

    primary = own[0] if own else (configs[0] if configs else None)
    primary_data = primary.data if primary is not None and primary.parse_error is None else None

    # The layout the answer is about: the YAML it shows, else (a quantity or a verdict answered without a
    # YAML, as issue 11 asks) the layout it judged. `yaml_shown: true` is how a case demands the YAML itself.
    judged = ans.judged if isinstance(ans.judged, dict) else None
    about = primary_data if primary_data is not None else (judged if exp.yaml_shown is not True else None)
    if exp.yaml_fields:
        if about is None:
            checks.append(Check("yaml_fields", False, "no YAML config shown and nothing judged"))
        else:
            where = "" if about is primary_data else " [judged layout]"
            bad = [f"{c.path} {c.op} {c.value!r} (got {lookup(about, c.path)!r}){where}" for c in exp.yaml_fields if not field_ok(c, about)]
            checks.append(Check("yaml_fields", not bad, "; ".join(bad)))
    if exp.yaml_forbid:
        bad = []
        for conj in exp.yaml_forbid:
            for b in own:
                if b.data is not None and all(field_ok(c, b.data) for c in conj):
                    bad.append(" & ".join(f"{c.path} {c.op} {c.value!r}" for c in conj))
        checks.append(Check("yaml_forbid", not bad, "; ".join(bad)))

    # Strategy: the answer's field, else the shown YAML's.
    if exp.strategy:
        got = ans.strategy
        if not got and primary_data is not None:
            got = lookup(primary_data, "distributed.strategy") or ("fsdp2" if lookup(primary_data, "distributed") is not None else None)
        got = _norm_value(got) if got else None
        res.strategy_ok = got == _norm_value(exp.strategy)
        checks.append(Check("strategy", res.strategy_ok, f"expected {exp.strategy}, got {got}"))

    # Verdict on the configuration asked about, and the rule codes that must be named.
    # Codes count when the answer's text names them: that is what the user reads.
    text_codes = set(_CODE.findall(normalize(text)))
    if exp.valid is not None:
        verdicts_said = [
            x for x in sentences(normalize(text))
            if _INVALID_VERDICT.search(x) and not _CONDITIONAL.search(x) and not _WARNING_ONLY.search(x)
        ]
        reported_invalid = ans.validation_ok is False
        if exp.valid:
            res.validity_ok = not verdicts_said and not reported_invalid
            detail = "answer's validation failed" if reported_invalid else f"answer calls it broken: {verdicts_said[0][:160]}" if verdicts_said else ""
        else:
            expected_named = any(a in text_codes for alts in exp.rule_codes for a in alts)
            res.validity_ok = bool(verdicts_said) or reported_invalid or expected_named
            detail = "" if res.validity_ok else "answer does not say the configuration is invalid"
        checks.append(Check("validity", res.validity_ok, detail))
    if exp.rule_codes:
        missing = [" or ".join(alts) for alts in exp.rule_codes if not any(a in text_codes for a in alts)]
        checks.append(Check("rule_codes", not missing, "missing " + "; ".join(missing) if missing else ""))

    # dp_size: from the validator on the main YAML shown, else stated in the text.
    if exp.dp_size is not None:
        dp_seen = next((dp for b, ok, _c, dp in verdicts if b is primary and dp is not None), None)
        if dp_seen is None and primary_data is not None:
            _ok, _c, dp_seen, _n = run_validator(validate_fn, primary_data, world_size=world, gpus_per_node=gpn)
        res.dp_ok = dp_seen == exp.dp_size if dp_seen is not None else _dp_from_text(text, exp.dp_size)
        checks.append(Check("dp_size", res.dp_ok, f"expected {exp.dp_size}, YAML gives {dp_seen}"))

    if exp.intent:
        checks.append(Check("intent", ans.intent in exp.intent, f"expected {'|'.join(exp.intent)}, got {ans.intent}"))
    if exp.intent_not:
        checks.append(Check("intent_not", ans.intent not in exp.intent_not, f"got {ans.intent}"))

    # Language: the answer's declared language and its prose.
    detected = language_of(text)
    res.language_ok = ans.language in (None, case.lang) and detected == case.lang
    checks.append(Check("language", res.language_ok, f"expected {case.lang}, declared {ans.language}, prose looks {detected}"))

    _question_first_checks(exp, ans, checks)
    res.body_chars = len(answer_body(text))
    res.shows_yaml = bool(shown)

    res.recall_at_5, res.reciprocal_rank = retrieval_scores(exp.sources, ans.source_base_ids)
    res.passed = all(c.passed for c in checks)
    return res


def _question_first_checks(exp: Expectation, ans: AnswerView, checks: list[Check]) -> None:
    """Lead paragraph, body length, the layout judged and the asks detected."""
    if exp.lead:
        lead = lead_of(ans.text)
        missing = [g.name for g in exp.lead if not fact_present(g, lead)]
        checks.append(Check("lead", not missing, f"not in the first paragraph: {', '.join(missing)} (lead: {lead[:120]!r})" if missing else ""))
    if exp.max_chars is not None:
        n = len(answer_body(ans.text))
        checks.append(Check("max_chars", n <= exp.max_chars, f"{n} chars > {exp.max_chars}" if n > exp.max_chars else ""))
    if exp.judged:
        if ans.judged is _MISSING:
            checks.append(Check("judged", False, "answer does not report what it judged"))
        elif not isinstance(ans.judged, dict):
            checks.append(Check("judged", False, f"nothing judged (judged={ans.judged!r})"))
        else:
            bad = [f"{c.path} {c.op} {c.value!r} (got {lookup(ans.judged, c.path)!r})" for c in exp.judged if not field_ok(c, ans.judged)]
            checks.append(Check("judged", not bad, "; ".join(bad)))
    if exp.judged_absent is not None:
        if ans.judged is _MISSING:
            checks.append(Check("judged_absent", False, "answer does not report what it judged"))
        else:
            ok = (ans.judged is None) == exp.judged_absent
            checks.append(Check("judged_absent", ok, "" if ok else f"judged={ans.judged!r}"))
    if exp.asks:
        if ans.asks is _MISSING:
            checks.append(Check("asks", False, "answer does not report its asks"))
        else:
            missing = [a for a in exp.asks if a not in ans.asks]
            checks.append(Check("asks", not missing, f"missing {missing}, got {list(ans.asks)}" if missing else ""))


def failed_score(case: Case, error: str) -> CaseScore:
    """The score of a case whose answer could not be produced."""
    return CaseScore(
        id=case.id, lang=case.lang, category=case.category, passed=False, error=error,
        checks=[Check("answer", False, error)], language_ok=False,
        recall_at_5=0.0 if case.expect.sources else None, reciprocal_rank=0.0 if case.expect.sources else None,
    )
