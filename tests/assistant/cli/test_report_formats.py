"""`meshwise validate --format github|sarif|junit`, many files, worst exit code, --fail-on-warnings,
and the place of every finding (`file:line:col:`) in text and JSON."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from assistant.cli import main
from assistant.cli.report_formats import _gh_data, _gh_prop, sarif_rules
from assistant.launch.codes import CODES as LAUNCH_CODES
from assistant.validator.findings import RULES

BAD = "distributed:\n  strategy: fsdp2\n  tp_size: 8\n  pp_size: 4\n  pipeline:\n    pp_schedule: interleaved_1f1b\n"
GOOD = "distributed:\n  strategy: fsdp2\n  tp_size: 2\n"
WARNED = "distributed:\n  strategy: fsdp2\n  tp_size: 16\n"  # valid at 16; TP across two 8-GPU nodes warns
SARIF_SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name, text in (("bad.yaml", BAD), ("good.yaml", GOOD), ("warned.yaml", WARNED)):
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_many_files_each_at_each_world_size_exit_the_worst(files, capsys):
    assert main(["validate", "good.yaml", "warned.yaml", "--world-size", "16"]) == 0
    capsys.readouterr()
    assert main(["validate", "good.yaml", "bad.yaml", "--world-size", "8,32"]) == 1
    out = capsys.readouterr().out
    heads = [line for line in out.splitlines() if line.startswith("== ")]
    assert heads == ["== good.yaml @ world_size 8 ==", "== good.yaml @ world_size 32 ==",
                     "== bad.yaml @ world_size 8 ==", "== bad.yaml @ world_size 32 =="]
    assert main(["validate", "good.yaml", "missing.yaml", "bad.yaml", "--world-size", "8"]) == 2
    err = capsys.readouterr().err
    assert err.count("missing.yaml: cannot read") == 1


def test_finding_lines_carry_file_line_and_column(files, capsys):
    assert main(["validate", "bad.yaml", "--world-size", "32"]) == 1
    out = capsys.readouterr().out
    assert "\nbad.yaml:6:5: [MW-E-PP-SCHEDULE] distributed.pipeline.pp_schedule: " in out
    assert main(["validate", "bad.yaml", "--world-size", "48", "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["file"] == "bad.yaml"
    assert d["errors"][0]["location"] == {"file": "bad.yaml", "line": 3, "column": 3, "argument": None}


def test_fail_on_warnings(files, capsys):
    assert main(["validate", "warned.yaml", "--world-size", "16"]) == 0
    assert main(["validate", "warned.yaml", "--world-size", "16", "--fail-on-warnings"]) == 1
    assert "warned.yaml:3:3: [MW-W-TP-CROSS-NODE]" in capsys.readouterr().out


def test_many_files_json(files, capsys):
    assert main(["validate", "good.yaml", "bad.yaml", "missing.yaml", "--world-size", "8", "--json"]) == 2
    d = json.loads(capsys.readouterr().out)
    assert d["ok"] is None and d["exit_code"] == 2
    assert [(r["file"], r["ok"]) for r in d["reports"]] == [("good.yaml", True), ("bad.yaml", False), ("missing.yaml", None)]
    assert "cannot read" in d["reports"][2]["error"]["message"]


def test_github_escaping():
    assert _gh_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert _gh_prop("a:b,c%") == "a%3Ab%2Cc%25"


def test_github_annotations_then_the_report(files, capsys):
    (files / "odd, name:x.yaml").write_text(BAD, encoding="utf-8")
    assert main(["validate", "odd, name:x.yaml", "warned.yaml", "--world-size", "16", "--format", "github"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("::error file=odd%2C name%3Ax.yaml,line=3,col=3,title=MW-E-WORLD-DIVISIBLE::"
                               "[MW-E-WORLD-DIVISIBLE] distributed.tp_size: world_size (16) must be divisible")
    assert lines[1].startswith("::warning file=warned.yaml,line=3,col=3,title=MW-W-TP-CROSS-NODE::")
    assert all("\n" not in ln for ln in lines[:2])
    assert "== odd, name:x.yaml @ world_size 16 ==" in lines and "Suggested fix (re-validated):" in lines


def test_sarif_validates_against_the_2_1_0_schema(files, capsys):
    assert main(["validate", "bad.yaml", "warned.yaml", "good.yaml", "missing.yaml", "--world-size", "16,32",
                 "--format", "sarif"]) == 2
    log = json.loads(capsys.readouterr().out)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [*RULES, *LAUNCH_CODES]  # one rule per code of the tables
    # the GitHub code-scanning minimum: rule id, message text, a physical location with a line
    for r in run["results"]:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"] and r["message"]["text"]
        region = r["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    first = run["results"][0]
    assert first["ruleId"] == "MW-E-WORLD-DIVISIBLE" and first["level"] == "error"
    assert first["locations"][0]["physicalLocation"] == {"artifactLocation": {"uri": "bad.yaml"},
                                                         "region": {"startLine": 3, "startColumn": 3}}
    assert any(r["ruleId"] == "MW-W-TP-CROSS-NODE" and r["level"] == "warning" for r in run["results"])
    inv = run["invocations"][0]
    assert inv["executionSuccessful"] is False and "missing.yaml" in inv["toolExecutionNotifications"][0]["message"]["text"]


def test_sarif_rules_each_have_a_level():
    levels = {r["id"]: r["defaultConfiguration"]["level"] for r in sarif_rules()}
    assert levels["MW-E-WORLD-DIVISIBLE"] == "error" and levels["MW-W-ENV-VAR"] == "warning"


def test_junit_one_case_per_file_and_world_size(files, capsys):
    assert main(["validate", "good.yaml", "bad.yaml", "missing.yaml", "--world-size", "8,16", "--format", "junit"]) == 2
    root = ET.fromstring(capsys.readouterr().out)
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [f"{f} @ world_size {w}" for f in ("good.yaml", "bad.yaml", "missing.yaml")
                                              for w in (8, 16)]
    assert suite.get("tests") == "6" and suite.get("failures") == "2" and suite.get("errors") == "2"
    assert cases[0].find("failure") is None and cases[2].find("failure").get("type") == "MW-E-WORLD-DIVISIBLE"
    assert "bad.yaml:3:3: [MW-E-WORLD-DIVISIBLE]" in cases[2].find("failure").text
    assert cases[4].find("error") is not None
    assert main(["validate", "warned.yaml", "--world-size", "16", "--format", "junit", "--fail-on-warnings"]) == 1
    warned = ET.fromstring(capsys.readouterr().out).find("testsuite/testcase")
    assert warned.find("failure").get("type") == "MW-W-TP-CROSS-NODE"


def test_stdin_batch_lines_carry_locations(monkeypatch, capsys):
    import io
    import sys

    line = json.dumps({"id": "a", "yaml": BAD, "world_size": 32})
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((line + "\n").encode()), encoding="utf-8"))
    assert main(["validate", "--format", "json", "--stdin"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["errors"][0]["location"] == {"file": None, "line": 6, "column": 5, "argument": None}
