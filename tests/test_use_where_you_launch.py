"""The README's "Use it where you launch" CI snippets, run as written: the pre-commit config through
the real `pre-commit` tool (a local hook: offline, nothing to install), the GitHub Actions workflow's
`run:` steps through bash; and the shipped `.pre-commit-hooks.yaml` through pre-commit's own loader."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from assistant.config import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
BAD = "distributed:\n  strategy: fsdp2\n  tp_size: 8\n  pp_size: 4\n  pipeline:\n    pp_schedule: interleaved1f1b\n"
GOOD = "distributed:\n  strategy: fsdp2\n  tp_size: 2\n"
SARIF_SCHEMA = REPO_ROOT / "tests" / "assistant" / "cli" / "data" / "sarif-schema-2.1.0.json"


def _block(marker: str) -> dict:
    """The YAML block that follows the README comment naming it as tested."""
    section = README.split("## Use it where you launch", 1)[1] if "## Use it where you launch" in README else README
    m = re.search(rf"<!-- tested: {re.escape(marker)}.*?-->\s*```yaml\n(.*?)```", section, re.S)
    assert m, f"README block {marker!r} not found"
    return yaml.safe_load(m.group(1))


def _env(tmp: Path) -> dict:
    """PATH with a `meshwise` that runs this checkout's code, as an installed console script would."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "meshwise"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m assistant.cli "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    env.update(PATH=f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
               PYTHONPATH=str(REPO_ROOT), PRE_COMMIT_HOME=str(tmp / "pre-commit-home"), HOME=str(tmp),
               GIT_CONFIG_NOSYSTEM="1")
    return env


def _project(tmp: Path) -> Path:
    root = tmp / "project"
    (root / "recipes").mkdir(parents=True)
    (root / "ci").mkdir()
    (root / "recipes" / "good.yaml").write_text(GOOD, encoding="utf-8")
    (root / "recipes" / "bad.yaml").write_text(BAD, encoding="utf-8")
    (root / "ci" / "other.yaml").write_text("jobs: {}\n", encoding="utf-8")  # not a recipe: outside `files:`
    return root


def test_the_shipped_hook_manifest_loads_in_pre_commit():
    from pre_commit.clientlib import load_manifest

    (hook,) = load_manifest(str(REPO_ROOT / ".pre-commit-hooks.yaml"))
    assert hook["id"] == "meshwise-validate" and hook["language"] == "python" and hook["types"] == ["yaml"]
    assert hook["entry"] == "meshwise validate"


