"""The rules: upstream start-up checks mirrored in upstream order, plus Meshwise's own warnings.

`make_finding(code, path, **values)` renders any code from the rule tables (ours in
rules_table.yaml, the model-aware ones in model_rules_table.yaml when present).

The distributed checks replay `parse_distributed_section` -> `DistributedSetup.build` -> mesh
creation on the loader's values, with the same Python operations on the same values, so odd inputs
(bools, floats, nan, strings) take the same branch they take upstream. Upstream stops at its first
exception; we record it as the first error and go on only where the state after it is still
well defined, so `errors[0]` is what upstream would raise and `ok` is upstream's verdict.
"""
from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from assistant.defaults import DEFAULT_GPUS_PER_NODE
from assistant.validator import derive, schedules
from assistant.validator.coerce import section_as_dict
from assistant.validator.findings import RULES, Findings, Rule, describe, make_finding  # noqa: F401 - re-exported
from assistant.validator.layout import Layout
from assistant.validator.report import Derived, Finding
from assistant.validator.schema import (  # noqa: F401 - re-exported: the fixer and planner read them as rules.X
    AC_FALSE, AC_SCOPE_ALIASES, AC_SCOPES, AC_SELECTIVE, AC_SELECTIVE_STRATEGIES, AC_TRUE, ALL_STRATEGY_FIELDS,
    CANONICAL, DTYPE_NAMES, FRAME_FIELDS, FROZEN_SHARDING, FSDP2_FIELDS, KNOWN_TARGETS, META_KEYS, MOE_FIELDS,
    MP_DTYPE_KEYS, MP_FIELDS, MULTIMODAL_CHECKED, MULTIMODAL_FIELDS, PIPELINE_DEFAULT_SCHEDULE, PIPELINE_FIELDS,
    PP_MICROBATCH_DEFAULT, RECIPE_KEYS, SCOPE_CHECKED, SIZE_DEFAULTS, SIZE_KEYS, SS_DEFAULTS, STRATEGIES,
    STRATEGY_FIELDS, VISION_FIELDS,
)

_ACCEPTED_SCHEDULES = ", ".join(schedules.RUNNABLE_LOWER)


def dtype_known(name: str) -> bool:
    """nemo_automodel.shared.utils.dtype_from_str would return a dtype (not raise KeyError)."""
    low = name.lower()
    return low in DTYPE_NAMES or ("torch." + low) in DTYPE_NAMES


# ---------------------------------------------------------------------------------------------
# results


@dataclass
class Parsed:
    """What the distributed section turned into, for the recipe checks and the fixer."""

    dataclass_name: str | None = None
    strategy: str | None = None  # canonical name
    sizes: dict | None = None  # after null -> default
    pipeline: dict | None = None  # validated pipeline block, when pp is on
    moe: Any = None
    activation_checkpointing: bool | str = False
    derived: Derived | None = None
    layout: Layout | None = None  # the sizes the mesh was built from, when it was


def _close(key: Any, options: frozenset[str]) -> str | None:
    if not isinstance(key, str):
        return None
    return _closest(key, options)


@lru_cache(maxsize=4096)
def _closest(key: str, options: frozenset[str]) -> str | None:
    # difflib is the costliest step of validating a config with an unknown key; the same few
    # misspellings (tensor_parallel_size, sequence_paralel) come back again and again
    m = difflib.get_close_matches(key, sorted(options), n=1, cutoff=0.75)
    return m[0] if m else None


def _did_you_mean(key: Any, options: frozenset[str]) -> tuple[str, str]:
    m = _close(key, options)
    return (f"; did you mean {m}?", f"；是否想写 {m}？") if m else ("", "")


# ---------------------------------------------------------------------------------------------
# sub-dataclass checks (each mirrors one constructor)


def _target_fields(target: Any) -> frozenset[str] | None:
    """Fields of the class a `_target_` names, when we know it; None when we cannot tell."""
    if target is None:
        return None
    name = target.rsplit(".", 1)[-1] if isinstance(target, str) else None
    return KNOWN_TARGETS.get(name) if name else None


