"""Is the index on disk the one its sources call for? Answered from `stat` calls, without llama-index.

Layout of `Settings.index_dir`:
    current -> v-<time>-<id>/   symlink, switched atomically when a build succeeds
    v-<time>-<id>/              manifest.json, docstore.json, dense-<i>.faiss, chunks.json, bm25/
    .tmp-<id>/                  a build in progress (or left by a killed one: the next ingest removes it)
    .lock                       one ingest at a time

The sources are the ones the index was built from (its manifest): the default kb follows the
settings' `kb_dir`, every other source keeps its recorded path. A build records a digest of their
file listing (path, size, modification time of every file). An unchanged listing is fresh, decided in
milliseconds: what every start of the web chat, the Slack bot and a one-shot `meshwise ask` runs. Any
difference (an edited, added, removed or merely touched file) is stale; the build that follows reads
and hashes the documents, re-embeds what changed, and when nothing did only records the new listing.
"""
from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from assistant.config import UPSTREAM_SKILL_DIR, Settings
from assistant.index.lexical import TOKENIZER_VERSION
from assistant.index.manifest import CHUNKER_VERSION, Manifest, incompatibilities
from assistant.index.source import Source, is_skill_folder

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


def recorded_sources(manifest: Manifest) -> list[Source]:
    """The sources an index was built from, as its manifest lists them. Manifests written before
    sources carried `added` count the first kb and a skill folder at the upstream path as defaults."""
    out, kb_seen = [], False
    for s in manifest.sources:
        path = Path(s["path"])
        if "added" in s:
            added = bool(s["added"])
        elif s["kind"] == "kb":
            added, kb_seen = kb_seen, True
        else:
            added = not (s["kind"] == "skill" and path == UPSTREAM_SKILL_DIR.resolve())
        out.append(Source(s["kind"], path, added))
    return out


def planned_sources(settings: Settings, manifest: Manifest | None = None) -> list[Source]:
    """What the index should hold when nobody names its sources (every read command, and a refresh):
    the sources it was built from, with the default kb taken from the settings (which may have moved
    it); the defaults when there is no index yet. A recorded source that is gone stays in the list:
    dropping it would publish an index with fewer sources, which only `ingest --remove-source` may."""
    if manifest is None or not manifest.sources:
        return default_sources(settings)
    out = [Source("kb", Path(settings.kb_dir).resolve()) if s.kind == "kb" and not s.added else s
           for s in recorded_sources(manifest)]
    return dedupe(out)


def missing_sources(sources: Sequence[Source]) -> list[Source]:
    return [s for s in sources if not Path(s.path).exists()]


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
    reasons = [f"source {s.path} is missing" for s in missing_sources(srcs)]
    if [s.to_json() for s in srcs] != manifest.sources:
        reasons.append("sources differ from the ones the index was built from")
    return IndexStatus("stale", tuple(reasons) or ("files changed since the index was built",), version)
