"""Meshwise's sizing validator: NeMo AutoModel's start-up verdict for a recipe, then advice beyond it.

    from assistant.validator import validate, UnusableInput
    report = validate(yaml_text_or_dict, world_size=16, gpus_per_node=8)

Pure Python; never imports torch.
"""
from __future__ import annotations

from functools import partial
from typing import Any

from assistant.defaults import DEFAULT_GPUS_PER_NODE, MAX_WORLD_SIZE
from assistant.validator import coerce, fix, rules
from assistant.validator.check import check_once, is_recipe_like, is_whole_recipe
from assistant.validator.layout import Layout
from assistant.validator.report import Derived, Finding, MemoryEstimate, UnusableInput, ValidationReport

__all__ = ["validate", "UnusableInput", "ValidationReport", "Finding", "Derived", "MemoryEstimate", "Layout",
           "MAX_WORLD_SIZE", "check_world", "is_recipe_like", "is_whole_recipe"]


def _count(value: Any, name: str) -> int:
    if type(value) is int and 1 <= value <= MAX_WORLD_SIZE:
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            if isinstance(value, str) and value.strip().isdigit():
                value = int(value.strip())
            else:
                raise ValueError
        except ValueError:
            raise UnusableInput(f"{name} must be a positive integer, got {rules.describe(value)}",
                                f"{name} 必须是正整数，实际为 {rules.describe(value)}") from None
    if not 1 <= value <= MAX_WORLD_SIZE:
        raise UnusableInput(f"{name} must be between 1 and {MAX_WORLD_SIZE}, got {value}",
                            f"{name} 必须在 1 到 {MAX_WORLD_SIZE} 之间，实际为 {value}")
    return value


def check_world(world_size: Any, gpus_per_node: Any) -> tuple[int, int]:
    """The world size and GPUs per node as validate() accepts them, or UnusableInput: for a caller that
    has a world size before it has the recipe (the CLI reads the launch first)."""
    return _count(world_size, "world_size"), _count(gpus_per_node, "gpus_per_node")


def _facts(model: Any, gpu: Any) -> tuple[Any, Any]:
    """Model and GPU facts from names (or passed through when already loaded)."""
    if model is None and gpu is None:
        return None, None
    try:
        from assistant.validator import models as model_table
    except ModuleNotFoundError as exc:  # the model-aware half is optional
        if exc.name != "assistant.validator.models":
            raise
        raise UnusableInput("model-aware checks are not available in this build", "此版本不含模型相关检查") from None
    try:
        facts = model_table.load_model(model) if isinstance(model, str) else model
        gpu_facts = model_table.load_gpu(gpu) if isinstance(gpu, str) else gpu
    except ValueError as exc:
        raise UnusableInput(str(exc), str(exc)) from None
    return facts, gpu_facts


def validate(
    recipe: Any,
    *,
    world_size: int,
    gpus_per_node: int = DEFAULT_GPUS_PER_NODE,
    model: Any = None,
    gpu: Any = None,
    lang: str = "en",
    recipe_checks: bool | None = None,
    suggest_fix: bool = True,
    experts: int | None = None,
) -> ValidationReport:
    """Validate a whole recipe or a bare `distributed:` mapping (dict or YAML text) at a world size.

    `recipe_checks=False` gives the distributed-only verdict (parse + mesh build, no pipeline
    schedule, microbatch or step-scheduler checks); None runs every check whose inputs are present.
    Both message languages are always there (each filled on first read); `lang` is accepted for
    symmetry with the front ends.
    `experts` is a routed-expert count the user states with no model named ("we have 64 experts"):
    the EP-experts rule reads it as it reads a known model's.
    Raises UnusableInput only when the input is not a recipe at all.
    """
    world, gpn = check_world(world_size, gpus_per_node)
    data = coerce.load_yaml(recipe) if isinstance(recipe, (str, bytes, bytearray)) else recipe
    facts, gpu_facts = _facts(model, gpu)
    experts = None if facts is not None else experts  # a named model's own count wins
    report, cfg, is_recipe = check_once(data, world, gpn, facts, gpu_facts, recipe_checks, experts)
    if report.errors and suggest_fix and cfg is not None:
        # searched on first read of report.suggested_fix; cfg is the loader's own copy of the input. The
        # report is built again, not dataclasses.replace()d: replace() walks the fields (2% of a validation)
        r = report
        report = ValidationReport(r.ok, r.errors, r.warnings, r.derived, r.memory,
                                  partial(fix.suggest, cfg, is_recipe, r, world=world, gpus_per_node=gpn, facts=facts,
                                          gpu=gpu_facts, recipe_checks=recipe_checks, experts=experts),
                                  r.world_size, r.gpus_per_node)
    return report
