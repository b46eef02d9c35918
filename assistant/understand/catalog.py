"""Model and GPU names known to the validator's tables, and how they appear in free text.

The tables (`kb/models.yaml`, `kb/gpus.yaml`) are shared data, maintained with the validator; this
module turns their keys and aliases into text patterns ("llama-3.1-70b" matches "Llama 3.1 70B",
"llama3.1-70b-instruct") and hands on the few facts the understanding and planning steps need. It reads
the tables only through `assistant.validator.models`, so each data file has one reader.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache


_SEP = r"[\s_\-]*"


@dataclass(frozen=True)
class ModelInfo:
    """The facts about a model that sizing decisions use (None when the table does not say)."""
    key: str
    total_b: float | None = None
    active_b: float | None = None
    is_moe: bool = False
    num_experts: int | None = None
    num_layers: int | None = None
    num_heads: int | None = None
    num_kv_heads: int | None = None
    pp_plan: bool | None = None  # the AutoModel class declares `_pp_plan` (None: not known)
    ep_supported: bool | None = None  # upstream's MoE path exists for this architecture (None: not known)
    name: str | None = None  # display name ("Mixtral 8x7B")
    architectures: tuple[str, ...] = ()  # HF config.json `architectures`


@dataclass(frozen=True)
class NamePattern:
    key: str
    full: re.Pattern  # the whole key (or alias) in the text
    family: str  # e.g. "llama", "qwen3", "deepseek"
    size: str | None  # e.g. "70b"; None for keys without a size ("deepseek-v3")


def _token_regex(tok: str) -> str:
    # Allow a separator wherever letters meet digits ("qwen3" ~ "qwen 3", "v3" ~ "v-3").
    parts = re.findall(r"[a-z]+|\d+(?:\.\d+)?|x", tok)
    out = []
    for p in parts:
        if re.fullmatch(r"\d+\.\d+", p):
            a, b = p.split(".")
            out.append(rf"{a}[\s._\-]?{b}")
        else:
            out.append(re.escape(p))
    return r"[\s_\-]?".join(out)


@lru_cache(maxsize=None)
def _family_size_pattern(family: str, size: str) -> re.Pattern:
    """"llama 3.1 70b", "qwen3 instruct 30b": a family then its size. Once per (family, size) of the
    catalogue: built per question they evicted the vocabulary patterns from re's cache."""
    return re.compile(rf"(?<![a-z0-9]){re.escape(family)}(?:[\s_\-]*[\d.]+)?[\s_\-]*(?:[a-z]+[\s_\-]+)?"
                      rf"{_token_regex(size)}(?![a-z0-9])", re.I)


_NAME_START = r"(?<![a-z0-9])"


def name_pattern(key: str) -> NamePattern:
    toks = [t for t in re.split(r"[\s_\-/]+", key.lower()) if t]
    body = _SEP.join(_token_regex(t) for t in toks)
    full = re.compile(rf"{_NAME_START}{body}(?![a-z0-9])", re.I)
    size = next((t for t in toks if re.fullmatch(r"\d+(?:\.\d+)?[bm]|\d+x\d+(?:\.\d+)?b", t)), None)
    family = re.sub(r"[\d.]+$", "", toks[0]) if toks else key
    return NamePattern(key=key, full=full, family=family, size=size)


@lru_cache(maxsize=1)
def model_patterns() -> tuple[tuple[str, NamePattern], ...]:
    """(table key, pattern) for every model name and alias in the validator's model table."""
    from assistant.validator.models import list_models, lookup_model  # noqa: PLC0415

    out = []
    for key in list_models():
        facts = lookup_model(key)
        names = [key, *facts.aliases, facts.name, *([facts.hf_id] if facts.hf_id else [])]
        for n in dict.fromkeys(names):
            # HF ids: the part after the organisation is what people type
            out.append((key, name_pattern(n.split("/")[-1])))
    return tuple(out)


def _lead(p: NamePattern) -> str:
    """The letters every match of `p.full` starts with ("llama" of "llama-3.1-70b"): its first token's
    first part, which name_pattern writes as a literal; "" when the name starts with a digit."""
    m = re.match(r"[a-z]+", p.full.pattern[len(_NAME_START):]) if p.full.pattern.startswith(_NAME_START) else None
    return m.group(0) if m else ""


