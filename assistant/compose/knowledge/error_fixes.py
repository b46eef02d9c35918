"""A pasted upstream error explained with the run's own numbers: why the check fails and the values
that pass (the experts and heads a size must divide, the stage counts rounding gives, the
microbatches a pipeline needs). Wording in `error_fixes.yaml`; the arithmetic here."""
from __future__ import annotations

import math
import re
from functools import lru_cache
from pathlib import Path
from typing import Callable

from assistant.datafile import read_yaml
from assistant.validator.upstream_errors import UpstreamErrorMatch

_PATH = Path(__file__).with_name("error_fixes.yaml")
_LAYERS = re.compile(r"Model has (\d+) layers with pipeline_parallel_layers_per_stage=(\d+)")
_ACROSS = re.compile(r"num_virtual_stages=(\d+) across (\d+) PP ranks")
_SINGLE_STAGE = re.compile(r"\b(1f1b|gpipe)\b(?!\w)", re.I)
_MAX_CHOICES = 3


@lru_cache(maxsize=1)
def _phrases() -> dict:
    return read_yaml(_PATH)


def _join(values: list[int], lang: str) -> str:
    sep, last = ("、", " 或 ") if lang == "zh" else (", ", " or ")
    items = [str(v) for v in values]
    return items[0] if len(items) == 1 else sep.join(items[:-1]) + last + items[-1]


def _divisors_below(n: int, limit: int, limit_count: int = _MAX_CHOICES) -> list[int]:
    """Divisors of n below limit, largest first (the nearest smaller sizes)."""
    return [d for d in range(min(n, limit - 1), 0, -1) if n % d == 0][:limit_count]


def _experts(v: dict, ctx: dict, lang: str) -> dict | None:
    experts, ep = int(v["experts"]), int(v["ep"])
    non_pp = ctx.get("non_pp") or ep
    common = math.gcd(experts, non_pp)
    choices = [d for d in range(common, 1, -1) if common % d == 0 and d != ep][:_MAX_CHOICES] or [1]
    return {"experts": experts, "ep": ep, "rem": experts % ep, "non_pp": non_pp, "choices": _join(choices, lang)}


def _heads(key: str) -> Callable[[dict, dict, str], dict | None]:
    def values(v: dict, ctx: dict, lang: str) -> dict | None:
        if key not in v:
            return None  # the older wording carries no numbers
        heads, tp = int(v[key]), int(v["tp"])
        # a TP group lives inside a node: only the sizes that also divide the GPUs per node
        gpn = ctx.get("gpus_per_node") or tp
        choices = [c for c in _divisors_below(heads, tp, limit_count=tp) if gpn % c == 0][:_MAX_CHOICES] or [1]
        return {key: heads, "tp": tp, "choices": _join(choices, lang)}
    return values


def _stages(v: dict, ctx: dict, lang: str) -> dict | str | None:
    """Stage counts: for a count that is no multiple of pp_size, what rounding up and down give; for a
    schedule with the wrong stages per rank, the layers_per_stage values that give the right number."""
    text = ctx.get("text", "")
    m = _LAYERS.search(text)
    ranks = _ACROSS.search(text)
    pp = int(v["pp"]) if "pp" in v else int(ranks.group(2)) if ranks else None
    if m is None or pp is None or pp <= 0:
        return None
    layers, lps = int(m.group(1)), int(m.group(2))
    stages = math.ceil(layers / lps)
    p = _phrases()["MW-W-PP-LAYERS"]
    if "per_rank" in v:  # "Single stage schedule requires ..." / "Multi-stage schedule requires ..."
        single = "Single stage" in text
        values = {"layers": layers, "lps": lps, "stages": stages, "pp": pp, "per_rank": stages // pp,
                  "schedule": _schedule_named(text) or "1f1b",
                  "lps_choices": _join(_lps_fitting(layers, pp, lps, single), lang)}
        return p["single" if single else "multi"][lang].format(**values)
    single = bool(_SINGLE_STAGE.search(text)) and "interleav" not in text.lower()
    up, down = stages + (-stages) % pp, stages - stages % pp
    return {"layers": layers, "lps": lps, "stages": stages, "pp": pp, "up": up, "up_per_rank": up // pp,
            "down": down, "down_per_rank": down // pp,
            "down_note": p["down_too_few"][lang] if not single and down // pp < 2 else "",
            "lps_choices": _join(_lps_fitting(layers, pp, lps, single), lang)}


