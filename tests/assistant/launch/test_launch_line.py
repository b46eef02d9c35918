"""Launch lines read as cli/app.py (argparse + parse_cli_argv) and torchrun read them."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from assistant.launch import LaunchError, parse_launch_line
from assistant.launch.counts import make
from assistant.launch.resolve import resolve


def test_automodel_line_world_and_overrides():
    l = parse_launch_line("automodel cfg.yaml --nproc-per-node 4 --distributed.tp_size 2")
    assert l.config_path == "cfg.yaml" and l.form == "automodel"
    assert [(o.path, o.value, o.argument) for o in l.overrides] == [("distributed.tp_size", 2, "--distributed.tp_size 2")]
    assert (l.world.world_size, l.world.nodes, l.world.gpus_per_node) == (4, 1, 4)
    assert "--nproc-per-node 4" in l.world.source and l.world.source_zh


@pytest.mark.parametrize("line", [
    "am cfg.yaml --nproc_per_node=4 --distributed.tp_size=2",
    "uv run automodel cfg.yaml \\\n    --nproc-per-node 4 \\\n    --distributed.tp_size 2",
    "python -m nemo_automodel.cli.app cfg.yaml --nproc-per-node 4 --distributed.tp_size 2",
    "FOO=1 automodel cfg.yaml --distributed.tp_size 2 --nproc-per 4",  # an unambiguous prefix argparse accepts
])
def test_app_forms(line):
    l = parse_launch_line(line)
    assert l.config_path == "cfg.yaml" and l.world.world_size == 4
    assert [(o.path, o.value) for o in l.overrides] == [("distributed.tp_size", 2)]


def test_torchrun_module_and_script_forms():
    l = parse_launch_line("torchrun --nnodes 2 --nproc-per-node=8 -m nemo_automodel.cli.app cfg.yaml --distributed.tp_size 4")
    assert (l.world.world_size, l.world.nodes, l.world.gpus_per_node, l.form) == (16, 2, 8, "torchrun-module")
    l = parse_launch_line("torchrun --nproc_per_node 8 --rdzv_backend c10d recipes/llm/train_ft.py -c cfg.yaml --distributed.ep_size 8")
    assert (l.config_path, l.world.world_size, l.form) == ("cfg.yaml", 8, "torchrun-script")
    assert [(o.path, o.value) for o in l.overrides] == [("distributed.ep_size", 8)]
    l = parse_launch_line("python -m torch.distributed.run --standalone --nproc-per-node 2 examples/llm_finetune/finetune.py --config c.yaml")
    assert (l.config_path, l.world.world_size) == ("c.yaml", 2)


def test_torchrun_options_are_read_as_torchrun_parses_them():
    """torchrun_options.yaml is torch's get_args_parser: a flag takes no value, a prefix is accepted."""
    l = parse_launch_line("torchrun --virtual-local-rank --nproc-per-node 4 -m nemo_automodel.cli.app c.yaml --a.b 1")
    assert (l.config_path, l.world.world_size, l.form) == ("c.yaml", 4, "torchrun-module")
    l = parse_launch_line("torchrun --nnode 2 --nproc-per 8 --max_restarts=3 -t 3 recipes/llm/train_ft.py -c c.yaml")
    assert (l.config_path, l.world.world_size, l.world.nodes) == ("c.yaml", 16, 2)
    assert l.world.source == "torchrun --nnodes 2 --nproc-per-node 8 on the launch line"
    l = parse_launch_line("torchrun --nproc 4 -m nemo_automodel.cli.app c.yaml")  # torchrun stops: ambiguous
    assert [w.code for w in l.warnings] == ["MW-W-LAUNCH-AMBIGUOUS"] and l.world.world_size == 1
    with pytest.raises(LaunchError) as exc:
        parse_launch_line("torchrun --no-such-option 1 train.py -c c.yaml")
    assert "unrecognized" in exc.value.message
    # the knowledge-distillation guide's line: the shell splits $(nvidia-smi -L | wc -l) into words
    l = parse_launch_line("torchrun --nproc-per-node $(nvidia-smi -L | wc -l) nemo_automodel/recipes/llm/kd.py -c c.yaml")
    assert (l.config_path, l.form, l.world) == ("c.yaml", "torchrun-script", None)
    e = l.world_error
    assert "$(nvidia-smi -L | wc -l)" in e.message and "--world-size" in e.message and e.message_zh


def test_torchrun_reads_its_pet_environment_defaults():
    # torch's `env` action: an option not on the line defaults to PET_<DEST> from the environment
    line = "torchrun -m nemo_automodel.cli.app c.yaml"
    l = parse_launch_line(line, env={"PET_NNODES": "2", "PET_NPROC_PER_NODE": "4"})
    assert l.world.world_size == 8 and "PET_NPROC_PER_NODE=4 in the environment" in l.world.source
    assert parse_launch_line("torchrun --nproc-per-node 2 " + line[9:], env={"PET_NPROC_PER_NODE": "4"}).world.world_size == 2
    assert parse_launch_line(line).world.world_size == 1  # torchrun's own defaults: 1 node x 1 process