def _bad_value(out: Findings, path: str, why: str, why_zh: str) -> None:
    out.add("MW-E-STRATEGY-VALUE", path, key=path, why=why, why_zh=why_zh)


def _check_mp_policy(raw: dict, path: str, out: Findings, *, target: Any) -> None:
    """MixedPrecisionPolicy(**raw) (or the _target_ class) after dtype strings are converted."""
    for key in MP_DTYPE_KEYS:
        v = raw.get(key)
        if key in raw and isinstance(v, str) and not dtype_known(v):
            _bad_value(out, f"{path}.{key}", f"unknown dtype string {v!r} (dtype_from_str raises KeyError)",
                       f"未知的 dtype 字符串 {v!r}（dtype_from_str 会抛出 KeyError）")
    fields = MP_FIELDS if target is None else _target_fields(target)
    if fields is not None:
        _check_sub_fields(raw, fields, path, out)


def _check_sub_fields(raw: dict, fields: frozenset[str], path: str, out: Findings) -> bool:
    ok = True
    for k in raw:
        if not isinstance(k, str) or k not in fields:
            en, zh = _did_you_mean(k, fields)
            _bad_value(out, f"{path}.{k}", f"{describe(k)} is not a field of {path.rsplit('.', 1)[-1]}{en}",
                       f"{describe(k)} 不是 {path.rsplit('.', 1)[-1]} 的字段{zh}")
            ok = False
    return ok


def _check_multimodal(raw: Any, out: Findings) -> bool:
    """The multimodal block as _dist_utils turns it into MultimodalDistributedConfig. True if built."""
    path = "distributed.multimodal"
    if not isinstance(raw, dict):
        return False
    ok = True
    vision = raw.get("vision")
    vision_ok = "vision" not in raw
    if isinstance(vision, dict):
        fs = vision.get("frame_sharding")
        fs_ok = "frame_sharding" not in vision
        if isinstance(fs, dict):
            fs_ok = _check_frame_sharding(fs, f"{path}.vision.frame_sharding", out)
        elif "frame_sharding" in vision:
            _bad_value(out, f"{path}.vision.frame_sharding", "frame_sharding must be a mapping",
                       "frame_sharding 必须是映射")
        vision_ok = _check_sub_fields(vision, VISION_FIELDS, f"{path}.vision", out) and fs_ok
    elif "vision" in raw:
        _bad_value(out, f"{path}.vision", "vision must be a mapping", "vision 必须是映射")
    ok = _check_sub_fields(raw, MULTIMODAL_FIELDS, path, out) and vision_ok
    if ok and "frozen_sharding" in raw:
        fz = raw["frozen_sharding"]
        if not isinstance(fz, str) or fz.lower().replace("-", "_") not in FROZEN_SHARDING:
            _bad_value(out, f"{path}.frozen_sharding", f"must be one of root, per_layer, replicate; got {describe(fz)}",
                       f"必须是 root、per_layer、replicate 之一；实际为 {describe(fz)}")
            ok = False
    return ok


def _nonneg_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _check_frame_sharding(fs: dict, path: str, out: Findings) -> bool:
    if not _check_sub_fields(fs, FRAME_FIELDS, path, out):
        return False
    why = None
    mesh_dims = fs.get("mesh_dims", ("cp",))
    if isinstance(mesh_dims, list):
        mesh_dims = tuple(mesh_dims)
    if not isinstance(fs.get("enabled", False), bool):
        why = ("enabled must be a boolean", "enabled 必须是布尔值")
    elif not isinstance(mesh_dims, tuple) or mesh_dims != ("cp",):
        why = ('mesh_dims supports only ["cp"]', 'mesh_dims 目前只支持 ["cp"]')
    else:
        for key in ("min_tokens", "min_frames", "min_local_patch_rows"):
            if key in fs and not _nonneg_int(fs[key]):
                why = (f"{key} must be a non-negative integer", f"{key} 必须是非负整数")
                break
        else:
            ca = fs.get("cost_alpha", "auto")
            if ca not in (None, "auto") and not _nonneg_int(ca):
                why = ('cost_alpha must be "auto", null, or a non-negative integer', 'cost_alpha 必须是 "auto"、null 或非负整数')
    if why:
        _bad_value(out, path, why[0], why[1])
        return False
    return True


