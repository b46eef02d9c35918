"""YAML loading under caps, and the loader's string coercion (translate_value) mirrored exactly."""
from __future__ import annotations

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assistant.validator import UnusableInput, validate
from assistant.validator.coerce import (
    MAX_BYTES, MAX_DEPTH, MAX_NODES, check_bounds, load_config, load_yaml, section_as_dict, translate_value,
)


def reference_translate(v):
    """translate_value as components/config/loader.py writes it (re-stated, not imported)."""
    if not isinstance(v, str):
        return v
    special = {"none": None, "None": None, "true": True, "True": True, "false": False, "False": False}
    if v in special:
        return special[v]
    if len(v) > 1000:
        return v
    try:
        return ast.literal_eval(v)
    except Exception:  # noqa: BLE001
        return v


@pytest.mark.parametrize("raw, expected", [
    ("2", 2), ("none", None), ("None", None), ("NONE", "NONE"), ("true", True), ("False", False),
    ("2.0", 2.0), ("0123", "0123"), ("1_000", 1000), ("-2", -2), (" 2", 2), ("[1, 2]", [1, 2]),
    ("abc", "abc"), ("1e3", 1000.0), ("0x10", 16), ("'2'", "2"), ("fsdp2", "fsdp2"), ("", ""),
    ("9" * 1001, "9" * 1001), (5, 5), (None, None),
])
def test_translate_value_examples(raw, expected):
    assert translate_value(raw) == expected
    assert type(translate_value(raw)) is type(expected)


@given(st.one_of(st.text(max_size=40), st.from_regex(r"\s?[-+]?[0-9_.eExXjJ]{0,8}", fullmatch=True),
                 st.sampled_from(["[1, 2]", "{'a': 1}", "(1,)", "{1, 2}", "b'x'", "1j", "٣", "π", "__debug__"])))
@settings(max_examples=400, deadline=None)
def test_translate_value_matches_the_loader(s):
    got, want = translate_value(s), reference_translate(s)
    assert got == want or (got != got and want != want)  # nan == nan
    assert type(got) is type(want)


def test_translate_value_never_shares_mutable_results():
    a = translate_value("[1, 2]")
    a.append(3)
    assert translate_value("[1, 2]") == [1, 2]


def test_load_config_mirrors_confignode():
    cfg, notes = load_config({"distributed": {"dp_size": "none", "tp_size": "2", "pipeline": {"pp_microbatch_size": "4"},
                                              "list": ["1", {"x": "true"}]}, "loss_fn": {"_target_": "a.b.C"}})
    d = cfg["distributed"]
    assert d["dp_size"] is None and d["tp_size"] == 2 and d["pipeline"]["pp_microbatch_size"] == 4
    assert d["list"] == [1, {"x": True}]
    assert cfg["loss_fn"]["_target_"] == "a.b.C"
    assert not notes.load_errors and not notes.env_unresolved


def test_load_config_notes_what_breaks_the_loader():
    _, notes = load_config({"dataset": {3: "x"}, "distributed": {"tp_size": "${TP}"}})
    assert notes.load_errors and notes.load_errors[0][0] == "dataset.3"
    assert notes.env_unresolved == [("distributed.tp_size", "TP")]
    cfg, notes = load_config({"distributed": {"tp_size": "${oc.env:TP,4}"}})
    assert cfg["distributed"]["tp_size"] == 4 and not notes.env_unresolved


@pytest.mark.parametrize("value, expected", [({"a": 1}, {"a": 1}), ("", {}), ([], {}), ([["a", 1]], {"a": 1})])
def test_section_as_dict_accepts_what_dict_accepts(value, expected):
    assert section_as_dict(value) == expected


@pytest.mark.parametrize("value", [None, 5, 2.0, True, "abc", [1, 2], [{"a": 1}]])
def test_section_as_dict_rejects_what_dict_rejects(value):
    with pytest.raises((TypeError, ValueError)):
        section_as_dict(value)


ANCHORS = """
defaults: &dist
  strategy: fsdp2
  tp_size: 2
  cp_size: 1
base_sched: &sched
  global_batch_size: 64
  local_batch_size: 2
distributed:
  <<: *dist
  pp_size: 2
  pipeline: {pp_schedule: 1f1b, pp_microbatch_size: 1}
step_scheduler: *sched
"""


def test_real_recipes_with_anchors_and_merges_parse():
    r = validate(ANCHORS, world_size=16)
    assert r.ok, [e.message for e in r.errors]
    assert r.derived.mesh_shape == (2, 1, 4, 1, 2) and r.derived.grad_acc_steps == 8


def _bomb(levels: int = 9) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i-1}"] * 10) + "]")
    lines.append(f"distributed: {{strategy: fsdp2, junk: *a{levels}}}")
    return "\n".join(lines) + "\n"


def test_alias_bomb_is_refused_quickly():
    with pytest.raises(UnusableInput) as exc:
        validate(_bomb(), world_size=8)
    assert str(MAX_NODES) in exc.value.message and exc.value.message_zh


def test_recursive_alias_is_refused():
    with pytest.raises(UnusableInput):
        validate("distributed: &d {strategy: fsdp2, self: *d}\n", world_size=8)
    loop: dict = {"tp_size": 2}
    loop["again"] = loop
    with pytest.raises(UnusableInput):
        validate(loop, world_size=8)


def test_depth_and_size_bounds_for_python_input():
    deep: dict = {}
    node = deep
    for _ in range(MAX_DEPTH + 5):
        node["x"] = {}
        node = node["x"]
    with pytest.raises(UnusableInput):
        check_bounds(deep)
    with pytest.raises(UnusableInput):
        validate({"distributed": {}, "data": list(range(MAX_NODES + 1))}, world_size=8)
    check_bounds({"a": [1, 2, {"b": 3}]})


@pytest.mark.parametrize("text", [
    "distributed: [unclosed", "a: 1\n---\nb: 2\n", "distributed: {tp_size: 2}\x00", "\tdistributed: {}",
    b"\xff\xfe\x00junk", "key: " + "9" * 5000,
])
def test_unparseable_input_is_unusable(text):
    with pytest.raises(UnusableInput) as exc:
        validate(text, world_size=8)
    assert exc.value.message and exc.value.message_zh


def test_byte_cap():
    with pytest.raises(UnusableInput) as exc:
        load_yaml("a: 1\n#" + "x" * (10 * 1024 * 1024))
    assert str(MAX_BYTES) in exc.value.message
    assert load_yaml("a: 1\n#" + "x" * (MAX_BYTES - 100)) == {"a": 1}
