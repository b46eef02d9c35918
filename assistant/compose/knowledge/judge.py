"""The user's own layout, judged once: the pasted config, else the sizes stated in prose, else the
layout a pasted upstream error reveals, validated exactly as given at the user's numbers (a stated
1 stays 1; unstated sizes take upstream defaults)."""
from __future__ import annotations

import ast
import copy
import re
from typing import Any, Mapping, Sequence

import yaml

from assistant.compose.knowledge.diagnose import Diagnosis, diagnose, judge_stated
from assistant.understand.cues import read
from assistant.understand.query import Query
from assistant.understand.stated import config_mapping, recipe_of, with_settings
from assistant.validator import UnusableInput, validate
from assistant.validator.fields import field_table
from assistant.validator.paths import put_path
from assistant.validator.upstream_errors import UpstreamErrorMatch, match_upstream_error

# Named groups of the rule tables' `upstream_message` patterns -> where the number lives in a
# recipe: an error line states the run's own sizes, so the layout that raised it can be rebuilt.
_ERROR_VALUES = {
    "pp": "distributed.pp_size", "tp": "distributed.tp_size", "cp": "distributed.cp_size",
    "ep": "distributed.ep_size", "dpr": "distributed.dp_replicate_size",
    "lbs": "step_scheduler.local_batch_size", "gbs": "step_scheduler.global_batch_size",
    "mbs": "distributed.pipeline.pp_microbatch_size", "strategy": "distributed.strategy",
}
_FACTOR_NAMES = re.compile(r"\b(tp|cp|pp|dp)_size\b")


def _kwargs(query: Query, gpus_per_node: int, world: int | None = None) -> dict:
    sit = query.situation
    # "8 nodes of H100" with no GPUs per node: the nodes at the default per-node count
    world = world or sit.world_size or (sit.nodes * gpus_per_node if sit.nodes else None)
    # "we have 64 experts" with no model named: the stated count reaches the EP-experts rule
    experts = query.params.num_experts if not sit.model else None
    return dict(world_size=world, gpus_per_node=gpus_per_node, validate=validate,
                unusable=UnusableInput, model=sit.model, gpu=sit.gpu, experts=experts)


def rejudge(query: Query, d: Diagnosis, recipe: dict, world_size: int | None = None) -> Diagnosis:
    """Another recipe judged at the numbers `d` was judged at (the user's layout with the options they
    asked for), or at the world size the question asks about."""
    return judge_stated(recipe, **_kwargs(query, d.gpus_per_node, world_size or d.world_size))


def with_layout(query: Query, d: Diagnosis, layout: str) -> Diagnosis | None:
    """The user's layout with the sizes an ask puts instead (`Ask.layout`, "tp_size=2,strategy=fsdp2"),
    the rest kept, judged at the same numbers; None when that changes nothing."""
    return with_values(query, d, layout_values(layout))


def layout_values(layout: str) -> dict[str, int | str]:
    """`Ask.layout` ("tp_size=2,strategy=fsdp2") as field values: {"tp_size": 2, "strategy": "fsdp2"}."""
    put = dict(kv.split("=") for kv in layout.split(","))
    return {k: int(v) if v.isdigit() else v for k, v in put.items()}


def with_values(query: Query, d: Diagnosis, values: Mapping[str, Any]) -> Diagnosis | None:
    """The user's recipe with these field values written where fields.yaml puts each field (a size in
    distributed:, pp_microbatch_size in its pipeline block, a batch size in step_scheduler:), the rest
    kept, judged again at the same numbers; None when that changes nothing. The one "recipe with values,
    rejudged" step: a size an ask puts instead, an inverse ask's solved input."""
    if not isinstance(d.judged, dict):
        return None
    recipe = copy.deepcopy(d.judged)
    put = dict(values)
    for key, value in put.items():
        rows = field_table().get(key)
        if rows:
            put_path(recipe, f"{rows[0].section}.{key}", value)
    new = recipe.get("distributed")
    if recipe == d.judged or not isinstance(new, dict):
        return None
    if put.keys() & {"tp_size", "pp_size", "cp_size"} and "dp_size" not in put:
        new.pop("dp_size", None)  # other model-parallel sizes: dp is what the world leaves, inferred again
    if (new.get("pp_size") or 1) > 1:
        new.setdefault("pipeline", {})
    judged = rejudge(query, d, recipe, None)
    return judged if judged.report is not None else None


def judge_user_layout(query: Query, gpus_per_node: int, errors: Sequence[UpstreamErrorMatch] = ()) -> Diagnosis | None:
    """The verdict on the user's own layout; None when they pasted, stated or quoted none."""
    sit = query.situation
    # a follow-up ("and on 16 GPUs?") judges the config pasted in an earlier turn
    carried = (query.params.yaml_text,) if query.params.yaml_text and not sit.pasted.configs else ()
    pasted = next((t for t in (*sit.pasted.configs, *carried) if config_mapping(t) is not None), None)
    if pasted is not None:
        return diagnose(_overridden(pasted, sit.stated.overrides, sit.stated.settings), **_kwargs(query, gpus_per_node))
    recipe = recipe_of(sit) or (_logged_layout(sit.pasted.errors) if errors else None)
    if recipe and read(query).no_pipeline_block:
        # "pp_size 2, no pipeline block written": the layout as stated has none (to move into stated.py)
        recipe["distributed"].pop("pipeline", None)
    if errors:
        rebuilt = error_layout(recipe, errors, sit.world_size)
        if rebuilt is not None:
            recipe, world = rebuilt
            return judge_stated(recipe, **_kwargs(query, gpus_per_node, world))
    if recipe and sit.local_batch_size and "step_scheduler" not in recipe:
        # a micro-batch question states local_batch_size alone; the checks that read it need it
        recipe = {**recipe, "step_scheduler": {"local_batch_size": sit.local_batch_size}}
    return judge_stated(recipe, **_kwargs(query, gpus_per_node)) if recipe else None


