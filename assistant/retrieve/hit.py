"""One retrieved chunk, as every consumer (composer, UI, Slack, evals) sees it."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Hit:
    id: str  # chunk id: "<doc id>#<n>" for kb docs; doc_id is the front-matter id
    doc_id: str
    title: str
    path: str  # repo-relative source path (kb/en/fsdp2.md) or upstream path
    heading: str  # heading path inside the document, "FSDP2 > HSDP"
    kind: str  # doc | pitfall | anchor | example | faq | skill | code
    lang: str  # en | zh
    score: float
    text: str
