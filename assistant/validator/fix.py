"""suggested_fix: the nearest config that passes, found by small edits and re-validated.

Each error proposes a few edits (with a cost: how far it moves the config from what the user
wrote). A best-first search applies them, re-validates, and stops at the cheapest passing config.
The winner is dumped to YAML; a value the dump cannot write as it is (a tuple, a set, nan) makes
the text be parsed and validated once more.
"""
from __future__ import annotations

import copy
import difflib
import heapq
import math
from typing import Any, Callable, Iterable

import yaml

from assistant.validator import derive, rules, schedules
from assistant.validator.check import check_once
from assistant.validator.layout import Layout
from assistant.validator.paths import put_path
from assistant.validator.report import Finding, ValidationReport

# libyaml's safe loader and dumper when PyYAML has them: the same safe types, C speed
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

MAX_VALIDATIONS = 200
MAX_EDITS = 8
MAX_ERRORS = 12

Edit = tuple[float, dict, str]  # (cost, new config, what changed)


# ---------------------------------------------------------------------------------------------
# path helpers on the loader's view of the recipe


def _parts(path: str) -> list[str]:
    return [p for p in path.split(".") if p]


def _dist(cfg: dict) -> dict:
    d = cfg.get("distributed")
    return d if isinstance(d, dict) else {}


def _with(cfg: dict, path: str, value: Any) -> dict:
    new = copy.deepcopy(cfg)
    put_path(new, path, value)
    return new


def _without(cfg: dict, path: str) -> dict | None:
    new = copy.deepcopy(cfg)
    node: Any = new
    parts = _parts(path)
    for p in parts[:-1]:
        node = node.get(p) if isinstance(node, dict) else None
    if not isinstance(node, dict):
        return None
    for k in list(node):
        if str(k) == parts[-1]:
            del node[k]
            return new
    return None


def _renamed(cfg: dict, path: str, new_key: str) -> dict | None:
    new = copy.deepcopy(cfg)
    node: Any = new
    parts = _parts(path)
    for p in parts[:-1]:
        node = node.get(p) if isinstance(node, dict) else None
    if not isinstance(node, dict) or parts[-1] not in node:
        return None
    items = [(new_key if k == parts[-1] else k, v) for k, v in node.items()]
    node.clear()
    node.update(items)
    return new


def _layout(cfg: dict, world: int) -> Layout:
    """The sizes as upstream reads them (_degree), dp inferred unless it is an explicit positive int;
    an unknown strategy is read as fsdp2, the one its fix proposes."""
    d = _dist(cfg)
    dc = rules.STRATEGIES.get(str(d.get("strategy", "fsdp2")).lower())
    dp = d.get("dp_size")
    return Layout.of(rules.CANONICAL.get(dc, "fsdp2"), world, tp=derive.degree(d.get("tp_size")),
                     pp=derive.degree(d.get("pp_size")), cp=derive.degree(d.get("cp_size")),
                     ep=derive.degree(d.get("ep_size")), dp_replicate=derive.degree(d.get("dp_replicate_size")),
                     dp=dp if derive.is_positive_int(dp) else None)


def _ratio(a: float, b: float) -> float:
    return derive.log_ratio(a, b)


def _switch_to_fsdp2(cfg: dict) -> Edit | None:
    d = _dist(cfg)
    keep = rules.FSDP2_FIELDS | rules.SIZE_KEYS | {"strategy", "pipeline", "moe", "activation_checkpointing", *rules.META_KEYS}
    dropped = [k for k in d if k not in keep]
    new_d = {k: v for k, v in d.items() if k in keep}
    new_d["strategy"] = "fsdp2"
    new = copy.deepcopy(cfg)
    new["distributed"] = new_d
    return 1.5 + 0.5 * len(dropped), new, "strategy: fsdp2" + (f" (dropped {', '.join(map(str, dropped))})" if dropped else "")


# ---------------------------------------------------------------------------------------------
# edits per rule code


