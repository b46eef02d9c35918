"""Overrides as NeMo AutoModel reads them (_arg_parser.parse_cli_argv, loader.translate_value twice,
ConfigNode.set_by_dotted): the issue's translation table, then the same argv through upstream's own code."""
from __future__ import annotations

import importlib.util
import os
import sys
import types
from pathlib import Path

import pytest

from assistant.launch import apply_overrides, parse_overrides

UPSTREAM_CONFIG = Path(os.environ.get("MESHWISE_UPSTREAM_SRC", "/work/automodel")) / "nemo_automodel/components/config"


def one(*argv):
    overrides, warnings = parse_overrides(list(argv))
    return overrides, warnings


@pytest.mark.parametrize("argv, path, value", [
    (["--distributed.pp_size", "2"], "distributed.pp_size", 2),
    (["--step_scheduler.local_batch_size=8"], "step_scheduler.local_batch_size", 8),
    (["--a", "null"], "a", "null"),  # not YAML: literal_eval does not know null
    (["--a", "~"], "a", "~"),
    (["--a", "'2'"], "a", 2),  # translated twice: "'2'" -> "2" -> 2
    (["--a", "none"], "a", None),
    (["--a", "None"], "a", None),
    (["--a", "false"], "a", False),
    (["--a", "1e-5"], "a", 1e-5),
    (["--a", "[1, 2]"], "a", [1, 2]),
    (["--a", "1f1b"], "a", "1f1b"),
    (["--flag"], "flag", True),  # bare flag -> "True" -> True
    (["---triple.dash=3"], "triple.dash", 3),  # every leading dash stripped
    (["--a", "-1"], "a", -1),  # the next token is the value unless it starts with --
    (["--a=b=c"], "a", "b=c"),
    (["--model._target_", "'x.y'"], "model._target_", "x.y"),  # kept a string, translated once, never imported
    (["--collate_fn", "'2'"], "collate_fn", "2"),  # *_fn: also imported upstream, so translated once
])
def test_translation_table(argv, path, value):
    (o,), _ = one(*argv)
    assert o.path == path and o.value == value and type(o.value) is type(value)
    assert o.argument == " ".join(argv)


def test_bare_flag_before_another_flag_and_last_wins():
    overrides, _ = one("--x", "--distributed.pp_size", "2", "--distributed.pp_size=4")
    assert [(o.path, o.value, o.index) for o in overrides] == [("x", True, 0), ("distributed.pp_size", 2, 1),
                                                               ("distributed.pp_size", 4, 2)]
    assert apply_overrides({}, overrides)["distributed"]["pp_size"] == 4


def test_config_pair_is_consumed_and_single_dash_skipped_with_a_warning():
    overrides, warnings = one("-c", "cfg.yaml", "-x", "3", "--a", "1")
    assert [o.path for o in overrides] == ["a"]
    assert [w.code for w in warnings] == ["MW-W-LAUNCH-SKIPPED"] and warnings[0].argument == "-x"
    assert warnings[0].zh and warnings[0].en != warnings[0].zh


def test_apply_creates_parents_replaces_scalars_and_subtrees_and_is_pure():
    recipe = {"distributed": {"tp_size": 2, "pipeline": {"pp_schedule": "1f1b"}}, "model": "name"}
    overrides, _ = one("--model.name", "x", "--distributed", "{'pp_size': 2}", "--new.deep.key", "1")
    out = apply_overrides(recipe, overrides)
    assert out == {"distributed": {"pp_size": 2}, "model": {"name": "x"}, "new": {"deep": {"key": 1}}}
    assert recipe == {"distributed": {"tp_size": 2, "pipeline": {"pp_schedule": "1f1b"}}, "model": "name"}


def test_empty_segment_kept_as_upstream_and_warned():
    overrides, warnings = one("--a..b", "1")
    assert apply_overrides({}, overrides) == {"a": {"": {"b": 1}}}
    assert [w.code for w in warnings] == ["MW-W-LAUNCH-EMPTY-KEY"]


def _upstream():
    for name in ("nemo_automodel", "nemo_automodel.components", "nemo_automodel.components.config"):
        if name not in sys.modules:
            pkg = types.ModuleType(name)
            pkg.__path__ = []  # the real package __init__ needs torch; these two modules need only yaml
            sys.modules[name] = pkg
    mods = []
    for stem in ("loader", "_arg_parser"):
        name = f"nemo_automodel.components.config.{stem}"
        if name not in sys.modules:
            spec = importlib.util.spec_from_file_location(name, UPSTREAM_CONFIG / f"{stem}.py")
            mod = importlib.util.module_from_spec(spec)
            sys.modules[name] = mod
            spec.loader.exec_module(mod)
        mods.append(sys.modules[name])
    return mods


ARGVS = [
    ["--distributed.pp_size", "2", "--step_scheduler.local_batch_size=8"],
    ["--a", "null", "--b", "~", "--c", "'2'", "--d", "\"'3'\"", "--flag", "--e", "none"],
    ["--distributed", "{'tp_size': 2, 'cp_size': 'true'}", "--distributed.pp_size", "2"],
    ["--x", "1", "--x.y", "2", "--x.y.z", "[1, 'a', None]"],
    ["-c", "other.yaml", "stray", "--k=v=w", "---dashes", "1.5", "--n", "-3", "--s", "hello world"],
    ["--a.b", "1", "--a", "5", "--a.c", "x"],
]


@pytest.mark.skipif(not (UPSTREAM_CONFIG / "_arg_parser.py").is_file(), reason="needs MESHWISE_UPSTREAM_SRC")
@pytest.mark.parametrize("argv", ARGVS)
def test_same_config_as_upstream(argv):
    loader, arg_parser = _upstream()
    base = {"distributed": {"strategy": "fsdp2", "tp_size": 1}, "a": {"b": 0}}
    _, kvs = arg_parser.parse_cli_argv("cfg.yaml", argv=list(argv))
    node = loader.ConfigNode(base)
    for kv in kvs:
        dotted, val = kv.split("=", 1)
        node.set_by_dotted(dotted, loader.translate_value(val))
    overrides, _ = parse_overrides(argv)
    assert apply_overrides(base, overrides) == node.to_dict()
