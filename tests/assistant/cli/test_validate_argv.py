"""`meshwise validate`'s words grouped as parse_cli_argv reads an override, wherever the files stand."""
from __future__ import annotations

import json

import pytest

from assistant.cli import main

RECIPE = "distributed:\n  strategy: fsdp2\n  tp_size: 1\n"


@pytest.fixture
def files(tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(RECIPE, encoding="utf-8")
    b.write_text(RECIPE.replace("tp_size: 1", "tp_size: 2"), encoding="utf-8")
    return str(a), str(b)


def _reports(out: str) -> list[dict]:
    d = json.loads(out)
    return d["reports"] if "reports" in d else [d]


def test_an_override_before_the_file_takes_its_value(files, capsys):
    a, _ = files
    assert main(["validate", "--world-size", "8", "--distributed.tp_size", "3", a, "--json"]) == 1
    (r,) = _reports(capsys.readouterr().out)
    assert r["file"] == a and r["codes"] == ["MW-E-WORLD-DIVISIBLE"]
    assert r["errors"][0]["location"]["argument"] == "--distributed.tp_size 3"


def test_a_file_after_an_override_is_checked_too(files, capsys):
    a, b = files
    assert main(["validate", a, "--world", "8", "--distributed.pp_size=1", b, "--distributed.tp_size", "4",
                 "--json"]) == 0
    reports = _reports(capsys.readouterr().out)
    assert [r["file"] for r in reports] == [a, b]  # b was dropped before: parse_cli_argv skips a bare word
    assert all([o["argument"] for o in r["overrides"]] == ["--distributed.pp_size=1", "--distributed.tp_size 4"]
               for r in reports)
    assert {r["derived"]["tp_size"] for r in reports} == {4}


def test_own_options_keep_their_values_and_a_bare_flag_takes_none(files, capsys):
    a, b = files
    # --format's value and --world-size's are Meshwise's; --checkpoint.enabled before --json is a bare flag
    assert main(["validate", "--format", "json", a, "--checkpoint.enabled", "--world-size", "4", b]) == 0
    reports = _reports(capsys.readouterr().out)
    assert [r["file"] for r in reports] == [a, b] and {r["world_size"] for r in reports} == {4}
    assert reports[0]["overrides"][0]["value"] is True