def _edits(f: Finding, cfg: dict, world: int, gpus_per_node: int,
           others: tuple[Finding, ...] = (), experts: int | None = None) -> Iterable[Edit | None]:
    code, path = f.code, f.path
    d = _dist(cfg)
    key = _parts(path)[-1] if path else ""
    if code == "MW-E-DIST-NOT-MAPPING":
        yield 3.0, {**copy.deepcopy(cfg), "distributed": {"strategy": "fsdp2"}}, "distributed: {strategy: fsdp2}"
    elif code == "MW-E-STRATEGY-UNKNOWN":
        got = str(d.get("strategy", "")).lower()
        # closest spelling; on a tie prefer the recommended default (fsdp2 first in the table)
        scored = [(difflib.SequenceMatcher(None, got, name).ratio(), -i, name) for i, name in enumerate(rules.STRATEGIES)]
        score, _, name = max(scored)
        if score >= 0.5:
            canon = rules.CANONICAL[rules.STRATEGIES[name]]
            yield 0.5, _with(cfg, "distributed.strategy", canon), f"strategy: {canon}"
        yield 2.0, _with(cfg, "distributed.strategy", "fsdp2"), "strategy: fsdp2"
    elif code in ("MW-E-STRATEGY-OPTION", "MW-E-PIPELINE-OPTION", "MW-E-MOE-OPTION"):
        fields = {"MW-E-STRATEGY-OPTION": rules.STRATEGY_FIELDS.get(rules.STRATEGIES.get(str(d.get("strategy", "fsdp2")).lower(), ""), frozenset()),
                  "MW-E-PIPELINE-OPTION": rules.PIPELINE_FIELDS, "MW-E-MOE-OPTION": rules.MOE_FIELDS}[code]
        m = rules._close(key, fields)
        if m:
            r = _renamed(cfg, path, m)
            if r is not None:
                yield 0.5, r, f"{key} -> {m}"
        value = _get(cfg, path)
        wanted = code == "MW-E-STRATEGY-OPTION" and key in rules.FSDP2_FIELDS and bool(value)
        r = _without(cfg, path)
        if r is not None:
            yield (2.0 if wanted else 0.7), r, f"removed {path}"
        if code == "MW-E-STRATEGY-OPTION" and key in rules.FSDP2_FIELDS:
            yield _switch_to_fsdp2(cfg)
        same = [o.path for o in others if o.code == code and o.path != path]
        if same:  # several unknown keys: drop them together rather than one edit each
            bulk: dict | None = cfg
            for pth in (path, *same):
                bulk = _without(bulk, pth) if bulk is not None else None
            if bulk is not None:
                yield 0.7 * (1 + len(same)), bulk, f"removed {len(same) + 1} unknown keys"
    elif code == "MW-E-AC-VALUE":
        got = str(d.get("activation_checkpointing", "")).lower()
        m = difflib.get_close_matches(got, sorted(rules.AC_TRUE | rules.AC_FALSE | rules.AC_SELECTIVE), n=1, cutoff=0.6)
        if m:
            yield 0.5, _with(cfg, "distributed.activation_checkpointing", m[0]), f"activation_checkpointing: {m[0]}"
        yield 1.5, _with(cfg, "distributed.activation_checkpointing", True), "activation_checkpointing: true"
        yield 2.0, _with(cfg, "distributed.activation_checkpointing", False), "activation_checkpointing: false"
    elif code == "MW-E-AC-SELECTIVE":
        yield 1.0, _with(cfg, "distributed.activation_checkpointing", True), "activation_checkpointing: true (full)"
        yield _switch_to_fsdp2(cfg)
    elif code == "MW-E-AC-SCOPE":
        yield 1.0, _with(cfg, path, "all"), "activation_checkpointing_scope: all"
    elif code in ("MW-E-STRATEGY-VALUE", "MW-E-MOE-VALUE", "MW-E-PIPELINE-VALUE", "MW-E-CONFIG-LOAD"):
        if code in ("MW-E-MOE-VALUE", "MW-E-PIPELINE-VALUE") and path in ("distributed.moe", "distributed.pipeline"):
            yield 1.0, _with(cfg, path, {}), f"{key}: {{}}"
        r = _without(cfg, path)
        if r is not None:
            yield 1.0, r, f"removed {path}"
    elif code == "MW-E-SIZE-VALUE":
        v = _get(cfg, path)
        if isinstance(v, float) and math.isfinite(v) and v >= 1:
            yield 0.5, _with(cfg, path, int(round(v))), f"{key}: {int(round(v))}"
        r = _without(cfg, path)
        if r is not None:
            yield 1.0, r, f"removed {path}"
    elif code == "MW-E-PP-NO-PIPELINE":
        if not derive.is_positive_int(_get(cfg, "distributed.pp_size")):
            # inf or 2.5 would run as pp_size 1 once a block is added: say so in the value itself
            yield 0.5, _with(cfg, "distributed.pp_size", 1), "pp_size: 1"
        block = {"pp_schedule": rules.PIPELINE_DEFAULT_SCHEDULE, "pp_microbatch_size": 1}
        yield 1.0, _with(cfg, "distributed.pipeline", block), "added distributed.pipeline"
        yield 3.0, _with(cfg, "distributed.pp_size", 1), "pp_size: 1"
    elif code == "MW-E-HSDP-STRATEGY":
        r = _without(cfg, "distributed.dp_replicate_size")
        if r is not None:
            yield 1.0, r, "removed dp_replicate_size"
        yield _switch_to_fsdp2(cfg)
    elif code in ("MW-E-MEGATRON-PP", "MW-E-MEGATRON-EP", "MW-E-DDP-PARALLEL"):
        k = {"MW-E-MEGATRON-PP": "pp_size", "MW-E-MEGATRON-EP": "ep_size"}.get(code, key)
        new = _with(cfg, f"distributed.{k}", 1)
        block = {"pp_size": "pipeline", "ep_size": "moe"}.get(k)
        if block and block in _dist(new):
            new = _without(new, f"distributed.{block}") or new
        yield 2.0, new, f"{k}: 1"
        yield _switch_to_fsdp2(cfg)
    elif code == "MW-E-WORLD-DIVISIBLE":
        yield from _world_edits(cfg, world, gpus_per_node)
    elif code in ("MW-E-DP-REPLICATE-DIVIDES", "MW-E-DP-REPLICATE-LT-DP"):
        yield _drop_odd_dp(cfg)
        lay = _layout(cfg, world)
        dp, dpr = lay.dp, lay.dp_replicate
        for c in derive.divisors(dp):
            if 1 < c < dp:
                yield 0.5 + _ratio(c, dpr), _with(cfg, "distributed.dp_replicate_size", c), f"dp_replicate_size: {c}"
        r = _without(cfg, "distributed.dp_replicate_size")
        if r is not None:
            yield 1.5, r, "removed dp_replicate_size"
    elif code == "MW-E-EP-DIVIDES":
        yield _drop_odd_dp(cfg)
        lay = _layout(cfg, world)
        for c in derive.divisors(lay.non_pp):
            if c > 1:
                yield 0.5 + _ratio(c, lay.ep), _with(cfg, "distributed.ep_size", c), f"ep_size: {c}"
    elif code == "MW-E-EP-EXPERTS" and experts:
        lay = _layout(cfg, world)
        for c in derive.divisors(lay.non_pp):
            if c > 1 and experts % c == 0:
                yield 0.5 + _ratio(c, lay.ep), _with(cfg, "distributed.ep_size", c), f"ep_size: {c}"
    elif code == "MW-E-EP-DENSE":  # no MoE class to shard experts over: EP's ranks go back to data parallelism
        yield 0.5, _with(cfg, "distributed.ep_size", 1), "ep_size: 1"
    elif code == "MW-E-TP-MOE-PLAN":
        if path == "distributed.sequence_parallel":
            yield 0.5, _with(cfg, path, False), "sequence_parallel: false"
        else:  # no TP plan for the MoE class: its TP ranks go to data parallelism, EP stays
            yield 1.0, _with(cfg, "distributed.tp_size", 1), "tp_size: 1"
    elif code == "MW-E-ASYNC-TP-SP":
        r = _without(cfg, path)
        if r is not None:
            yield 0.5, r, "removed enable_async_tensor_parallel"
        if _layout(cfg, world).ep <= 1:  # the MoE path refuses async TP even with sequence parallelism
            yield 0.7, _with(cfg, "distributed.sequence_parallel", True), "sequence_parallel: true"
    elif code == "MW-E-DP-MISMATCH":
        r = _without(cfg, "distributed.dp_size")
        if r is not None:
            yield 0.5, r, "dp_size inferred"
    elif code == "MW-E-BATCH-POSITIVE":
        yield 1.0, _with(cfg, path, 1 if key == "local_batch_size" else _layout(cfg, world).dp), f"{key} fixed"
    elif code == "MW-E-STEP-SCHEDULER-VALUE":
        yield 3.0, {**copy.deepcopy(cfg), "step_scheduler": {"local_batch_size": 1}}, "step_scheduler reset"
    elif code == "MW-E-BATCH-DIVISIBLE":
        yield from _batch_edits(cfg, world)
    elif code in ("MW-E-PP-MICROBATCH-COUNT", "MW-E-PP-MICROBATCH-DIVIDES"):
        yield from _microbatch_edits(cfg, world)
    elif code == "MW-E-PP-SCHEDULE":
        s = schedules.suggest(_get(cfg, path))
        if s:
            yield 0.3, _with(cfg, path, s), f"pp_schedule: {s}"
        yield 1.0, _with(cfg, path, rules.PIPELINE_DEFAULT_SCHEDULE), "pp_schedule: 1f1b"
    elif code == "MW-E-MEMORY":
        yield from _memory_edits(cfg, world, gpus_per_node)