@dataclass(frozen=True)
class _Search:
    """What find_model reads for one pattern table, prepared once: each name with the letters its every
    match starts with, the family-size pairs with the key each picks, and one case-blind pattern per
    leading word. A name whose first letters are nowhere in the text cannot match, so it is not
    searched (139 searches a call were 0.7 ms, and a question reads a dozen texts)."""
    names: tuple[tuple[str, NamePattern, str], ...]
    families: tuple[tuple[str, str, str], ...]  # (family, size, newest key)
    leads: tuple[tuple[str, re.Pattern | None], ...]

    def leads_in(self, text: str) -> set[str]:
        return {w for w, pat in self.leads if pat is None or pat.search(text)}


@lru_cache(maxsize=8)
def _search_of(pats: tuple[tuple[str, NamePattern], ...]) -> _Search:
    names = tuple((key, p, _lead(p)) for key, p in pats)
    by_family: dict[tuple[str, str], list[str]] = {}
    for key, p in pats:
        if p.size:
            by_family.setdefault((p.family, p.size), []).append(key)
    families = tuple((f, size, sorted(set(keys))[-1]) for (f, size), keys in by_family.items())
    words = {lead for _, _, lead in names} | {f for f, _, _ in families}  # _family_size_pattern starts with f
    return _Search(names, families, tuple((w, re.compile(re.escape(w), re.I) if w else None) for w in sorted(words)))


def find_model(text: str, patterns: tuple[tuple[str, NamePattern], ...] | None = None) -> tuple[str, int] | None:
    """The table key of the model named in `text` and where it starts, or None.

    A full name wins ("Llama 3.1 70B"); otherwise a family plus a size ("llama 70b", "qwen3 235b")
    picks the table entry with that family and size, preferring the newest version (the last key in
    sorted order, so llama-3.3-70b over llama-3.1-70b)."""
    pats = model_patterns() if patterns is None else patterns
    if not pats:
        return None
    search = _search_of(pats)
    present = search.leads_in(text)
    best: tuple[int, int, str] | None = None  # (start, -length, key)
    for key, p, lead in search.names:
        if lead not in present:
            continue
        m = p.full.search(text)
        if m and (best is None or (m.start(), -(m.end() - m.start())) < best[:2]):
            best = (m.start(), -(m.end() - m.start()), key)
    if best:
        return best[2], best[0]
    hits = [(m.start(), key) for family, size, key in search.families
            if family in present and (m := _family_size_pattern(family, size).search(text))]
    if hits:
        start, key = min(hits)
        return key, start
    return None


@lru_cache(maxsize=64)
def model_info(key: str) -> ModelInfo | None:
    """The facts sizing decisions use, from the validator's model table (one reader of kb/models.yaml)."""
    from assistant.validator.models import lookup_model  # noqa: PLC0415

    f = lookup_model(key) if key else None
    if f is None:
        return None
    return ModelInfo(
        key=f.key,
        total_b=float(f.params_b),
        active_b=float(f.active_params_b) if f.active_params_b is not None else None,
        is_moe=f.num_routed_experts > 1,
        num_experts=f.num_routed_experts or None,
        num_layers=f.num_layers,
        num_heads=f.num_attention_heads,
        num_kv_heads=f.num_kv_heads,
        pp_plan=f.pp_plan,
        # Upstream builds an expert-parallel model only for its own MoE classes.
        ep_supported=f.upstream_moe if f.architecture else None,
        name=f.name,
        architectures=(f.architecture,) if f.architecture else (),
    )


@lru_cache(maxsize=1)
def gpu_keys() -> tuple[str, ...]:
    """Keys of the validator's GPU table (e.g. "h100-80gb")."""
    from assistant.validator.models import list_gpus  # noqa: PLC0415

    return tuple(list_gpus())


def gpu_memory_gib(key: str) -> float | None:
    from assistant.validator.models import load_gpu  # noqa: PLC0415

    try:
        return float(load_gpu(key).memory_gib)
    except ValueError:
        return None


def gpu_memory_gb(key: str) -> int | None:
    """The advertised memory (decimal GB) of a table GPU, as users say it ("H100 80G")."""
    from assistant.validator.models import load_gpu  # noqa: PLC0415

    try:
        return int(load_gpu(key).memory_gb)
    except ValueError:
        return None


def resolve_gpu(gpu_type: str, memory_gb: int | None) -> str | None:
    """The GPU table key for a type ("h100", "rtx4090") and optional memory (80), e.g. "h100-80gb".

    The table's own name matching (keys and aliases, see kb/gpus.yaml) decides: a type alone takes the
    variant the table's alias names (the largest one current clusters run: A100 means 80GB); with a
    memory only that exact variant, or None ("H100 94G" is not in the table)."""
    from assistant.validator.models import load_gpu  # noqa: PLC0415

    name = f"{gpu_type}-{memory_gb}gb" if memory_gb is not None else gpu_type
    try:
        return load_gpu(name).key
    except ValueError:
        return None
