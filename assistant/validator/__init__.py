"""Meshwise's sizing validator: NeMo AutoModel's start-up verdict for a recipe, then advice beyond it.

    from assistant.validator import validate, UnusableInput
    report = validate(yaml_text_or_dict, world_size=16, gpus_per_node=8)

Pure Python; never imports torch.
"""
from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any

from assistant.defaults import DEFAULT_GPUS_PER_NODE, MAX_WORLD_SIZE
from assistant.validator import coerce, rules
from assistant.validator.layout import Layout
from assistant.validator.report import Derived, Finding, MemoryEstimate, UnusableInput, ValidationReport

__all__ = ["validate", "UnusableInput", "ValidationReport", "Finding", "Derived", "MemoryEstimate", "Layout",
           "MAX_WORLD_SIZE"]


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
) -> ValidationReport:
    """Validate a whole recipe or a bare `distributed:` mapping (dict or YAML text) at a world size.

    `recipe_checks=False` gives the distributed-only verdict (parse + mesh build, no pipeline
    schedule, microbatch or step-scheduler checks); None runs every check whose inputs are present.
    Both message languages are always filled; `lang` is accepted for symmetry with the front ends.
    Raises UnusableInput only when the input is not a recipe at all.
    """
    world, gpn = check_world(world_size, gpus_per_node)
    data = coerce.load_yaml(recipe) if isinstance(recipe, (str, bytes, bytearray)) else recipe
    facts, gpu_facts = _facts(model, gpu)
    report, cfg, is_recipe = _check(data, world, gpn, facts, gpu_facts, recipe_checks)
    if report.errors and suggest_fix and cfg is not None:
        from assistant.validator import fix

        # searched on first read of report.suggested_fix; cfg is the loader's own copy of the input
        report = replace(report, fix=partial(fix.suggest, cfg, is_recipe, report, world=world, gpus_per_node=gpn,
                                             facts=facts, gpu=gpu_facts, recipe_checks=recipe_checks))
    return report


def is_whole_recipe(data: dict) -> bool:
    """A mapping with a `distributed:` key or any other recipe section is a recipe; else a bare mapping."""
    return not rules.RECIPE_KEYS.isdisjoint(data)


def _check(data: Any, world: int, gpn: int, facts: Any, gpu_facts: Any,
           recipe_checks: bool | None) -> tuple[ValidationReport, dict | None, bool]:
    """One validation pass, no fix. Returns the report, the loader's view of the recipe, and whether
    the input was a whole recipe."""
    out = rules.Findings()
    if not isinstance(data, dict):
        coerce.check_bounds(data)
        out.add("MW-E-DIST-NOT-MAPPING", "distributed", got=rules.describe(data))
        return _report(out, None, None, world, gpn), None, False
    is_recipe = is_whole_recipe(data)
    cfg, notes = coerce.load_config(data if is_recipe else {"distributed": data})
    for path, why in notes.load_errors:
        out.add("MW-E-CONFIG-LOAD", path, key=path, why=why, why_zh=why)
    for path, var in notes.env_unresolved:
        out.add("MW-W-ENV-VAR", path, key=path, var=var)
    if "distributed" not in cfg:
        out.add("MW-E-DIST-NOT-MAPPING", "distributed", got="no distributed section (the recipe reads cfg.distributed)")
        return _report(out, None, None, world, gpn), cfg, is_recipe
    value = cfg["distributed"]
    if isinstance(value, dict) and "to_dict" in value:
        # a key named to_dict shadows ConfigNode.to_dict, which the recipe then calls
        out.add("MW-E-CONFIG-LOAD", "distributed.to_dict", key="distributed.to_dict",
                why="a key named to_dict hides ConfigNode.to_dict()", why_zh="名为 to_dict 的键遮蔽了 ConfigNode.to_dict()")
    try:
        dist = coerce.section_as_dict(value)
    except (TypeError, ValueError):
        out.add("MW-E-DIST-NOT-MAPPING", "distributed", got=rules.describe(value))
        return _report(out, None, None, world, gpn), cfg, is_recipe

    parsed = rules.check_distributed(dist, world, out, gpus_per_node=gpn)
    rules.check_silent(parsed, dist, out)
    derived = parsed.derived
    if recipe_checks is not False and derived is not None:
        rules.check_schedule(parsed, out)
        rules.check_async_tp(dist, derived, out)
        ss = cfg.get("step_scheduler")
        if ss is not None:
            steps = rules.check_step_scheduler(ss, dist.get("pipeline"), parsed, out)
            if steps is not None:
                derived = parsed.layout.derived(steps)
    memory = None
    if derived is not None:
        out.extend(parsed.layout.advice())
        rules.check_packing(cfg.get("packed_sequence"), derived, out, cfg.get("model"))
        if facts is not None:
            memory = _model_checks(out, derived, dist, cfg, facts, gpu_facts)
        elif derived.ep_size > 1:
            from assistant.validator.model_checks import router_ac_findings

            out.extend(router_ac_findings(derived, dist, cfg))
    return _report(out, derived, memory, world, gpn), cfg, is_recipe


def _model_checks(out: rules.Findings, derived: Derived, dist: dict, cfg: dict, facts: Any, gpu_facts: Any):
    from assistant.validator import memory as memory_model
    from assistant.validator import model_checks

    out.extend(list(model_checks.check_model(derived, dist, cfg, facts)))
    estimate, findings = memory_model.estimate_memory(derived, dist, cfg, facts, gpu_facts)
    out.extend(list(findings))
    return estimate


def _report(out: rules.Findings, derived: Derived | None, memory: MemoryEstimate | None,
            world: int, gpn: int) -> ValidationReport:
    return ValidationReport(
        ok=not out.errors, errors=tuple(out.errors), warnings=tuple(out.warnings), derived=derived,
        memory=memory, world_size=world, gpus_per_node=gpn,
    )
