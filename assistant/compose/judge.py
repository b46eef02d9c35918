"""The user's own layout, judged once: the pasted config, else the sizes stated in prose, validated
exactly as given at the user's numbers (a stated 1 stays 1; unstated sizes take upstream defaults)."""
from __future__ import annotations

from assistant.compose.diagnose import Diagnosis, diagnose, judge_stated
from assistant.understand.query import Query
from assistant.validator import UnusableInput, validate
from assistant.validator.coerce import load_yaml

DEFAULT_GPUS_PER_NODE = 8
_SIZE_KEYS = ("tp_size", "pp_size", "cp_size", "ep_size", "dp_size", "dp_replicate_size")
_CONFIG_KEYS = frozenset({"distributed", "strategy", *_SIZE_KEYS, "pipeline", "moe", "step_scheduler",
                          "sequence_parallel", "activation_checkpointing"})


def _is_config(text: str) -> bool:
    """A pasted block that parses to a recipe or a `distributed:` mapping; a log line never does."""
    try:
        data = load_yaml(text)
    except ValueError:
        return False
    return isinstance(data, dict) and bool(_CONFIG_KEYS & set(map(str, data)))


def _stated_recipe(query: Query) -> dict | None:
    """The layout the user stated in prose, as a recipe; None when they stated no size."""
    situation = getattr(query, "situation", None)
    if situation is not None:
        return situation.user_recipe()
    p = query.params
    dist: dict = {"strategy": p.strategy} if p.strategy else {}
    for key in _SIZE_KEYS:
        v = getattr(p, key, None)
        if v is not None:
            dist[key] = v
    if not any(k in dist for k in _SIZE_KEYS):
        return None
    if dist.get("pp_size", 1) > 1:
        dist["pipeline"] = {"pp_microbatch_size": p.pp_microbatch_size} if p.pp_microbatch_size else {}
    recipe = {"distributed": dist}
    batches = {k: v for k, v in (("global_batch_size", p.global_batch_size), ("local_batch_size", p.local_batch_size)) if v}
    if batches:
        recipe["step_scheduler"] = batches
    return recipe


def _pasted_config(query: Query) -> str | None:
    situation = getattr(query, "situation", None)
    if situation is not None:
        return situation.pasted.configs[0] if situation.pasted.configs else None
    text = query.params.yaml_text
    return text if text and _is_config(text) else None


def judge_user_layout(query: Query, gpus_per_node: int) -> Diagnosis | None:
    """The verdict on the user's own layout; None when they pasted or stated none."""
    p = query.params
    kwargs = dict(world_size=p.world_size, gpus_per_node=gpus_per_node, validate=validate, unusable=UnusableInput,
                  model=p.model, gpu=p.gpu)
    pasted = _pasted_config(query)
    if pasted is not None:
        return diagnose(pasted, **kwargs)
    recipe = _stated_recipe(query)
    return judge_stated(recipe, **kwargs) if recipe else None


def understood_errors(query: Query) -> list:
    """Pasted upstream error messages, each matched to the rule that raises it."""
    try:
        from assistant.validator.upstream_errors import match_upstream_error
    except ImportError:
        return []
    situation = getattr(query, "situation", None)
    texts = situation.pasted.errors if situation is not None else (query.text,)
    return [m for t in texts for m in match_upstream_error(t)]
