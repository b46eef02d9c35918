"""Totality: every input gives a report or UnusableInput, in bounded time and memory.

Property tests (hypothesis) over random values and YAML text, a seeded fuzz run over the
differential generator's configs, and a list of hostile inputs.
"""
from __future__ import annotations

import math
import random
import time
import tracemalloc

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant.validator import UnusableInput, ValidationReport, validate
from assistant.validator.rules import RULES

def _helper(name: str):
    # tests run with --import-mode=importlib: load the sibling helper module by path
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_cases = _helper("differential_cases")
random_case, random_recipe_case = _cases.random_case, _cases.random_recipe_case

SIZE_KEYS = ["tp_size", "pp_size", "cp_size", "ep_size", "dp_size", "dp_replicate_size"]
OTHER_KEYS = ["strategy", "pipeline", "moe", "activation_checkpointing", "sequence_parallel", "mp_policy",
              "multimodal", "activation_checkpointing_scope", "pp_schedule", "pp_microbatch_size", "bogus"]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=True),
    st.text(max_size=12), st.sampled_from(["none", "2", "2.0", "true", "fsdp2", "ddp", "megatron_fsdp", "1f1b",
                                           "interleaved_1f1b", "selective", "${X}", "${X,4}", "[2]", "{}", "1e400"]),
    st.binary(max_size=4),
)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.one_of(st.sampled_from(SIZE_KEYS + OTHER_KEYS), st.text(max_size=5),
                                                           st.integers(-3, 3)), inner, max_size=5)), max_leaves=20)
dist_mappings = st.dictionaries(st.sampled_from(SIZE_KEYS + OTHER_KEYS), values, max_size=8)
recipes = st.fixed_dictionaries({"distributed": st.one_of(dist_mappings, values)},
                                optional={"step_scheduler": st.one_of(st.dictionaries(
                                    st.sampled_from(["global_batch_size", "local_batch_size", "max_steps"]), values,
                                    max_size=3), values), "packed_sequence": values})
worlds = st.sampled_from([1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 128, 1024])


def check_report(r: ValidationReport, world: int, **kw) -> None:
    assert isinstance(r, ValidationReport)
    assert r.ok == (not r.errors)
    assert all(f.severity == "error" for f in r.errors) and all(f.severity == "warning" for f in r.warnings)
    assert all(f.code in RULES and f.message and f.message_zh for f in (*r.errors, *r.warnings))
    d = r.derived
    if r.ok:
        assert d is not None
        if d.mesh_shape:
            assert math.prod(d.mesh_shape) == world
            assert all(type(x) is int and x >= 1 for x in d.mesh_shape)
        assert d.dp_size >= 1 and d.dp_size * d.tp_size * d.cp_size * d.pp_size in (world, world * d.tp_size)
        if d.moe_mesh_shape:
            assert d.moe_mesh_shape[0] * d.moe_mesh_shape[1] == d.dp_size * d.cp_size * d.tp_size
        assert r.suggested_fix is None
    elif r.suggested_fix is not None:
        assert validate(r.suggested_fix, world_size=world, suggest_fix=False, **kw).ok


def run(value, world: int, **kw) -> None:
    t = time.perf_counter()
    try:
        r = validate(value, world_size=world, **kw)
    except UnusableInput as exc:
        assert exc.message and exc.message_zh
        return
    assert time.perf_counter() - t < 5.0
    check_report(r, world, **kw)


@given(dist_mappings, worlds)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_distributed_mapping(cfg, world):
    run(cfg, world)


@given(recipes, worlds)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_recipe(recipe, world):
    run(recipe, world)


@given(values, worlds)
@settings(max_examples=150, deadline=None)
def test_any_value_at_all(value, world):
    run(value, world)


@given(st.one_of(st.text(max_size=200), st.binary(max_size=200)), worlds)
@settings(max_examples=200, deadline=None)
def test_any_text(text, world):
    run(text, world)


@given(dist_mappings, worlds, st.data())
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_mutated_yaml_text(cfg, world, data):
    try:
        text = yaml.safe_dump({"distributed": cfg}, allow_unicode=True)
    except yaml.YAMLError:
        return
    if text:
        i = data.draw(st.integers(0, len(text) - 1))
        junk = data.draw(st.sampled_from(["", ":", "&a", "*a", "- ", "{", "]", "\t", "\x00", "!!python/object:os.system", "%"]))
        text = text[:i] + junk + text[i:]
    run(text, world)


def test_fuzz_run_over_generated_configs():
    rng = random.Random(20260101)
    for _ in range(250):
        text, world = random_case(rng) if rng.random() < 0.5 else random_recipe_case(rng)
        run(text, world)
        run(yaml.safe_load(text), world, recipe_checks=False)


def _bomb(levels: int) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i-1}"] * 10) + "]" for i in range(1, levels + 1)]
    return "\n".join(lines) + f"\ndistributed: *a{levels}\n"


HOSTILE = {
    "alias-bomb": _bomb(9),
    "recursive-alias": "distributed: &d {x: *d}\n",
    "deep-flow": "distributed: " + "[" * 20000 + "]" * 20000,
    "ten-megabytes": "distributed: {tp_size: 2}\n#" + "x" * (10 * 1024 * 1024),
    "binary-junk": bytes(random.Random(1).getrandbits(8) for _ in range(100_000)),
    "python-tag": "distributed: !!python/object/apply:os.system ['true']\n",
    "huge-int": "distributed: {tp_size: " + "9" * 4000 + ", ep_size: " + "7" * 4000 + "}",
    "huge-size-string": "distributed: {dp_size: '" + "9" * 999 + "', dp_replicate_size: 3}",
    "many-keys": "distributed:\n" + "".join(f"  k{i}: {i}\n" for i in range(5000)),
    "negative": "distributed: {tp_size: -8, pp_size: -2, ep_size: -4, dp_size: -1, cp_size: -1}",
    "nan-inf": "distributed: {tp_size: .nan, pp_size: .inf, dp_size: .inf, ep_size: -.inf}",
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_inputs_are_bounded(name):
    tracemalloc.start()
    t = time.perf_counter()
    try:
        run(HOSTILE[name], 8)
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert time.perf_counter() - t < 5.0
    assert peak < 64 * 1024 * 1024
