"""The schedule list is data; this keeps it equal to the installed torch's get_schedule_class."""
from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from assistant.validator import schedules


def _torch_schedule_names() -> list[str] | None:
    spec = importlib.util.find_spec("torch")  # locates torch without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "distributed" / "pipelining" / "schedules.py"
    if not path.is_file():
        return None
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "get_schedule_class":
            for sub in ast.walk(node):
                if isinstance(sub, ast.Assign) and getattr(sub.targets[0], "id", None) == "schedule_map":
                    return [k.value for k in sub.value.keys]
    return None


def test_accepted_list_matches_installed_torch():
    names = _torch_schedule_names()
    if names is None:
        pytest.skip("torch source not installed")
    assert sorted(names) == sorted(schedules.ACCEPTED)


@pytest.mark.parametrize("name", ["1f1b", "1F1B", "interleaved1f1b", "GPipe", "loopedbfs", "interleavedzerobubble",
                                  "zbvzerobubble", "dualpipev", "PipelineScheduleMulti"])
def test_accepted(name):
    assert schedules.is_accepted(name)


@pytest.mark.parametrize("name, meant", [("interleaved_1f1b", "interleaved1f1b"), ("looped_bfs", "loopedbfs"),
                                         ("dfs", "interleaved1f1b"), ("v_schedule", "zbvzerobubble"),
                                         ("zero_bubble", "interleavedzerobubble"), ("gpipee", "gpipe"),
                                         ("Interleaved-1F1B", "interleaved1f1b")])
def test_rejected_with_suggestion(name, meant):
    assert not schedules.is_accepted(name)
    assert schedules.suggest(name) == meant


@pytest.mark.parametrize("name", [None, 5, "", "banana"])
def test_rejected_without_suggestion(name):
    assert not schedules.is_accepted(name)
    assert schedules.suggest(name) is None