def _normalize_ac(value: Any) -> bool | str | None:
    """_normalize_activation_checkpointing; None means it would raise."""
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        n = value.lower().replace("-", "_")
        if n in AC_FALSE:
            return False
        if n in AC_TRUE:
            return True
        if n in AC_SELECTIVE:
            return "selective"
    return None


def _scope_error(value: Any) -> str | None:
    """normalize_activation_checkpointing_scope; the reason it would raise, or None."""
    if value is None:
        return None
    if isinstance(value, str):
        parts = value.lower().replace("-", "_").replace("+", ",").split(",")
    elif isinstance(value, (list, tuple, set, frozenset)):
        parts = []
        for item in value:
            if not isinstance(item, str):
                return "entries must be strings"
            parts.extend(item.lower().replace("-", "_").replace("+", ",").split(","))
    else:
        return "must be a string or a list of strings"
    scopes: list[str] = []
    for part in parts:
        s = part.strip()
        if not s:
            continue
        s = AC_SCOPE_ALIASES.get(s, s)
        if s not in AC_SCOPES:
            return f"unknown scope {part!r}"
        if s not in scopes:
            scopes.append(s)
    if "all" in scopes and len(scopes) > 1:
        return "'all' cannot be combined with other scopes"
    return None


# ---------------------------------------------------------------------------------------------
# the distributed section


def _size_error(out: Findings, key: str, value: Any, why: str, why_zh: str) -> None:
    out.add("MW-E-SIZE-VALUE", f"distributed.{key}", key=key, got=describe(value), why=why, why_zh=why_zh)


_HINT_LIMIT = 20
_CMP_WHY = ("upstream compares it with an int and raises TypeError", "上游会把它与整数比较并抛出 TypeError")


