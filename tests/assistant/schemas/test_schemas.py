"""The published JSON Schemas hold for what the commands print: every report of the upstream recipe
sweep (`validate --json`), the CLI's other shapes, and `ask --json` answers (a sample of the eval
cases here; the whole `evals/cases` run in the slow test)."""
from __future__ import annotations

import json

import pytest
import yaml

from assistant.cli import main
from assistant.cli.report_formats import checked_json
from assistant.cli.validate_files import Target, check
from assistant.config import REPO_ROOT, UPSTREAM_DIR
from assistant.schemas import load, validator

CORPUS = UPSTREAM_DIR / "recipes-corpus.jsonl"


def _errors(name: str, obj) -> list[str]:
    """The schema's complaints about `obj` as printed (JSON round trip: tuples become arrays)."""
    obj = json.loads(json.dumps(obj, ensure_ascii=False, default=str))
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator(name).iter_errors(obj)]


def test_schemas_are_valid_2020_12():
    from jsonschema import Draft202012Validator

    for name in ("validate", "ask"):
        Draft202012Validator.check_schema(load(name))


@pytest.mark.skipif(not CORPUS.is_file(), reason="upstream corpus not present")
def test_every_report_of_the_recipe_sweep_matches_the_validate_schema():
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(rows) == 460
    checked, bad, invalid = 0, [], 0
    for row in rows:
        recipe = {"distributed": row["distributed"]}
        recipe.update({k: row[k] for k in ("step_scheduler", "packed_sequence") if row.get(k) is not None})
        text = yaml.safe_dump(recipe, sort_keys=False).encode()
        for ws in row["oracle"]:
            c = check(Target(row["path"], int(ws), 8), text)
            obj = checked_json(c)
            invalid += obj["ok"] is False
            errs = _errors("validate", obj)
            if errs:
                bad.append((row["path"], ws, errs[:2]))
            checked += 1
    assert checked >= 460 and invalid > 0  # the sweep has failing reports too, with findings and fixes
    assert not bad, bad[:5]


def test_a_report_with_a_wrong_shape_is_refused():
    c = check(Target("r.yaml", 8, 8), b"distributed:\n  tp_size: 3\n")
    obj = json.loads(json.dumps(checked_json(c)))
    assert not _errors("validate", obj)
    obj["errors"][0]["location"]["line"] = 0
    assert _errors("validate", obj)
    obj = json.loads(json.dumps(checked_json(c)))
    obj["ok"] = True  # ok with errors is not a report
    assert _errors("validate", obj)


