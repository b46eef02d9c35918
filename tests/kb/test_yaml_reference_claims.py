"""Issue 20.7: two yaml-reference claims (en and zh) checked against the code they describe: the
mesh groups get `dist_env.timeout_minutes` only when it is written, and `dtype_from_str` takes `bf16`
but not `torch.bf16`."""
from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

from assistant.validator.rules import dtype_known

KB = Path(__file__).resolve().parents[2] / "kb"


def _section(lang: str, heading: str) -> str:
    text = (KB / lang / "yaml-reference.md").read_text(encoding="utf-8")
    start = text.index(heading)
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def test_the_dtype_spellings_are_the_ones_dtype_from_str_takes():
    assert dtype_known("bf16") and not dtype_known("torch.bf16")  # the validator mirrors upstream's table
    for lang, heading in (("en", "## Object-valued keys"), ("zh", "## 对象类型的键")):
        text = _section(lang, heading)
        assert "`torch.bf16`" in text and "KeyError" in text, lang
        assert not re.search(r"`bf16`[^。.]*(with or without a `torch\.` prefix|可带 `torch\.` 前缀)", text), lang


def test_the_mesh_groups_timeout_is_only_the_written_one():
    for lang, heading in (("en", "## The dist_env block"), ("zh", "## distributed 旁边的 dist_env 块")):
        text = _section(lang, heading)
        assert "_dist_env_timeout_minutes" in text and "None" in text, lang
        assert "The same\ntimeout is applied" not in text and "同一个超时也会用到" not in text, lang


@pytest.mark.skipif(not os.environ.get("MESHWISE_UPSTREAM_SRC"), reason="MESHWISE_UPSTREAM_SRC not set")
def test_upstream_returns_no_mesh_timeout_for_a_recipe_without_the_key():
    """Upstream's own function (pure Python, taken from its file) on recipes with and without the key."""
    src = (Path(os.environ["MESHWISE_UPSTREAM_SRC"]) / "nemo_automodel/recipes/_dist_utils.py").read_text()
    fn = next(n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef) and n.name == "_dist_env_timeout_minutes")
    scope: dict = {"Any": object}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), "_dist_utils.py", "exec"), scope)
    assert scope["_dist_env_timeout_minutes"]({"dist_env": {"backend": "nccl"}}) is None
    assert scope["_dist_env_timeout_minutes"]({"dist_env": {"timeout_minutes": 30}}) == 30