def _drop_odd_dp(cfg: dict) -> Edit | None:
    """An explicit float dp_size (upstream's modulo checks run on it before its int assertion):
    leaving it out lets upstream infer it."""
    dp = _dist(cfg).get("dp_size")
    if not isinstance(dp, float):
        return None
    r = _without(cfg, "distributed.dp_size")
    return (1.0, r, "removed distributed.dp_size") if r is not None else None


def _memory_edits(cfg: dict, world: int, gpus_per_node: int) -> Iterable[Edit]:
    """The knobs of memory.py's advice, as edits: checkpointing, sharding instead of replicas, more
    TP inside the node, a smaller micro-batch. Combinations come from the search (AC and TP 2x, ...)."""
    d = _dist(cfg)
    if d.get("activation_checkpointing") in (None, False):
        yield 1.0, _with(cfg, "distributed.activation_checkpointing", True), "activation_checkpointing: true"
    if rules.STRATEGIES.get(str(d.get("strategy", "fsdp2")).lower()) == "DDPConfig":
        yield _switch_to_fsdp2(cfg)
    lay = _layout(cfg, world)
    tp = lay.tp
    if tp * 2 <= gpus_per_node and world % lay.with_sizes(tp=tp * 2).non_dp == 0:
        yield 1.0 + _ratio(tp * 2, tp), _with(cfg, "distributed.tp_size", tp * 2), f"tp_size: {tp * 2}"
    pipe = d.get("pipeline")
    mbs = pipe.get("pp_microbatch_size") if isinstance(pipe, dict) else None
    if lay.pp > 1 and derive.is_positive_int(mbs) and mbs > 1:
        yield 1.0, _with(cfg, "distributed.pipeline.pp_microbatch_size", 1), "pp_microbatch_size: 1"
    lbs = _ss(cfg).get("local_batch_size")
    if lay.pp == 1 and derive.is_positive_int(lbs) and lbs > 1:
        yield 1.0, _with(cfg, "step_scheduler.local_batch_size", 1), "local_batch_size: 1"


