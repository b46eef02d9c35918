"""Turn a sentence-transformers model on disk into one ONNX file (token ids in, sentence embedding out).

Why: at query time the bundled MiniLM then runs on onnxruntime + tokenizers, so answering a question
imports neither torch nor transformers nor sentence-transformers (about 7 s of a cold `meshwise ask`
on 2 cores). The export traces the model's own modules (transformer, pooling, normalisation), so the
ONNX graph computes what `SentenceTransformer.encode` computes (cosine 0.99999 on our texts).

The weights stay fp32 on purpose. onnxruntime's (and torch's) dynamic int8 quantisation scales the
activations per batch, padding included, so a chunk's vector depended on the chunks embedded beside it
(cosine 0.986-0.995 between the same text alone and in a batch): queries, embedded alone, would never
quite match what ingest stored. fp32 costs about a third more ingest time and nothing noticeable per
query (6 ms).

Run as a separate process (`python -m assistant.index.onnx_export MODEL_DIR OUT`): torch and its
exporter load there and not in the caller. The file appears atomically, so concurrent exports cannot
leave half a file.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import uuid
from pathlib import Path

INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT_NAME = "sentence_embedding"
OPSET = 17
# Enough for a slow, busy 2-core machine; a normal export takes 5-10 s, mostly importing torch.
EXPORT_TIMEOUT_S = 600


class ExportFailed(RuntimeError):
    pass


def _export(model_dir: Path, out: Path) -> None:
    import warnings

    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True).eval()

    class Embed(torch.nn.Module):
        def __init__(self, st: SentenceTransformer):
            super().__init__()
            self.st = st

        def forward(self, input_ids, attention_mask, token_type_ids):
            feats = {"input_ids": input_ids, "attention_mask": attention_mask, "token_type_ids": token_type_ids}
            return self.st(feats)[OUTPUT_NAME]

    example = model.tokenize(["an example sentence", "a second, somewhat longer example sentence"])
    args = tuple(example[k] for k in INPUT_NAMES)
    dynamic = {k: {0: "batch", 1: "tokens"} for k in INPUT_NAMES} | {OUTPUT_NAME: {0: "batch"}}
    tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # tracer notes on Python branches that are constant here
            torch.onnx.export(Embed(model), args, str(tmp), dynamo=False, input_names=list(INPUT_NAMES),
                              output_names=[OUTPUT_NAME], dynamic_axes=dynamic, opset_version=OPSET)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)


def export_onnx(model_dir: Path, out: Path) -> Path:
    """Export in a child process; returns `out`. Raises ExportFailed with the child's last words."""
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "assistant.index.onnx_export", str(model_dir), str(out)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=EXPORT_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise ExportFailed(f"exporting {model_dir} to ONNX took over {EXPORT_TIMEOUT_S} s") from exc
    if proc.returncode != 0 or not out.is_file():
        tail = "\n".join((proc.stderr or proc.stdout or "").strip().splitlines()[-5:])
        raise ExportFailed(f"exporting {model_dir} to ONNX failed (exit {proc.returncode}): {tail}")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model_dir", type=Path)
    p.add_argument("out", type=Path)
    a = p.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model is on disk; never reach for the network
    _export(a.model_dir, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
