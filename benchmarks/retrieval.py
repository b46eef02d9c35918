"""Retrieval benchmark: quality of the hybrid retriever against a plain llama-index baseline, plus
ingest and query timings.

    OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1 \
        .venv/bin/python benchmarks/retrieval.py [--kb DIR] [--no-skill] [--json OUT]

Steps (all in a temporary directory; the kb is copied there, so the incremental step can edit a
document without touching the repo):
1. cold ingest of the default sources (kb + upstream skill folder), models loaded inside the timing;
2. incremental re-ingest after one kb document changes (models already loaded), then the same from a
   fresh `meshwise ingest` process (interpreter start and imports included);
3. recall@5 and MRR per language on evals/retrieval/queries.yaml for the hybrid, each channel alone,
   channel pairs, and a plain llama-index VectorStoreIndex (MiniLM, SentenceSplitter sized to its
   256-token window) over the same documents;
4. warm query latency of `Retriever.search` (p50/p95 over every query, 3 rounds after a warm-up).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from assistant.config import KB_DIR, load_settings  # noqa: E402
from assistant.retrieve.evaluate import load_queries, score  # noqa: E402
from assistant.retrieve.fusion import rrf  # noqa: E402
from assistant.retrieve.retriever import KIND_PRIOR, Retriever, base_id  # noqa: E402
from assistant.index.status import default_sources  # noqa: E402
from ingest.pipeline import build_index, load_documents  # noqa: E402
from ingest.refresh import refresh_index  # noqa: E402
from ingest.sources import Source  # noqa: E402


def dedupe(ids):
    seen, out = set(), []
    for i in ids:
        if i not in seen:
            seen.add(i)
            out.append(i)
    return out


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kb", type=Path, default=KB_DIR)
    ap.add_argument("--no-skill", action="store_true", help="index the kb only")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="threads while ingesting")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="mw-bench-"))
    results: dict = {}
    try:
        kb = work / "kb"
        shutil.copytree(args.kb, kb)
        settings = replace(load_settings(), kb_dir=kb, index_dir=work / "index")
        sources = [Source("kb", kb)] if args.no_skill else default_sources(settings)

        # 1. cold ingest
        t = time.perf_counter()
        rep = build_index(settings, sources, threads=args.threads)
        cold = time.perf_counter() - t
        results["ingest_cold_s"] = cold
        results["chunks"] = rep.chunks
        results["documents"] = rep.documents
        print(f"cold ingest ({args.threads} threads, load average {os.getloadavg()[0]:.1f} at the end): "
              f"{cold:.1f} s, {rep.documents} documents, {rep.chunks} chunks")
        for key, c in rep.per_source.items():
            print(f"  {key}: {c['documents']} documents, {c['chunks']} chunks")

        retriever = Retriever.load(settings, build=refresh_index)
        encoders = retriever.encoders

        # 2. incremental: one kb document changes
        doc = sorted((kb / "en").rglob("*.md"))[0]
        doc.write_text(doc.read_text(encoding="utf-8") + "\n\nAn added closing note for the benchmark.\n",
                       encoding="utf-8")
        t = time.perf_counter()
        rep = build_index(settings, sources, encoders=encoders, threads=args.threads)
        inc = time.perf_counter() - t
        results["ingest_incremental_s"] = inc
        print(f"incremental ingest (1 doc changed, models loaded): {inc:.2f} s, "
              f"{rep.updated} updated, {rep.chunks_embedded} chunks embedded")
        doc.write_text(doc.read_text(encoding="utf-8") + "\nA second note.\n", encoding="utf-8")
        env = {**os.environ, "MESHWISE_KB_DIR": str(kb), "MESHWISE_INDEX_DIR": str(settings.index_dir)}
        cmd = [str(Path(sys.executable).with_name("meshwise")), "ingest", "--no-progress",
               "--threads", str(args.threads)]
        if args.no_skill:
            cmd += ["--only", "--source", str(kb)]
        t = time.perf_counter()
        subprocess.run(cmd, env=env, cwd=REPO, check=True, capture_output=True)
        inc_cli = time.perf_counter() - t
        results["ingest_incremental_cli_s"] = inc_cli
        print(f"incremental ingest via a fresh `meshwise ingest` process: {inc_cli:.1f} s wall")
        retriever = Retriever.load(settings, encoders=encoders, build=refresh_index)

        # 3. quality
        queries = load_queries()
        recs = retriever.store.records
        cache = {q.q: retriever.rankings(q.q) for q in queries}
        names = [r.name for r in next(iter(cache.values()))]

        def fused(q, channels, prior=KIND_PRIOR):
            """Same document-level fusion and kind prior as `Retriever.search`, on a channel subset."""
            lists = [dedupe(base_id(recs[nid]["doc_id"]) for nid in r.node_ids)
                     for r in cache[q] if r.name in channels]
            kinds = {base_id(recs[nid]["doc_id"]): recs[nid]["kind"] for r in cache[q] for nid in r.node_ids}
            scored = [(b, sc * prior.get(kinds[b], 1.0)) for b, sc in rrf(lists)]
            return [b for b, _ in sorted(scored, key=lambda x: -x[1])]

        systems = {"hybrid (search)": lambda q: [base_id(h.doc_id) for h in retriever.search(q, k=5)],
                   "hybrid without kind prior": lambda q: fused(q, set(names), prior={})}
        for n in names:
            systems[f"{n} alone"] = lambda q, n=n: fused(q, {n})
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                systems[f"{a} + {b}"] = lambda q, a=a, b=b: fused(q, {a, b})
        systems["plain VectorStoreIndex (MiniLM)"] = baseline(settings, sources)

        counts = score(lambda q: [], queries)
        print(f"\nrecall@5 / MRR per language ({counts['en'].n} en, {counts['zh'].n} zh queries)")
        print(f"{'system':38s} {'en R@5':>7s} {'en MRR':>7s} {'zh R@5':>7s} {'zh MRR':>7s} "
              f"{'zh-only MRR':>11s} {'mixed MRR':>9s}")
        results["quality"] = {}
        for name, fn in systems.items():
            by_lang = score(fn, queries)
            by_style = score(fn, queries, group=lambda q: q.style)
            en, zh = by_lang["en"], by_lang["zh"]
            print(f"{name:38s} {en.recall:7.3f} {en.mrr:7.3f} {zh.recall:7.3f} {zh.mrr:7.3f} "
                  f"{by_style['zh'].mrr:11.3f} {by_style['mixed'].mrr:9.3f}")
            groups = {**by_lang, **{f"style:{s}": x for s, x in by_style.items()}}
            results["quality"][name] = {k: {"recall@5": v.recall, "mrr": v.mrr, "misses": v.misses}
                                        for k, v in groups.items()}

        # 4. warm latency
        for q in queries:
            retriever.search(q.q)
        lat = []
        for _ in range(args.rounds):
            for q in queries:
                t = time.perf_counter()
                retriever.search(q.q)
                lat.append((time.perf_counter() - t) * 1000)
        results["query_ms"] = {"p50": statistics.median(lat), "p95": pct(lat, 95), "n": len(lat)}
        print(f"\nwarm query latency over {len(lat)} searches: p50 {statistics.median(lat):.1f} ms, "
              f"p95 {pct(lat, 95):.1f} ms")
        print(f"targets: cold < 60 s ({cold:.1f}), incremental < 5 s ({inc:.2f}), p95 < 50 ms ({pct(lat, 95):.1f})")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False, allow_nan=False), encoding="utf-8")
    return 0


def baseline(settings, sources):
    """A plain llama-index VectorStoreIndex: same documents, same MiniLM, default retriever."""
    from llama_index.core import VectorStoreIndex
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    from assistant.index.encoders import minilm_dir

    docs, _, _ = load_documents(sources, progress=False)
    embed = HuggingFaceEmbedding(model_name=str(minilm_dir()), device="cpu")
    t = time.perf_counter()
    index = VectorStoreIndex.from_documents(docs, embed_model=embed,
                                            transformations=[SentenceSplitter(chunk_size=256, chunk_overlap=20)])
    print(f"baseline index built in {time.perf_counter() - t:.1f} s")
    ret = index.as_retriever(similarity_top_k=20)

    # The baseline gets the same per-document dedup as the hybrid, so only ranking quality differs.
    return lambda q: dedupe(base_id(n.node.ref_doc_id or n.node.metadata["doc_id"]) for n in ret.retrieve(q))


if __name__ == "__main__":
    sys.exit(main())
