"""Which sources `meshwise ingest` builds from: the defaults, every source added before, the new ones.

An added source (`--source PATH`) is recorded in the manifest and kept by every later ingest and every
refresh until `--remove-source PATH`; `--only` replaces the list with the `--source` paths given.
The change is applied to the manifest read under the index lock (`SourceChange`), never to one read
before it: two ingests started together then each build on the other's result.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from assistant.config import Settings
from assistant.index.manifest import Manifest
from assistant.index.source import Source
from assistant.index import status
from assistant.index.status import dedupe, missing_sources, recorded_sources


class SourceListError(ValueError):
    """A `--remove-source` that names no added source (the message lists the ones there are), or a
    source in the list that no longer exists."""


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


@dataclass(frozen=True)
class SourceChange:
    """What `meshwise ingest` was told: sources to add and remove, or `only` the added ones.
    `build_index` applies it to the manifest it reads under the index lock; read before the lock,
    the second of two concurrent ingests published a list without the first one's source."""
    add: tuple[Source, ...] = ()
    remove: tuple[Path, ...] = ()
    only: bool = False

    def apply(self, settings: Settings, manifest: Manifest | None) -> list[Source]:
        sources = ingest_sources(settings, manifest, self.add, self.remove, self.only)
        gone = missing_sources(sources)
        if gone:
            raise SourceListError("; ".join(f"source {s.path} no longer exists (drop it with --remove-source "
                                            f"{s.path})" for s in gone))
        return sources
