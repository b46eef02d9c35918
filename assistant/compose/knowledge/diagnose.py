"""The user's own layout judged: a pasted YAML, or the sizes stated in prose, validated at the user's
numbers exactly as given, and the nearest layout that itself validates when it fails."""
from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Callable

from assistant.datafile import dump_yaml
from assistant.validator.coerce import load_yaml  # the validator's bounded safe loader

from assistant.validator.report import ValidationReport

_PARSE_CAP = 256 * 1024  # for reading the pasted mapping here; the validator enforces its own cap


@dataclass(frozen=True)
class Diagnosis:
    yaml_text: str
    world_size: int | None
    gpus_per_node: int
    assumed: str | None  # why the world size was assumed: "node" | "mesh"; None when the user gave it
    report: ValidationReport | None
    error_en: str | None = None  # the input is not a recipe at all (UnusableInput)
    error_zh: str | None = None
    fix_yaml: str | None = None  # the validator's suggested fix, re-validated at the same numbers
    fix_report: ValidationReport | None = None
    judged: dict | None = None  # the mapping judged, as a recipe with a `distributed:` key
    pasted: bool = True  # False: the layout was stated in prose (its YAML is ours, not a quote)


def _int(v) -> int:
    if isinstance(v, bool):
        return 1
    if isinstance(v, int) and v > 0:
        return v
    if isinstance(v, str) and v.strip().isdigit() and int(v) > 0:
        return int(v)
    return 1


def _parsed(yaml_text: str):
    """The pasted text as data, once per diagnosis; None when it is not YAML the validator's loader reads."""
    if len(yaml_text.encode("utf-8", "replace")) > _PARSE_CAP:
        return None
    try:
        return load_yaml(yaml_text)
    except ValueError:  # UnusableInput: not YAML, too big, too deep
        return None


def _section(data):
    """The distributed section of a whole recipe, or the bare section itself."""
    return data.get("distributed", data) if isinstance(data, dict) else None


def guess_world_size(yaml_text: str, gpus_per_node: int) -> tuple[int, str]:
    """Smallest world the pasted sizes fit: one node when they fit in it, else the mesh product."""
    return _world_for(_parsed(yaml_text), gpus_per_node)


def _world_for(data, gpus_per_node: int) -> tuple[int, str]:
    product = 1
    dist = _section(data)
    if isinstance(dist, dict):
        for key in ("tp_size", "pp_size", "cp_size", "dp_size"):
            product *= _int(dist.get(key))
    if product <= gpus_per_node and gpus_per_node % product == 0:
        return gpus_per_node, "node"
    return product, "mesh"


def diagnose(
    yaml_text: str,
    *,
    world_size: int | None,
    gpus_per_node: int,
    validate: Callable[..., ValidationReport],
    unusable: type[Exception],
    model: str | None = None,
    gpu: str | None = None,
    experts: int | None = None,
) -> Diagnosis:
    assumed = None
    data = _parsed(yaml_text)
    judged = _as_recipe(data)
    if not world_size:
        world_size, assumed = _world_for(data, gpus_per_node)
    kwargs = {"world_size": world_size, "gpus_per_node": gpus_per_node, "model": model, "gpu": gpu}
    if experts:
        kwargs["experts"] = experts
    try:
        report = validate(yaml_text, **kwargs)
    except unusable as exc:
        return Diagnosis(yaml_text, world_size, gpus_per_node, assumed, None,
                         error_en=getattr(exc, "message", str(exc)),
                         error_zh=getattr(exc, "message_zh", None) or getattr(exc, "message", str(exc)), judged=judged)
    fix_yaml = fix_report = None
    if not report.ok:
        for fix in (_schedule_kept(data, report), report.suggested_fix):
            if not fix:
                continue
            try:
                candidate = validate(fix, **kwargs)
            except unusable:
                candidate = None
            if candidate is not None and candidate.ok:
                fix_yaml, fix_report = fix, candidate
                break
    return Diagnosis(yaml_text, world_size, gpus_per_node, assumed, report, fix_yaml=fix_yaml, fix_report=fix_report,
                     judged=judged)


def judge_stated(recipe: dict, **kwargs) -> Diagnosis:
    """A layout stated in prose ("tp 4, pp 3 on 40 GPUs"), judged like a pasted one."""
    d = diagnose(dump_yaml(recipe, sort_keys=False, allow_unicode=True), **kwargs)
    return replace(d, pasted=False)


def _as_recipe(data) -> dict | None:
    """The judged mapping in the `Answer.judged` shape: a recipe, a bare section wrapped."""
    if not isinstance(data, dict):
        return None
    return data if "distributed" in data else {"distributed": data}


def _schedule_kept(data, report: ValidationReport) -> str | None:
    """`pipeline: interleaved1f1b` means the schedule: the fix that keeps it moves the name under
    `pipeline.pp_schedule` (the generic fix, `pipeline: {}`, would drop what the user asked for)."""
    if "MW-E-PIPELINE-VALUE" not in report.codes or not isinstance(data, dict):
        return None
    data = copy.deepcopy(data)  # the parsed input is also the judged mapping: the fix edits a copy
    dist = _section(data)
    if not isinstance(dist, dict) or not isinstance(dist.get("pipeline"), str) or not dist["pipeline"].strip():
        return None
    dist["pipeline"] = {"pp_schedule": dist["pipeline"].strip()}
    return dump_yaml(data, sort_keys=False, allow_unicode=True)