def check_distributed(cfg: dict, world: int, out: Findings, gpus_per_node: int = DEFAULT_GPUS_PER_NODE) -> Parsed:
    """Replay of parse_distributed_section + DistributedSetup.build + mesh creation on `cfg`
    (a plain dict: `dict(cfg.distributed)`)."""
    p = Parsed()
    cfg = dict(cfg)
    raw_strategy = cfg.pop("strategy", "fsdp2")
    if not isinstance(raw_strategy, (str, bytes, bytearray)):  # upstream calls .lower() on it
        out.add("MW-E-STRATEGY-UNKNOWN", "distributed.strategy", got=describe(raw_strategy))
        return p
    name = raw_strategy.lower()

    sizes: dict[str, Any] = {}
    for key, default in SIZE_DEFAULTS:
        v = cfg.pop(key, default)
        sizes[key] = v if v is not None else default
    p.sizes = sizes
    pipeline = cfg.pop("pipeline", None)
    moe = cfg.pop("moe", None)
    ac_raw = cfg.pop("activation_checkpointing", False)
    ac = _normalize_ac(ac_raw)
    if ac is None:
        out.add("MW-E-AC-VALUE", "distributed.activation_checkpointing", got=describe(ac_raw))
        ac = False
    p.activation_checkpointing = ac
    for key in META_KEYS:
        cfg.pop(key, None)
    kwargs = cfg

    multimodal_built = False
    if "multimodal" in kwargs:
        multimodal_built = _check_multimodal(kwargs["multimodal"], out)
    if "mp_policy" in kwargs and isinstance(kwargs["mp_policy"], dict):
        mp = dict(kwargs["mp_policy"])
        target = mp.pop("_target_", None)
        _check_mp_policy(mp, "distributed.mp_policy", out, target=target)
    if "offload_policy" in kwargs and isinstance(kwargs["offload_policy"], dict):
        op = dict(kwargs["offload_policy"])
        target = op.pop("_target_", None)
        fields = KNOWN_TARGETS["CPUOffloadPolicy"] if target is None else _target_fields(target)
        if fields is not None:
            _check_sub_fields(op, fields, "distributed.offload_policy", out)
    if "autocast_dtype" in kwargs and isinstance(kwargs["autocast_dtype"], str) and not dtype_known(kwargs["autocast_dtype"]):
        v = kwargs["autocast_dtype"]
        _bad_value(out, "distributed.autocast_dtype", f"unknown dtype string {v!r} (dtype_from_str raises KeyError)",
                   f"未知的 dtype 字符串 {v!r}（dtype_from_str 会抛出 KeyError）")

    ep_size = sizes["ep_size"] or 1
    if ac == "selective" and name not in AC_SELECTIVE_STRATEGIES:
        out.add("MW-E-AC-SELECTIVE", "distributed.activation_checkpointing", strategy=describe(raw_strategy))

    pp_size = sizes["pp_size"] or 1
    if pipeline is not None:
        try:
            inert = pp_size <= 1
        except TypeError:
            _size_error(out, "pp_size", sizes["pp_size"], *_CMP_WHY)
            return p
        if inert:
            out.add("MW-W-PIPELINE-DROPPED", "distributed.pipeline", pp=describe(sizes["pp_size"]))
            pipeline = None
    if moe is not None:
        try:
            inert = ep_size <= 1
        except TypeError:
            _size_error(out, "ep_size", sizes["ep_size"], *_CMP_WHY)
            return p
        if inert:
            out.add("MW-W-MOE-IGNORED", "distributed.moe", ep=describe(sizes["ep_size"]))
            moe = None

    # _resolve_strategy_config
    dc = STRATEGIES.get(name) if isinstance(name, str) else None
    if dc is None:
        out.add("MW-E-STRATEGY-UNKNOWN", "distributed.strategy", got=describe(raw_strategy))
        return p
    p.dataclass_name = dc
    p.strategy = CANONICAL[dc]
    fields = STRATEGY_FIELDS[dc]
    unknown = [k for k in kwargs if not isinstance(k, str) or k not in fields]
    for i, k in enumerate(unknown):
        if i >= _HINT_LIMIT:  # hundreds of junk keys: no spelling hints past the first few
            hint, hint_zh = "", ""
        elif isinstance(k, str) and k in FSDP2_FIELDS and dc != "FSDP2Config":
            hint = f"; it is an fsdp2 option (even `{k}: false` fails here): remove it or use strategy fsdp2"
            hint_zh = f"；这是 fsdp2 的选项（即使写 `{k}: false` 也会失败）：删掉它或改用 strategy fsdp2"
        elif isinstance(k, str) and k in ALL_STRATEGY_FIELDS:
            owners = sorted(CANONICAL[d] for d, f in STRATEGY_FIELDS.items() if k in f)
            hint = f"; it belongs to {', '.join(owners)}"
            hint_zh = f"；它属于 {', '.join(owners)}"
        else:
            hint, hint_zh = _did_you_mean(k, fields)
        out.add("MW-E-STRATEGY-OPTION", f"distributed.{k}", key=k if isinstance(k, str) else describe(k),
                strategy=p.strategy, dataclass=dc, hint=hint, hint_zh=hint_zh)
    if dc in SCOPE_CHECKED and "activation_checkpointing_scope" in kwargs:
        why = _scope_error(kwargs["activation_checkpointing_scope"])
        if why:
            out.add("MW-E-AC-SCOPE", "distributed.activation_checkpointing_scope",
                    allowed="all, language, vision, audio, multimodal (comma or + separated)",
                    got=f"{describe(kwargs['activation_checkpointing_scope'])} ({why})")
    if dc in MULTIMODAL_CHECKED and "multimodal" in kwargs and not multimodal_built:
        if not isinstance(kwargs["multimodal"], dict):
            _bad_value(out, "distributed.multimodal", f"must be a mapping, got {describe(kwargs['multimodal'])}",
                       f"必须是映射，实际为 {describe(kwargs['multimodal'])}")

    # pipeline block
    if pipeline is not None:
        if not isinstance(pipeline, dict):
            out.add("MW-E-PIPELINE-VALUE", "distributed.pipeline", got=describe(pipeline))
        else:
            dt = pipeline.get("dtype")
            if isinstance(dt, str) and not dtype_known(dt):
                out.add("MW-E-PIPELINE-VALUE", "distributed.pipeline.dtype", got=f"dtype {dt!r} (dtype_from_str raises KeyError)")
            for k in pipeline:
                if not isinstance(k, str) or k not in PIPELINE_FIELDS:
                    hint, hint_zh = _did_you_mean(k, PIPELINE_FIELDS)
                    out.add("MW-E-PIPELINE-OPTION", f"distributed.pipeline.{k}",
                            key=k if isinstance(k, str) else describe(k), hint=hint, hint_zh=hint_zh)
            p.pipeline = pipeline
    else:
        try:
            needs = pp_size > 1
        except TypeError:
            _size_error(out, "pp_size", sizes["pp_size"], *_CMP_WHY)
            return p
        if needs:
            out.add("MW-E-PP-NO-PIPELINE", "distributed.pipeline", pp=describe(sizes["pp_size"]))

    # moe block (MoEParallelizerConfig(**(moe or {})) when ep_size > 1)
    moe_failed = False
    if moe is not None:
        try:
            has_mp = "mp_policy" in moe
        except TypeError:
            out.add("MW-E-MOE-VALUE", "distributed.moe", got=describe(moe))
            moe_failed, has_mp = True, False
        if has_mp:
            try:
                mp_raw = moe["mp_policy"]
            except (TypeError, KeyError, IndexError):
                out.add("MW-E-MOE-VALUE", "distributed.moe", got=describe(moe))
                moe_failed, mp_raw = True, None
            if isinstance(mp_raw, dict) and mp_raw.get("_target_") is not None:
                mp = dict(mp_raw)
                target = mp.pop("_target_")
                _check_mp_policy(mp, "distributed.moe.mp_policy", out, target=target)
    try:
        ep_on = ep_size > 1
    except TypeError:
        _size_error(out, "ep_size", sizes["ep_size"], *_CMP_WHY)
        return p
    if ep_on and not moe_failed:
        m = moe or {}
        if not isinstance(m, dict):
            out.add("MW-E-MOE-VALUE", "distributed.moe", got=describe(moe))
        else:
            for k in m:
                if not isinstance(k, str) or k not in MOE_FIELDS:
                    hint, hint_zh = _did_you_mean(k, MOE_FIELDS)
                    out.add("MW-E-MOE-OPTION", f"distributed.moe.{k}",
                            key=k if isinstance(k, str) else describe(k), hint=hint, hint_zh=hint_zh)
    p.moe = moe
    try:
        sizes["pp_size"] > 1  # noqa: B015 - the return dict's "pp_enabled" evaluates exactly this
    except TypeError:
        _size_error(out, "pp_size", sizes["pp_size"], *_CMP_WHY)
        return p
    try:
        # DistributedSetup.build re-reads the raw ep_size (without parse's `or 1`): `ep_size > 1`
        sizes["ep_size"] > 1  # noqa: B015
    except TypeError:
        _size_error(out, "ep_size", sizes["ep_size"], *_CMP_WHY)
        return p

    _build_mesh(p, sizes, dc, world, gpus_per_node, out)
    return p


