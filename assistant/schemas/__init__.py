"""JSON Schemas (2020-12) of Meshwise's machine-readable outputs, shipped in the package:

    validate.schema.json   `meshwise validate --json` (one report, many, or an unusable input)
    ask.schema.json        `meshwise ask --json` (refers to validate.schema.json for its reports)

`validator(name)` needs the `jsonschema` package (a dev dependency; not needed to read the files).
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
NAMES = ("validate", "ask")


@lru_cache(maxsize=None)
def load(name: str) -> dict[str, Any]:
    if name not in NAMES:
        raise ValueError(f"no schema {name!r}; one of {', '.join(NAMES)}")
    return json.loads((_HERE / f"{name}.schema.json").read_text(encoding="utf-8"))


def validator(name: str):
    """A jsonschema validator for `name`, with the other schemas registered so references resolve offline."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    registry = Registry().with_resources((load(n)["$id"], Resource.from_contents(load(n))) for n in NAMES)
    return Draft202012Validator(load(name), registry=registry)
