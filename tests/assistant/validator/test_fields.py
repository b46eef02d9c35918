"""The field reference: internally consistent, the validator's lists derived from it, and (where
MESHWISE_UPSTREAM_SRC names a checkout) equal to the upstream dataclasses, read with `ast`."""
from __future__ import annotations

import ast
import importlib.util
import os
import re
from pathlib import Path

import pytest

from assistant.validator import rules
from assistant.validator.fields import CANONICAL_STRATEGIES, field_table, load_table

T = field_table()
STRATEGY_DATACLASSES = ("FSDP2Config", "MegatronFSDPConfig", "DDPConfig")
_CJK = re.compile(r"[\u4e00-\u9fff]")


# ---- internal consistency -------------------------------------------------------------------------

def test_every_row_is_complete_and_bilingual():
    for r in T.refs:
        assert r.meaning_en.strip() and r.meaning_zh.strip(), r.path
        assert _CJK.search(r.meaning_zh), f"{r.path}: zh meaning has no Chinese"
        assert not _CJK.search(r.meaning_en), f"{r.path}: en meaning has Chinese"
        assert bool(r.note_en) == bool(r.note_zh), f"{r.path}: note in one language only"
        assert r.strategies and set(r.strategies) <= set(CANONICAL_STRATEGIES), r.path
        assert r.section in T.sections, r.path


def test_identifiers_stay_in_english_in_the_chinese_text():
    code = re.compile(r"`([^`]+)`")
    for r in T.refs:
        for en, zh in ((r.meaning_en, r.meaning_zh), (r.note_en, r.note_zh)):
            assert sorted(set(code.findall(en))) == sorted(set(code.findall(zh))), r.path


def test_default_is_an_allowed_value():
    for r in T.refs:
        if r.allowed:
            assert r.default in r.allowed, r.path


def test_strategies_match_the_declaring_dataclasses():
    canonical = T.canonical_strategy()
    for r in T.refs:
        declared = [canonical[d] for d in r.dataclasses if d in canonical]
        if r.section == "distributed" and declared:
            assert sorted(r.strategies) == sorted(declared), r.path


def test_strategy_names_and_aliases():
    assert T.strategy_map() == {"fsdp2": "FSDP2Config", "megatron_fsdp": "MegatronFSDPConfig",
                                "megatron-fsdp": "MegatronFSDPConfig", "mfsdp": "MegatronFSDPConfig",
                                "ddp": "DDPConfig"}
    assert T.get("mfsdp") == T.get("megatron-fsdp") == T.get("megatron_fsdp")
    strategy = T.get("strategy")[0]
    assert strategy.default == "fsdp2" and set(strategy.allowed) == set(CANONICAL_STRATEGIES)


def test_duplicate_path_is_rejected(tmp_path):
    text = Path("assistant/validator/fields.yaml").read_text(encoding="utf-8")
    row = text[text.index("  - key: tp_size"):text.index("  - key: pp_size")]
    bad = tmp_path / "fields.yaml"
    bad.write_text(text + row, encoding="utf-8")
    with pytest.raises(ValueError, match="distributed.tp_size is listed twice"):
        load_table(bad)


# ---- the validator reads its lists from the table ---------------------------------------------

def test_validator_lists_are_derived_from_the_table():
    for dc in STRATEGY_DATACLASSES:
        assert rules.STRATEGY_FIELDS[dc] == frozenset(T.dataclass_fields(dc))
    assert rules.PIPELINE_FIELDS == frozenset(T.dataclass_fields("PipelineConfig"))
    assert rules.MOE_FIELDS == frozenset(T.dataclass_fields("MoEParallelizerConfig"))
    assert rules.MP_FIELDS == {"param_dtype", "reduce_dtype", "output_dtype", "cast_forward_inputs"}
    assert rules.STRATEGIES == T.strategy_map()
    assert dict(rules.SIZE_DEFAULTS) == {"tp_size": 1, "pp_size": 1, "cp_size": 1, "ep_size": 1,
                                         "dp_size": None, "dp_replicate_size": None}
    assert rules.SS_DEFAULTS == {"global_batch_size": 32, "local_batch_size": 1}
    assert rules.PIPELINE_DEFAULT_SCHEDULE == "1f1b" and rules.PP_MICROBATCH_DEFAULT == 1
    assert rules.AC_SELECTIVE_STRATEGIES == {"fsdp2", "ddp"}
    assert rules.AC_SCOPES == {"all", "language", "vision", "audio", "multimodal"}


def test_the_schema_files_activation_checkpointing_lists_agree_with_the_table():
    # kept in upstream_schema.yaml for a reader on another branch; the field reference is the source
    from assistant.datafile import read_yaml

    schema = read_yaml(Path("assistant/validator/upstream_schema.yaml"))
    assert frozenset(schema["ac_true"]) == rules.AC_TRUE and frozenset(schema["ac_false"]) == rules.AC_FALSE
    assert frozenset(schema["ac_selective_strategies"]) == rules.AC_SELECTIVE_STRATEGIES