def _build_mesh(p: Parsed, sizes: dict, dc: str, world: int, gpus_per_node: int, out: Findings) -> None:
    """_create_device_meshes on the raw sizes: the comparisons upstream makes on them as written
    (which raise TypeError for strings, and let a float through), then the Layout's checks."""
    dpr_raw = sizes["dp_replicate_size"]
    try:
        dpr_raw is not None and dpr_raw > 1  # noqa: B015 - upstream's HSDP test, evaluated for its TypeError
    except TypeError:
        _size_error(out, "dp_replicate_size", dpr_raw, *_CMP_WHY)
        return
    degree = derive.degree
    layout = Layout.of(CANONICAL[dc], world, gpus_per_node=gpus_per_node, tp=degree(sizes["tp_size"]),
                       pp=degree(sizes["pp_size"]), cp=degree(sizes["cp_size"]), ep=degree(sizes["ep_size"]),
                       dp_replicate=degree(dpr_raw))
    errors = layout.strategy_errors(sizes)
    if errors:
        out.extend(errors)
        return
    if dc != "DDPConfig":  # ddp builds no mesh and never reads dp_size
        dp = None if sizes["dp_size"] is None else _explicit_dp(sizes["dp_size"], dc, out)
        if dp is False:
            return
        if dp is not None:
            layout = replace(layout, dp=dp, dp_explicit=True)
        errors = layout.mesh_errors()
        if isinstance(layout.dp, float) and (not errors or errors[0].code == "MW-E-DP-MISMATCH"):
            # the modulo checks passed on the float; the mesh's isinstance(int) assertion, which
            # comes before torch compares the mesh with the world, does not
            _size_error(out, "dp_size", layout.dp, *_FLOAT_DP_WHY)
            return
        if errors:
            out.extend(errors)
            return
        keys = ("tp_size", "cp_size", "dp_size") if dc == "MegatronFSDPConfig" else ("tp_size", "cp_size", "pp_size", "dp_replicate_size")
        if _bool_in_shape(sizes, keys, out):
            return
    p.layout = layout
    p.derived = layout.derived()


