"""Thumbs up/down on answers: appended to a JSONL file; thumbs-down items become draft eval cases."""
from __future__ import annotations

import json
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

MAX_FIELD_CHARS = 20000  # an answer is a few KB; anything bigger is cut, never the file


@dataclass(frozen=True)
class Feedback:
    answer_id: str
    liked: bool
    question: str
    answer: str
    settings: dict = field(default_factory=dict)
    language: str = "en"
    ts: float = field(default_factory=time.time)


class FeedbackStore:
    """One JSONL file; appends are serialised so concurrent sessions never interleave lines."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def add(self, fb: Feedback) -> None:
        row = asdict(fb)
        for key in ("question", "answer"):
            row[key] = row[key][:MAX_FIELD_CHARS]
        line = json.dumps(row, ensure_ascii=False)
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                f.write(line + "\n")

    def read(self) -> list[dict]:
        if not self.path.is_file():
            return []
        rows = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a torn line from a crash must not hide the rest
        return rows


def draft_cases(rows: list[dict]) -> list[dict]:
    """Thumbs-down answers -> draft eval cases (expectations left for a person to write)."""
    drafts, seen = [], set()
    for row in rows:
        if row.get("liked") or row.get("question", "") in seen:
            continue
        seen.add(row.get("question", ""))
        s = row.get("settings") or {}
        case = {
            "id": f"feedback-{row.get('answer_id', len(drafts))}",
            "lang": row.get("language", "en"),
            "category": "feedback",
            "question": row.get("question", ""),
            "expect": {"facts": [], "forbid": []},
            "notes": "Drafted from a thumbs-down; write the expectations from the facts before adding to a set.",
            "rejected_answer": row.get("answer", ""),
        }
        if s.get("world_size"):
            case["world_size"] = s["world_size"]
        if s.get("gpus_per_node"):
            case["gpus_per_node"] = s["gpus_per_node"]
        drafts.append(case)
    return drafts