def test_elastic_range_refused_fixed_range_accepted():
    l = parse_launch_line("torchrun --nnodes 1:4 --nproc-per-node 8 -m nemo_automodel.cli.app cfg.yaml")
    assert l.world is None and l.config_path == "cfg.yaml"
    assert "MIN:MAX" in l.world_error.message and "MIN:MAX" in l.world_error.message_zh
    with pytest.raises(LaunchError):  # refused where the world size is needed and nothing else gives it
        resolve({"distributed": {}}, launch=l)
    assert resolve({"distributed": {}}, launch=l, explicit=make(None, 8, "x", "x", world_size=16)).world.world_size == 16
    assert parse_launch_line("torchrun --nnodes 2:2 --nproc-per-node 8 -m nemo_automodel.cli.app c.yaml").world.world_size == 16


def test_space_form_override_before_the_config_is_misread_as_upstream_does():
    l = parse_launch_line("automodel --distributed.pp_size 2 cfg.yaml --nproc-per-node 4")
    assert l.config_path == "2"  # argparse takes the override's value as the config
    assert [(o.path, o.value) for o in l.overrides] == [("distributed.pp_size", "cfg.yaml")]
    assert [w.code for w in l.warnings] == ["MW-W-LAUNCH-BEFORE-CONFIG"]


def test_ambiguous_nproc_is_warned_and_sets_nothing():
    l = parse_launch_line("automodel cfg.yaml --nproc 4 --distributed.tp_size 2")
    assert l.world is None and [o.path for o in l.overrides] == ["distributed.tp_size"]
    assert [w.code for w in l.warnings] == ["MW-W-LAUNCH-AMBIGUOUS"] and l.warnings[0].argument == "--nproc 4"


def test_no_nproc_means_the_machine_decides():
    assert parse_launch_line("automodel cfg.yaml").world is None
    l = parse_launch_line("torchrun --nproc-per-node gpu -m nemo_automodel.cli.app cfg.yaml")
    assert l.world is None and l.warnings[0].code == "MW-W-LAUNCH-NPROC-LOCAL"


@pytest.mark.parametrize("nproc", ["$G", "${G:-}", "$(nvidia-smi -L | wc -l)"])
def test_an_automodel_nproc_the_shell_gives_is_deferred(nproc):
    l = parse_launch_line(f"automodel cfg.yaml --nproc-per-node {nproc} --distributed.tp_size 2")
    assert (l.config_path, l.world, l.nproc_argument) == ("cfg.yaml", None, f"--nproc-per-node {nproc}")
    assert [o.path for o in l.overrides] == ["distributed.tp_size"] and "--world-size" in l.world_error.message
    given = parse_launch_line(f"automodel cfg.yaml --nproc-per-node {nproc}", env={"G": "4"})
    assert (given.world.world_size if given.world else None) == (None if "$(" in nproc else 4)


def test_env_expands_and_unexpanded_world_is_refused():
    line = "torchrun --nnodes=${N} --nproc-per-node=${G:-8} -m nemo_automodel.cli.app cfg.yaml"
    assert parse_launch_line(line, env={"N": "3"}).world.world_size == 24
    assert "--env NAME=VALUE" in parse_launch_line(line).world_error.message


@pytest.mark.parametrize("line", ["", "ls -la", "automodel 'unclosed", "torchrun --nproc-per-node 8"])
def test_bad_lines_are_clear_errors(line):
    with pytest.raises(LaunchError) as exc:
        parse_launch_line(line)
    assert exc.value.message and exc.value.message_zh


UPSTREAM = Path(os.environ.get("MESHWISE_UPSTREAM_SRC", "/work/automodel"))
_LAUNCH = re.compile(r"^(uv run )?(automodel|am|torchrun|python3? -m (torch\.distributed\.run|nemo_automodel))\b")


@pytest.mark.skipif(not (UPSTREAM / "docs").is_dir(), reason="needs MESHWISE_UPSTREAM_SRC")
def test_every_launch_line_of_upstreams_docs_and_examples_is_read():
    """The lines upstream tells people to type (docs, READMEs, example scripts): each is read, and each
    that trains names its config; a world size the line cannot give is deferred, never a crash."""
    lines = set()
    for path in [*UPSTREAM.glob("docs/**/*.md*"), UPSTREAM / "README.md", *UPSTREAM.glob("examples/**/*.md"),
                 *UPSTREAM.glob("examples/**/*.sh")]:
        text = re.sub(r"\\\n\s*", " ", path.read_text(encoding="utf-8", errors="replace"))
        lines |= {s for s in (ln.strip().lstrip("$ ").strip() for ln in text.splitlines()) if _LAUNCH.match(s)}
    assert len(lines) > 200
    for line in sorted(lines):
        launch = parse_launch_line(line)
        trains = any(w.endswith((".yaml", ".yml")) for w in launch.tokens)
        assert launch.config_path is not None or not trains, line
