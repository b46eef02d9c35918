"""Model and GPU tables, name matching, and HF config.json loading."""
from __future__ import annotations

import json

import pytest

from assistant.validator import models
from assistant.validator.models import (
    CONFIG_JSON_MAX_BYTES,
    list_gpus,
    list_models,
    load_gpu,
    load_model,
    param_counts,
)

REQUIRED_MODELS = {
    "llama-3.2-1b", "llama-3.2-3b", "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "llama-3.3-70b",
    "qwen3-0.6b", "qwen3-1.7b", "qwen3-4b", "qwen3-8b", "qwen3-14b", "qwen3-32b",
    "qwen3-30b-a3b", "qwen3-235b-a22b", "mixtral-8x7b", "mixtral-8x22b", "deepseek-v3",
    "gpt-oss-20b", "gpt-oss-120b", "moonlight-16b-a3b",
}


def test_table_has_every_required_model():
    assert REQUIRED_MODELS <= set(list_models())


@pytest.mark.parametrize("key", sorted(REQUIRED_MODELS))
def test_shape_reproduces_published_total_within_10_percent(key):
    m = load_model(key)
    assert not m.params_from_shape
    computed = param_counts(m).total / 1e9
    assert computed == pytest.approx(m.params_b, rel=0.10), (key, computed, m.params_b)


@pytest.mark.parametrize("key", sorted(k for k in REQUIRED_MODELS if load_model(k).is_moe))
def test_shape_reproduces_published_active_params(key):
    # Publishers differ on counting the input embedding as "active", hence the wider tolerance.
    m = load_model(key)
    computed = param_counts(m).active / 1e9
    assert computed == pytest.approx(m.active_params_b, rel=0.20), (key, computed, m.active_params_b)
    assert computed < 0.5 * m.params_b


def test_llama_70b_parameter_count_by_hand():
    # Independent arithmetic from the config.json values: 80 layers of GQA attention + SwiGLU MLP.
    h, inter, v, layers, kv_out = 8192, 28672, 128256, 80, 8 * 128
    attn = h * h + 2 * h * kv_out + h * h
    mlp = 3 * h * inter
    total = 2 * v * h + layers * (attn + mlp + 2 * h) + h
    assert param_counts(load_model("llama-3.1-70b")).total == total
    assert total / 1e9 == pytest.approx(70.55, abs=0.01)


def test_deepseek_v3_uses_mla_and_dense_prefix():
    m = load_model("deepseek-v3")
    assert m.is_mla and m.q_lora_rank == 1536 and m.kv_lora_rank == 512
    assert m.dense_layer_ids == (0, 1, 2) and m.num_moe_layers == 58
    assert m.num_routed_experts == 256 and m.experts_per_token == 8 and m.num_shared_experts == 1
    assert m.upstream_moe


@pytest.mark.parametrize("key", sorted(REQUIRED_MODELS))
def test_facts_are_internally_consistent(key):
    m = load_model(key)
    assert m.num_attention_heads % m.num_kv_heads == 0
    assert m.num_layers > 0 and m.hidden_size > 0 and m.vocab_size > 0
    assert m.source and m.hf_id
    if m.is_moe:
        assert 0 < m.experts_per_token <= m.num_routed_experts
        assert m.moe_intermediate_size and m.active_params_b and m.active_params_b < m.params_b
    else:
        assert m.intermediate_size and m.active_params_b is None


def test_upstream_moe_marks_only_custom_moe_classes():
    assert load_model("qwen3-30b-a3b").upstream_moe
    assert load_model("gpt-oss-20b").upstream_moe
    assert load_model("moonlight-16b-a3b").upstream_moe
    mixtral = load_model("mixtral-8x7b")
    assert mixtral.is_moe and not mixtral.upstream_moe  # AutoModel has no Mixtral implementation
    assert not load_model("llama-3.1-8b").upstream_moe


@pytest.mark.parametrize("name,key", [
    ("llama-3.1-70b", "llama-3.1-70b"),
    ("meta-llama/Llama-3.1-70B", "llama-3.1-70b"),
    ("meta-llama/Llama-3.1-70B-Instruct", "llama-3.1-70b"),
    ("Meta-Llama-3.1-70B-Instruct", "llama-3.1-70b"),
    ("llama3 70b", "llama-3.1-70b"),
    ("LLAMA 3.1 8B", "llama-3.1-8b"),
    ("Llama-3.3-70B-Instruct", "llama-3.3-70b"),
    ("qwen3-30b-a3b", "qwen3-30b-a3b"),
    ("Qwen/Qwen3-30B-A3B-Instruct-2507", "qwen3-30b-a3b"),
    ("Qwen3 0.6B", "qwen3-0.6b"),
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"),
    ("DeepSeek-V3", "deepseek-v3"),
    ("deepseek-ai/DeepSeek-V3-0324", "deepseek-v3"),
    ("openai/gpt-oss-120b", "gpt-oss-120b"),
    ("moonshotai/Moonlight-16B-A3B-Instruct", "moonlight-16b-a3b"),
])
def test_names_and_aliases_resolve(name, key):
    assert load_model(name).key == key


def test_every_alias_resolves_to_its_own_entry():
    for key in list_models():
        m = load_model(key)
        for alias in (*m.aliases, m.hf_id):
            assert load_model(alias).key == key, alias


def test_unknown_model_names_close_matches():
    with pytest.raises(ValueError) as err:
        load_model("llama 70b")
    msg = str(err.value)
    assert "llama-3.1-70b" in msg and "config.json" in msg
    with pytest.raises(ValueError, match="unknown model"):
        load_model("totally-unknown-model-xyz")
    with pytest.raises(ValueError):
        load_model("")
    with pytest.raises(ValueError):
        load_model(12)  # type: ignore[arg-type]


