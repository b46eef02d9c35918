"""The layout the user stated, and that layout as a recipe the validator can judge.

A size the user states is a constraint, never a feature to switch on or off: "no PP" is
`pp_size: 1`, "pp and cp both 1" is two sizes of 1, and "the rest data parallel" means dp_size is
whatever the world leaves (upstream infers it when `dp_size` is unset). A verdict or a quantity is
computed on exactly this layout; only after a "no" may an answer propose another one.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from assistant.understand.prose_settings import settings_in
from assistant.understand.query import SIZE_KEYS, Params, Stated
from assistant.validator import UnusableInput
from assistant.validator.coerce import load_yaml
from assistant.validator.paths import put_path
from assistant.validator.schedules import suggest

if TYPE_CHECKING:
    from assistant.understand.query import Situation

# Features whose exclusion ("no TP", "不开 PP") fixes their size at 1.
_EXCLUDED_SIZE = {"tp": "tp_size", "pp": "pp_size", "cp": "cp_size", "ep": "ep_size", "hsdp": "dp_replicate_size"}
_REST_DP = re.compile(
    r"\b(?:the\s+)?(?:rest|remaining(?:\s+(?:gpus|ranks|devices))?|remainder|everything\s+else|what(?:'s|\s+is)\s+left)\b"
    r".{0,30}?(?:data[\s_-]*parallel|\bdp\b|\bfsdp2?\b|shard(?:ed|ing)?)"
    r"|(?:data[\s_-]*parallel(?:ism)?|\bdp\b)\s+(?:for|on|over|across)\s+(?:the\s+)?(?:rest|remaining|remainder)"
    r"|(?:其余|其他|剩下|剩余|余下)(?:的)?(?:卡|gpu|GPU|部分|维度)?.{0,6}?(?:做|用|走|都|全)?(?:是|做)?\s*(?:数据并行|dp|DP|fsdp)",
    re.I,
)
# "plain fsdp2", "pure data parallel", "纯数据并行", "只做数据并行": no model parallelism, each size stated as 1
_PURE_DP = re.compile(r"\b(?:plain|pure|vanilla|just|only)\s+(?:fsdp2?|data[\s_-]*parallel(?:ism)?|dp)\b"
                      r"|纯\s*(?:fsdp2?|数据并行|dp)|只(?:做|用|开)\s*(?:fsdp2?|数据并行|dp)", re.I)
_SCHEDULE = re.compile(
    r"(?<![\w])(interleaved[_ -]?1f1b|1f1b|gpipe|looped[_ -]?bfs|interleaved[_ -]?zero[_ -]?bubble|zb[_ -]?v[_ -]?zero[_ -]?bubble"
    r"|zbv[_ -]?zero[_ -]?bubble|dualpipev|zero[_ -]?bubble|v[_ -]?schedule)(?![\w])",
    re.I,
)
_SP_ON = re.compile(r"sequence[\s_-]*parallel(?:ism)?\s*(?:=|:|on|true|enabled)|\bsp\s*(?:=|:)\s*(?:true|on)|开(?:启)?\s*序列并行|序列并行\s*(?:开|打开|=\s*true)", re.I)
_AC_ON = re.compile(r"(?:with|using|enable[ds]?|turn(?:ed)?\s+on)\s+(?:full\s+|selective\s+)?activation[\s_-]*checkpointing|activation_checkpointing\s*(?:=|:)\s*(?:true|full|selective)"
                    r"|开(?:启)?(?:了)?\s*(?:激活(?:值)?(?:检查点|重计算)|activation[\s_-]*checkpointing)", re.I)


# "tp_size 写成 2.0", "tp_size: 2.0": a size written with a decimal point is kept as written, so the
# validator reads it as upstream does (a non-int size counts as 1, silently: MW-W-SIZE-NOT-INT)
_DECIMAL_SIZE = re.compile(r"(?<![\w.])(?P<key>(?:tp|pp|cp|ep|dp|dp_replicate)_size)`?\s*(?:=|:|is|to|as|写成了?|设成了?|设为|改成|为|是)?\s*"
                           r"(?P<value>\d+\.\d+)(?![\w.])", re.I)


def _schedule_named(written: str) -> str:
    """The schedule a sentence names. An identifier (`interleaved_1f1b`) is kept as written: a wrong
    spelling is the user's to be told about. A name in words ("interleaved 1F1B", "zero-bubble") is
    the schedule it names, in the spelling torch accepts."""
    if not re.search(r"[ -]", written):
        return written
    return suggest(written) or written


def stated_layout(params: Params, prose: str) -> Stated:
    """Sizes and options the user fixed in prose (pasted YAML is read as a whole by `recipe_of`)."""
    sizes: dict[str, int] = {}
    for key in SIZE_KEYS:
        v = getattr(params, key, None)
        if isinstance(v, int) and v >= 1:
            sizes[key] = v
    for feat in sorted(params.unwanted):
        key = _EXCLUDED_SIZE.get(feat)
        if key and key not in sizes:
            sizes[key] = 1
    pure = _PURE_DP.search(prose or "")
    if pure and (params.strategy == "fsdp2" or "fsdp" in pure.group(0).lower()):
        # with fsdp2 a layout (tp, pp, cp all 1); "plain data parallelism, is DDP okay?" is a strategy question
        for key in ("tp_size", "pp_size", "cp_size"):
            sizes.setdefault(key, 1)
    options: dict[str, Any] = {}
    m = _SCHEDULE.search(prose or "")
    if m:
        options["pipeline.pp_schedule"] = _schedule_named(m.group(1))
    if params.pp_microbatch_size:
        options["pipeline.pp_microbatch_size"] = params.pp_microbatch_size
    if _SP_ON.search(prose or ""):
        options["sequence_parallel"] = True
    if _AC_ON.search(prose or "") and "ac" not in params.unwanted:  # "不开 activation checkpointing" turns it off
        options["activation_checkpointing"] = "selective" if re.search(r"selective", prose, re.I) else True
    for m in _DECIMAL_SIZE.finditer(prose or ""):
        key = m.group("key").lower()
        if key not in sizes:
            options[key] = float(m.group("value"))
    rest = bool(_REST_DP.search(prose or ""))
    if rest:
        sizes.pop("dp_size", None)  # "dp for the rest" names no number: upstream infers it
    sized = {"hsdp" if k == "dp_replicate_size" else k.removesuffix("_size") for k in sizes}
    return Stated(strategy=params.strategy, sizes=sizes, rest_data_parallel=rest, options=options,
                  wanted=frozenset(params.wanted - sized), overrides=cli_overrides(prose or ""),
                  settings=settings_in(prose or ""))


# "--distributed.pp_size 1", "--step_scheduler.local_batch_size=4": a dotted override as typed in prose
_OVERRIDE = re.compile(r"(?<![\w-])--[A-Za-z_]\w*(?:\.\w+)+(?:=[^\s`'\"]+|\s+(?!-)[^\s`'\"]+)?")


def cli_overrides(prose: str) -> tuple[tuple[str, Any], ...]:
    """The command-line overrides the prose writes, read as upstream's parse_cli_argv reads them."""
    from assistant.launch.overrides import parse_overrides

    argv = [tok for m in _OVERRIDE.finditer(prose) for tok in m.group(0).split()]
    if not argv:
        return ()
    overrides, _ = parse_overrides(argv)
    return tuple((o.path, o.value) for o in overrides)


