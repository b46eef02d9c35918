"""The user's own layout, judged once: the pasted config, else the sizes stated in prose, validated
exactly as given at the user's numbers (a stated 1 stays 1; unstated sizes take upstream defaults)."""
from __future__ import annotations

from assistant.compose.diagnose import Diagnosis, diagnose, judge_stated
from assistant.understand.query import Query
from assistant.understand.stated import config_mapping
from assistant.validator import UnusableInput, validate
from assistant.validator.upstream_errors import match_upstream_error


def judge_user_layout(query: Query, gpus_per_node: int) -> Diagnosis | None:
    """The verdict on the user's own layout; None when they pasted or stated none."""
    sit = query.situation
    kwargs = dict(world_size=sit.world_size, gpus_per_node=gpus_per_node, validate=validate, unusable=UnusableInput,
                  model=sit.model, gpu=sit.gpu)
    # a follow-up ("and on 16 GPUs?") judges the config pasted in an earlier turn
    carried = (query.params.yaml_text,) if query.params.yaml_text and not sit.pasted.configs else ()
    pasted = next((t for t in (*sit.pasted.configs, *carried) if config_mapping(t) is not None), None)
    if pasted is not None:
        return diagnose(pasted, **kwargs)
    recipe = sit.user_recipe()
    return judge_stated(recipe, **kwargs) if recipe else None


def understood_errors(query: Query) -> list:
    """Pasted upstream error messages, each matched to the rule that raises it."""
    texts = query.situation.pasted.errors or (query.text,)
    return [m for t in texts for m in match_upstream_error(t)]
