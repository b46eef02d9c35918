"""assistant/index/encoders.py: the two dense channels, offline."""
from __future__ import annotations

import numpy as np
import pytest

from assistant.index.encoders import EncoderUnavailable, load_encoder, minilm_dir


def test_minilm_ships_in_the_wheel():
    assert (minilm_dir() / "modules.json").is_file()


def test_minilm_is_normalised_and_semantic(minilm):
    v = minilm.encode(["tensor parallelism splits layers", "TP shards each weight matrix", "bananas are yellow"])
    assert v.shape == (3, 384) and minilm.english_only
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2]


def test_use_multilingual_crosses_languages(use_multilingual):
    use = use_multilingual
    v = use.encode(["pipeline parallelism", "流水线并行", "the weather is nice"])
    assert v.shape == (3, 512) and not use.english_only
    assert v[0] @ v[1] > v[0] @ v[2]


def test_a_model_that_is_not_on_disk_is_reported_not_downloaded(tmp_path):
    with pytest.raises(EncoderUnavailable):
        load_encoder(str(tmp_path / "no-such-model"))


# ---- MiniLM on onnxruntime (the exported model) ----

SENTENCES = [
    "tensor parallelism splits each layer across GPUs inside a node",
    "pp_size 4 with interleaved1f1b needs pp_microbatch_size and layers divisible by stages",
    "How many GPUs does a 70B model need with FSDP2 and tp_size 8?",
    "ep_size must divide dp_size * cp_size * tp_size and the number of experts",
    "bananas are yellow and grow in bunches",
    "HSDP shards inside a replica group and replicates across groups",
    # longer than 128 word pieces: both sides truncate at the same token
    " ".join(["context parallelism splits the sequence dimension across ranks"] * 30),
]


def test_minilm_onnx_matches_sentence_transformers(minilm):
    """The exported graph computes what sentence-transformers computes."""
    from sentence_transformers import SentenceTransformer

    from assistant.index.encoders import MINILM_SEQ_LEN

    ref = SentenceTransformer(str(minilm_dir()), device="cpu", local_files_only=True)
    ref.max_seq_length = MINILM_SEQ_LEN
    want = ref.encode(SENTENCES, normalize_embeddings=True, convert_to_numpy=True)
    got = minilm.encode(SENTENCES)
    cos = (want * got).sum(axis=1)
    assert cos.min() > 0.9999, cos


def test_minilm_batching_and_threads_do_not_change_vectors(minilm):
    one_by_one = np.vstack([minilm.encode([s]) for s in SENTENCES])
    # Sorted by length, padded within each batch: a text's vector must not depend on its batch mates
    # (it did with int8 dynamic quantisation, see onnx_export.py).
    batched = minilm.encode(SENTENCES, batch_size=3)
    assert np.allclose(one_by_one, batched, atol=1e-4)
    minilm.set_threads(2)
    try:
        assert np.allclose(minilm.encode(SENTENCES), batched, atol=1e-4)
    finally:
        minilm.set_threads(1)


def test_minilm_query_path_imports_neither_torch_nor_transformers(minilm):
    import subprocess
    import sys

    code = ("import sys; from assistant.index.encoders import load_encoder; e = load_encoder('minilm'); "
            "e.encode(['tp_size']); "
            "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"


def test_a_corrupt_onnx_file_is_named_in_the_error(tmp_path):
    from assistant.index.encoders import minilm_onnx_path

    bad = minilm_onnx_path(tmp_path)
    bad.write_bytes(b"not an onnx model")
    with pytest.raises(EncoderUnavailable, match="delete it"):
        load_encoder("minilm", tmp_path)
