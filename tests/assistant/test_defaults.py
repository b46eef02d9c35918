"""Per-question defaults and limits live in assistant/defaults.py only: no other module writes its
own number for them (they used to disagree: 1_000_000 in the engine and web, 1 << 20 in the validator)."""
from __future__ import annotations

import re
from pathlib import Path

from assistant import defaults
from assistant.validator import MAX_WORLD_SIZE, validate

ROOT = Path(__file__).resolve().parents[2]
_OWN_VALUE = re.compile(r"^\s*(?:MAX_WORLD\w*|DEFAULT_GPUS_PER_NODE|MAX_GPUS_PER_NODE|DEFAULT_WORLD_SIZE)\s*=\s*[\d(]", re.M)
_INLINE_GPN = re.compile(r"gpus_per_node\w*\)?\s+or\s+8\b|gpus_per_node:\s*int\s*=\s*8\b")


def test_no_module_restates_a_default():
    offenders = []
    for folder in ("assistant", "ui", "benchmarks"):  # evals/scorer.py: its owner's branch moves it
        for path in (ROOT / folder).rglob("*.py"):
            if path == ROOT / "assistant" / "defaults.py":
                continue
            text = path.read_text(encoding="utf-8")
            if _OWN_VALUE.search(text) or _INLINE_GPN.search(text):
                offenders.append(str(path.relative_to(ROOT)))
    assert not offenders, offenders


def test_the_validator_enforces_the_shared_limit():
    assert MAX_WORLD_SIZE == defaults.MAX_WORLD_SIZE
    assert validate({}, world_size=defaults.MAX_WORLD_SIZE, suggest_fix=False).world_size == defaults.MAX_WORLD_SIZE
    assert validate({}, world_size=16).gpus_per_node == defaults.DEFAULT_GPUS_PER_NODE
