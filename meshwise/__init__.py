"""Meshwise's stable Python API: NeMo AutoModel's start-up verdict on a recipe's parallel layout.

    from pathlib import Path
    from meshwise import validate

    report = validate(Path("recipe.yaml"), world_size=16)   # or YAML text, or a mapping
    if not report["ok"]:
        for f in report["errors"]:
            loc = f["location"]
            print(f"{loc['file']}:{loc['line']}:{loc['column']}: [{f['code']}] {f['message']}")

`validate` returns the object `meshwise validate --json` prints for one file, described by the JSON
Schema `SCHEMA` (assistant/schemas/validate.schema.json): ok, errors and warnings (each with code,
English and Chinese message, dotted path, upstream file and location), codes, derived sizes,
suggested_fix. It raises `UnusableInput` (a ValueError) when the input is not a recipe at all: not YAML,
unreadable, or YAML with no recipe section and no distributed key (a workflow), which the CLI skips.
The names here keep their meaning across releases; everything under `assistant` may move.
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from assistant.schemas import load as _load_schema
from assistant.validator import UnusableInput

__all__ = ["validate", "UnusableInput", "SCHEMA"]

SCHEMA: dict[str, Any] = _load_schema("validate")


def validate(recipe: os.PathLike | str | bytes | Mapping, *, world_size: int, gpus_per_node: int = 8,
             model: str | None = None, gpu: str | None = None, distributed_only: bool = False) -> dict[str, Any]:
    """The verdict on `recipe` at `world_size` GPUs (`gpus_per_node` per node).

    `recipe`: a path (any os.PathLike, e.g. pathlib.Path: the file is read, under the size cap), YAML
    text (str or bytes), or an already-loaded mapping (its findings then carry no location).
    `model` (a bundled model name or a config.json path) and `gpu` (e.g. "h100-80gb") add the
    model-aware checks and the memory estimate; `distributed_only` skips the pipeline-schedule,
    microbatch and batch-size checks."""
    from assistant.cli.report_formats import checked_json
    from assistant.cli.validate_files import Target, check

    if isinstance(recipe, os.PathLike):
        target, text = Target(os.fspath(recipe), world_size, gpus_per_node), None
    elif isinstance(recipe, (str, bytes, bytearray)):
        target, text = Target(None, world_size, gpus_per_node), recipe.encode("utf-8") if isinstance(recipe, str) else bytes(recipe)
    elif isinstance(recipe, Mapping):
        target, text = Target(None, world_size, gpus_per_node, recipe=dict(recipe)), None
    else:
        raise UnusableInput(f"recipe must be a path, YAML text or a mapping, got {type(recipe).__name__}",
                            f"recipe 必须是路径、YAML 文本或映射，实际为 {type(recipe).__name__}")
    checked = check(target, text, model=model, gpu=gpu, recipe_checks=False if distributed_only else None)
    if checked.error is not None:
        raise checked.error
    if checked.skipped is not None:  # a workflow or other YAML with no recipe section: there is no report to return
        raise UnusableInput(checked.skipped.en, checked.skipped.zh)
    return json.loads(json.dumps(checked_json(checked), ensure_ascii=False))  # JSON values: lists, not tuples
