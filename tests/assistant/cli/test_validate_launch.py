"""`meshwise validate` where jobs are launched: trailing overrides, --launch, --sbatch, --env, --ci,
--print-config; the world size's source and the argument behind a finding in text and JSON."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from assistant.cli import main

UPSTREAM = Path(os.environ.get("MESHWISE_UPSTREAM_SRC", "/work/automodel"))
RECIPE = """recipe: TrainFinetuneRecipeForNextTokenPrediction
step_scheduler:
  global_batch_size: 64
  local_batch_size: 8
distributed:
  strategy: fsdp2
  tp_size: 1
  pp_size: 1
checkpoint:
  checkpoint_dir: ${CKPT,checkpoints/}
wandb:
  api_key: ${WANDB_KEY,none}
"""


@pytest.fixture
def cfg(tmp_path):
    p = tmp_path / "cfg.yaml"
    p.write_text(RECIPE, encoding="utf-8")
    return str(p)


def test_trailing_overrides_are_read_and_named(cfg, capsys):
    code = main(["validate", cfg, "--distributed.pp_size", "2", "--step_scheduler.local_batch_size=16", "--world-size", "8"])
    out = capsys.readouterr().out
    assert code == 1
    assert "(world size from --world-size 8 on the command line)" in out
    assert "[MW-E-PP-NO-PIPELINE]" in out and "[set by --distributed.pp_size 2]" in out
    assert "The same fix as override flags:" in out and "--distributed.pipeline.pp_schedule" in out


def test_overrides_json_contract(cfg, capsys):
    assert main(["validate", cfg, "--json", "--world-size", "8", "--distributed.tp_size", "3"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["ok"] is False and d["world_source"] == "--world-size 8 on the command line" and d["world_source_zh"]
    assert d["overrides"] == [{"path": "distributed.tp_size", "value": 3, "argument": "--distributed.tp_size 3", "index": 0}]
    assert d["errors"][0]["location"]["argument"] == "--distributed.tp_size 3"


def test_valid_override_exits_0_and_other_subcommands_still_refuse_unknown_args(cfg, capsys):
    assert main(["validate", cfg, "--distributed.tp_size", "2", "--world-size", "8"]) == 0
    with pytest.raises(SystemExit) as exc:
        main(["eval", "--bogus.flag", "1"])
    assert exc.value.code == 2


def test_launch_line_gives_config_world_and_overrides(cfg, capsys):
    code = main(["validate", "--launch", f"automodel {cfg} --nproc-per-node 4 --distributed.tp_size 2"])
    out = capsys.readouterr().out
    assert code == 0 and "VALID at world_size 4 (1 node x 4 GPUs)" in out
    assert "(world size from --nproc-per-node 4 on the launch line (one node))" in out


def test_launch_edited_line_and_warnings(cfg, capsys):
    code = main(["validate", "--launch", f"automodel {cfg} --nproc 4 --distributed.pp_size 2", "--world-size", "4"])
    out = capsys.readouterr().out
    assert code == 1 and "[MW-W-LAUNCH-AMBIGUOUS]" in out
    assert "The same fix as the edited launch line:" in out
    line = out.split("The same fix as the edited launch line:\n", 1)[1].splitlines()[0].strip()
    assert line.startswith(f"automodel {cfg} --nproc 4 --distributed.pp_size 2 --distributed.pipeline.")


def test_elastic_and_bad_lines_exit_2(cfg, capsys):
    assert main(["validate", "--launch", f"torchrun --nnodes 1:4 --nproc-per-node 8 -m nemo_automodel.cli.app {cfg}"]) == 2
    assert "MIN:MAX" in capsys.readouterr().err
    assert main(["validate", "--launch", f"torchrun --nnodes 1:4 -m nemo_automodel.cli.app {cfg}", "--lang", "zh"]) == 2
    assert "弹性" in capsys.readouterr().err
    assert main(["validate", "--launch", "rm -rf /"]) == 2
    # what those messages offer works: the world size typed stands in for the one the line cannot give
    for line in (f"torchrun --nnodes 1:4 --nproc-per-node 8 -m nemo_automodel.cli.app {cfg}",
                 f"torchrun --nnodes $N --nproc-per-node $(nvidia-smi -L | wc -l) -m nemo_automodel.cli.app {cfg}"):
        assert main(["validate", "--launch", line, "--world-size", "16", "--json"]) in (0, 1)
        d = json.loads(capsys.readouterr().out)
        assert d["world_size"] == 16 and d["world_source"] == "--world-size 16 on the command line"
    assert main(["validate", "--launch", f"torchrun --nnodes $N -m nemo_automodel.cli.app {cfg}", "--env", "N=2"]) in (0, 1)


def test_sbatch(cfg, tmp_path, capsys):
    sub = tmp_path / "job.sub"
    sub.write_text(f"#!/bin/bash\n#SBATCH -N 2\n#SBATCH --gpus-per-node=4\nCONFIG={cfg}\n"
                   'srun bash -c "torchrun --nproc_per_node=\\${SLURM_GPUS_PER_NODE:-8} --nnodes=\\${SLURM_NNODES:-1} '
                   '-m nemo_automodel.cli.app ${CONFIG} --distributed.tp_size 2"\n', encoding="utf-8")
    assert main(["validate", "--sbatch", str(sub), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["world_size"] == 8 and "#SBATCH -N 2" in d["world_source"]
    assert d["derived"]["tp_size"] == 2


def test_env_values_and_world_and_unset_is_an_error(tmp_path, capsys):
    p = tmp_path / "e.yaml"
    p.write_text("distributed:\n  tp_size: ${TP}\n", encoding="utf-8")
    assert main(["validate", str(p), "--env", "TP=4", "--env", "WORLD_SIZE=8", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["derived"]["tp_size"] == 4 and d["world_source"] == "WORLD_SIZE=8 in the environment"
    assert main(["validate", str(p), "--env", "WORLD_SIZE=8"]) == 2
    assert "TP" in capsys.readouterr().err
    # without an environment the reference stays the loader-cannot-see-it warning, as before
    assert main(["validate", str(p), "--world-size", "8", "--json"]) in (0, 1)
    assert "MW-W-ENV-VAR" in json.loads(capsys.readouterr().out)["codes"]


def test_shell_env_is_opt_in(tmp_path, capsys, monkeypatch):
    p = tmp_path / "e.yaml"
    p.write_text("distributed:\n  tp_size: ${MW_TEST_TP}\n", encoding="utf-8")
    monkeypatch.setenv("MW_TEST_TP", "2")
    monkeypatch.setenv("WORLD_SIZE", "4")
    assert main(["validate", str(p), "--shell-env", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["derived"]["tp_size"] == 2
    assert main(["validate", str(p), "--json"]) == 2  # no world size: the shell was not read


def test_ci_section(tmp_path, capsys):
    p = tmp_path / "c.yaml"
    p.write_text("distributed:\n  ep_size: 32\nci:\n  nodes: 2\n  cluster_tag: gb200\n  ep_size: 8\n", encoding="utf-8")
    assert main(["validate", str(p), "--ci", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["world_size"] == 8 and "cluster_tag gb200" in d["world_source"] and d["derived"]["ep_size"] == 8
    # --world-size with --ci stands in only where the recipe has no ci: section: the section still decides
    assert main(["validate", str(p), "--ci", "--world-size", "16,32", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["world_size"] == 8 and not d["launch_warnings"]  # one target, no disagreement warned


def test_ci_over_a_folder_skips_recipes_with_no_ci_section(tmp_path, capsys):
    """A pre-commit / CI sweep with --ci meets recipes upstream's CI never runs: each is skipped and said
    so (exit 0), checked at an explicit world size when one is given, and an error only with --require-ci."""
    with_ci, without, workflow = tmp_path / "a.yaml", tmp_path / "b.yaml", tmp_path / "w.yaml"
    with_ci.write_text("recipe: X\ndistributed:\n  tp_size: 2\nci:\n  nodes: 2\n", encoding="utf-8")
    without.write_text("recipe: X\ndistributed:\n  tp_size: 3\n", encoding="utf-8")
    workflow.write_text("on: [push]\njobs: {}\n", encoding="utf-8")
    files = [str(with_ci), str(without), str(workflow)]
    assert main(["validate", *files, "--ci", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [r["ok"] for r in d["reports"]] == [True, None, None] and d["ok"] is True
    assert d["reports"][0]["world_size"] == 16
    assert [r["skipped"]["reason"] for r in d["reports"][1:]] == ["no-ci-section", "not-a-recipe"]
    assert main(["validate", *files, "--ci"]) == 0
    assert f"{without}: no ci: section" in capsys.readouterr().out
    # an explicit world size checks the recipe with no ci: section there (tp 3 does not divide 8)
    assert main(["validate", *files, "--ci", "--world-size", "8", "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert [r["world_size"] for r in d["reports"][:2]] == [16, 8] and d["reports"][1]["ok"] is False
    assert d["reports"][2]["skipped"]["reason"] == "not-a-recipe"
    assert "--world-size 8" in d["reports"][1]["world_source"]
    assert main(["validate", *files, "--ci", "--require-ci"]) == 2
    assert f"{without}: --ci: the recipe has no ci: section" in capsys.readouterr().err
    assert main(["validate", *files, "--ci", "--format", "junit"]) == 0
    out = capsys.readouterr().out
    assert 'tests="3"' in out and 'skipped="2"' in out and "no ci: section" in out
    assert main(["validate", str(with_ci), "--require-ci", "--world-size", "8"]) == 2  # only with --ci
    assert "--require-ci goes with --ci" in capsys.readouterr().err


def test_print_config_resolves_and_masks(cfg, capsys):
    assert main(["validate", cfg, "--print-config", "--env", "CKPT=/ck", "--env", "WANDB_KEY=s3cret",
                 "--distributed.tp_size", "'2'"]) == 0
    out = capsys.readouterr().out
    assert "checkpoint_dir: /ck" in out and "tp_size: 2\n" in out
    assert "s3cret" not in out and "api_key: '******'" in out


GUIDE = UPSTREAM / "docs/guides/pipelining.mdx"


def _guide_pp_dp_command() -> str:
    text = GUIDE.read_text(encoding="utf-8")
    block = text.split("#### Pipeline + Data Parallelism (4 GPUs Total)", 1)[1]
    return re.search(r"```bash\n(.*?)```", block, re.S).group(1)


@pytest.mark.skipif(not GUIDE.is_file(), reason="needs MESHWISE_UPSTREAM_SRC")
def test_pipelining_guide_pp_dp_command(capsys):
    """The guide's "PP+DP on 4 GPUs" command on the recipe its PP section starts from (llama3_2_1b_squad,
    no pipeline block): upstream's parse_distributed_section raises; the argument that turned PP on is named.
    On the guide's first recipe (llama3_1_8b_hellaswag_pp, which has a pipeline block) it passes."""
    command = _guide_pp_dp_command()
    assert "--nproc-per-node 4" in command and "--distributed.pp_size 2" in command
    squad = UPSTREAM / "examples/llm_finetune/llama3_2/llama3_2_1b_squad.yaml"
    assert main(["validate", "--launch", command.replace("your_config.yaml", str(squad)), "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["codes"] == ["MW-E-PP-NO-PIPELINE"] and d["world_size"] == 4
    assert [e["location"]["argument"] for e in d["errors"]] == ["--distributed.pp_size 2"]
    assert "--nproc-per-node 4 on the launch line" in d["world_source"]
    assert d["fix_launch_line"].startswith("uv run automodel")
    first = UPSTREAM / "examples/llm_finetune/llama3_1/llama3_1_8b_hellaswag_pp.yaml"
    assert first.name in GUIDE.read_text(encoding="utf-8").split("## Configuration Options", 1)[0]
    assert main(["validate", "--launch", command.replace("your_config.yaml", str(first))]) == 0


def test_batch_mode_refuses_launch_inputs(capsys):
    assert main(["validate", "--json", "--stdin", "--distributed.tp_size", "2"]) == 2
    assert "--stdin" in capsys.readouterr().err


def test_chinese_report_says_the_source_and_argument(cfg, capsys):
    assert main(["validate", "--launch", f"am {cfg} --nproc-per-node 4 --distributed.pp_size 2", "--lang", "zh"]) == 1
    out = capsys.readouterr().out
    assert "(world size 来自 启动命令中的 --nproc-per-node 4（单节点）)" in out
    assert "[来自参数 --distributed.pp_size 2]" in out and "同一修改的启动命令写法" in out


def test_many_files_each_with_the_overrides(tmp_path, capsys):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text("recipe: X\ndistributed:\n  tp_size: 1\n", encoding="utf-8")
    b.write_text("recipe: X\ndistributed:\n  ep_size: 16\n", encoding="utf-8")
    assert main(["validate", str(a), str(b), "--world-size", "8,16", "--distributed.tp_size", "2", "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert [r["ok"] for r in d["reports"]] == [True, True, False, True]
    bad = d["reports"][2]
    assert bad["errors"][0]["location"]["argument"] == "--distributed.tp_size 2"
    assert bad["fix_overrides"] == ["--distributed.ep_size 8"] and all(r["overrides"] for r in d["reports"])
    assert main(["validate", str(a), str(b), "--world-size", "8", "--distributed.tp_size", "2"]) == 1
    out = capsys.readouterr().out
    assert f"== {b} @ world_size 8 (Launch) ==\nThe same fix as override flags:\n  --distributed.ep_size 8" in out


def test_a_file_that_cannot_be_read_as_launched_is_its_own_error(tmp_path, capsys):
    """One bad file (not YAML, no ci: section, an unset ${VAR}) no longer ends a launch-aware call: the
    other files keep their reports, every format says which file failed, and the exit code is the worst."""
    good, bad, env = tmp_path / "good.yaml", tmp_path / "bad.yaml", tmp_path / "env.yaml"
    good.write_text("recipe: X\ndistributed:\n  tp_size: 1\nci:\n  nodes: 1\n", encoding="utf-8")
    bad.write_text("distributed: [\n", encoding="utf-8")
    env.write_text("recipe: X\ndistributed:\n  tp_size: ${TP}\n", encoding="utf-8")
    assert main(["validate", str(good), str(bad), "--world-size", "8", "--distributed.tp_size", "2", "--json"]) == 2
    d = json.loads(capsys.readouterr().out)
    assert [r["ok"] for r in d["reports"]] == [True, None] and d["reports"][1]["file"] == str(bad)
    assert main(["validate", str(good), str(env), "--ci", "--env", "X=1", "--format", "junit"]) == 2
    out = capsys.readouterr().out
    assert 'tests="2" failures="0" errors="1"' in out and f'name="{env}"' in out
    assert "TP" in out  # the unset variable, in the error of that file's test case
    assert main(["validate", str(good), str(env), "--ci", "--require-ci", "--format", "sarif"]) == 2
    sarif = json.loads(capsys.readouterr().out)
    (note,) = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert note["message"]["text"].startswith(f"{env}: --ci: the recipe has no ci: section")


def test_a_launch_that_cannot_be_checked_says_what_its_warnings_explain(cfg, capsys):
    # argparse takes the override's value as the config: the file `2` is missing, and the warning says why
    assert main(["validate", "--launch", f"automodel --distributed.tp_size 2 {cfg} --nproc-per-node 4"]) == 2
    err = capsys.readouterr().err
    assert "cannot read 2" in err and "[MW-W-LAUNCH-BEFORE-CONFIG]" in err
    assert main(["validate", "--launch", f"torchrun --nproc_per_node=gpu -m nemo_automodel.cli.app {cfg}"]) == 2
    assert "[MW-W-LAUNCH-NPROC-LOCAL]" in capsys.readouterr().err


def test_a_launcher_flag_typed_after_the_file_is_named_not_silently_set(cfg, capsys):
    # `automodel cfg.yaml --nproc-per-node 4` copied after `meshwise validate`: only a recipe key named so
    assert main(["validate", cfg, "--nproc-per-node", "4", "--distributed.tp_size", "2"]) == 2
    assert "[MW-W-LAUNCH-LAUNCHER-FLAG] --nproc-per-node 4" in capsys.readouterr().err
    assert main(["validate", cfg, "--nproc_per_node=4", "--world-size", "8", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [w["code"] for w in d["launch_warnings"]] == ["MW-W-LAUNCH-LAUNCHER-FLAG"] and d["world_size"] == 8


@pytest.mark.parametrize("line", [
    "python recipes/llm/train_ft.py -c {cfg} --distributed.tp_size 2",
    "python -m nemo_automodel.recipes.llm.train_ft --config {cfg} --distributed.tp_size=2",
    "python3 examples/llm_finetune/finetune.py --config {cfg} --distributed.tp_size 2",
])
def test_a_recipe_run_by_python_alone_is_one_process(cfg, capsys, line):
    # no torchrun: nothing sets WORLD_SIZE, so initialize_distributed runs one process
    # (components/distributed/init_utils.py get_world_size_safe), and tp_size 2 cannot divide 1
    code = main(["validate", "--launch", line.format(cfg=cfg), "--json"])
    d = json.loads(capsys.readouterr().out)
    assert code == 1 and d["world_size"] == 1 and "MW-E-WORLD-DIVISIBLE" in d["codes"], d
    assert "WORLD_SIZE" in d["world_source"] and "get_world_size_safe" in d["world_source"]
    assert d["overrides"][0]["path"] == "distributed.tp_size" and d["overrides"][0]["value"] == 2
    # WORLD_SIZE in the launch environment is what upstream reads, with no warning that they differ
    assert main(["validate", "--launch", line.format(cfg=cfg), "--env", "WORLD_SIZE=8", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["world_size"] == 8 and not d["launch_warnings"], d
    # and torchrun's own count for the same script
    torch = "torchrun --nproc-per-node 8 recipes/llm/train_ft.py --config {cfg}".format(cfg=cfg)
    assert main(["validate", "--launch", torch, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["world_size"] == 8
