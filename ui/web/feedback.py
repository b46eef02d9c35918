"""Thumbs up/down on answers: appended to a JSONL file; thumbs-down items become draft eval cases."""
from __future__ import annotations

import json
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

MAX_FIELD_CHARS = 20000  # an answer is a few KB; anything bigger is cut, never the file
MAX_HISTORY = 6  # earlier questions kept with a follow-up, enough to replay it as an eval case
MAX_READ_BYTES = 64 * 1024 * 1024  # the store is read whole by `meshwise feedback`; refuse absurd files
NOTE_ANSWER_CHARS = 400

# The eval category a draft starts in, from the engine's intent (evals/schema.py CATEGORIES);
# a person re-files it while writing the expectations.
_CATEGORY_BY_INTENT = {
    "strategy": "strategy", "yaml": "strategy", "sizing": "sizing", "diagnose": "diagnosis",
    "limitations": "limitations", "howto": "requirements", "code_location": "code_location",
    "python_api": "python_api", "out_of_scope": "out_of_scope", "nonsense": "out_of_scope",
}


@dataclass(frozen=True)
class Feedback:
    answer_id: str
    liked: bool
    question: str
    answer: str
    settings: dict = field(default_factory=dict)
    language: str = "en"
    intent: str | None = None
    history: tuple[str, ...] = ()  # the earlier user questions of the same conversation, oldest first
    ts: float = field(default_factory=time.time)


class FeedbackStore:
    """One JSONL file; appends are serialised so concurrent sessions never interleave lines."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def add(self, fb: Feedback) -> dict:
        row = asdict(fb)
        for key in ("question", "answer"):
            row[key] = row[key][:MAX_FIELD_CHARS]
        row["history"] = [q[:MAX_FIELD_CHARS] for q in fb.history[-MAX_HISTORY:]]
        line = json.dumps(row, ensure_ascii=False, allow_nan=False)
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                f.write(line + "\n")
        return row

    def read(self) -> list[dict]:
        if not self.path.is_file():
            return []
        if self.path.stat().st_size > MAX_READ_BYTES:
            raise ValueError(f"{self.path} is larger than {MAX_READ_BYTES} bytes; rotate it before exporting")
        rows = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn line from a crash must not hide the rest
            if isinstance(row, dict):
                rows.append(row)
        return rows


def latest_votes(rows: list[dict]) -> list[dict]:
    """One row per answer: a user who changes their mind leaves only the last vote."""
    last: dict[str, dict] = {}
    for i, row in enumerate(rows):
        last[str(row.get("answer_id") or f"row-{i}")] = row
    return list(last.values())


def draft_cases(rows: list[dict]) -> list[dict]:
    """Thumbs-down answers -> draft eval cases in the evals/ case format, expectations left empty.

    A follow-up keeps its earlier questions as `history` (user turns; the eval runner answers them).
    """
    drafts, seen = [], set()
    for row in latest_votes(rows):
        question = str(row.get("question") or "").strip()
        history = [str(q) for q in row.get("history") or () if str(q).strip()]
        key = (question, tuple(history))
        if row.get("liked") or not question or key in seen:
            continue
        seen.add(key)
        s = row.get("settings") or {}
        lang = row.get("language") if row.get("language") in ("en", "zh") else "en"
        answer = str(row.get("answer") or "")
        excerpt = answer[:NOTE_ANSWER_CHARS].replace("\n", " ") + (" …" if len(answer) > NOTE_ANSWER_CHARS else "")
        case = {
            "id": f"feedback-{row.get('answer_id') or len(drafts)}",
            "lang": lang,
            "category": "followup" if history else _CATEGORY_BY_INTENT.get(row.get("intent"), "strategy"),
            "question": question,
        }
        if history:
            case["history"] = [{"role": "user", "content": q} for q in history]
        if s.get("world_size"):
            case["world_size"] = s["world_size"]
        if s.get("gpus_per_node") and s.get("world_size"):
            case["gpus_per_node"] = s["gpus_per_node"]
        case["expect"] = {}
        case["note"] = ("Drafted from a thumbs-down in the web chat; write the expectations from the upstream "
                        f"facts before adding it to a set. Rejected answer began: {excerpt}")
        drafts.append(case)
    return drafts
