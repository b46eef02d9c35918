"""Config: the YAML (or the Python API calls) for the user's situation, validated by the planner.

A Python answer states the API facts the question asks about, then the plan's config as the Python
API builds it, then the same config as YAML (the one the validator checked).
"""
from __future__ import annotations

from assistant.compose.answers.base import AnswerKind, ComposeInput, Part
from assistant.compose.answers.from_kb import retrieved
from dataclasses import replace

from assistant.compose.answers.recommendation import config_sections, plan_recipe, show_plan_yaml, wanted
from assistant.compose.knowledge.judge import rejudge
from assistant.compose.knowledge.wished import wished_options, with_options
from assistant.planner.recommend import to_yaml
from assistant.validator import validate
from assistant.compose.writer import Writer, size_of
from assistant.planner.plan import Plan


def python_snippet(plan: Plan, *, mixed_precision: bool, world_comment: str) -> str:
    """The plan's config as the Python API builds it, starting with the process group."""
    dist = plan.distributed or {}
    cls = {"fsdp2": "FSDP2Config", "megatron_fsdp": "MegatronFSDPConfig", "ddp": "DDPConfig"}.get(plan.strategy, "FSDP2Config")
    flags = []
    if plan.strategy == "fsdp2" and dist.get("sequence_parallel") is True:
        flags.append("sequence_parallel=True")
    mp = mixed_precision and plan.strategy == "fsdp2"
    if mp:
        # the defaults, written out: the user edits the dtypes they want to change
        flags.append("mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32, "
                     "output_dtype=torch.bfloat16)")
    sizes = [f"{k}={dist[k]}" for k in ("tp_size", "pp_size", "cp_size", "ep_size", "dp_replicate_size")
             if isinstance(dist.get(k), int) and dist[k] > 1]
    lines = ["import torch", "from torch.distributed.fsdp import MixedPrecisionPolicy"] if mp else []
    lines += [
        "from nemo_automodel.components.distributed import (",
        f"    DistributedSetup, {cls}, ParallelismSizes, initialize_distributed,",
        ")",
        "",
        'dist_env = initialize_distributed("nccl")',
        "setup = DistributedSetup.build(",
    ]
    if len(flags) == 1 and len(flags[0]) > 60:
        lines += [f"    strategy={cls}(", f"        {flags[0]},", "    ),"]
    else:
        lines.append(f"    strategy={cls}({', '.join(flags)}),")
    lines.append(f"    parallelism_sizes=ParallelismSizes({', '.join(sizes)}),")
    if isinstance(dist.get("pipeline"), dict) and size_of(dist, "pp_size") > 1:
        lines.append(f"    pipeline_config={dict(dist['pipeline'])!r},")
    if isinstance(dist.get("moe"), dict) and size_of(dist, "ep_size") > 1:
        lines.append(f"    moe_parallel_config={dict(dist['moe'])!r},")
    ac = dist.get("activation_checkpointing")
    if ac not in (None, False):
        lines.append(f"    activation_checkpointing={ac!r},")
    lines.append("    world_size=dist_env.world_size," + (f"  # {world_comment}" if world_comment else ""))
    lines.append(")")
    return "\n".join(lines)


def write_python(w: Writer, inp: ComposeInput) -> Part:
    query, plan = inp.query, inp.plan
    topics = list(dict.fromkeys([*query.topics, *wanted(query)]))
    asked = [k for t in topics for k in w.p.api_topic_facts.get(t, ())]
    general = ["api_build", "api_configs", "api_from_pretrained"]
    if "api_sizes_strategy" in asked:
        general.remove("api_configs")  # the asked-for fact already says where each setting goes
    keys = list(dict.fromkeys(asked + general))
    facts = [w.fact(k, required=k in asked or k in ("api_build", "api_configs")) for k in keys]
    facts = [f for f in facts if f]
    if facts:
        w.answer(facts[0])
    w.bullets(facts[1:])
    part = Part()
    if plan is not None and plan.report.ok and plan.yaml:
        w.heading("api")
        world = plan.report.world_size or plan.world_size
        w.code(python_snippet(plan, mixed_precision="mixed_precision" in topics,
                              world_comment=w.say("api_world_comment", world=world) if world else ""), lang="python")
        shown, report = show_plan_yaml(w, plan)
        part = Part(shown, report, plan.strategy)
    return part


def judged_yaml(w: Writer, inp: ComposeInput) -> Part | None:
    """The user's own passing layout, written out: the config they asked for is theirs, not the
    planner's, with the options the request names."""
    d = inp.diagnosis
    if d is None or d.pasted or d.report is None or not d.report.ok or not inp.query.situation.stated.sizes:
        return None  # options alone ("开启激活检查点") are a wish, not a layout of the user's
    options = wished_options(inp.query)
    if options and d.judged:
        wished = rejudge(inp.query, d, with_options(d.judged, options))
        if wished.report is not None and wished.report.ok:
            d = wished  # else the layout as stated; the options' own answer says what they need
    w.answer(w.say("judged_yaml", world=d.world_size))
    w.code(d.yaml_text)
    return Part(d.yaml_text, d.report, d.report.derived.strategy if d.report.derived else None, d.judged)


def with_wishes(inp: ComposeInput) -> ComposeInput:
    """The plan with the option values the request names ("reduce fp32", "it turned off"), validated
    at the plan's numbers; the plan as it was when they do not pass."""
    plan = inp.plan
    options = wished_options(inp.query) if plan is not None and plan.report.ok else {}
    if not options:
        return inp
    recipe = with_options(plan_recipe(plan) or {"distributed": dict(plan.distributed)}, options)
    if recipe["distributed"] == plan.distributed:
        return inp
    report = validate(recipe, world_size=plan.report.world_size or plan.world_size or 1,
                      gpus_per_node=plan.gpus_per_node, model=inp.query.situation.model, gpu=inp.query.situation.gpu)
    if not report.ok:
        return inp
    return replace(inp, plan=replace(plan, distributed=recipe["distributed"], yaml=to_yaml(recipe), report=report))


def write(w: Writer, inp: ComposeInput, ask) -> Part:
    inp = with_wishes(inp)
    if inp.query.intent == "python_api":
        return write_python(w, inp)
    part = judged_yaml(w, inp)
    if part is not None:
        return part
    q, sit = inp.query, inp.query.situation
    numbers = sit.world_size or sit.nodes or sit.model or q.params.model_size_b
    if not numbers and inp.plan is not None:
        # "how do I set fp16 params with fp32 reduction?": how (the field and its facts), then a
        # validated example, not a cluster layout nobody asked for
        from assistant.compose.answers import fact

        fact.write(w, inp, ask)
        shown, report = show_plan_yaml(w, inp.plan)
        return Part(shown, report, inp.plan.strategy, None)
    if inp.plan is None:
        return retrieved(w, inp)
    return config_sections(w, inp.plan, inp.query, fields=True, rationale=False)


KIND = AnswerKind("config", frozenset({"plan", "retrieval", "validation"}), write)
