"""Model and GPU facts: the bundled tables (`kb/models.yaml`, `kb/gpus.yaml`) and HF `config.json` files.

`load_model` accepts a table key, an alias (HF id or short name, matched loosely), or a path to a
`config.json` (or a directory holding one). `load_gpu` accepts a key or alias. Unknown names raise
`ValueError` naming the closest matches. `param_counts` turns a model's shape into parameter counts;
the memory estimate and the planner size from those.
"""
from __future__ import annotations

import difflib
import functools
import json
import math
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from assistant.config import KB_DIR
from assistant.datafile import SAFE_LOADER

MODELS_FILE = KB_DIR / "models.yaml"
GPUS_FILE = KB_DIR / "gpus.yaml"

# A real config.json is a few KB (large VLM or quantization blocks stay well under 1 MiB).
CONFIG_JSON_MAX_BYTES = 1 << 20
_TABLE_MAX_BYTES = 1 << 20
# Upper bounds on shape fields: far above any real model, low enough to keep arithmetic sane.
_MAX_DIM = 1 << 24
_MAX_LAYERS = 100_000


@dataclass(frozen=True)
class ModelFacts:
    key: str
    name: str
    num_layers: int
    hidden_size: int
    num_attention_heads: int
    num_kv_heads: int
    head_dim: int
    vocab_size: int
    params_b: float  # published total (table) or computed from the shape (config.json)
    active_params_b: float | None = None  # MoE: parameters used per token
    intermediate_size: int | None = None  # dense MLP width (None when no layer is dense)
    num_routed_experts: int = 0
    experts_per_token: int = 0
    moe_intermediate_size: int | None = None  # one routed expert's width
    shared_expert_width: int = 0  # summed width of the shared experts of one MoE layer
    num_shared_experts: int = 0
    dense_layer_ids: tuple[int, ...] = ()  # MoE models: layers with a dense MLP instead of experts
    tied_embeddings: bool = False
    max_position_embeddings: int | None = None
    q_lora_rank: int | None = None  # MLA (DeepSeek-V3 family); None = plain q projection
    kv_lora_rank: int | None = None  # MLA; None = not MLA
    qk_nope_head_dim: int | None = None
    qk_rope_head_dim: int | None = None
    v_head_dim: int | None = None
    attention_bias: bool = False
    gated_mlp: bool = True  # SwiGLU-style gate/up/down (3 matrices) vs plain up/down
    architecture: str | None = None
    model_type: str | None = None
    upstream_moe: bool = False  # AutoModel's class is a MoEFSDPSyncMixin (EP, MoE parallelizer)
    pp_plan: bool | None = None  # the class declares `_pp_plan`; None = not known
    hf_id: str | None = None
    aliases: tuple[str, ...] = ()
    source: str = ""
    params_from_shape: bool = False

    @property
    def is_moe(self) -> bool:
        return self.num_routed_experts > 0

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank is not None

    @property
    def num_moe_layers(self) -> int:
        return self.num_layers - len(self.dense_layer_ids) if self.is_moe else 0


@dataclass(frozen=True)
class GpuFacts:
    key: str
    name: str
    memory_gib: float  # what a process sees (nvidia-smi total), compared against the estimate
    memory_gb: float  # as marketed
    nvlink_domain: int  # GPUs per NVLink/NVSwitch domain in a typical server (1 = PCIe only)
    gpus_per_node: int
    nvlink_gbps: float
    aliases: tuple[str, ...] = ()
    source: str = ""


@dataclass(frozen=True)
class ParamCounts:
    """Parameter counts (elements) by part, from a model's shape."""

    embedding: int
    lm_head: int  # 0 when tied to the embedding
    final_norm: int
    attention: int  # one layer: attention projections plus the layer's two norms
    dense_mlp: int  # one dense MLP
    routed_expert: int  # one routed expert
    shared_experts: int  # all shared experts of one MoE layer
    router: int  # one MoE layer's router
    num_layers: int
    num_dense_layers: int
    num_moe_layers: int
    num_routed_experts: int
    experts_per_token: int

    def layer(self, moe: bool) -> int:
        if moe:
            return self.attention + self.shared_experts + self.router + self.num_routed_experts * self.routed_expert
        return self.attention + self.dense_mlp

    @property
    def total(self) -> int:
        return (
            self.embedding + self.lm_head + self.final_norm
            + self.num_dense_layers * self.layer(False) + self.num_moe_layers * self.layer(True)
        )

    @property
    def active(self) -> int:
        moe_layer = self.attention + self.shared_experts + self.router + self.experts_per_token * self.routed_expert
        return (
            self.embedding + self.lm_head + self.final_norm
            + self.num_dense_layers * self.layer(False) + self.num_moe_layers * moe_layer
        )


