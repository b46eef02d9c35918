"""assistant/index/onnx_export.py: the one-time export of MiniLM that the query path runs on."""
from __future__ import annotations

import numpy as np
import pytest

from assistant.index.encoders import load_encoder

pytestmark = pytest.mark.slow  # each test starts a process that imports torch and exports (10-20 s)

TEXTS = ["tp_size 8 inside a node", "流水线并行 pp_size", "bananas are yellow", "ep_size divides dp * cp * tp"]


def test_export_is_deterministic_and_atomic(tmp_path, minilm):
    """A re-export (cache cleared) must embed exactly as the file an index was built with."""
    from assistant.index.encoders import minilm_onnx_path

    fresh = load_encoder("minilm", tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [minilm_onnx_path(tmp_path).name]  # no temp files left
    assert fresh.model_id == minilm.model_id
    assert np.allclose(fresh.encode(TEXTS), minilm.encode(TEXTS), atol=1e-6)


def test_a_failed_export_says_why(tmp_path):
    from assistant.index.onnx_export import ExportFailed, export_onnx

    (tmp_path / "model").mkdir()
    with pytest.raises(ExportFailed, match="failed"):
        export_onnx(tmp_path / "model", tmp_path / "out.onnx")
    assert not (tmp_path / "out.onnx").exists()
