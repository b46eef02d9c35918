"""Model and GPU names from the kb tables, as users type them."""
from __future__ import annotations

import pytest

from assistant.understand import catalog


@pytest.mark.parametrize("text,key", [
    ("Llama 3.1 70B", "llama-3.1-70b"),
    ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),
    ("llama3.2-1b", "llama-3.2-1b"),
    ("llama 3 8b", "llama-3.1-8b"),
    ("llama 70b", "llama-3.3-70b"),  # no version: the newest 70B in the table
    ("Qwen3-30B-A3B", "qwen3-30b-a3b"),
    ("qwen3 30b", "qwen3-30b-a3b"),
    ("qwen3 235b", "qwen3-235b-a22b"),
    ("Qwen3 32B", "qwen3-32b"),
    ("DeepSeek V3", "deepseek-v3"),
    ("dsv3", "deepseek-v3"),
    ("Mixtral-8x7B-Instruct", "mixtral-8x7b"),
    ("gpt oss 120b", "gpt-oss-120b"),
    ("训练 Qwen3-235B-A22B 模型", "qwen3-235b-a22b"),
])
def test_find_model(text, key):
    found = catalog.find_model(text)
    assert found is not None and found[0] == key


@pytest.mark.parametrize("text", ["a 70B model", "llama", "qwen3 999b", "8 GPUs", "deepseek"])
def test_no_model(text):
    assert catalog.find_model(text) is None


def test_model_facts_from_the_table():
    info = catalog.model_info("qwen3-30b-a3b")
    assert info.is_moe and info.num_experts == 128 and info.num_layers == 48 and info.ep_supported
    dense = catalog.model_info("llama-3.1-70b")
    assert not dense.is_moe and dense.num_heads == 64 and dense.num_kv_heads == 8 and dense.ep_supported is False
    mixtral = catalog.model_info("mixtral-8x7b")
    assert mixtral.is_moe and mixtral.ep_supported is False  # not one of upstream's MoE classes
    assert catalog.model_info("no-such-model") is None


@pytest.mark.parametrize("gpu,mem,key", [
    ("h100", None, "h100-80gb"), ("h100", 80, "h100-80gb"), ("a100", None, "a100-80gb"), ("a100", 40, "a100-40gb"),
    ("h100", 94, None), ("tpu", None, None), ("rtx4090", None, "rtx-4090-24gb"), ("rtx4090", 24, "rtx-4090-24gb"),
    ("l40", None, None), ("l40s", 48, "l40s-48gb"),
])
def test_resolve_gpu(gpu, mem, key):
    assert catalog.resolve_gpu(gpu, mem) == key


def test_name_pattern_tolerates_separators():
    p = catalog.name_pattern("llama-3.1-70b")
    for text in ("Llama 3.1 70B", "llama3.1-70b", "LLAMA_3_1_70B", "llama-3.1 70 b"):
        assert p.full.search(text), text
    assert not p.full.search("llama 3.1 700b")


def _every_pattern_searched(text, pats):
    """find_model's rule with every name's pattern searched: what skipping the absent names must equal."""
    from assistant.understand.catalog import _family_size_pattern

    best = None
    for key, p in pats:
        m = p.full.search(text)
        if m and (best is None or (m.start(), -(m.end() - m.start())) < best[:2]):
            best = (m.start(), -(m.end() - m.start()), key)
    if best:
        return best[2], best[0]
    by_family = {}
    for key, p in pats:
        if p.size:
            by_family.setdefault((p.family, p.size), []).append(key)
    hits = [(m.start(), sorted(set(keys))[-1]) for (f, size), keys in by_family.items()
            if (m := _family_size_pattern(f, size).search(text))]
    return (min(hits)[1], min(hits)[0]) if hits else None


def test_find_model_skipping_absent_names_finds_what_searching_all_finds():
    from pathlib import Path

    import yaml

    from assistant.understand.catalog import find_model, model_patterns
    from assistant.validator.models import list_models, lookup_model

    pats = model_patterns()
    names = [n for k in list_models() for n in (k, lookup_model(k).name, *lookup_model(k).aliases)]
    texts = [f"train {n} on 8 GPUs" for n in names] + [n.upper().replace("-", " ") for n in names]
    texts += ["LLaMA 70b", "qwen 3 235B", "deep seek v3", "mixtral 8 x 7b", "我用 DeepSeek-V3", "70b", "tp 4"]
    root = Path(__file__).resolve().parents[3] / "evals" / "cases"
    for path in sorted(root.glob("t9_*.yaml")):
        texts += [str(c.get("question", "")) for c in yaml.safe_load(path.read_text(encoding="utf-8")).get("cases") or []]
    assert len(texts) > 300
    found = [find_model(t) for t in texts]
    assert found == [_every_pattern_searched(t, pats) for t in texts]
    assert sum(f is not None for f in found) > 200