def param_counts(m: ModelFacts) -> ParamCounts:
    h = m.hidden_size
    if m.is_mla:
        qk = (m.qk_nope_head_dim or 0) + (m.qk_rope_head_dim or 0)
        v = m.v_head_dim or m.head_dim
        if m.q_lora_rank:
            q = h * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * m.num_attention_heads * qk
        else:
            q = h * m.num_attention_heads * qk
        kv = h * (m.kv_lora_rank + (m.qk_rope_head_dim or 0)) + m.kv_lora_rank
        kv += m.kv_lora_rank * m.num_attention_heads * ((m.qk_nope_head_dim or 0) + v)
        attn = q + kv + m.num_attention_heads * v * h
    else:
        q_out = m.num_attention_heads * m.head_dim
        kv_out = m.num_kv_heads * m.head_dim
        attn = h * (q_out + 2 * kv_out) + q_out * h
        if m.attention_bias:
            attn += q_out + 2 * kv_out + h
    attn += 2 * h  # input and post-attention norms
    mats = 3 if m.gated_mlp else 2
    dense_mlp = mats * h * (m.intermediate_size or 4 * h)
    if m.is_moe:
        expert = mats * h * (m.moe_intermediate_size or m.intermediate_size or 4 * h)
        shared = mats * h * m.shared_expert_width
        router = h * m.num_routed_experts
        n_dense = len(m.dense_layer_ids)
    else:
        expert = shared = router = 0
        n_dense = m.num_layers
    embedding = m.vocab_size * h
    return ParamCounts(
        embedding=embedding,
        lm_head=0 if m.tied_embeddings else embedding,
        final_norm=h,
        attention=attn,
        dense_mlp=dense_mlp,
        routed_expert=expert,
        shared_experts=shared,
        router=router,
        num_layers=m.num_layers,
        num_dense_layers=n_dense,
        num_moe_layers=m.num_layers - n_dense,
        num_routed_experts=m.num_routed_experts,
        experts_per_token=m.experts_per_token,
    )


# ------------------------------------------------------------------------------------------ names

# Trailing tokens that do not change the architecture: Llama-3.1-8B-Instruct sizes like Llama-3.1-8B.
_SUFFIX_TOKEN = re.compile(r"^(instruct|chat|base|it|hf|bf16|fp8|v\d+\.\d+|\d{4})$")
_GPU_NOISE = {"nvidia", "tesla", "geforce", "hbm2", "hbm2e", "hbm3", "hbm3e", "gddr6", "gddr6x"}
_MEMORY_ONLY = re.compile(r"^(\d+)gb?$")


def normalize_model_name(name: str) -> str:
    """Loose form used for matching: no org prefix, case, separators or instruct/version suffix."""
    s = name.strip().lower().rsplit("/", 1)[-1]
    tokens = [t for t in re.split(r"[^a-z0-9.]+", s) if t]
    while len(tokens) > 1 and _SUFFIX_TOKEN.match(tokens[-1]):
        tokens.pop()
    if len(tokens) > 1 and tokens[0] == "meta":  # Meta-Llama-3.1-8B
        tokens = tokens[1:]
    return "".join(tokens)


def normalize_gpu_name(name: str) -> str:
    tokens = [t for t in re.split(r"[^a-z0-9]+", name.strip().lower()) if t and t not in _GPU_NOISE]
    joined = "".join(tokens)
    return re.sub(r"(\d+)g(?:b)?$", r"\1gb", joined)


def _close(query: str, index: dict[str, str], limit: int = 5) -> list[str]:
    keys: list[str] = []
    candidates = difflib.get_close_matches(query, list(index), n=limit * 3, cutoff=0.5)
    candidates += [n for n in index if query and (query in n or n in query)]
    for n in candidates:
        if index[n] not in keys:
            keys.append(index[n])
    return keys[:limit]


# ------------------------------------------------------------------------------------------ tables


def _read_yaml(path: Path) -> Any:
    raw = path.read_bytes()
    if len(raw) > _TABLE_MAX_BYTES:
        raise ValueError(f"{path.name} is larger than {_TABLE_MAX_BYTES} bytes")
    return yaml.load(raw, Loader=SAFE_LOADER)  # noqa: S506 - a safe loader


@dataclass(frozen=True)
class _ModelTable:
    models: dict[str, ModelFacts]
    index: dict[str, str]  # normalized name -> key
    moe_archs: frozenset[str]
    non_gated: frozenset[str]


