"""Item 6 of issue 19: every upstream example recipe with a `ci:` section, at its own CI world size with
CI's overrides, gets upstream's verdict there (data/ci_sweep.jsonl, written by make_ci_sweep.py from
upstream's start-up code). Runs on the shared recipe corpus (in CI), and on the upstream tree itself
where MESHWISE_UPSTREAM_SRC is present."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from assistant.config import UPSTREAM_DIR
from assistant.launch.meshes import validate_meshes
from assistant.launch.resolve import resolve
from assistant.validator.coerce import load_yaml

DATA = Path(__file__).resolve().parent / "data" / "ci_sweep.jsonl"
CORPUS = Path(os.environ.get("MESHWISE_UPSTREAM_CORPUS", UPSTREAM_DIR / "recipes-corpus.jsonl"))
UPSTREAM = Path(os.environ.get("MESHWISE_UPSTREAM_SRC", "/work/automodel"))
SECTIONS = ("distributed", "step_scheduler", "packed_sequence")
ROWS = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]


def _check(recipe: dict, row: dict) -> tuple[bool, list[str]]:
    res = resolve(recipe, ci=True)
    assert res.world.world_size == row["world"], row["path"]
    report = validate_meshes(res.recipe, world_size=res.world.world_size, gpus_per_node=res.world.gpus_per_node,
                             suggest_fix=False)
    return report.ok, report.codes


def _tally(results: list[tuple[dict, bool]]) -> str:
    valid = sum(ok for _, ok in results)
    return f"{len(results)} recipes checked at their CI world, {valid} VALID, {len(results) - valid} INVALID"


@pytest.mark.skipif(not CORPUS.is_file(), reason="needs the shared upstream recipe corpus")
def test_ci_sweep_on_the_corpus(record_property):
    corpus = {r["path"]: r for r in map(json.loads, CORPUS.read_text(encoding="utf-8").splitlines())}
    results, wrong = [], []
    for row in ROWS:
        c = corpus.get(row["path"])
        if c is None:
            continue  # a recipe with no distributed: section is not in the corpus
        hint = next((h["value"] for h in c["world_size_hints"] if h["source"] == "ci"), None)
        assert hint in (None, row["world"]), (row["path"], hint, row["world"])  # the corpus read the same CI world
        recipe = {**{k: c[k] for k in SECTIONS if c.get(k) is not None}, "ci": row["ci"]}
        ok, codes = _check(recipe, row)
        results.append((row, ok))
        if ok != row["upstream_ok"]:
            wrong.append((row["path"], row["world"], codes, row["upstream_error"]))
    record_property("ci_sweep_corpus", _tally(results))
    print(_tally(results))
    assert not wrong, wrong
    assert len(results) == 382 and sum(ok for _, ok in results) == 380


@pytest.mark.skipif(not (UPSTREAM / "examples").is_dir(), reason="needs MESHWISE_UPSTREAM_SRC")
def test_ci_sweep_on_the_upstream_examples(record_property):
    want = {r["path"]: r for r in ROWS}
    results, wrong, seen = [], [], set()
    for path in sorted((UPSTREAM / "examples").rglob("*.yaml")):
        data = load_yaml(path.read_bytes())
        if not isinstance(data, dict) or not isinstance(data.get("ci"), dict):
            continue
        rel = str(path.relative_to(UPSTREAM))
        seen.add(rel)
        row = want[rel]
        ok, codes = _check(data, row)
        results.append((row, ok))
        expected = True if row["upstream_ok"] is None else row["upstream_ok"]  # None: reads fsdp:/ddp:, no mesh
        if ok != expected or (row["upstream_ok"] is None and codes != ["MW-W-LAUNCH-NOT-DISTRIBUTED"]):
            wrong.append((rel, row["world"], codes, row["upstream_error"]))
    record_property("ci_sweep_upstream", _tally(results))
    print(_tally(results))
    assert seen == set(want), "data/ci_sweep.jsonl is stale: run make_ci_sweep.py"
    assert not wrong, wrong


@pytest.mark.skipif(not (UPSTREAM / "examples").is_dir(), reason="needs MESHWISE_UPSTREAM_SRC")
def test_generate_configs_with_null_distributed_have_no_mesh():
    paths = sorted((UPSTREAM / "examples/diffusion/generate/configs").glob("generate_*.yaml"))
    assert paths
    for p in paths:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
        if data.get("distributed", {}) is None:
            r = validate_meshes(data, world_size=1, gpus_per_node=8)
            assert r.ok and r.codes == ["MW-W-LAUNCH-NO-MESH"], p


@pytest.mark.skipif(not (UPSTREAM / "examples").is_dir(), reason="needs MESHWISE_UPSTREAM_SRC")
def test_the_mining_config_is_judged_as_its_script_reads_it():
    # mine_hard_negatives.py builds MineHardNegativesRecipe, whose setup reads cfg.dist_env only
    path = UPSTREAM / "examples/retrieval/data_utils/mining_config.yaml"
    script = (UPSTREAM / "nemo_automodel/recipes/retrieval/mine_hard_negatives.py").read_text(encoding="utf-8")
    assert 'self.cfg.get("dist_env"' in script and "cfg.distributed" not in script
    r = validate_meshes(load_yaml(path.read_bytes()), world_size=8, gpus_per_node=8)
    assert r.ok and r.codes == ["MW-W-LAUNCH-NO-MESH-RECIPE"]


@pytest.mark.skipif(not (UPSTREAM / "examples").is_dir(), reason="needs MESHWISE_UPSTREAM_SRC")
def test_validate_ci_over_every_upstream_example(record_property, capsys, monkeypatch):
    """`meshwise validate --ci examples/**/*.yaml` as a CI job runs it: each recipe with a ci: section at its
    CI world gets upstream's verdict, every other file is skipped and said so, none is unusable, and the
    exit code is 1 only because upstream itself rejects a recipe there."""
    from assistant.cli import main

    monkeypatch.chdir(UPSTREAM)
    files = sorted(str(p.relative_to(UPSTREAM)) for p in (UPSTREAM / "examples").rglob("*.yaml"))
    code = main(["validate", "--ci", "--format", "json", *files])
    reports = json.loads(capsys.readouterr().out)["reports"]
    want = {r["path"]: r for r in ROWS}
    invalid = [r["file"] for r in reports if r["ok"] is False]
    skipped = [r for r in reports if "skipped" in r]
    tally = (f"{len(reports)} example YAMLs: {sum(r['ok'] is True for r in reports)} VALID, {len(invalid)} INVALID, "
             f"{len(skipped)} skipped ({sum(r['skipped']['reason'] == 'no-ci-section' for r in skipped)} no ci: section)")
    record_property("validate_ci_sweep", tally)
    print(tally)
    assert not [r for r in reports if "error" in r]
    assert all(want[f]["upstream_ok"] is False for f in invalid), invalid  # only where upstream raises too
    judged = {r["file"]: r for r in reports if r["ok"] is not None}
    assert set(want) <= set(judged)  # every recipe with a ci: section
    for f in set(judged) - set(want):  # no ci: section, but the recipe's own launcher section sizes the world
        assert "skypilot: section" in judged[f]["world_source"] or "nemo_run: section" in judged[f]["world_source"], f
    assert code == (1 if invalid else 0)
