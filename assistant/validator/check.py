"""One validation pass over a recipe, no fix: the checks of rules.py in upstream's start-up order.

Its own module so that the fix search (fix.py) re-checks candidates without importing the package that
imports it.
"""
from __future__ import annotations

from typing import Any

from assistant.validator import coerce, rules, schema
from assistant.validator.report import Derived, MemoryEstimate, ValidationReport


def is_whole_recipe(data: dict) -> bool:
    """A mapping with a `distributed:` key or any other recipe section is a recipe; else a bare mapping."""
    return not rules.RECIPE_KEYS.isdisjoint(data)


# the keys that make a mapping with no recipe section a bare `distributed:` section
_DISTRIBUTED_KEYS = schema.SIZE_KEYS | schema.ALL_STRATEGY_FIELDS | {"strategy", "pipeline", "moe", *schema.META_KEYS}


def is_recipe_like(data: Any) -> bool:
    """Whether a file's YAML is a recipe or a bare `distributed:` section. A mapping with neither a recipe
    section nor a distributed key (a repository's .pre-commit-config.yaml, a GitHub workflow, a list
    document) is no recipe: upstream never loads it as one, and judging it reports `repos is not an
    option of strategy fsdp2` (on a copy of upstream with the shipped hook, 57 such files: workflows, CI lists, docs)."""
    return isinstance(data, dict) and (is_whole_recipe(data) or not _DISTRIBUTED_KEYS.isdisjoint(data))


def check_once(data: Any, world: int, gpn: int, facts: Any, gpu_facts: Any,
           recipe_checks: bool | None, experts: int | None = None) -> tuple[ValidationReport, dict | None, bool]:
    """One validation pass, no fix. Returns the report, the loader's view of the recipe, and whether
    the input was a whole recipe. `experts`: a routed-expert count stated with no model named."""
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
            from assistant.validator.model_checks import expert_findings, router_ac_findings

            out.extend(router_ac_findings(derived, dist, cfg))
            if experts:
                out.extend(expert_findings(derived, experts))
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
