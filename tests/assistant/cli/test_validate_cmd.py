"""`meshwise validate`: exit codes, human and JSON output, and the JSON-lines batch mode."""
from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from assistant.cli import main

GOOD = "distributed:\n  strategy: fsdp2\n  tp_size: 2\nstep_scheduler:\n  global_batch_size: 32\n  local_batch_size: 2\n"
BAD = "distributed:\n  strategy: fsdp2\n  tp_size: 8\n  pp_size: 4\n  pipeline:\n    pp_schedule: interleaved_1f1b\n"


@pytest.fixture
def recipe(tmp_path):
    def write(text: str, name: str = "r.yaml"):
        p = tmp_path / name
        p.write_text(text, encoding="utf-8")
        return str(p)
    return write


def _stdin(monkeypatch, data: bytes):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def test_valid_exits_0_and_reports_mesh(recipe, capsys):
    assert main(["validate", recipe(GOOD), "--world-size", "8"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("VALID at world_size 8")
    assert "(pp, dp_replicate, dp_shard, cp, tp) = (1, 1, 4, 1, 2)" in out
    assert "gradient accumulation steps: 4" in out


def test_invalid_exits_1_with_codes_and_fix(recipe, capsys):
    assert main(["validate", recipe(BAD), "--world-size", "48"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("INVALID")
    assert "[MW-E-WORLD-DIVISIBLE] distributed.tp_size: world_size (48) must be divisible by tp_size*cp_size*pp_size (8*1*4 = 32)" in out
    assert "Suggested fix" in out and "interleaved1f1b" in out


def test_nodes_and_gpus_per_node(recipe, capsys):
    assert main(["validate", recipe(BAD), "--nodes", "4", "--gpus-per-node", "8"]) == 1
    out = capsys.readouterr().out
    assert "world_size 32" in out and "MW-E-PP-SCHEDULE" in out
    assert main(["validate", recipe(GOOD), "--nodes", "2", "--world-size", "8"]) == 2
    assert "disagrees" in capsys.readouterr().err


def test_chinese_report(recipe, capsys):
    assert main(["validate", recipe(BAD), "--world-size", "32", "--lang", "zh"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("不通过") and "不是 torch 接受的调度名" in out and "pp_schedule" in out


def test_json_output(recipe, capsys):
    assert main(["validate", recipe(BAD), "--world-size", "32", "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["ok"] is False and d["codes"][0] == "MW-E-PP-SCHEDULE" and d["suggested_fix"]
    assert d["derived"]["mesh_shape"] == [4, 1, 1, 1, 8]


def test_stdin_dash(monkeypatch, capsys):
    _stdin(monkeypatch, GOOD.encode())
    assert main(["validate", "-", "--world-size", "8"]) == 0


@pytest.mark.parametrize("argv_tail, needle", [
    (["--world-size", "8"], "not valid YAML"),
    (["--world-size", "0"], "world_size"),
    ([], "--world-size"),
])
def test_unusable_exits_2_with_a_message(recipe, capsys, argv_tail, needle):
    assert main(["validate", recipe("distributed: [oops"), *argv_tail]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


def test_missing_file_and_unknown_model(capsys, recipe):
    assert main(["validate", "/nonexistent/recipe.yaml", "--world-size", "8"]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert main(["validate", recipe(GOOD), "--world-size", "8", "--model", "no-such-model-xyz"]) == 2


def test_model_aware_run(recipe, capsys):
    code = main(["validate", recipe(GOOD), "--world-size", "8", "--model", "llama-3.1-8b", "--gpu", "h100-80gb"])
    assert code in (0, 1)
    assert "Memory per GPU" in capsys.readouterr().out


def test_batch_mode(monkeypatch, capsys):
    lines = [
        json.dumps({"id": "a", "yaml": GOOD, "world_size": 8}),
        "not json",
        json.dumps({"id": 2, "config": {"ep_size": 16}, "world_size": 8, "gpus_per_node": 4}),
        json.dumps({"id": "c", "config": {}, "world_size": 0}),
        json.dumps({"id": "d", "world_size": 8}),
        "",
        json.dumps({"id": "e", "yaml": "a: [", "world_size": 8}),
        json.dumps([1, 2]),
        json.dumps({"id": "f", "config": {"strategy": "ddp"}, "world_size": 8}),
    ]
    _stdin(monkeypatch, ("\n".join(lines) + "\n").encode())
    assert main(["validate", "--json", "--stdin"]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [o["id"] for o in out] == ["a", None, 2, "c", "d", "e", None, "f"]
    assert [o["ok"] for o in out] == [True, None, False, None, None, None, None, True]
    assert out[2]["codes"][0] == "MW-E-EP-DIVIDES" and out[2]["gpus_per_node"] == 4
    assert all("error" in out[i] and out[i]["error"]["message"] for i in (1, 3, 4, 5, 6))


def test_batch_needs_json(capsys):
    assert main(["validate", "--stdin"]) == 2


def test_console_script_never_prints_a_traceback(tmp_path):
    junk = tmp_path / "junk.yaml"
    junk.write_bytes(bytes(range(256)) * 10)
    code = "import sys; from assistant.cli import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.run([sys.executable, "-c", code, "validate", str(junk), "--world-size", "8"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "UTF-8" in proc.stderr


def _strict(line: str):
    def bad(name):
        raise ValueError(f"not JSON: {name}")
    return json.loads(line, parse_constant=bad)


def test_batch_answers_every_hostile_line_in_order_as_strict_json(monkeypatch, capsys):
    """Issue 20.5: a non-string model or gpu, 100,000 `[`, "id": NaN, a deep config: each line its own
    answer or error, in order, and every output line strict JSON."""
    deep = "[" * 900 + "]" * 900  # JSON that parses, deeper than the validator walks
    lines = [
        json.dumps({"id": 1, "yaml": GOOD, "world_size": 8, "model": 5}),
        json.dumps({"id": 2, "yaml": GOOD, "world_size": 8, "gpu": ["h100"]}),
        "[" * 100_000,
        '{"id": NaN, "yaml": "distributed: {}", "world_size": 8}',
        '{"id": 5, "config": {"distributed": ' + deep + '}, "world_size": 8}',
        json.dumps({"id": 6, "yaml": GOOD, "world_size": 8, "gpus_per_node": 100_000}),
        json.dumps({"id": 7, "yaml": GOOD, "world_size": 8}),
    ]
    _stdin(monkeypatch, ("\n".join(lines) + "\n").encode())
    assert main(["validate", "--json", "--stdin"]) == 0
    out = [_strict(line) for line in capsys.readouterr().out.splitlines()]
    assert [o["id"] for o in out] == [1, 2, None, None, 5, 6, 7]
    assert [o["ok"] for o in out] == [None] * 6 + [True]
    assert '"model" must be a string' in out[0]["error"]["message"]
    assert '"gpu" must be a string' in out[1]["error"]["message"]
    assert "nested too deeply" in out[2]["error"]["message"]
    assert "NaN" in out[3]["error"]["message"]
    assert "nested more than" in out[4]["error"]["message"]
    assert "gpus_per_node must be at most 64" in out[5]["error"]["message"]
