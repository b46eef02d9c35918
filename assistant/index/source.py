"""A source the index is built from, as the manifest records it."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Source:
    kind: str  # "kb" | "skill" | "code"
    path: Path
    # True for a source the user named (`meshwise ingest --source`): kept in every later build until
    # `--remove-source`. False for a default (the settings' kb, the upstream skill folder).
    added: bool = False

    def to_json(self) -> dict:
        return {"kind": self.kind, "path": str(self.path), "added": self.added}


def is_skill_folder(path: Path) -> bool:
    return path.is_dir() and (path / "SKILL.md").is_file()
