"""Is the index on disk the one the settings and sources call for? Answered without llama-index.

Layout of `Settings.index_dir`:
    current -> v-<time>-<id>/   symlink, switched atomically when a build succeeds
    v-<time>-<id>/              manifest.json, docstore.json, dense-<i>.faiss, chunks.json, bm25/
    .lock                       one ingest at a time

A build records a digest of its sources' file listing (path, size, modification time of every file).
When the listing is unchanged the index is fresh, decided in milliseconds from `stat` calls: this is
what every start of the web chat, the Slack bot and a one-shot `meshwise ask` runs. Any difference
(an edited, added, removed or merely touched file) falls through to the content check in
`ingest.pipeline`, which reads and hashes the documents and is the authority.
"""
from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from assistant.config import UPSTREAM_SKILL_DIR, Settings
from ingest.manifest import Manifest, incompatibilities
from ingest.sources import Source
from ingest.sources.skill_folder import is_skill_folder

CURRENT = "current"
RACY_S = 2.0  # files younger than this give no digest (see sources_digest)
# Directories no loader reads; leaving them out keeps the digest stable when tools write caches.
_SKIP_DIRS = {".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", "node_modules", ".venv"}


class IndexNotReady(RuntimeError):
    """No usable index and building was not allowed (the message says what to run)."""


@dataclass(frozen=True)
class IndexStatus:
    state: str  # missing | incompatible | stale | fresh
    reasons: tuple[str, ...] = ()
    path: Path | None = None

    @property
    def fresh(self) -> bool:
        return self.state == "fresh"


def current_version(index_dir: Path) -> Path | None:
    link = Path(index_dir) / CURRENT
    if not link.exists():
        return None
    target = link.resolve()
    return target if target.is_dir() else None


def default_sources(settings: Settings) -> list[Source]:
    """The kb, plus the upstream skill folder when it is present beside the repo."""
    out = [Source("kb", Path(settings.kb_dir).resolve())]
    if is_skill_folder(UPSTREAM_SKILL_DIR):
        out.append(Source("skill", UPSTREAM_SKILL_DIR.resolve()))
    return out


def dedupe(sources: Sequence[Source]) -> list[Source]:
    seen, out = set(), []
    for s in sources:
        if s.path not in seen:
            seen.add(s.path)
            out.append(s)
    return out


def planned_sources(settings: Settings, manifest: Manifest | None = None) -> list[Source]:
    """What the index should hold: the sources of the last ingest (so `ingest --source CHECKOUT` or
    `--only` survive a restart) with the kb taken from the settings; the defaults when there is no
    index yet. Recorded sources that no longer exist are dropped."""
    if manifest is None or not manifest.sources:
        return default_sources(settings)
    out = []
    for s in manifest.sources:
        if s["kind"] == "kb":
            out.append(Source("kb", Path(settings.kb_dir).resolve()))
        elif Path(s["path"]).exists():
            out.append(Source(s["kind"], Path(s["path"])))
    return dedupe(out)


def sources_digest(sources: Sequence[Source]) -> str:
    """sha256 over each source and the (relative path, size, mtime) of every file under it; "" when a
    file changed in the last `RACY_S` seconds (git's "racily clean" problem: on a file system with
    coarse timestamps a same-size edit within the same tick would keep the listing), so such an
    index is confirmed by content on its next check."""
    racy_after = time.time_ns() - int(RACY_S * 1e9)
    racy = False
    h = hashlib.sha256()
    for src in sources:
        h.update(f"source\0{src.kind}\0{src.path}\n".encode("utf-8", "surrogateescape"))
        root = Path(src.path)
        if root.is_file():
            st = root.stat()
            racy |= st.st_mtime_ns >= racy_after
            h.update(f"{root.name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
            for name in sorted(filenames):
                p = os.path.join(dirpath, name)
                try:
                    st = os.stat(p)
                except OSError:  # a dangling link or a file removed mid-walk: part of the listing anyway
                    h.update(f"{os.path.relpath(p, root)}\0gone\n".encode("utf-8", "surrogateescape"))
                    continue
                racy |= st.st_mtime_ns >= racy_after
                rel = os.path.relpath(p, root)
                h.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode("utf-8", "surrogateescape"))
    return "" if racy else h.hexdigest()


def index_status(settings: Settings, sources: Sequence[Source] | None = None,
                 model_ids: Sequence[str] | None = None) -> IndexStatus:
    """missing / incompatible / stale / fresh, with the reasons. `model_ids` (of loaded encoders)
    also catches a same-named model that now embeds differently."""
    from ingest.chunking import CHUNKER_VERSION
    from ingest.lexical import TOKENIZER_VERSION

    version = current_version(Path(settings.index_dir))
    if version is None:
        return IndexStatus("missing", (f"no index under {settings.index_dir}",))
    manifest = Manifest.load(version)
    if manifest is None:
        return IndexStatus("incompatible", ("manifest missing or unreadable",), version)
    problems = incompatibilities(manifest, tuple(settings.embed_models), CHUNKER_VERSION, TOKENIZER_VERSION,
                                 list(model_ids) if model_ids is not None else None)
    if problems:
        return IndexStatus("incompatible", tuple(problems), version)
    srcs = dedupe(list(sources) if sources is not None else planned_sources(settings, manifest))
    if manifest.sources_digest and manifest.sources_digest == sources_digest(srcs):
        return IndexStatus("fresh", (), version)
    from ingest.pipeline import content_status  # reads and hashes every document (imports llama-index)

    return content_status(settings, srcs, manifest, version)
