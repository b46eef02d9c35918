"""One thread per pool for query-time work.

A query runs onnxruntime (MiniLM), numpy/BLAS (USE) and faiss one after the other (and torch, when a
sentence-transformers model is configured). On a 2-core machine each
pool defaulting to two threads makes them fight over the cores: measured p95 goes from ~20 ms to
100-500 ms. One thread each keeps a single query fast and leaves the other core to other requests.
"""
from __future__ import annotations

_limiter = None  # threadpoolctl keeps the limit only while its controller object is alive


def limit_query_threads() -> None:
    global _limiter
    import sys

    import faiss
    from threadpoolctl import threadpool_limits

    # torch only when something already loaded it: importing it here would add 2 s to every cold start
    # for a pool nothing uses (onnxruntime's pool is sized per session, see embeddings.py).
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    faiss.omp_set_num_threads(1)
    if _limiter is None:
        _limiter = threadpool_limits(limits=1)