def test_the_schema_file_no_longer_lists_fields():
    schema = Path("assistant/validator/upstream_schema.yaml").read_text(encoding="utf-8")
    for gone in ("strategy_fields:", "pipeline_fields:", "moe_fields:", "mp_policy_fields:", "size_defaults:"):
        assert gone not in schema


# ---- lookups --------------------------------------------------------------------------------------

def paths(refs):
    return [r.path for r in refs]


def test_get_by_key_alias_and_dotted_path():
    assert paths(T.get("reshard_after_forward")) == ["distributed.reshard_after_forward",
                                                    "distributed.moe.reshard_after_forward"]
    assert paths(T.get("moe.reshard_after_forward")) == ["distributed.moe.reshard_after_forward"]
    assert paths(T.get("distributed.moe.mp_policy")) == ["distributed.moe.mp_policy"]
    assert paths(T.get("`pp_size`")) == ["distributed.pp_size"]
    assert T.get("no_such_key") == []


def test_a_strategys_option_named_under_the_strategy_is_found_flat_under_distributed():
    """`megatron_fsdp.overlap_grad_reduce` is how users (and models) name it; upstream reads it from
    `distributed:` into MegatronFSDPConfig. Another strategy's prefix finds nothing."""
    assert paths(T.get("megatron_fsdp.overlap_grad_reduce")) == ["distributed.overlap_grad_reduce"]
    assert paths(T.get("distributed.megatron_fsdp.zero_dp_strategy")) == ["distributed.zero_dp_strategy"]
    assert paths(T.get("ddp.find_unused_parameters")) == ["distributed.find_unused_parameters"]
    assert T.get("fsdp2.overlap_grad_reduce") == []


def test_mentioned_narrows_to_the_block_named():
    got = paths(T.mentioned("What does `reshard_after_forward` default to in `moe:`?"))
    assert got[0] == "distributed.moe.reshard_after_forward"
    assert "distributed.reshard_after_forward" not in got
    assert "distributed.moe" in got
    both = paths(T.mentioned("what is reshard_after_forward's default?"))
    assert both == ["distributed.reshard_after_forward", "distributed.moe.reshard_after_forward"]


def test_mentioned_needs_code_form_for_plain_words():
    assert T.mentioned("How does pipeline parallelism split a model?") == []
    assert paths(T.mentioned("If ep_size is 1, is my moe: block read?")) == ["distributed.ep_size", "distributed.moe"]
    # "the pipeline block", "这个 moe 块": the block word names the block, as `moe:` does
    assert paths(T.mentioned("`dtype` in the pipeline block")) == ["distributed.pipeline.dtype", "distributed.pipeline"]
    assert paths(T.mentioned("Is the moe block read at all with ep_size 1?")) == ["distributed.moe", "distributed.ep_size"]
    assert paths(T.mentioned("这个 moe 块在 ep_size null 的时候生效没")) == ["distributed.moe", "distributed.ep_size"]
    assert T.mentioned("the moe layers are routed") == []


def test_mentioned_finds_strategy_spellings_in_order():
    got = T.mentioned("Are `megatron-fsdp` and `mfsdp` different strategies? And fsdp2-only keys?")
    assert paths(got) == ["distributed.strategy.megatron_fsdp", "distributed.strategy.fsdp2"]


def test_mentioned_in_chinese():
    got = paths(T.mentioned("moe: 里的 reshard_after_forward 默认是多少？"))
    assert got[0] == "distributed.moe" and "distributed.moe.reshard_after_forward" in got
    assert "distributed.reshard_after_forward" not in got


def test_mentioned_is_bounded():
    assert T.mentioned("tp_size " * 100_000)[0].key == "tp_size"


# ---- held against the upstream checkout --------------------------------------------------------

UPSTREAM = os.environ.get("MESHWISE_UPSTREAM_SRC")
needs_upstream = pytest.mark.skipif(not UPSTREAM, reason="MESHWISE_UPSTREAM_SRC not set")


def _src(rel: str) -> ast.Module:
    return ast.parse((Path(UPSTREAM) / "nemo_automodel" / rel).read_text(encoding="utf-8"))