def _bool_in_shape(sizes: dict, keys: tuple[str, ...], out: Findings) -> bool:
    """_degree(True) is True, and torch's mesh layout rejects bools in a mesh shape (ValueError)."""
    bad = [k for k in keys if sizes[k] is True]
    for k in bad:
        _size_error(out, k, True, "true is a bool, not a size: it reaches the mesh shape as True and torch's "
                    "mesh layout rejects it", "true 是布尔值而不是规模：它会以 True 进入 mesh 形状，torch 的 mesh 布局会拒绝它")
    return bool(bad)


_FLOAT_DP_WHY = ("an explicit dp_size must be a whole int (the mesh asserts int sizes)",
                 "显式 dp_size 必须是整数（mesh 会断言各维度为 int）")


def _explicit_dp(dp_raw: Any, dc: str, out: Findings) -> int | float | None | bool:
    """_infer_dp_size's `dp_size > 0` test on the raw value: the explicit dp, None when upstream
    infers it, False after an error (a comparison that raises, or a float megatron's mesh refuses).
    An fsdp2 float goes on: upstream's modulo checks run on it before the mesh's int assertion."""
    try:
        explicit = dp_raw is not None and dp_raw > 0
    except TypeError:
        _size_error(out, "dp_size", dp_raw, *_CMP_WHY)
        return False
    if not explicit:
        return None
    if isinstance(dp_raw, float) and dc == "FSDP2Config":
        return dp_raw
    if not isinstance(dp_raw, int):
        # a float passes the > 0 test but fails the mesh's isinstance(int) assertion: never accepted
        _size_error(out, "dp_size", dp_raw, *_FLOAT_DP_WHY)
        return False
    return int(dp_raw)


# ---------------------------------------------------------------------------------------------
# recipe level: pipeline schedule and microbatches, step scheduler


def check_schedule(p: Parsed, out: Findings) -> None:
    """get_schedule_class(pp_schedule) runs whenever pipeline parallelism is on."""
    if p.derived is None or p.derived.pp_size <= 1 or p.pipeline is None:
        return
    sched = p.pipeline.get("pp_schedule", PIPELINE_DEFAULT_SCHEDULE)
    if sched is None and p.pipeline.get("pp_schedule_csv") is None:
        # CODE-FACTS 19: an explicit null reaches AutoPipeline, which needs a schedule or a csv
        out.add("MW-E-PP-SCHEDULE", "distributed.pipeline.pp_schedule", "no_schedule", default=PIPELINE_DEFAULT_SCHEDULE)
        return
    if schedules.is_accepted(sched):
        if schedules.is_abstract(sched):
            out.add("MW-W-PP-SCHEDULE-ABSTRACT", "distributed.pipeline.pp_schedule", got=describe(sched),
                    suggest="1f1b or interleaved1f1b")
        return
    s = schedules.suggest(sched)
    hint, hint_zh = (f" (did you mean {s}?)", f"（应写作 {s}）") if s else ("", "")
    out.add("MW-E-PP-SCHEDULE", "distributed.pipeline.pp_schedule", got=describe(sched), hint=hint,
            hint_zh=hint_zh, accepted=_ACCEPTED_SCHEDULES)