def _get(cfg: dict, path: str) -> Any:
    node: Any = cfg
    for p in _parts(path):
        if not isinstance(node, dict):
            return None
        node = next((v for k, v in node.items() if str(k) == p), None)
    return node


def _world_edits(cfg: dict, world: int, gpus_per_node: int) -> Iterable[Edit]:
    d = _dist(cfg)
    megatron = rules.STRATEGIES.get(str(d.get("strategy", "fsdp2")).lower()) == "MegatronFSDPConfig"
    keys = ("tp_size", "cp_size") if megatron else ("tp_size", "cp_size", "pp_size")
    lay = _layout(cfg, world)
    s = {k: getattr(lay, k.removesuffix("_size")) for k in keys}
    for k in keys:
        others = math.prod(s[o] for o in keys if o != k)
        if world % others:
            continue
        room = world // others
        for c in derive.divisors(room):
            if c != s[k]:
                # TP that does not divide a node spans nodes: a valid but slow layout
                extra = 1.0 if k == "tp_size" and gpus_per_node % c else 0.0
                yield 0.5 + extra + _ratio(c, s[k]), _with(cfg, f"distributed.{k}", c), f"{k}: {c}"


def _ss(cfg: dict) -> dict:
    ss = cfg.get("step_scheduler")
    return ss if isinstance(ss, dict) else {}