@dataclass(frozen=True)
class _GpuTable:
    gpus: dict[str, GpuFacts]
    index: dict[str, str]


def _build_index(entries: dict[str, tuple[str, ...]], norm) -> dict[str, str]:
    index: dict[str, str] = {}
    for key, names in entries.items():
        for n in (key, *names):
            k = norm(str(n))
            if not k:
                continue
            if index.get(k, key) != key:
                raise ValueError(f"name {n!r} matches both {index[k]} and {key}")
            index[k] = key
    return index


@functools.cache
def _model_table() -> _ModelTable:
    data = _read_yaml(MODELS_FILE) or {}
    moe_archs = frozenset(data.get("upstream_moe_architectures") or ())
    non_gated = frozenset(data.get("non_gated_model_types") or ())
    models: dict[str, ModelFacts] = {}
    for key, entry in (data.get("models") or {}).items():
        models[key] = _facts_from_config(
            entry, key=key, moe_archs=moe_archs, non_gated=non_gated, origin=f"kb/models.yaml:{key}", table=True
        )
    index = _build_index({k: (*m.aliases, *((m.hf_id,) if m.hf_id else ())) for k, m in models.items()},
                         normalize_model_name)
    return _ModelTable(models, index, moe_archs, non_gated)


@functools.cache
def _gpu_table() -> _GpuTable:
    data = _read_yaml(GPUS_FILE) or {}
    gpus: dict[str, GpuFacts] = {}
    for key, e in (data.get("gpus") or {}).items():
        gpus[key] = GpuFacts(
            key=key,
            name=str(e["name"]),
            memory_gib=float(e["memory_gib"]),
            memory_gb=float(e["memory_gb"]),
            nvlink_domain=int(e["nvlink_domain"]),
            gpus_per_node=int(e["gpus_per_node"]),
            nvlink_gbps=float(e.get("nvlink_gbps") or 0),
            aliases=tuple(str(a) for a in e.get("aliases") or ()),
            source=str(e.get("source") or ""),
        )
    index = _build_index({k: g.aliases for k, g in gpus.items()}, normalize_gpu_name)
    return _GpuTable(gpus, index)


def list_models() -> list[str]:
    return list(_model_table().models)


def list_gpus() -> list[str]:
    return list(_gpu_table().gpus)


def model_aliases() -> dict[str, str]:
    """Every accepted model spelling (normalized form) -> table key."""
    return dict(_model_table().index)


def gpu_aliases() -> dict[str, str]:
    return dict(_gpu_table().index)


def upstream_moe_architectures() -> frozenset[str]:
    return _model_table().moe_archs


def lookup_model(name: str) -> ModelFacts | None:
    """The table entry for a key or alias, or None (no file access, no error)."""
    table = _model_table()
    key = table.index.get(normalize_model_name(name))
    return table.models[key] if key else None


def load_model(name_or_path: str | Path) -> ModelFacts:
    """A model by table key, alias, or path to an HF config.json (or a directory holding one)."""
    if not isinstance(name_or_path, (str, Path)):
        raise ValueError(f"model must be a name or a path, got {type(name_or_path).__name__}")
    text = str(name_or_path).strip()
    if not text:
        raise ValueError("model name is empty")
    if len(text) > 4096:
        raise ValueError("model name is longer than 4096 characters")
    path = Path(text).expanduser()
    looks_like_path = isinstance(name_or_path, Path) or text.endswith(".json") or text.startswith((".", "~", "/"))
    if looks_like_path or path.is_file() or (path.is_dir() and (path / "config.json").is_file()):
        return load_model_config(path)
    found = lookup_model(text)
    if found is not None:
        return found
    table = _model_table()
    close = _close(normalize_model_name(text), table.index)
    hint = f"; closest: {', '.join(close)}" if close else ""
    raise ValueError(
        f"unknown model {text!r}{hint}. Known models: {', '.join(table.models)}; "
        "or pass the path of a Hugging Face config.json"
    )


def load_gpu(name: str) -> GpuFacts:
    if not isinstance(name, str) or not name.strip():
        raise ValueError("GPU name must be a non-empty string")
    if len(name) > 200:
        raise ValueError("GPU name is longer than 200 characters")
    table = _gpu_table()
    norm = normalize_gpu_name(name)
    key = table.index.get(norm)
    if key:
        return table.gpus[key]
    only_memory = _MEMORY_ONLY.match(norm)
    if only_memory:
        size = float(only_memory.group(1))
        same = [k for k, g in table.gpus.items() if g.memory_gb == size]
        if same:
            raise ValueError(f"GPU {name!r} names only a memory size; say which GPU: {', '.join(same)}")
    close = _close(norm, table.index)
    hint = f"; closest: {', '.join(close)}" if close else ""
    raise ValueError(f"unknown GPU {name!r}{hint}. Known GPUs: {', '.join(table.gpus)}")


