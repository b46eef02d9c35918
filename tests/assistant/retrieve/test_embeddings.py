"""assistant/retrieve/embeddings.py: the two dense channels, offline."""
from __future__ import annotations

import numpy as np
import pytest

from assistant.retrieve.embeddings import EncoderUnavailable, load_encoder, minilm_dir


def test_minilm_ships_in_the_wheel():
    assert (minilm_dir() / "modules.json").is_file()


@pytest.fixture(scope="module")
def minilm(small_retriever):
    return next(e for e in small_retriever.encoders if e.name == "minilm")


def test_minilm_is_normalised_and_semantic(minilm):
    v = minilm.encode(["tensor parallelism splits layers", "TP shards each weight matrix", "bananas are yellow"])
    assert v.shape == (3, 384) and minilm.english_only
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2]


def test_use_multilingual_crosses_languages(small_retriever):
    use = next(e for e in small_retriever.encoders if e.name == "use-multilingual")
    v = use.encode(["pipeline parallelism", "流水线并行", "the weather is nice"])
    assert v.shape == (3, 512) and not use.english_only
    assert v[0] @ v[1] > v[0] @ v[2]


def test_a_model_that_is_not_on_disk_is_reported_not_downloaded(tmp_path):
    with pytest.raises(EncoderUnavailable):
        load_encoder(str(tmp_path / "no-such-model"))
