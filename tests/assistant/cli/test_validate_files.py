"""Targets of one `validate` call: a file after its launch-line overrides, placed in the file's own
text with the argument named; exit codes; a file named for several world sizes read once."""
from __future__ import annotations

from dataclasses import dataclass

from assistant.cli import validate_files
from assistant.cli.validate_files import Target, check, check_all, worst
from assistant.validator.locate import Location

TEXT = b"distributed:\n  strategy: fsdp2\n  tp_size: 1\n"


@dataclass(frozen=True)
class Override:  # duck-typed as launch-in's assistant/launch Override
    path: str
    value: object
    argument: str
    index: int


def test_a_finding_an_override_caused_names_the_argument_and_the_files_line():
    pp = Override("distributed.pp_size", 3, "--distributed.pp_size 3", 2)
    recipe = {"distributed": {"strategy": "fsdp2", "tp_size": 1, "pp_size": 3, "pipeline": {}}}  # the file after it
    c = check(Target("cfg.yaml", 8, 8, overrides=(pp,), recipe=recipe), TEXT)
    assert c.report is not None and not c.report.ok
    placed = dict((f.code, loc) for f, loc in c.located)
    # pp_size is not in the file: the finding stands at the section it belongs to, and names the argument
    assert placed["MW-E-WORLD-DIVISIBLE"] == Location("cfg.yaml", 1, 1, "--distributed.pp_size 3")


def test_exit_codes_and_the_worst():
    ok = check(Target("a.yaml", 8, 8), TEXT)
    warned = check(Target("b.yaml", 16, 8), b"distributed:\n  tp_size: 16\n")
    bad = check(Target("c.yaml", 8, 8), b"distributed:\n  tp_size: 3\n")
    unusable = check(Target("d.yaml", 8, 8), b"distributed: [")
    assert [c.exit_code() for c in (ok, warned, bad, unusable)] == [0, 0, 1, 2]
    assert warned.exit_code(fail_on_warnings=True) == 1
    assert worst([ok, warned]) == 0 and worst([ok, warned], True) == 1 and worst([bad, unusable, ok]) == 2
    assert worst([]) == 0


def test_a_file_is_read_once_for_all_its_world_sizes(tmp_path, monkeypatch):
    p = tmp_path / "r.yaml"
    p.write_bytes(TEXT)
    reads = []
    real = validate_files.read_input
    monkeypatch.setattr(validate_files, "read_input", lambda name: reads.append(name) or real(name))
    out = check_all([Target(str(p), w, 8) for w in (1, 2, 4, 8)] + [Target(str(tmp_path / "none.yaml"), 8, 8)])
    assert reads == [str(p), str(tmp_path / "none.yaml")]
    assert [c.report.world_size for c in out[:4]] == [1, 2, 4, 8] and out[4].error is not None


WORKFLOW = b"name: ci\non: [pull_request]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.sha }}\n"
PRE_COMMIT = b"repos:\n  - repo: local\n    hooks:\n      - id: x\n        entry: echo $file\n"


def test_a_yaml_with_no_recipe_or_distributed_key_is_skipped_not_judged():
    # a repository's own .pre-commit-config.yaml, a workflow, a list document: upstream never loads them
    # as a recipe, so the hook must not report "repos is not an option of strategy fsdp2" on them
    for text in (WORKFLOW, PRE_COMMIT, b"- id: meshwise-validate\n  entry: meshwise validate\n", b"{}\n"):
        c = check(Target("x.yaml", 8, 8), text)
        assert c.report is None and c.error is None and c.skipped is not None, text
        assert c.exit_code() == 0 and c.exit_code(fail_on_warnings=True) == 0
        assert "not a recipe" in c.skipped[0] and c.skipped[1]
    # a bare distributed mapping is still judged, and so is a recipe with any recipe section
    assert not check(Target("b.yaml", 8, 8), b"tp_size: 3\n").report.ok
    assert check(Target("r.yaml", 8, 8), b"model:\n  pretrained_model_name_or_path: x\n").report is not None