# ------------------------------------------------------------------------------------------ config.json


def load_model_config(path: str | Path) -> ModelFacts:
    """ModelFacts from a Hugging Face config.json (size-capped; shape fields validated)."""
    p = Path(path).expanduser()
    if p.is_dir():
        p = p / "config.json"
    if not p.is_file():
        raise ValueError(f"model config {str(p)!r} does not exist")
    size = p.stat().st_size
    if size > CONFIG_JSON_MAX_BYTES:
        raise ValueError(f"model config {p.name} is {size} bytes; the limit is {CONFIG_JSON_MAX_BYTES} bytes")
    with p.open("rb") as fh:
        raw = fh.read(CONFIG_JSON_MAX_BYTES + 1)
    if len(raw) > CONFIG_JSON_MAX_BYTES:
        raise ValueError(f"model config {p.name} is larger than {CONFIG_JSON_MAX_BYTES} bytes")
    try:
        cfg = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"model config {p.name} is not valid JSON: {exc}") from None
    except RecursionError:
        raise ValueError(f"model config {p.name} is nested too deeply") from None
    if not isinstance(cfg, dict):
        raise ValueError(f"model config {p.name} must be a JSON object, got {type(cfg).__name__}")
    table = _model_table()
    return _facts_from_config(
        cfg, key=p.parent.name or p.stem, moe_archs=table.moe_archs, non_gated=table.non_gated,
        origin=str(p), table=False,
    )


def model_from_config_dict(cfg: dict, *, key: str = "custom") -> ModelFacts:
    """ModelFacts from an already-parsed config.json mapping."""
    if not isinstance(cfg, dict):
        raise ValueError(f"model config must be a mapping, got {type(cfg).__name__}")
    table = _model_table()
    return _facts_from_config(
        cfg, key=key, moe_archs=table.moe_archs, non_gated=table.non_gated, origin=key, table=False
    )


def _first(cfg: dict, names: tuple[str, ...]) -> Any:
    for n in names:
        if cfg.get(n) is not None:
            return cfg[n]
    return None


def _int(cfg: dict, names: tuple[str, ...], origin: str, *, required: bool = False, upper: int = _MAX_DIM,
         allow_zero: bool = False) -> int | None:
    v = _first(cfg, names)
    if v is None:
        if required:
            raise ValueError(f"model config {origin} has no {' / '.join(names)}")
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
        raise ValueError(f"model config {origin}: {names[0]} must be an integer, got {v!r}")
    v = int(v)
    if v < (0 if allow_zero else 1) or v > upper:
        raise ValueError(f"model config {origin}: {names[0]} = {v} is out of range")
    return v