def test_the_readme_pre_commit_example_runs_through_pre_commit(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    config = _block("tests/test_use_where_you_launch.py runs this block through the real pre-commit")
    root = _project(tmp_path)
    (root / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    env = _env(tmp_path)
    run = lambda *cmd: subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=120)  # noqa: E731
    assert run("git", "init", "-q").returncode == 0
    assert run("git", "add", "-A").returncode == 0
    hook = [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"]
    failed = run(*hook)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "meshwise validate" in failed.stdout and "Failed" in failed.stdout
    assert "recipes/bad.yaml:3:3: [MW-E-WORLD-DIVISIBLE]" in failed.stdout  # 8*4 does not divide 8 or 16
    assert "ci/other.yaml" not in failed.stdout
    (root / "recipes" / "bad.yaml").write_text(GOOD, encoding="utf-8")
    passed = run(*hook)
    assert passed.returncode == 0 and "Passed" in passed.stdout, passed.stdout + passed.stderr


def test_the_readme_github_actions_steps_run(tmp_path):
    import jsonschema

    workflow = _block("tests/test_use_where_you_launch.py runs the `run:` steps of this block")
    steps = workflow["jobs"]["validate"]["steps"]
    runs = [s["run"] for s in steps if "run" in s and s["run"].startswith("meshwise ")]
    assert len(runs) == 2
    assert any(s.get("uses", "").startswith("github/codeql-action/upload-sarif") and s["with"]["sarif_file"] == "meshwise.sarif"
               for s in steps)
    root = _project(tmp_path)
    env = _env(tmp_path)
    annotate = subprocess.run(["bash", "-c", runs[0]], cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert annotate.returncode == 1  # the step fails the job
    assert "::error file=recipes/bad.yaml,line=3,col=3,title=MW-E-WORLD-DIVISIBLE::" in annotate.stdout
    sarif = subprocess.run(["bash", "-c", runs[1]], cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert sarif.returncode == 0  # `|| true`: the upload step still runs
    log = json.loads((root / "meshwise.sarif").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))).validate(log)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert uris == {"recipes/bad.yaml"}


def test_the_shipped_hook_on_a_typical_repository_judges_only_its_recipes(tmp_path):
    """The shipped hook as a repository gets it (its manifest's entry, args, types and exclude, run as a
    local hook so nothing is installed): the repository's own .pre-commit-config.yaml, its GitHub
    workflow and a compose file are no recipes and must not fail the commit; a bad recipe still does."""
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    (shipped,) = yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    hook = {k: shipped[k] for k in ("id", "name", "entry", "types", "args", "exclude") if k in shipped}
    config = {"repos": [{"repo": "local", "hooks": [{**hook, "language": "system"}]}]}
    root = tmp_path / "project"
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / "recipes").mkdir()
    (root / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    (root / ".github" / "workflows" / "ci.yml").write_text(
        "name: ci\non: [pull_request]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: pytest -q ${{ matrix.args }}\n", encoding="utf-8")
    (root / "docker-compose.yml").write_text("services:\n  app:\n    image: python:3.11\n", encoding="utf-8")
    (root / "recipes" / "good.yaml").write_text(GOOD, encoding="utf-8")
    env = _env(tmp_path)
    run = lambda *cmd: subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=120)  # noqa: E731
    assert run("git", "init", "-q").returncode == 0 and run("git", "add", "-A").returncode == 0
    cmd = [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never", "--verbose"]
    passed = run(*cmd)
    assert passed.returncode == 0 and "Passed" in passed.stdout, passed.stdout + passed.stderr
    assert "MW-E-" not in passed.stdout and "MW-W-" not in passed.stdout
    (root / "recipes" / "bad.yaml").write_text(BAD, encoding="utf-8")
    assert run("git", "add", "-A").returncode == 0
    failed = run(*cmd)
    assert failed.returncode == 1 and "recipes/bad.yaml:3:3: [MW-E-WORLD-DIVISIBLE]" in failed.stdout
    assert not re.search(r"(ci|docker-compose)\.yml:\d", failed.stdout)  # no finding placed in them
    assert ".github/workflows/ci.yml: not a recipe" in failed.stdout  # said, and skipped


def test_the_hook_with_ci_checks_each_recipe_at_its_ci_world_and_skips_the_rest(tmp_path):
    """`args: [--ci]` (the .pre-commit-hooks.yaml comment) on a repository laid out as upstream's examples:
    a recipe with a ci: section is checked at its CI world, one without is said and skipped (the commit
    passes), and with --require-ci it fails the commit."""
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    (shipped,) = yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    hook = {k: shipped[k] for k in ("id", "name", "entry", "types") if k in shipped}
    root = tmp_path / "project"
    (root / "examples").mkdir(parents=True)
    (root / "examples" / "ci16.yaml").write_text(GOOD + "ci:\n  nodes: 2\n", encoding="utf-8")
    (root / "examples" / "plain.yaml").write_text(GOOD, encoding="utf-8")
    env = _env(tmp_path)
    run = lambda *cmd: subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=120)  # noqa: E731
    cmd = [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never", "--verbose"]

    def config(args: list[str]) -> None:
        conf = {"repos": [{"repo": "local", "hooks": [{**hook, "args": args, "language": "system"}]}]}
        (root / ".pre-commit-config.yaml").write_text(yaml.safe_dump(conf, sort_keys=False), encoding="utf-8")
        assert run("git", "add", "-A").returncode == 0

    assert run("git", "init", "-q").returncode == 0
    config(["--ci"])
    passed = run(*cmd)
    assert passed.returncode == 0 and "Passed" in passed.stdout, passed.stdout + passed.stderr
    assert "examples/plain.yaml: no ci: section" in passed.stdout
    assert "the recipe's ci: section (ci.nodes 2 x 8 GPUs per node" in passed.stdout
    (root / "examples" / "ci16.yaml").write_text(BAD + "ci:\n  nodes: 2\n", encoding="utf-8")
    failed = run(*cmd)
    assert failed.returncode == 1 and "examples/ci16.yaml:3:3: [MW-E-WORLD-DIVISIBLE]" in failed.stdout
    (root / "examples" / "ci16.yaml").write_text(GOOD + "ci:\n  nodes: 2\n", encoding="utf-8")
    config(["--ci", "--require-ci"])
    failed = run(*cmd)
    assert failed.returncode == 1 and "Failed" in failed.stdout  # pre-commit exits 1 for any failing hook
    assert "examples/plain.yaml: --ci: the recipe has no ci: section" in failed.stdout + failed.stderr
