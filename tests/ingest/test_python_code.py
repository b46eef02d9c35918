"""ingest/sources/python_code.py: code-anchor chunks from Python sources."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from ingest.chunking import MAX_TOKENS, count_tokens
from ingest.sources.python_code import chunk_python, load_checkout

SOURCE = '''"""Mesh helpers for the test."""
from dataclasses import dataclass


@dataclass
class MeshConfig:
    """Sizes of the mesh."""
    tp_size: int = 1
    ep_size: int = 1

    def validate(self, world: int) -> None:
        if world % self.tp_size:
            raise ValueError(f"world={world} must be divisible by tp_size={self.tp_size}")
        assert self.ep_size > 0, "ep_size must be positive"


def build_mesh(cfg: MeshConfig, world: int = 8) -> dict:
    """Build the mesh.

    Second paragraph is not indexed."""
    cfg.validate(world)
    return {}


def _helper(x):
    return x
'''


def test_symbols_signatures_docstrings_and_checks_become_chunks():
    chunks = chunk_python(SOURCE, "pkg/mesh.py")
    by_symbol = {c.extra["symbol"]: c for c in chunks}
    assert set(by_symbol) == {"", "MeshConfig", "MeshConfig.validate", "build_mesh"}  # _helper has nothing to say
    module = by_symbol[""]
    assert "Mesh helpers for the test." in module.text and "build_mesh()" in module.text
    cls = by_symbol["MeshConfig"]
    assert "@dataclass" in cls.text and "tp_size: int = 1" in cls.text and cls.line == 6
    val = by_symbol["MeshConfig.validate"]
    assert "raise ValueError: f'world={world} must be divisible by tp_size={self.tp_size}'" in val.text
    assert "assert self.ep_size > 0: ep_size must be positive" in val.text
    assert val.heading == "pkg/mesh.py > MeshConfig.validate" and val.text.startswith("pkg/mesh.py:")
    fn = by_symbol["build_mesh"]
    assert "def build_mesh(cfg: MeshConfig, world: int=8) -> dict" in fn.text
    assert "Second paragraph" not in fn.text
    assert all(c.kind == "code" for c in chunks)


def test_test_files_give_only_their_module_chunk():
    chunks = chunk_python(SOURCE, "tests/unit/test_mesh.py")
    assert len(chunks) == 1 and "build_mesh()" in chunks[0].text and chunks[0].extra["symbol"] == ""


def test_unparseable_file_gives_no_chunks():
    assert chunk_python("def broken(:\n", "x.py") == []


def test_checkout_walk_skips_caches_and_reads_only_python(tmp_path):
    (tmp_path / "pkg" / "__pycache__").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text(SOURCE)
    (tmp_path / "pkg" / "__pycache__" / "a.py").write_text("x = 1\n")
    (tmp_path / "README.md").write_text("# readme\n")
    seen = []
    res = load_checkout(tmp_path, on_file=seen.append)
    assert [d.metadata["path"] for d in res.documents] == ["pkg/a.py"]
    assert res.files_seen == 2 and len(seen) == 2


def test_a_checkout_link_to_a_file_outside_is_skipped_with_a_warning(tmp_path):
    (tmp_path / "co" / "pkg").mkdir(parents=True)
    (tmp_path / "co" / "pkg" / "a.py").write_text(SOURCE)
    (tmp_path / "elsewhere.py").write_text("SECRET = 1\n")
    os.symlink(tmp_path / "elsewhere.py", tmp_path / "co" / "pkg" / "b.py")
    res = load_checkout(tmp_path / "co")
    assert [d.metadata["path"] for d in res.documents] == ["pkg/a.py"]
    assert any("pkg/b.py" in w and "outside" in w for w in res.warnings)


UPSTREAM = os.environ.get("MESHWISE_UPSTREAM_SRC")


@pytest.mark.skipif(not UPSTREAM or not Path(UPSTREAM, "nemo_automodel").is_dir(),
                    reason="set MESHWISE_UPSTREAM_SRC to a NeMo AutoModel checkout")
def test_upstream_mesh_code_yields_its_validation_messages():
    path = Path(UPSTREAM) / "nemo_automodel/components/distributed/mesh_utils.py"
    chunks = chunk_python(path.read_text(), "nemo_automodel/components/distributed/mesh_utils.py")
    assert any("must be a multiple of ep_size" in c.text for c in chunks)
    assert all(count_tokens(c.embed_text) <= MAX_TOKENS for c in chunks)