def _batch_edits(cfg: dict, world: int) -> Iterable[Edit]:
    ss = _ss(cfg)
    gbs = ss.get("global_batch_size", rules.SS_DEFAULTS["global_batch_size"])
    lbs = ss.get("local_batch_size", rules.SS_DEFAULTS["local_batch_size"])
    if not (derive.is_positive_int(gbs) and derive.is_positive_int(lbs)):
        return
    dp = _layout(cfg, world).dp  # ddp: the world
    denom = lbs * dp
    for g in {max(gbs // denom, 1) * denom, (gbs // denom + 1) * denom}:
        yield 0.5 + _ratio(g, gbs), _with(cfg, "step_scheduler.global_batch_size", g), f"global_batch_size: {g}"
    if gbs % dp == 0:
        for c in derive.divisors(gbs // dp):
            if c != lbs:
                yield 0.7 + _ratio(c, lbs), _with(cfg, "step_scheduler.local_batch_size", c), f"local_batch_size: {c}"




def _microbatch_edits(cfg: dict, world: int) -> Iterable[Edit]:
    ss = _ss(cfg)
    lbs = ss.get("local_batch_size", rules.SS_DEFAULTS["local_batch_size"])
    pipe = _dist(cfg).get("pipeline")
    mbs = pipe.get("pp_microbatch_size", 1) if isinstance(pipe, dict) else 1
    pp = _layout(cfg, world).pp
    if derive.is_positive_int(lbs):
        for c in derive.divisors(lbs):
            if lbs // c >= pp and c != mbs:
                yield 0.5 + _ratio(c, mbs if derive.is_positive_int(mbs) else 1), \
                    _with(cfg, "distributed.pipeline.pp_microbatch_size", c), f"pp_microbatch_size: {c}"
    m = mbs if derive.is_positive_int(mbs) else 1
    new_lbs = pp * m
    new = _with(cfg, "step_scheduler.local_batch_size", new_lbs)
    if not derive.is_positive_int(mbs):
        new = _with(new, "distributed.pipeline.pp_microbatch_size", 1)
    yield 1.0 + _ratio(new_lbs, lbs if derive.is_positive_int(lbs) else 1), new, f"local_batch_size: {new_lbs}"


# ---------------------------------------------------------------------------------------------
# search and output


# Sections the checks read (the model-aware ones read model, dataset, peft); the search carries
# only these, so a large recipe does not slow it down.
_READ_SECTIONS = ("distributed", "step_scheduler", "packed_sequence", "model", "dataset", "peft")
_SHOWN_SECTIONS = ("distributed", "step_scheduler", "packed_sequence")


def suggest(cfg: dict, is_recipe: bool, report: ValidationReport, *, world: int, gpus_per_node: int,
            facts: Any = None, gpu: Any = None, recipe_checks: bool | None = None,
            experts: int | None = None) -> str | None:
    """YAML of the cheapest passing config reachable by small edits, or None. `experts`: a stated
    routed-expert count when no model is named."""
    if len(report.errors) > MAX_ERRORS:
        return None  # too far from any valid config to call an edit "nearest"
    if is_recipe:
        outside = [f for f in report.errors if _parts(f.path)[:1] and _parts(f.path)[0] not in _READ_SECTIONS]
        if outside:
            return None  # errors in sections we do not edit
        cfg = {k: v for k, v in cfg.items() if k in _READ_SECTIONS}

    def check(c: dict) -> ValidationReport:
        data = c if is_recipe else c.get("distributed")
        return check_once(data, world, gpus_per_node, facts, gpu, recipe_checks, experts)[0]

    best = _search(cfg, report, check, world, gpus_per_node, facts.num_routed_experts if facts is not None else experts)
    if best is None:
        return None
    # with a model, the model-aware checks also read model/dataset/peft: keep them so the text
    # re-validates on its own exactly as it did here
    keep = _READ_SECTIONS if facts is not None else _SHOWN_SECTIONS
    shown = {k: v for k, v in best.items() if k in keep} if is_recipe else best.get("distributed")
    plain = _plain(shown)
    text = _dump(plain)
    if text is None:
        return None
    if _native(shown) and plain == shown:
        # safe_dump writes YAML-native values so that safe_load reads back exactly these values,
        # and these are what the search validated: the text passes without being parsed again
        if not is_recipe or set(best) <= set(keep):
            return text
        return text if check(shown).ok else None
    # values the dump had to change (tuples, sets, objects, nan): read the text back as a user's file would be
    try:
        again = yaml.load(text, Loader=_Loader)
        if not check(again if is_recipe else {"distributed": again}).ok:
            return None
    except Exception:  # noqa: BLE001
        return None
    return text


def _search(cfg: dict, report: ValidationReport, check: Callable[[dict], ValidationReport], world: int,
            gpus_per_node: int, experts: int | None = None) -> dict | None:
    counter = 0
    heap: list[tuple[float, int, int, dict, ValidationReport]] = [(0.0, counter, 0, cfg, report)]
    seen = {_key(cfg)}
    validations = 0
    while heap:
        cost, _, depth, state, rep = heapq.heappop(heap)
        if rep.ok:
            return state
        if depth >= MAX_EDITS:
            continue
        try:
            edits = [e for e in _edits(rep.errors[0], state, world, gpus_per_node, rep.errors, experts) if e is not None]
        except Exception:  # noqa: BLE001 - odd values can defeat an edit; then this branch has no fix
            continue
        for edit in edits:
            step, new, _why = edit
            k = _key(new)
            if k in seen:
                continue
            seen.add(k)
            if validations >= MAX_VALIDATIONS:
                return None
            validations += 1
            try:
                new_rep = check(new)
            except Exception:  # noqa: BLE001 - an edit that breaks the input is just not a fix
                continue
            counter += 1
            # among equally near fixes, prefer the one that leaves fewer warnings behind
            penalty = 0.1 * max(len(new_rep.warnings) - len(report.warnings), 0)
            heapq.heappush(heap, (cost + step + penalty, counter, depth + 1, new, new_rep))
    return None


def _key(cfg: dict) -> str:
    try:
        return repr(cfg)
    except Exception:  # noqa: BLE001
        return str(id(cfg))


def _plain(v: Any) -> Any:
    """Only what yaml.safe_dump can write."""
    if isinstance(v, dict):
        return {(k if isinstance(k, (str, int, float, bool)) or k is None else str(k)): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, (set, frozenset)):
        return sorted((_plain(x) for x in v), key=repr)
    if v is None or isinstance(v, (str, bool, int, float)):
        return v
    return str(v)


_NATIVE_SCALARS = (bool, int, type(None))


def _native(v: Any) -> bool:
    """Only dicts, lists and scalars that survive a YAML round trip unchanged (floats: finite only)."""
    if isinstance(v, dict):
        return all(_native(k) and not isinstance(k, (dict, list)) and _native(x) for k, x in v.items())
    if isinstance(v, list):
        return all(_native(x) for x in v)
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, str):
        return v.isprintable()  # control characters, line breaks, surrogates: let the parser judge the text
    return isinstance(v, _NATIVE_SCALARS)


def _dump(value: Any) -> str | None:
    try:
        return yaml.dump(value, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False)
    except (yaml.YAMLError, UnicodeError):  # libyaml cannot encode a lone surrogate
        return None