def _facts_from_config(cfg: dict, *, key: str, moe_archs: frozenset[str], non_gated: frozenset[str],
                       origin: str, table: bool) -> ModelFacts:
    text_cfg = cfg.get("text_config")
    if _first(cfg, ("num_hidden_layers", "n_layer", "num_layers", "n_layers")) is None and isinstance(text_cfg, dict):
        # VLM configs nest the language model; sizing concerns the decoder.
        cfg = {**cfg, **text_cfg}
    layers = _int(cfg, ("num_hidden_layers", "n_layer", "num_layers", "n_layers"), origin, required=True,
                  upper=_MAX_LAYERS)
    hidden = _int(cfg, ("hidden_size", "n_embd", "d_model"), origin, required=True)
    heads = _int(cfg, ("num_attention_heads", "n_head", "n_heads", "num_heads"), origin, required=True)
    kv = _int(cfg, ("num_key_value_heads", "n_kv_heads", "num_kv_heads", "multi_query_group_num"), origin)
    if kv is None:
        kv = 1 if cfg.get("multi_query") is True else heads
    head_dim = _int(cfg, ("head_dim",), origin) or max(1, hidden // heads)
    vocab = _int(cfg, ("vocab_size", "padded_vocab_size"), origin, required=True, upper=1 << 27)
    inter = _int(cfg, ("intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim"), origin)
    experts = _int(cfg, ("n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts", "n_experts"),
                   origin, allow_zero=True) or 0
    top_k = _int(cfg, ("num_experts_per_tok", "experts_per_token", "num_experts_per_token", "moe_topk"), origin,
                 allow_zero=True) or 0
    moe_inter = _int(cfg, ("moe_intermediate_size", "expert_intermediate_size", "moe_ffn_hidden_size"), origin)
    n_shared = _int(cfg, ("n_shared_experts", "num_shared_experts"), origin, allow_zero=True) or 0
    shared_width = _int(cfg, ("shared_expert_intermediate_size",), origin, allow_zero=True)
    if experts and top_k == 0:
        top_k = 1
    if experts and top_k > experts:
        raise ValueError(f"model config {origin}: {top_k} experts per token but only {experts} experts")
    dense_ids: tuple[int, ...] = ()
    if experts:
        if moe_inter is None:
            # Mixtral and GPT-OSS give the per-expert width as intermediate_size; no dense MLP layers.
            moe_inter, dense_width = inter, None
        else:
            dense_width = inter
        inter = dense_width
        if shared_width is None:
            shared_width = n_shared * (moe_inter or 0)
        elif shared_width and not n_shared:
            n_shared = 1
        first_dense = _int(cfg, ("first_k_dense_replace",), origin, allow_zero=True, upper=layers) or 0
        mlp_only = cfg.get("mlp_only_layers") or []
        if not isinstance(mlp_only, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in mlp_only):
            raise ValueError(f"model config {origin}: mlp_only_layers must be a list of layer numbers")
        step = _int(cfg, ("decoder_sparse_step",), origin, upper=layers) or 1
        dense_set = set(range(first_dense)) | {i for i in mlp_only if 0 <= i < layers}
        dense_set |= {i for i in range(layers) if (i + 1) % step != 0}
        dense_ids = tuple(sorted(dense_set))
        if dense_ids and inter is None:
            inter = moe_inter
    kv_lora = _int(cfg, ("kv_lora_rank",), origin)
    arch_list = cfg.get("architectures")
    arch = arch_list[0] if isinstance(arch_list, list) and arch_list and isinstance(arch_list[0], str) else None
    model_type = cfg.get("model_type") if isinstance(cfg.get("model_type"), str) else None
    tied = cfg.get("tie_word_embeddings")
    facts = ModelFacts(
        key=key,
        name=str(cfg.get("name") or key) if table else (arch or key),
        num_layers=layers,
        hidden_size=hidden,
        num_attention_heads=heads,
        num_kv_heads=kv,
        head_dim=head_dim,
        vocab_size=vocab,
        params_b=0.0,
        intermediate_size=inter,
        num_routed_experts=experts,
        experts_per_token=top_k if experts else 0,
        moe_intermediate_size=moe_inter if experts else None,
        shared_expert_width=(shared_width or 0) if experts else 0,
        num_shared_experts=n_shared if experts else 0,
        dense_layer_ids=dense_ids,
        tied_embeddings=tied is True,
        max_position_embeddings=_int(cfg, ("max_position_embeddings", "n_positions", "max_sequence_length"),
                                     origin, upper=1 << 30),
        q_lora_rank=_int(cfg, ("q_lora_rank",), origin) if kv_lora else None,
        kv_lora_rank=kv_lora,
        qk_nope_head_dim=_int(cfg, ("qk_nope_head_dim",), origin) if kv_lora else None,
        qk_rope_head_dim=_int(cfg, ("qk_rope_head_dim",), origin, allow_zero=True) if kv_lora else None,
        v_head_dim=_int(cfg, ("v_head_dim",), origin) if kv_lora else None,
        attention_bias=cfg.get("attention_bias") is True,
        gated_mlp=model_type not in non_gated,
        architecture=arch,
        model_type=model_type,
        upstream_moe=bool(experts) and arch in moe_archs,
        pp_plan=cfg.get("pp_plan") if table and isinstance(cfg.get("pp_plan"), bool) else None,
        hf_id=str(cfg["hf_id"]) if table and cfg.get("hf_id") else None,
        aliases=tuple(str(a) for a in cfg.get("aliases") or ()) if table else (),
        source=str(cfg.get("source") or "") if table else f"config.json at {origin}",
        params_from_shape=not table,
    )
    counts = param_counts(facts)
    stated_total = cfg.get("params_b") if table else None
    stated_active = cfg.get("active_params_b") if table else None
    total_b = float(stated_total) if isinstance(stated_total, (int, float)) else counts.total / 1e9
    if experts:
        active_b = float(stated_active) if isinstance(stated_active, (int, float)) else counts.active / 1e9
    else:
        active_b = None
    if not math.isfinite(total_b) or total_b <= 0:
        raise ValueError(f"model config {origin}: parameter count is not positive")
    return replace(facts, params_b=round(total_b, 3), active_params_b=None if active_b is None else round(active_b, 3))
