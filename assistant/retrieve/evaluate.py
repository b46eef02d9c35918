"""Score a ranking function on the labelled retrieval set (`evals/retrieval/queries.yaml`).

A retrieved item counts when its base document id is one of the query's expected ids (either
language). Recall@k: share of queries with a counted item in the top k. MRR: mean of 1/rank of the
first counted item within the top k (0 when none).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import yaml

from assistant.config import EVALS_DIR

QUERIES_PATH = EVALS_DIR / "retrieval" / "queries.yaml"
_MAX_BYTES = 1024 * 1024


@dataclass(frozen=True)
class LabelledQuery:
    id: str
    lang: str  # en | zh
    style: str  # en | zh | mixed
    q: str
    expected: tuple[str, ...]


@dataclass
class Scores:
    n: int = 0
    recall: float = 0.0
    mrr: float = 0.0
    misses: list[str] = field(default_factory=list)  # query ids with no counted item in the top k


def load_queries(path: Path = QUERIES_PATH) -> list[LabelledQuery]:
    raw = Path(path).read_bytes()
    if len(raw) > _MAX_BYTES:
        raise ValueError(f"{path} is larger than {_MAX_BYTES} bytes")
    data = yaml.safe_load(raw.decode("utf-8")) or {}
    return [LabelledQuery(id=str(q["id"]), lang=str(q["lang"]), style=str(q.get("style", q["lang"])),
                          q=str(q["q"]), expected=tuple(q["expected"])) for q in data["queries"]]


def first_relevant_rank(ranked_base_ids: Sequence[str], expected: Sequence[str], k: int) -> int | None:
    for rank, b in enumerate(ranked_base_ids[:k], start=1):
        if b in expected:
            return rank
    return None


def score(rank_fn: Callable[[str], Sequence[str]], queries: Sequence[LabelledQuery], k: int = 5,
          group: Callable[[LabelledQuery], str] = lambda q: q.lang) -> dict[str, Scores]:
    """`rank_fn(query) -> base ids best first`. Returns Scores per group (default: language) and "all"."""
    out: dict[str, Scores] = {}
    for q in queries:
        rank = first_relevant_rank(list(rank_fn(q.q)), q.expected, k)
        for key in (group(q), "all"):
            s = out.setdefault(key, Scores())
            s.n += 1
            if rank is not None:
                s.recall += 1
                s.mrr += 1.0 / rank
            else:
                s.misses.append(q.id)
    for s in out.values():
        if s.n:
            s.recall /= s.n
            s.mrr /= s.n
    return out