def config_mapping(text: str) -> dict | None:
    """A pasted config as a recipe mapping (`{"distributed": {...}, ...}`); None when it is not one."""
    try:
        data = load_yaml(text)
    except UnusableInput:
        return None
    if not isinstance(data, dict):
        return None
    if "distributed" in data or any(k in data for k in ("step_scheduler", "packed_sequence")):
        return data
    if any(k in data for k in ("strategy", *SIZE_KEYS, "pipeline", "moe", "sequence_parallel")):
        return {"distributed": data}  # the distributed section pasted on its own
    return None


def recipe_of(situation: "Situation") -> dict | None:
    """The user's own layout: the first pasted config, else the prose sizes; None when nothing is stated."""
    for text in situation.pasted.configs:
        recipe = config_mapping(text)
        if recipe is not None:
            return recipe
    st = situation.stated
    if not st.sizes and not st.strategy and not st.options:
        return None
    dist: dict[str, Any] = {"strategy": st.strategy or "fsdp2"}
    for key in SIZE_KEYS:
        if key in st.sizes:
            dist[key] = st.sizes[key]
    if st.sizes.get("pp_size", 1) > 1:
        dist["pipeline"] = {}  # the user who asks for PP writes a pipeline block; its absence is not their question
    for dotted, value in st.options.items():
        if dotted.startswith("pipeline.") and "pipeline" not in dist:
            continue  # a schedule named without PP has no block to live in
        put_path(dist, dotted, value)
    recipe: dict[str, Any] = {"distributed": dist}
    if situation.global_batch_size and situation.local_batch_size:
        recipe["step_scheduler"] = {"global_batch_size": situation.global_batch_size,
                                    "local_batch_size": situation.local_batch_size}
    return with_settings(recipe, st.settings)


def with_settings(recipe: dict, settings) -> dict:
    """The recipe with the prose's settings set where it leaves them unset (a pasted value wins)."""
    for dotted, value in settings.items():
        node: Any = recipe
        for part in dotted.split(".")[:-1]:
            node = node.get(part) if isinstance(node, dict) else None
        if not (isinstance(node, dict) and dotted.rsplit(".", 1)[-1] in node):
            put_path(recipe, dotted, value)
    return recipe


# The pipeline block as one clause states it: absent ("leave out the pipeline block", "没写 pipeline 块")
# or present ("add `pipeline: {}`", "keep a pipeline: block"); the block's name read exactly, with its
# negation, so a verdict on that clause judges the layout with or without the block.
_PIPELINE_ABSENT = re.compile(
    r"\b(?:no|without|missing|forgot(?:\s+the)?)\s+(?:a\s+|the\s+)?`?(?:distributed\.)?pipeline`?\s*(?:block|section)"
    r"|\b(?:leave|leaving|left|drop|dropping|remove|removing|omit|omitting)\s+(?:out\s+)?(?:the\s+|a\s+)?`?(?:distributed\.)?pipeline`?"
    r"|(?:没写|没有|没加|缺少?|忘了写?|不写|不加|去掉|删掉)\s*`?pipeline", re.I)
_PIPELINE_PRESENT = re.compile(
    r"`?pipeline\s*:\s*\{\s*\}`?|\b(?:keep|keeps|kept|add|adding|added|with|have|has|had|contain|contains|still\s+(?:have|has))\s+"
    r"(?:(?:a|the|an\s+empty|their|its|our)\s+)?`?(?:distributed\.)?pipeline:?`?\s*(?:block|section)"
    r"|(?:加上|加了|留着|留了|保留|保留了|写上|写了|带着|带了|还有)\s*`?pipeline", re.I)


def pipeline_block_stated(text: str) -> str | None:
    """"absent", "present" or None: whether the clause states the pipeline block left out or written."""
    if _PIPELINE_ABSENT.search(text):
        return "absent"
    if _PIPELINE_PRESENT.search(text):
        return "present"
    return None
