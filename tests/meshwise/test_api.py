"""`from meshwise import validate`: the stable Python API (the README's example), and its contract."""
from __future__ import annotations

from pathlib import Path

import pytest

from meshwise import SCHEMA, UnusableInput, validate

BAD = "distributed:\n  strategy: fsdp2\n  tp_size: 8\n  pp_size: 4\n  pipeline:\n    pp_schedule: interleaved_1f1b\n"


def test_the_readme_example(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("recipe.yaml").write_text(BAD, encoding="utf-8")
    report = validate(Path("recipe.yaml"), world_size=16)
    assert report["ok"] is False and report["file"] == "recipe.yaml"
    f = report["errors"][0]
    assert f["code"] == "MW-E-WORLD-DIVISIBLE"
    assert f["location"] == {"file": "recipe.yaml", "line": 3, "column": 3, "argument": None}
    assert report["suggested_fix"] and report["codes"][0] == "MW-E-WORLD-DIVISIBLE"


def test_text_and_mappings():
    by_text = validate(BAD, world_size=32)
    assert by_text["file"] is None and by_text["errors"][0]["location"]["line"] == 6  # pp_schedule
    by_data = validate({"distributed": {"tp_size": 2}}, world_size=8)
    assert by_data["ok"] is True and by_data["derived"]["dp_size"] == 4
    assert validate({"distributed": {"tp_size": 3}}, world_size=8)["errors"][0]["location"] is None


def test_the_result_matches_the_published_schema():
    from assistant.schemas import validator

    assert SCHEMA["title"] == "meshwise validate --json"
    validator("validate").validate(validate(BAD, world_size=48, model="llama-3.1-8b", gpu="h100-80gb"))


def test_unusable_input_raises():
    with pytest.raises(UnusableInput):
        validate("distributed: [", world_size=8)
    with pytest.raises(UnusableInput):
        validate(Path("/nonexistent/recipe.yaml"), world_size=8)
    with pytest.raises(UnusableInput):
        validate(42, world_size=8)  # type: ignore[arg-type]
    with pytest.raises(UnusableInput) as exc:  # the CLI skips it; the API has no report to return for it
        validate("on: [push]\njobs: {}\n", world_size=8)
    assert "not a recipe" in exc.value.message and exc.value.message_zh
    assert issubclass(UnusableInput, ValueError)
