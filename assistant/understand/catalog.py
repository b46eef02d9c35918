"""Model and GPU names known to the validator's tables, and how they appear in free text.

The tables (`kb/models.yaml`, `kb/gpus.yaml`) are shared data, maintained with the validator; this
module turns their keys and aliases into text patterns ("llama-3.1-70b" matches "Llama 3.1 70B",
"llama3.1-70b-instruct") and reads the few facts the understanding and planning steps need. When the
tables are not there, nothing is recognised by name and sizes still come from the text.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import yaml

# Data files are parsed at first use on every cold start: libyaml's safe loader is ~10x faster than
# the pure-Python one and just as safe (no arbitrary tags).
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

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


def name_pattern(key: str) -> NamePattern:
    toks = [t for t in re.split(r"[\s_\-/]+", key.lower()) if t]
    body = _SEP.join(_token_regex(t) for t in toks)
    full = re.compile(rf"(?<![a-z0-9]){body}(?![a-z0-9])", re.I)
    size = next((t for t in toks if re.fullmatch(r"\d+(?:\.\d+)?[bm]|\d+x\d+(?:\.\d+)?b", t)), None)
    family = re.sub(r"[\d.]+$", "", toks[0]) if toks else key
    return NamePattern(key=key, full=full, family=family, size=size)


_TABLE_MAX_BYTES = 2 * 1024 * 1024


@lru_cache(maxsize=4)
def _table(name: str) -> dict:
    """A kb data table (`models.yaml`, `gpus.yaml`) as a mapping of key -> entry; {} when absent."""
    from assistant.config import KB_DIR  # noqa: PLC0415  (imported late: tests point KB_DIR elsewhere)

    path = KB_DIR / name
    if not path.is_file() or path.stat().st_size > _TABLE_MAX_BYTES:
        return {}
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=_SAFE_LOADER) or {}  # noqa: S506 - a safe loader
    section = data.get("models" if name == "models.yaml" else "gpus", {}) if isinstance(data, dict) else {}
    return section if isinstance(section, dict) else {}


def _get(obj, *names):
    for n in names:
        v = obj.get(n) if isinstance(obj, dict) else getattr(obj, n, None)
        if v is not None:
            return v
    return None


def _names(key: str, entry) -> list[str]:
    aliases = _get(entry, "aliases") or [] if isinstance(entry, dict) else []
    if isinstance(aliases, str):
        aliases = [aliases]
    names = [key, *(a for a in aliases if isinstance(a, str))]
    display = _get(entry, "name") if isinstance(entry, dict) else None
    if isinstance(display, str):
        names.append(display)
    return names


@lru_cache(maxsize=1)
def model_patterns() -> tuple[tuple[str, NamePattern], ...]:
    """(table key, pattern) for every model name and alias in kb/models.yaml."""
    out = []
    for key, entry in _table("models.yaml").items():
        for n in _names(str(key), entry):
            # HF ids: the part after the organisation is what people type
            out.append((str(key), name_pattern(n.split("/")[-1])))
    return tuple(out)


def find_model(text: str, patterns: tuple[tuple[str, NamePattern], ...] | None = None) -> tuple[str, int] | None:
    """The table key of the model named in `text` and where it starts, or None.

    A full name wins ("Llama 3.1 70B"); otherwise a family plus a size ("llama 70b", "qwen3 235b")
    picks the table entry with that family and size, preferring the newest version (the last key in
    sorted order, so llama-3.3-70b over llama-3.1-70b)."""
    pats = model_patterns() if patterns is None else patterns
    if not pats:
        return None
    best: tuple[int, int, str] | None = None  # (start, -length, key)
    for key, p in pats:
        m = p.full.search(text)
        if m and (best is None or (m.start(), -(m.end() - m.start())) < best[:2]):
            best = (m.start(), -(m.end() - m.start()), key)
    if best:
        return best[2], best[0]
    by_family: dict[tuple[str, str], list[str]] = {}
    for key, p in pats:
        if p.size:
            by_family.setdefault((p.family, p.size), []).append(key)
    hits = []
    for (family, size), keys in by_family.items():
        m = re.search(rf"(?<![a-z0-9]){re.escape(family)}(?:[\s_\-]*[\d.]+)?[\s_\-]*(?:[a-z]+[\s_\-]+)?{_token_regex(size)}(?![a-z0-9])", text, re.I)
        if m:
            hits.append((m.start(), sorted(set(keys))[-1]))
    if hits:
        start, key = min(hits)
        return key, start
    return None


@lru_cache(maxsize=64)
def model_info(key: str) -> ModelInfo | None:
    """Facts about a model from kb/models.yaml (HF config.json field names), or None when unknown."""
    entry = _table("models.yaml").get(key) if key else None
    if entry is None:
        return None

    def num(*names):
        v = _get(entry, *names)
        return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    experts = num("n_routed_experts", "num_experts", "num_local_experts")
    total = num("params_b")
    active = num("active_params_b")
    return ModelInfo(
        key=key,
        total_b=float(total) if total is not None else None,
        active_b=float(active) if active is not None else None,
        is_moe=bool(experts and experts > 1),
        num_experts=int(experts) if experts else None,
        num_layers=_int(num("num_hidden_layers")),
        num_heads=_int(num("num_attention_heads")),
        num_kv_heads=_int(num("num_key_value_heads")),
        pp_plan=_get(entry, "pp_plan") if isinstance(_get(entry, "pp_plan"), bool) else None,
        ep_supported=_ep_supported(entry),
        name=str(_get(entry, "name")) if isinstance(_get(entry, "name"), str) else None,
        architectures=tuple(str(a) for a in (_get(entry, "architectures") or ()) if isinstance(a, str)),
    )


def _ep_supported(entry) -> bool | None:
    # Upstream builds an expert-parallel model only for its own MoE classes (the table lists them).
    archs = _get(entry, "architectures") or []
    data = _upstream_moe_archs()
    if not data or not archs:
        return None
    return any(a in data for a in archs)


@lru_cache(maxsize=1)
def _upstream_moe_archs() -> frozenset[str]:
    from assistant.config import KB_DIR  # noqa: PLC0415

    path = KB_DIR / "models.yaml"
    if not path.is_file():
        return frozenset()
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=_SAFE_LOADER) or {}  # noqa: S506 - a safe loader
    return frozenset(data.get("upstream_moe_architectures") or ())


def _int(v) -> int | None:
    return int(v) if v is not None else None


@lru_cache(maxsize=1)
def gpu_keys() -> tuple[str, ...]:
    """Keys of kb/gpus.yaml (e.g. "h100-80gb"), or () when it is not there."""
    return tuple(str(k) for k in _table("gpus.yaml"))


def gpu_memory_gib(key: str) -> float | None:
    entry = _table("gpus.yaml").get(key)
    v = _get(entry, "memory_gib", "memory_gb") if entry else None
    return float(v) if isinstance(v, (int, float)) else None


def resolve_gpu(gpu_type: str, memory_gb: int | None, keys: tuple[str, ...] | None = None) -> str | None:
    """The GPU table key for a type ("h100") and optional memory (80), e.g. "h100-80gb"."""
    table = gpu_keys() if keys is None else keys
    cands = []
    for k in table:
        toks = re.split(r"[\s_\-]+", k.lower())
        if toks and re.sub(r"^(?:nvidia|amd|rtx)", "", toks[0]) == re.sub(r"^(?:rtx)", "", gpu_type.lower()):
            mem = next((int(m.group(1)) for t in toks[1:] if (m := re.fullmatch(r"(\d+)g(?:b|ib)?", t))), None)
            cands.append((k, mem))
    if not cands:
        return None
    if memory_gb is not None:
        exact = [k for k, mem in cands if mem == memory_gb]
        if exact:
            return exact[0]
        return None
    # Type only: the largest-memory variant is what current clusters run (A100 80GB over 40GB).
    return max(cands, key=lambda c: (c[1] or 0))[0]
