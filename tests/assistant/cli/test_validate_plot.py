"""`meshwise validate --plot`: the device-mesh picture of a valid layout, and no file otherwise."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from assistant.cli import main
from assistant.config import REPO_ROOT

EXAMPLE = str(REPO_ROOT / "examples" / "llama3_70b_tp8_pp4.yaml")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_png_of_the_tp_pp_example_at_64(tmp_path, capsys):
    out = tmp_path / "mesh.png"
    assert main(["validate", EXAMPLE, "--world-size", "64", "--plot", str(out)]) == 0
    data = out.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 10_000
    assert "mesh picture written to" in capsys.readouterr().err
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left behind


def test_svg_by_extension_with_the_ranks_and_chinese_labels(tmp_path):
    out = tmp_path / "mesh.svg"
    assert main(["validate", EXAMPLE, "--world-size", "64", "--plot", str(out), "--plot-axis", "pp",
                 "--lang", "zh"]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.lstrip().startswith("<?xml") and "<svg" in text


def test_moe_view(tmp_path):
    recipe = tmp_path / "moe.yaml"
    recipe.write_text("distributed:\n  strategy: fsdp2\n  ep_size: 8\n", encoding="utf-8")
    out = tmp_path / "moe.png"
    assert main(["validate", str(recipe), "--world-size", "16", "--plot", str(out), "--plot-view", "moe"]) == 0
    assert out.read_bytes().startswith(PNG_MAGIC)


@pytest.mark.parametrize("lang,needle", [("en", "no mesh to draw"), ("zh", "没有可画的 mesh")])
def test_invalid_config_says_no_mesh_and_writes_nothing(tmp_path, capsys, lang, needle):
    out = tmp_path / "mesh.png"
    assert main(["validate", EXAMPLE, "--world-size", "48", "--plot", str(out), "--lang", lang]) == 1
    assert needle in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("name,extra,needle", [
    ("mesh.jpg", [], ".png or .svg"),
    ("no-such-dir/mesh.png", [], "does not exist"),
    ("mesh.png", ["--plot-axis", "cp", "--plot-view", "moe"], "no MoE mesh"),
])
def test_unusable_plot_request_exits_2_and_writes_nothing(tmp_path, capsys, name, extra, needle):
    out = tmp_path / name
    assert main(["validate", EXAMPLE, "--world-size", "64", "--plot", str(out), *extra]) == 2
    assert needle in capsys.readouterr().err
    assert not out.exists()


def test_unusable_input_exits_2_before_drawing(tmp_path, capsys):
    out = tmp_path / "mesh.png"
    assert main(["validate", str(tmp_path / "missing.yaml"), "--world-size", "64", "--plot", str(out)]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert not out.exists()


def test_an_axis_the_layout_lacks_is_refused(tmp_path, capsys):
    recipe = tmp_path / "m.yaml"
    recipe.write_text("distributed:\n  strategy: megatron_fsdp\n  tp_size: 2\n", encoding="utf-8")
    out = tmp_path / "mesh.png"
    assert main(["validate", str(recipe), "--world-size", "8", "--plot", str(out), "--plot-axis", "pp"]) == 2
    assert "tp, dp, cp" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.slow
def test_console_command_draws_the_example_in_a_subprocess(tmp_path):
    out = tmp_path / "m.png"
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "assistant.cli", "validate", EXAMPLE, "--world-size", "64",
                           "--plot", str(out)], capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
    elapsed = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes().startswith(PNG_MAGIC)
    assert "Traceback" not in proc.stderr
    print(f"validate --plot took {elapsed:.2f} s")