def test_cli_shapes_match_the_validate_schema(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text("distributed:\n  tp_size: 2\n", encoding="utf-8")
    (tmp_path / "b.yaml").write_text("distributed:\n  ep_size: 16\n", encoding="utf-8")
    (tmp_path / "wf.yml").write_text("on: [push]\njobs: {}\n", encoding="utf-8")  # not a recipe: skipped
    (tmp_path / "kd.yaml").write_text("recipe: KnowledgeDistillationRecipeForNextTokenPrediction\nseparate_meshes: true\n"
                                      "distributed: {dp_size: 2}\nteacher_distributed: {dp_size: 2}\n", encoding="utf-8")
    runs = [["kd.yaml", "--world-size", "4"], ["wf.yml", "--world-size", "8"], ["a.yaml", "wf.yml", "--world-size", "8"], ["a.yaml", "--world-size", "8"], ["b.yaml", "--world-size", "8"], ["missing.yaml", "--world-size", "8"],
            ["a.yaml", "b.yaml", "missing.yaml", "--world-size", "8,16"], ["a.yaml"],
            ["a.yaml", "--world-size", "8", "--model", "llama-3.1-8b", "--gpu", "h100-80gb"]]
    for argv in runs:
        main(["validate", *argv, "--json"])
        obj = json.loads(capsys.readouterr().out)
        assert not _errors("validate", obj), (argv, _errors("validate", obj))


def _ask_errors(answer) -> list[str]:
    return _errors("ask", answer.to_json())


SAMPLE = [
    "What is wrong with this config on 16 GPUs?\n```yaml\ndistributed:\n  strategy: megatron_fsdp\n  tp_size: 4\n"
    "  pp_size: 2\n  sequence_parallel: true\n```",
    "Which strategy for a 70B model on 8 nodes with 8 GPUs each, with TP and PP?",
    "tp 4 pp 2 on 16 GPUs, what is dp?",
    "ep_size 16 on 8 GPUs, valid?",
    "megatron_fsdp 支持 pp 吗？",
    "where is the device mesh built?",
]


@pytest.mark.parametrize("question", SAMPLE)
def test_ask_answers_match_the_ask_schema(mw_assistant, question):
    from assistant.answer import AskRequest

    ans = mw_assistant.ask(AskRequest(question=question))
    assert not _ask_errors(ans)


def test_a_failing_layout_and_its_fix_each_have_their_own_report(mw_assistant):
    from assistant.answer import AskRequest
    from assistant.validator import validate

    q = SAMPLE[0]
    out = mw_assistant.ask(AskRequest(question=q)).to_json()
    assert out["judged"] is not None and out["judged_validation"]["ok"] is False
    assert out["judged_validation"] == out["validation"]  # the old key, kept
    assert out["yaml"] and out["yaml_validation"]["ok"] is True  # the YAML shown is the fix, and passes
    again = validate(out["yaml"], world_size=out["yaml_validation"]["world_size"],
                     gpus_per_node=out["yaml_validation"]["gpus_per_node"])
    assert again.ok and again.codes == [f["code"] for f in out["yaml_validation"]["warnings"]]


@pytest.mark.slow
def test_every_answer_of_the_eval_run_matches_the_ask_schema(mw_assistant):
    from evals.runner import run
    from evals.schema import load_set

    cases = load_set([REPO_ROOT / "evals" / "cases"])
    assert len(cases) > 500
    result = run(cases, assistant=mw_assistant, progress=False)
    assert len(result.answers) == len(cases)
    bad = [(cid, _errors("ask", ans)[:2]) for cid, ans in result.answers.items() if _errors("ask", ans)]
    assert not bad, bad[:5]


def test_launch_shapes_match_the_validate_schema(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.yaml").write_text("recipe: X\ndistributed:\n  tp_size: ${TP,2}\nci:\n  nodes: 2\n", encoding="utf-8")
    (tmp_path / "job.sub").write_text("#SBATCH -N 2\n#SBATCH --gpus-per-node=4\nCONFIG=a.yaml\n"
                                      "torchrun --nnodes=${SLURM_NNODES} --nproc_per_node=${SLURM_GPUS_PER_NODE} "
                                      "-m nemo_automodel.cli.app ${CONFIG} --distributed.tp_size 3\n", encoding="utf-8")
    runs = [["a.yaml", "--world-size", "8", "--distributed.pp_size", "2"], ["a.yaml", "--ci"],
            ["--launch", "automodel --distributed.tp_size 2 a.yaml --nproc-per-node 4"], ["--sbatch", "job.sub"],
            ["a.yaml", "--world-size", "8,16", "--env", "TP=4"], ["a.yaml", "--env", "WORLD_SIZE=x"],
            ["--launch", "torchrun --nnodes 1:2 -m nemo_automodel.cli.app a.yaml"],
            ["b.yaml", "--ci"], ["a.yaml", "b.yaml", "--ci"], ["a.yaml", "b.yaml", "--ci", "--require-ci"]]
    (tmp_path / "b.yaml").write_text("recipe: X\ndistributed:\n  tp_size: 2\n", encoding="utf-8")  # no ci: section
    for argv in runs:
        main(["validate", *argv, "--json"])
        obj = json.loads(capsys.readouterr().out)
        assert not _errors("validate", obj), (argv, _errors("validate", obj))
