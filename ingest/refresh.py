"""What a read command (ask, serve, slack, eval) hands `Retriever.load` as its builder.

Light on import: the pipeline (llama-index) loads only when the index really is not fresh, so a
cold `meshwise ask` on a fresh index never pays for it.
"""
from __future__ import annotations

import logging
import sys
from pathlib import Path

from assistant.config import Settings
from assistant.index.encoders import Encoder

log = logging.getLogger(__name__)


def refresh_index(settings: Settings, encoders: list[Encoder] | None = None) -> Path:
    """Bring the index up to date from the sources it was built from; the version to load. A person
    at a terminal sees progress bars: a first build or a model change embeds for minutes."""
    from ingest.pipeline import build_index

    report = build_index(settings, encoders=encoders, progress=sys.stderr.isatty())
    for w in report.warnings:
        log.warning("%s", w)
    return report.index_path
