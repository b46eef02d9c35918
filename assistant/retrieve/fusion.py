"""Reciprocal rank fusion: combine ranked lists whose scores are not comparable."""
from __future__ import annotations

from typing import Hashable, Sequence

# The usual constant from Cormack et al.: damps the head so one channel's first place does not
# outvote agreement between the others.
RRF_K = 60


def rrf(rankings: Sequence[Sequence[Hashable]], k: int = RRF_K,
        weights: Sequence[float] | None = None) -> list[tuple[Hashable, float]]:
    """Keys ordered by sum(weight / (k + rank)), rank starting at 1; ties keep first-seen order."""
    if weights is not None and len(weights) != len(rankings):
        raise ValueError("one weight per ranking")
    scores: dict[Hashable, float] = {}
    for i, ranking in enumerate(rankings):
        w = 1.0 if weights is None else weights[i]
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + w / (k + rank)
    return sorted(scores.items(), key=lambda kv: -kv[1])