def _lps_fitting(layers: int, pp: int, near: int, single: bool) -> list[int]:
    """layers_per_stage values whose stage count is a multiple of pp_size with one stage per rank
    (single-stage schedule) or at least two (multi-stage), the two nearest to the one given."""
    def ok(s: int) -> bool:
        n = math.ceil(layers / s)
        return n % pp == 0 and (n // pp == 1 if single else n // pp >= 2)
    fits = sorted((s for s in range(1, layers + 1) if ok(s)), key=lambda s: (abs(s - near), s))[:2]
    return sorted(fits) or [max(1, layers // pp)]


def _schedule_named(text: str) -> str | None:
    m = re.search(r"\b(1f1b|gpipe|interleaved1f1b|loopedbfs|interleavedzerobubble|zbvzerobubble|dualpipev)\b", text, re.I)
    return m.group(1).lower() if m else None


def _microbatches(v: dict, ctx: dict, lang: str) -> dict | None:
    lbs, mbs, pp = int(v["lbs"]), int(v["mbs"]), int(v["pp"])
    if mbs <= 0:
        return None
    return {"lbs": lbs, "mbs": mbs, "pp": pp, "count": lbs // mbs, "need": pp * mbs}


def _world(v: dict, ctx: dict, lang: str) -> dict | None:
    world, product = int(v["world"]), int(v["product"])
    if product <= 0 or world % product == 0:
        return None
    return {"world": world, "product": product, "factors": v["factors"], "rem": world % product,
            "choices": _join([d for d in range(1, world + 1) if world % d == 0][:10], lang)}


# the parallelism named in "ddp does not support <feature> parallelism", as each language names it
_FEATURE = {"tensor": ("tensor", "张量并行（TP）"), "pipeline": ("pipeline", "流水线并行（PP）"),
            "context": ("context", "上下文并行（CP）"), "expert": ("expert", "专家并行（EP）")}


def _ddp(v: dict, ctx: dict, lang: str) -> dict | None:
    names = _FEATURE.get(str(v.get("feature", "")).lower())
    return {"feature": names[1] if lang == "zh" else names[0]} if names else None


_VALUES: dict[str, Callable[[dict, dict, str], dict | str | None]] = {
    "MW-E-WORLD-DIVISIBLE": _world,
    "MW-E-DDP-PARALLEL": _ddp,
    "MW-E-EP-EXPERTS": _experts,
    "MW-W-TP-KV-HEADS": _heads("kv"),
    "MW-W-TP-HEADS": _heads("heads"),
    "MW-W-PP-LAYERS": _stages,
    "MW-E-PP-MICROBATCH-COUNT": _microbatches,
    "MW-E-MEGATRON-PP": lambda v, ctx, lang: {},
    "MW-E-MEGATRON-EP": lambda v, ctx, lang: {},
}


def explain(m: UpstreamErrorMatch, lang: str, *, text: str = "", non_pp: int | None = None,
            gpus_per_node: int | None = None) -> str | None:
    """The line that explains `m` with its numbers and says what passes; None for a rule without one
    (the validator's own message and fix cover it) or an error without the numbers it needs."""
    values = _VALUES.get(m.code)
    phrase = _phrases().get(m.code)
    if values is None or phrase is None:
        return None
    try:
        filled = values(m.values, {"text": text, "non_pp": non_pp, "gpus_per_node": gpus_per_node}, lang)
    except (KeyError, ValueError, ZeroDivisionError):
        return None
    if filled is None or isinstance(filled, str):
        return filled  # a variant of the rule words its own line
    return phrase["zh" if lang == "zh" else "en"].format(**filled)
