"""The validator's public API: inputs it takes, what a report holds, and what is UnusableInput."""
from __future__ import annotations

import json

import pytest

from assistant.validator import UnusableInput, ValidationReport, validate


def test_accepts_yaml_text_dict_and_bytes():
    text = "distributed:\n  strategy: fsdp2\n  tp_size: 2\n"
    for value in (text, text.encode(), {"distributed": {"strategy": "fsdp2", "tp_size": 2}}, {"strategy": "fsdp2", "tp_size": 2}):
        r = validate(value, world_size=8)
        assert isinstance(r, ValidationReport) and r.ok
        assert r.derived.dp_size == 4 and r.world_size == 8 and r.gpus_per_node == 8


def test_bare_mapping_and_recipe_give_the_same_distributed_verdict():
    bare = {"strategy": "fsdp2", "ep_size": 16}
    assert validate(bare, world_size=8).codes == validate({"distributed": bare}, world_size=8).codes


def test_report_is_json_serialisable():
    r = validate({"ep_size": 16}, world_size=8)
    d = json.loads(json.dumps(r.to_dict()))
    assert d["ok"] is False and d["errors"][0]["code"] == "MW-E-EP-DIVIDES"
    assert {"code", "severity", "message", "message_zh", "path", "upstream"} <= set(d["errors"][0])


@pytest.mark.parametrize("world", [0, -8, True, 2.5, None, "x", 10**9])
def test_bad_world_size_is_unusable(world):
    with pytest.raises(UnusableInput) as exc:
        validate({}, world_size=world)
    assert "world_size" in exc.value.message and exc.value.message_zh


def test_bad_gpus_per_node_is_unusable():
    with pytest.raises(UnusableInput):
        validate({}, world_size=8, gpus_per_node=0)


def test_non_mapping_top_level_is_a_report_not_an_exception():
    for value in ([1, 2], 5, None, "just a string"):
        r = validate(value, world_size=8)
        assert not r.ok and r.errors[0].code == "MW-E-DIST-NOT-MAPPING"


def test_unknown_model_is_unusable():
    with pytest.raises(UnusableInput):
        validate({}, world_size=8, model="no-such-model-xyz")


def test_model_checks_run_when_a_model_is_given():
    r = validate({"tp_size": 3}, world_size=24, model="llama-3.1-8b")
    assert "MW-W-TP-HEADS" in r.codes
    assert "MW-W-TP-HEADS" not in validate({"tp_size": 3}, world_size=24).codes


def _examples():
    from assistant.config import REPO_ROOT

    return sorted((REPO_ROOT / "examples").glob("*.yaml"))


@pytest.mark.parametrize("path", _examples(), ids=lambda p: p.name)
def test_bundled_examples_have_their_stated_verdict(path):
    import re

    text = path.read_text(encoding="utf-8")
    m = re.search(r"meshwise-expect: (valid|invalid) --world-size (\d+)(?: --model (\S+))?", text)
    assert m, "each example states its expected verdict"
    r = validate(text, world_size=int(m.group(2)), model=m.group(3))
    assert r.ok is (m.group(1) == "valid"), [e.message for e in r.errors]
    if not r.ok:
        assert r.suggested_fix