def test_tables_are_cached():
    assert models._model_table() is models._model_table()
    assert load_model("qwen3-8b") is load_model("Qwen/Qwen3-8B")


# ------------------------------------------------------------------------------------------ GPUs


def test_gpu_table():
    keys = set(list_gpus())
    assert {"a100-40gb", "a100-80gb", "h100-80gb", "h200-141gb", "b200-180gb", "l40s-48gb", "rtx-4090-24gb"} <= keys
    for k in keys:
        g = load_gpu(k)
        assert 0 < g.memory_gib <= g.memory_gb * 1.0 + 0.01
        assert g.nvlink_domain >= 1 and g.gpus_per_node >= 1 and g.source


@pytest.mark.parametrize("name,key", [
    ("H100", "h100-80gb"), ("h100 80G", "h100-80gb"), ("NVIDIA H100 80GB HBM3", "h100-80gb"),
    ("H800", "h800-80gb"), ("a100", "a100-80gb"), ("A100-40GB", "a100-40gb"), ("H200", "h200-141gb"),
    ("B200-192GB", "b200-180gb"), ("4090", "rtx-4090-24gb"), ("L40S", "l40s-48gb"),
])
def test_gpu_aliases(name, key):
    assert load_gpu(name).key == key


def test_bare_memory_size_is_ambiguous():
    with pytest.raises(ValueError) as err:
        load_gpu("80G")
    msg = str(err.value)
    assert "a100-80gb" in msg and "h100-80gb" in msg


def test_unknown_gpu():
    with pytest.raises(ValueError, match="h100-80gb"):
        load_gpu("H1000")
    with pytest.raises(ValueError):
        load_gpu("")


# ------------------------------------------------------------------------------------------ config.json

LLAMA_8B_CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
    "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32,
    "num_key_value_heads": 8, "vocab_size": 128256, "tie_word_embeddings": False,
    "max_position_embeddings": 131072, "torch_dtype": "bfloat16", "rope_scaling": {"factor": 8.0},
}


def _write(tmp_path, obj, name="config.json"):
    p = tmp_path / name
    p.write_text(json.dumps(obj) if not isinstance(obj, str) else obj, encoding="utf-8")
    return p


def test_config_json_matches_the_table(tmp_path):
    p = _write(tmp_path, LLAMA_8B_CONFIG)
    m = load_model(str(p))
    table = load_model("llama-3.1-8b")
    assert m.params_from_shape
    for f in ("num_layers", "hidden_size", "num_attention_heads", "num_kv_heads", "head_dim",
              "intermediate_size", "vocab_size", "tied_embeddings"):
        assert getattr(m, f) == getattr(table, f), f
    assert m.params_b == pytest.approx(8.03, abs=0.01)
    assert load_model(tmp_path).num_layers == 32  # a directory holding config.json


def test_config_json_moe_fields(tmp_path):
    cfg = {
        "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 2048,
        "intermediate_size": 6144, "moe_intermediate_size": 768, "num_attention_heads": 32,
        "num_key_value_heads": 4, "head_dim": 128, "num_hidden_layers": 48, "num_experts": 128,
        "num_experts_per_tok": 8, "vocab_size": 151936, "mlp_only_layers": [], "decoder_sparse_step": 1,
    }
    m = load_model(str(_write(tmp_path, cfg)))
    assert m.is_moe and m.upstream_moe and m.num_routed_experts == 128 and m.experts_per_token == 8
    assert m.params_b == pytest.approx(30.5, rel=0.02)
    assert m.active_params_b == pytest.approx(3.3, rel=0.05)


def test_config_json_mixtral_style_and_nested_text_config(tmp_path):
    mixtral = {"architectures": ["MixtralForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
               "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32,
               "num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 32000}
    m = load_model(str(_write(tmp_path, mixtral, "mixtral.json")))
    assert m.moe_intermediate_size == 14336 and m.intermediate_size is None and not m.upstream_moe
    vlm = {"architectures": ["SomeVLM"], "text_config": {k: v for k, v in LLAMA_8B_CONFIG.items()}}
    assert load_model(str(_write(tmp_path, vlm, "vlm.json"))).num_layers == 32


@pytest.mark.parametrize("content,match", [
    ("{not json", "not valid JSON"),
    ("[1, 2, 3]", "JSON object"),
    ('{"hidden_size": 4096}', "num_hidden_layers"),
    (json.dumps({**LLAMA_8B_CONFIG, "num_hidden_layers": -3}), "out of range"),
    (json.dumps({**LLAMA_8B_CONFIG, "hidden_size": True}), "integer"),
    (json.dumps({**LLAMA_8B_CONFIG, "num_attention_heads": "32"}), "integer"),
    (json.dumps({**LLAMA_8B_CONFIG, "num_experts": 4, "num_experts_per_tok": 8}), "experts per token"),
    ("\xff\xfe", "not valid JSON"),
])
def test_malformed_config_json(tmp_path, content, match):
    p = tmp_path / "config.json"
    p.write_bytes(content.encode("latin-1") if content == "\xff\xfe" else content.encode("utf-8"))
    with pytest.raises(ValueError, match=match):
        load_model(str(p))


def test_oversized_config_json(tmp_path):
    p = tmp_path / "config.json"
    big = dict(LLAMA_8B_CONFIG, padding="x" * (CONFIG_JSON_MAX_BYTES + 10))
    p.write_text(json.dumps(big), encoding="utf-8")
    with pytest.raises(ValueError, match="limit"):
        load_model(str(p))


def test_missing_config_path(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_model(str(tmp_path / "nope" / "config.json"))