def _positive(v: Any) -> bool | None:
    """`v <= 0` as upstream evaluates it: True if v passes, None if the comparison raises."""
    try:
        return not (v <= 0)
    except TypeError:
        return None


def check_step_scheduler(ss: Any, raw_pipeline: Any, p: Parsed, out: Findings) -> int | None:
    """Pipeline microbatch asserts (train_ft.py, AutoPipeline) and StepScheduler's batch checks.
    Returns grad-accumulation steps when they are defined."""
    d = p.derived
    if d is None:
        return None
    try:
        # RecipeConfig.step_scheduler: dict(node) for anything that is not a ConfigNode
        kwargs = section_as_dict(ss)
    except (TypeError, ValueError):
        out.add("MW-E-STEP-SCHEDULER-VALUE", "step_scheduler", got=describe(ss))
        return None
    # train_ft reads cfg.get("step_scheduler.local_batch_size", 1): only a mapping has the key
    lbs = ss.get("local_batch_size", SS_DEFAULTS["local_batch_size"]) if isinstance(ss, dict) else SS_DEFAULTS["local_batch_size"]
    gbs = kwargs.get("global_batch_size", SS_DEFAULTS["global_batch_size"])

    if d.pp_size > 1:
        mbs = raw_pipeline.get("pp_microbatch_size", PP_MICROBATCH_DEFAULT) if isinstance(raw_pipeline, dict) else PP_MICROBATCH_DEFAULT
        try:
            n = lbs // mbs
            if not n >= d.pp_size:
                out.add("MW-E-PP-MICROBATCH-COUNT", "distributed.pipeline.pp_microbatch_size", lbs=lbs, mbs=mbs, n=n, pp=d.pp_size)
            if lbs % mbs != 0:
                out.add("MW-E-PP-MICROBATCH-DIVIDES", "distributed.pipeline.pp_microbatch_size", lbs=lbs, mbs=mbs, rem=lbs % mbs)
        except (TypeError, ZeroDivisionError, ValueError, OverflowError):
            out.add("MW-E-PP-MICROBATCH-COUNT", "distributed.pipeline.pp_microbatch_size", lbs=describe(lbs),
                    mbs=describe(mbs), n="error", pp=d.pp_size)

    bad = False
    for key, v in (("global_batch_size", gbs), ("local_batch_size", lbs)):
        if not _positive(v):
            out.add("MW-E-BATCH-POSITIVE", f"step_scheduler.{key}", key=key, got=describe(v))
            bad = True
    if bad:
        return None
    dp = d.dp_size
    try:
        denom = lbs * dp
        rem = gbs % denom
        if rem != 0:
            note, note_zh = "", ""
            if d.cp_size > 1:
                note = f" (dp_size counts data-parallel ranks only: cp_size {d.cp_size} is not part of it)"
                note_zh = f"（dp_size 只计数据并行的 rank，不含 cp_size {d.cp_size}）"
            elif d.strategy == "ddp":
                note = " (ddp: dp_size is the world size)"
                note_zh = "（ddp：dp_size 就是 world_size）"
            out.add("MW-E-BATCH-DIVISIBLE", "step_scheduler.global_batch_size", gbs=gbs, lbs=lbs, dp=dp,
                    denom=denom, rem=rem, note=note, note_zh=note_zh)
            return None
        steps = gbs // denom
    except (TypeError, ZeroDivisionError, ValueError, OverflowError):
        out.add("MW-E-BATCH-POSITIVE", "step_scheduler.local_batch_size", key="local_batch_size", got=describe(lbs))
        return None
    return int(steps) if isinstance(steps, (int, float)) and not (isinstance(steps, float) and not math.isfinite(steps)) else None