def _overridden(text: str, overrides: Sequence[tuple[str, Any]], settings: Mapping[str, Any] | None = None) -> str:
    """The pasted config with the command-line overrides the prose states set over it ("I pass
    `--distributed.pp_size 1` and leave the pipeline block in"): the run judged is the one launched;
    and with the settings the prose states where the config leaves them unset ("we pack to 8k")."""
    recipe = config_mapping(text) if overrides or settings else None
    if recipe is None:
        return text
    for path, value in overrides:
        put_path(recipe, path, value)
    with_settings(recipe, settings or {})
    return yaml.safe_dump(recipe, sort_keys=False)


def _int(v: Any) -> int | None:
    return int(v) if isinstance(v, str) and v.strip().isdigit() else None


def error_layout(stated: dict | None, errors: Sequence[UpstreamErrorMatch],
                 world: int | None) -> tuple[dict, int | None] | None:
    """The layout that raised the pasted errors: the stated one with the error's own numbers put in,
    and the world size the error states (or implies). None when the errors carry no layout."""
    recipe = copy.deepcopy(stated) if stated else {"distributed": {"strategy": "fsdp2"}}
    touched = False
    for m in errors:
        v = m.values
        for group, path in _ERROR_VALUES.items():
            value = v.get(group) if group == "strategy" else _int(v.get(group))
            if value is not None:
                put_path(recipe, path, value)
                touched = True
        if m.code == "MW-E-WORLD-DIVISIBLE":
            names = _FACTOR_NAMES.findall(v.get("expr", ""))
            factors = [_int(f) for f in v.get("factors", "").split("*")]
            for name, f in zip(names, factors):
                if f is not None:
                    put_path(recipe, f"distributed.{name}_size", f)
                    touched = True
        if m.code == "MW-E-PP-SCHEDULE" and v.get("got"):
            put_path(recipe, "distributed.pipeline.pp_schedule", v["got"])
            touched = True
        if m.code == "MW-E-STRATEGY-OPTION":
            for key in re.findall(r"'([\w.]+)'", v.get("keys", "")):
                put_path(recipe, f"distributed.{key}", False)  # the value does not matter: the key is unknown
                touched = True
        if m.code == "MW-E-PP-NO-PIPELINE":
            recipe["distributed"].pop("pipeline", None)  # the error is that there is none
        world = _int(v.get("world")) or world
    if not touched and not (stated and world):
        return None
    dist = recipe["distributed"]
    if isinstance(dist.get("pipeline"), dict) and not isinstance(dist.get("pp_size"), int):
        dist["pp_size"] = 2  # a pipeline error means PP is on; 2 when the error does not say how much
    if isinstance(dist.get("pp_size"), int) and dist["pp_size"] > 1 and "pipeline" not in dist \
            and not any(m.code == "MW-E-PP-NO-PIPELINE" for m in errors):
        dist["pipeline"] = {}
    if world is None:
        world = _implied_world(dist, errors)
    return recipe, world


_LOGGED = re.compile(r"distributed:\s*(\{[^{}\n]{0,2000}\})")


def _logged_layout(texts: Sequence[str]) -> dict | None:
    """The `distributed:` mapping a launch log prints ("INFO root: distributed: {'strategy': ...}"):
    the run's own layout, read as a Python literal (never evaluated)."""
    for text in texts:
        for m in _LOGGED.finditer(text):
            try:
                value = ast.literal_eval(m.group(1))
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                continue
            if isinstance(value, dict) and value:
                return {"distributed": {k: v for k, v in value.items() if v is not None}}
    return None


def _implied_world(dist: dict, errors: Sequence[UpstreamErrorMatch]) -> int | None:
    """A world the error's numbers imply: dp (or dp*cp*tp) times the other sizes."""
    def size(k: str) -> int:
        v = dist.get(k)
        return v if isinstance(v, int) and v > 0 else 1

    for m in errors:
        non_pp = _int(m.values.get("non_pp"))
        if non_pp:
            return non_pp * size("pp_size")
        dp = _int(m.values.get("dp"))
        if dp:
            return dp * size("tp_size") * size("cp_size") * size("pp_size")
    return None


def understood_errors(query: Query) -> list[UpstreamErrorMatch]:
    """Pasted upstream error messages, each matched to the rule that raises it."""
    texts = query.situation.pasted.errors or (query.text,)
    return [m for t in texts for m in match_upstream_error(t)]
