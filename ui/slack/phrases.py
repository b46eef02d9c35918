"""The bot's own short messages, both languages, from `phrases.yaml`."""
from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml


@cache
def _phrases() -> dict:
    return yaml.safe_load((Path(__file__).with_name("phrases.yaml")).read_text(encoding="utf-8"))


def say(key: str, lang: str, **values) -> str:
    return _phrases()[key][lang].format(**values)
