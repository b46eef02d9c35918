"""Which sources `meshwise ingest` builds from: the defaults, every source added before, the new ones.

An added source (`--source PATH`) is recorded in the manifest and kept by every later ingest and every
refresh until `--remove-source PATH`; `--only` replaces the list with the `--source` paths given.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from assistant.config import Settings
from assistant.index.manifest import Manifest
from assistant.index.source import Source
from assistant.index import status
from assistant.index.status import dedupe, recorded_sources


class SourceListError(ValueError):
    """A `--remove-source` that names no added source (the message lists the ones there are)."""


def added_sources(manifest: Manifest | None) -> list[Source]:
    return [s for s in recorded_sources(manifest) if s.added] if manifest is not None else []


def ingest_sources(settings: Settings, manifest: Manifest | None, add: Sequence[Source] = (),
                   remove: Sequence[Path] = (), only: bool = False) -> list[Source]:
    kept = added_sources(manifest)
    for path in remove:
        target = Path(path).expanduser().absolute()
        match = [s for s in kept if s.path in (target, target.resolve())]
        if not match:
            listed = ", ".join(str(s.path) for s in kept) or "none"
            raise SourceListError(f"{target} is not an added source (added sources: {listed})")
        kept = [s for s in kept if s not in match]
    if only:
        return dedupe(list(add))
    return dedupe([*status.default_sources(settings), *kept, *add])
