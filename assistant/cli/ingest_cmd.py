"""`meshwise ingest`: build or update the retrieval index.

Default sources: the kb (`Settings.kb_dir`) and the upstream skill folder when present; each
`--source PATH` adds a kb, a skill folder (has SKILL.md) or a Python checkout (e.g. NeMo AutoModel).
The index then holds exactly these sources: documents of sources not named again are removed.
Only new or changed documents are embedded; `--rebuild` re-embeds everything.
"""
from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("ingest", help="build or update the retrieval index",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--source", action="append", type=Path, default=[], metavar="PATH",
                   help="extra source: kb dir, skill folder or Python checkout (repeatable)")
    p.add_argument("--only", action="store_true", help="index only the --source paths, not the defaults")
    p.add_argument("--index-dir", type=Path, default=None, help="index directory (default: MESHWISE_INDEX_DIR "
                   "or the user data dir)")
    p.add_argument("--rebuild", action="store_true", help="re-embed everything instead of updating")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                   help="math-library threads while embedding (default: all cores)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    return p


def run(args: argparse.Namespace) -> int:
    from assistant.config import load_settings
    from ingest.pipeline import build_index, default_sources, resolve_sources
    from ingest.sources import UnknownSource

    settings = load_settings()
    if args.index_dir is not None:
        settings = replace(settings, index_dir=args.index_dir.expanduser().resolve())
    try:
        extra = resolve_sources(args.source)
    except UnknownSource as exc:
        print(f"meshwise ingest: {exc}", file=sys.stderr)
        return 2
    if args.only and not extra:
        print("meshwise ingest: --only needs at least one --source", file=sys.stderr)
        return 2
    sources = extra if args.only else [*default_sources(settings), *extra]
    for s in sources:
        print(f"source: {s.kind:5s} {s.path}", file=sys.stderr)
    try:
        report = build_index(settings, sources, rebuild=args.rebuild, progress=not args.no_progress,
                             threads=args.threads)
    except Exception as exc:  # the previous index still serves: say so
        print(f"meshwise ingest: failed ({exc.__class__.__name__}: {exc}); the previous index, if any, "
              "is unchanged", file=sys.stderr)
        return 1
    for w in report.warnings:
        print(f"warning: {w}", file=sys.stderr)
    mode = "full build" if report.full_rebuild else "incremental"
    if report.full_rebuild and report.rebuild_reasons:
        mode += f" ({'; '.join(report.rebuild_reasons)})"
    print(f"index: {report.index_path}")
    print(f"mode: {mode}")
    for key, c in report.per_source.items():
        print(f"  {key}: {c['files']} files, {c['documents']} documents, {c['chunks']} chunks")
    print(f"documents: {report.documents} (added {report.added}, updated {report.updated}, "
          f"removed {report.removed}, unchanged {report.unchanged})")
    print(f"chunks: {report.chunks} ({report.chunks_embedded} embedded this run)")
    print(f"time: {report.seconds:.1f} s")
    return 0