# ---------------------------------------------------------------------------------------------
# beyond upstream: values upstream mis-reads, topology, packing


def check_silent(p: Parsed, raw_dist: dict, out: Findings) -> None:
    """Values upstream accepts but silently turns into something else."""
    if p.sizes is None:
        return
    erred = None
    for key in ("tp_size", "cp_size", "pp_size", "ep_size", "dp_replicate_size"):
        v = p.sizes[key]
        if v is None or (type(v) is int and v > 0) or derive.is_positive_int(v):  # the common case first
            continue
        if erred is None:
            erred = {f.path for f in out.errors}
            # parse_distributed_section raises on a pp_size > 1 (inf, 2.5) without a pipeline block
            # before any mesh is built: that value never runs as 1, and the error is the one verdict
            if any(f.code == "MW-E-PP-NO-PIPELINE" for f in out.errors):
                erred.add("distributed.pp_size")
            # "${TP}" is not run as written: the loader takes it from the launch environment or raises
            # KeyError (config/loader.py resolve_yaml_env_vars), which MW-W-ENV-VAR already says
            erred.update(f.path for f in out.warnings if f.code == "MW-W-ENV-VAR")
        if f"distributed.{key}" in erred:
            continue
        # tp/cp are only ever read through _degree; the others are also compared with ints,
        # which raises (an error already reported) unless the value is a number
        if key in ("tp_size", "cp_size") or isinstance(v, (int, float)):
            out.add("MW-W-SIZE-NOT-INT", f"distributed.{key}", key=key, got=describe(v),
                    effect=f"runs it as {key} = 1", effect_zh=f"按 {key} = 1 运行")
    dp = p.sizes["dp_size"]
    if p.dataclass_name == "DDPConfig":
        if raw_dist.get("dp_size") is not None:
            out.add("MW-W-DDP-DP-SIZE", "distributed.dp_size", dp=describe(raw_dist.get("dp_size")),
                    world=p.derived.world_size if p.derived else "all")
    elif dp is not None and (derive.is_nan(dp) or (isinstance(dp, int) and dp <= 0)):
        out.add("MW-W-SIZE-NOT-INT", "distributed.dp_size", key="dp_size", got=describe(dp),
                effect="ignores it and infers dp_size from the world size", effect_zh="忽略它，并根据 world_size 推断 dp_size")


def check_async_tp(dist: dict, d: Derived, out: Findings) -> None:
    """Async TP, checked where the model is parallelized: the dense path needs sequence parallelism,
    the MoE path (ep_size > 1) refuses async TP outright."""
    if d.strategy != "fsdp2" or d.tp_size <= 1 or dist.get("enable_async_tensor_parallel") is not True:
        return
    if d.ep_size > 1:
        out.add("MW-E-ASYNC-TP-SP", "distributed.enable_async_tensor_parallel", "moe", tp=d.tp_size, ep=d.ep_size)
    elif dist.get("sequence_parallel") is not True:
        out.add("MW-E-ASYNC-TP-SP", "distributed.enable_async_tensor_parallel", tp=d.tp_size)


def check_packing(packed: Any, d: Derived, out: Findings, model: Any = None) -> None:
    if not isinstance(packed, dict) or d.cp_size <= 1:
        return
    size = packed.get("packed_sequence_size", 0)
    if not derive.is_positive_int(size):
        return
    attn = model.get("attn_implementation") if isinstance(model, dict) else None
    if isinstance(attn, str) and attn.strip().lower() == "sdpa":
        # context_parallel/utils.py: on SDPA the CP path drops the mask and forces is_causal=True; the
        # recipe raises only for models that declare no CP-with-packing support, an HF model runs on
        out.add("MW-W-CP-PACKING-SDPA", "model.attn_implementation", cp=d.cp_size, size=size)
    mult = 2 * d.cp_size
    if size % mult:
        out.add("MW-W-PACKING-CP", "packed_sequence.packed_sequence_size", size=size, cp=d.cp_size, mult=mult,
                rem=size % mult, suggest=(size // mult + 1) * mult)
