"""Environment references resolved as loader.resolve_yaml_env_vars resolves them; unset -> a clear error."""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from assistant.launch import EnvVarUnset, LaunchError, resolve_env_vars
from assistant.launch.env_vars import parse_env_pairs

LOADER = Path(os.environ.get("MESHWISE_UPSTREAM_SRC", "/work/automodel")) / "nemo_automodel/components/config/loader.py"
ENV = {"TP": "2", "HOME": "/h", "a.b": "dotted", "EMPTY": ""}


@pytest.mark.parametrize("value, want", [
    ("${TP}", "2"), ("${TP,4}", "2"), ("${NOPE,4}", "4"), ("${oc.env:TP}", "2"), ("${oc.env:NOPE, 8 }", "8"),
    ("$HOME/x", "/h/x"), ("${a.b}", "dotted"), ("$a.b", "dotted"), ("${EMPTY}", ""), ("no refs", "no refs"),
])
def test_forms(value, want):
    assert resolve_env_vars({"k": value}, ENV) == {"k": want}


def test_lists_nested_and_targets_kept():
    got = resolve_env_vars({"a": ["$TP", {"b": "${TP}"}], "_target_": "$TP", "collate_fn": "$TP", "$TP": 1}, ENV)
    assert got == {"a": ["2", {"b": "2"}], "_target_": "$TP", "collate_fn": "$TP", "$TP": 1}


def test_unset_without_default_is_an_error_naming_every_path():
    with pytest.raises(EnvVarUnset) as exc:
        resolve_env_vars({"skypilot": {"hf_token": "${HF_TOKEN}"}, "x": ["$OTHER"]}, {})
    e = exc.value
    assert isinstance(e, LaunchError)
    assert [(p, v) for p, v, _ in e.missing] == [("skypilot.hf_token", "HF_TOKEN"), ("x[0]", "OTHER")]
    assert "HF_TOKEN" in e.message and "skypilot.hf_token" in e.message and "HF_TOKEN" in e.message_zh


def test_env_pairs():
    assert parse_env_pairs(["A=1", "B=x=y", "A=2"]) == {"A": "2", "B": "x=y"}
    with pytest.raises(LaunchError):
        parse_env_pairs(["novalue"])


@pytest.mark.skipif(not LOADER.is_file(), reason="needs MESHWISE_UPSTREAM_SRC")
def test_same_as_upstream(monkeypatch):
    spec = importlib.util.spec_from_file_location("_upstream_loader_env", LOADER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for k in list(os.environ):
        monkeypatch.delenv(k)
    for k, v in ENV.items():
        monkeypatch.setenv(k, v)
    data = {"a": ["$TP", "${TP,9}", "${oc.env:NOPE,7}x$HOME", "${a.b}-$a.b"], "b": {"c": "${HOME}"}}
    assert resolve_env_vars(data, ENV, keep_targets=False) == mod.resolve_yaml_env_vars(data)
    with pytest.raises(KeyError):
        mod.resolve_yaml_env_vars({"x": "${NOPE}"})
    with pytest.raises(EnvVarUnset):
        resolve_env_vars({"x": "${NOPE}"}, ENV)
