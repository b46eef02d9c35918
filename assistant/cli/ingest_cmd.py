"""`meshwise ingest`: build or update the retrieval index.

Default sources: the kb (`Settings.kb_dir`) and the upstream skill folder when present. Each
`--source PATH` adds a kb, a skill folder (has SKILL.md) or a Python checkout (e.g. NeMo AutoModel);
an added source is kept by every later ingest (and by `ask`, `serve`, `slack`, `eval`, which refresh
the index from the sources it was built from) until `--remove-source PATH`. `--only` indexes just the
`--source` paths given. `--list` shows the sources of the current index. Only new or changed
documents are embedded; `--rebuild` re-embeds everything.
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
                   help="add a source: kb dir, skill folder or Python checkout (repeatable; kept until removed)")
    p.add_argument("--remove-source", action="append", type=Path, default=[], metavar="PATH",
                   help="drop a source added before, and its documents (repeatable)")
    p.add_argument("--list", action="store_true", help="list the sources of the current index and exit")
    p.add_argument("--only", action="store_true", help="index only the --source paths, not the defaults "
                   "or sources added before")
    p.add_argument("--index-dir", type=Path, default=None, help="index directory (default: MESHWISE_INDEX_DIR "
                   "or the user data dir)")
    p.add_argument("--rebuild", action="store_true", help="re-embed everything instead of updating")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                   help="math-library threads while embedding (default: all cores)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    return p


def _fail(message: str, code: int = 2) -> int:
    print(f"meshwise ingest: {message}", file=sys.stderr)
    return code


def _list(index_dir: Path, manifest) -> int:
    from assistant.index.status import recorded_sources

    if manifest is None:
        return _fail(f"no index under {index_dir} (run `meshwise ingest`)", 1)
    for s in recorded_sources(manifest):
        state = "" if s.path.exists() else "  [missing]"
        print(f"{s.kind:5s} {'added  ' if s.added else 'default'} {s.path}{state}")
    return 0


def run(args: argparse.Namespace) -> int:
    from assistant.config import load_settings
    from assistant.index.manifest import Manifest
    from assistant.index.status import current_version
    from ingest.source_list import SourceChange, SourceListError
    from ingest.sources import UnknownSource, detect_source

    settings = load_settings()
    if args.index_dir is not None:
        settings = replace(settings, index_dir=args.index_dir.expanduser().resolve())
    if args.list:
        version = current_version(Path(settings.index_dir))
        return _list(Path(settings.index_dir), Manifest.load(version) if version is not None else None)
    try:
        extra = [replace(detect_source(p), added=True) for p in args.source]
    except UnknownSource as exc:
        return _fail(str(exc))
    if args.only and not extra:
        return _fail("--only needs at least one --source")

    from ingest.pipeline import build_index  # llama-index: only once there is something to build

    # the list is worked out under the index lock, from the manifest as it is then
    change = SourceChange(tuple(extra), tuple(args.remove_source), args.only)
    try:
        report = build_index(settings, change, rebuild=args.rebuild, progress=not args.no_progress,
                             threads=args.threads)
    except SourceListError as exc:
        return _fail(str(exc))
    except Exception as exc:  # the previous index still serves: say so
        return _fail(f"failed ({exc.__class__.__name__}: {exc}); the previous index, if any, is unchanged", 1)
    for s in report.sources:
        print(f"source: {s.kind:5s} {'added  ' if s.added else 'default'} {s.path}", file=sys.stderr)
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