def _value(node: ast.expr):
    """A default as fields.yaml writes it: literals as is, `torch.bfloat16` as "bfloat16", the
    MixedPrecisionPolicy factory as its keyword mapping; anything else is not compared."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "torch":
        return node.attr
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "field":
        factory = next(k.value for k in node.keywords if k.arg == "default_factory")
        if isinstance(factory, ast.Lambda) and isinstance(factory.body, ast.Call):
            return {k.arg: _value(k.value) for k in factory.body.keywords}
        return NotImplemented
    try:
        return ast.literal_eval(node)
    except ValueError:
        return NotImplemented


def _dataclass_fields(tree: ast.Module, name: str) -> dict[str, object]:
    cls = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == name)
    return {s.target.id: (_value(s.value) if s.value is not None else NotImplemented)
            for s in cls.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}


def _check_dataclass(tree: ast.Module, name: str, section: str) -> None:
    upstream = _dataclass_fields(tree, name)
    assert set(T.dataclass_fields(name)) == set(upstream), name
    for r in T.refs:
        if name in r.dataclasses and r.section == section and upstream[r.key] is not NotImplemented:
            if r.key == "activation_checkpointing":
                continue  # popped by parse_distributed_section; its default is checked there
            assert r.default == upstream[r.key], f"{name}.{r.key}: {r.default!r} != {upstream[r.key]!r}"


@needs_upstream
@pytest.mark.parametrize("name", STRATEGY_DATACLASSES)
def test_strategy_dataclasses_match_upstream(name):
    _check_dataclass(_src("components/distributed/config.py"), name, "distributed")


@needs_upstream
def test_pipeline_and_moe_configs_match_upstream():
    _check_dataclass(_src("components/distributed/pipelining/config.py"), "PipelineConfig", "distributed.pipeline")
    _check_dataclass(_src("components/distributed/config.py"), "MoEParallelizerConfig", "distributed.moe")


@needs_upstream
def test_strategy_map_matches_upstream():
    tree = _src("components/distributed/config.py")
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.AnnAssign)
                and getattr(n.target, "id", None) == "_STRATEGY_MAP")
    assert {k.value: v.id for k, v in zip(node.value.keys, node.value.values)} == T.strategy_map()


@needs_upstream
def test_parse_distributed_section_keys_match_upstream():
    tree = _src("recipes/_dist_utils.py")
    defaults = next(n for n in ast.walk(tree) if isinstance(n, ast.AnnAssign)
                    and getattr(n.target, "id", None) == "_PARALLELISM_DEFAULTS")
    assert ast.literal_eval(defaults.value) == T.defaults("distributed", "_PARALLELISM_DEFAULTS")
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "parse_distributed_section")
    popped = {c.args[0].value: _value(c.args[1]) for c in ast.walk(fn) if isinstance(c, ast.Call)
              and getattr(c.func, "attr", None) == "pop" and getattr(c.func.value, "id", None) == "cfg"
              and isinstance(c.args[0], ast.Constant)}
    assert set(popped) == {"strategy", "pipeline", "moe", "activation_checkpointing"}
    for key, default in popped.items():
        assert T.get(f"distributed.{key}")[0].default == default, key


@needs_upstream
def test_step_scheduler_and_packing_defaults_match_upstream():
    upstream = _dataclass_fields(_src("components/training/step_scheduler.py"), "StepSchedulerConfig")
    for r in T.refs:
        if r.section == "step_scheduler" and "StepSchedulerConfig" in r.upstream:
            assert r.default == upstream[r.key], r.key
    train_ft = (Path(UPSTREAM) / "nemo_automodel/recipes/llm/train_ft.py").read_text(encoding="utf-8")
    for r in T.refs:
        if "cfg.get(" in r.upstream:
            call = r.upstream[r.upstream.index("cfg.get("):]
            assert call in train_ft, call
            assert repr(r.default).replace("'", '"') in call, r.key


def _torch_file(rel: str) -> Path | None:
    spec = importlib.util.find_spec("torch")  # locates torch without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / rel
    return path if path.is_file() else None


def test_mixed_precision_fields_match_installed_torch():
    path = _torch_file("distributed/fsdp/_fully_shard/_fsdp_api.py")
    if path is None:
        pytest.skip("torch source not installed")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert set(T.dataclass_fields("MixedPrecisionPolicy")) == set(_dataclass_fields(tree, "MixedPrecisionPolicy"))
    _check_dataclass(tree, "CPUOffloadPolicy", "distributed.offload_policy")


@needs_upstream
def test_mp_policy_defaults_are_fsdp2_default_policy():
    fsdp2 = _dataclass_fields(_src("components/distributed/config.py"), "FSDP2Config")["mp_policy"]
    assert T.defaults("distributed.mp_policy") == fsdp2
    assert T.get("distributed.mp_policy")[0].default == fsdp2


def test_each_mention_of_a_two_block_key_is_narrowed_by_the_block_before_it():
    # facts2 session 2: "fsdp2 顶层的 X ... moe 里那个 X" names both rows, not the moe one twice
    paths = [r.path for r in field_table().mentioned(
        "fsdp2 顶层的 reshard_after_forward 默认是啥？跟 moe 里那个 reshard_after_forward 一样吗")]
    assert "distributed.reshard_after_forward" in paths and "distributed.moe.reshard_after_forward" in paths
    assert [r.path for r in field_table().mentioned("What does reshard_after_forward default to in moe:?")][0] == \
        "distributed.moe.reshard_after_forward"
