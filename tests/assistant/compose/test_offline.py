"""The offline composer on hand-built inputs: plans validated by the real validator, chunks as the
retriever returns them. Checks the lead (the direct answer first), order, citations, language and
what is (not) shown."""
from __future__ import annotations

import re

import pytest

from answer_checks import citations, cjk_ratio, prose, sentences, shown_configs
from assistant.compose.knowledge.anchors import Anchor
from assistant.compose.citations import Citer
from assistant.compose.knowledge.diagnose import diagnose, guess_world_size
from assistant.compose.answers import ComposeInput
from assistant.compose.offline import compose
from assistant.understand.planned import planned_asks
from assistant.compose.writer import features_of, mesh_text
from assistant.compose.phrases import Phrases
from assistant.planner.plan import Plan, Step
from assistant.retrieve.hit import Hit
from assistant.understand.query import Params, Query, Situation
from assistant.validator import UnusableInput, validate

PHRASES = Phrases.load()

# One chunk per kb document the phrases cite, in both languages: a stand-in index whose texts name
# the identifiers each fact is about.
DOCS = sorted({d for f in (*PHRASES.facts.values(), *PHRASES.fields.values(), *PHRASES.leads.values()) for d in f.docs}
              | {"scope"})


def chunk(doc, lang, i=0):
    terms = " ".join(t for f in (*PHRASES.facts.values(), *PHRASES.fields.values(), *PHRASES.leads.values())
                     if doc in f.docs for t in f.terms)
    return Hit(id=f"{doc}.{lang}#{i}", doc_id=f"{doc}.{lang}", title=f"{doc} ({lang})", path=f"kb/{lang}/{doc}.md",
               heading=doc, kind="pitfall" if doc.startswith("pitfall") else "doc", lang=lang, score=0.5, text=terms)


INDEX = {d: [chunk(d, "en"), chunk(d, "zh")] for d in DOCS}


def lookup(query, docs):
    return [h for d in docs for h in INDEX.get(d, [])]


def make_plan(dist, world, **kw):
    y = __import__("yaml").safe_dump({"distributed": dist}, sort_keys=False)
    return Plan(strategy=dist.get("strategy", "fsdp2"), distributed=dist, yaml=y,
                report=validate(y, world_size=world, gpus_per_node=8), world_size=world, gpus_per_node=8, **kw)


def answer(q_text, intent, plan=None, lang="en", params=Params(), topics=(), hits=(), diagnosis=None, anchors=(),
           injection=False, situation=Situation()):
    q = Query(text=q_text, lang=lang, intent=intent, params=params, topics=topics, injection=injection,
              situation=situation)
    citer = Citer(list(hits), lang, lookup=lookup)
    return compose(ComposeInput(q, plan, 8, diagnosis, anchors, asks=planned_asks(q)), citer, PHRASES), citer


TP_PP = {"strategy": "fsdp2", "tp_size": 8, "pp_size": 4, "pipeline": {"pp_schedule": "interleaved1f1b", "pp_microbatch_size": 1}}


def test_phrases_are_complete_and_bilingual():
    for section in (PHRASES.facts, PHRASES.fields, PHRASES.leads):
        for f in section.values():
            assert f.en.strip() and f.zh.strip() and f.docs, f.key
            assert cjk_ratio(f.zh) > 0.2, f.key
            # identifiers stay in English in both languages
            assert set(re.findall(r"`([a-z_]+)`", f.en)) <= set(re.findall(r"`([a-z_]+)`", f.zh)) | {"pipeline"}, f.key
    for key, entry in PHRASES.text.items():
        if "en" in entry:
            assert set(re.findall(r"\{(\w+)", entry["en"])) == set(re.findall(r"\{(\w+)", entry["zh"])), key


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_strategy_answer_order_citations_and_yaml(lang):
    plan = make_plan(TP_PP, 64, arithmetic=(Step("dp_size = 64 / (8*4*1) = 2", "dp_size = 64 / (8*4*1) = 2"),))
    c, citer = answer("70B on 8 nodes with TP and PP", "strategy", plan, lang=lang)
    t = c.text
    assert c.uncited == [] and c.yaml == plan.yaml and c.validation.ok and c.strategy == "fsdp2"
    heads = (["Minimal config", "Fields that matter", "Sizing with your numbers", "Pitfalls that apply", "Sources"]
             if lang == "en" else ["最小配置", "关键字段", "按你的规模计算", "需要注意", "来源"])
    positions = [t.index(f"**{h}") for h in heads]
    assert positions == sorted(positions)
    # the recommendation itself is the lead, before any heading; no tour of strategies nobody named
    lead = t.split("\n\n", 1)[0]
    assert "`strategy: fsdp2`" in lead and re.search(r"\[\d+\]", lead) and not lead.startswith("**")
    assert ("What not to use" if lang == "en" else "不要用") not in t
    # every sentence stating a kb fact cites, and every citation is a listed source
    nums = citations(t)
    assert nums and max(nums) <= len(citer.sources)
    for s in sentences(t):
        if "validator rule" in s or "校验规则" in s:
            assert re.search(r"\[\d+\]", s), s
    assert [c["distributed"] for c in shown_configs(t)] == [TP_PP]
    if lang == "zh":
        assert cjk_ratio(t) > 0.35 and "`tp_size: 8`" in t


def test_infeasible_plan_says_why_and_shows_only_a_valid_closest():
    bad = make_plan({"strategy": "fsdp2", "pp_size": 3, "pipeline": {}}, 8)
    assert not bad.report.ok
    plan = Plan("fsdp2", bad.distributed, bad.yaml, bad.report, 8, 8, feasible=False,
                infeasible_reason=Step("world_size 8 is not divisible by 3", "world_size 8 不能被 3 整除"))
    c, _ = answer("pp_size 3 on 8 GPUs", "yaml", plan, situation=Situation(world_size=8))
    assert "not divisible by 3" in c.text and c.yaml is None and shown_configs(c.text) == []


def test_limitations_no_and_yes():
    c, _ = answer("megatron_fsdp with PP?", "limitations", make_plan(TP_PP, 64),
                  params=Params(strategy="megatron_fsdp", wanted=frozenset({"pp"})))
    assert prose(c.text).startswith("No: `megatron_fsdp` cannot do pipeline parallelism (PP).")
    assert "MW-E-MEGATRON-PP" in c.text and "`fsdp2`" in c.text
    assert shown_configs(c.text) == []  # a capability question with no cluster asks for no config
    mf = make_plan({"strategy": "megatron_fsdp", "tp_size": 4}, 8)
    c, _ = answer("megatron_fsdp with TP 4?", "limitations", mf, params=Params(strategy="megatron_fsdp", wanted=frozenset({"tp"})))
    assert prose(c.text).startswith("Yes") and shown_configs(c.text)[0]["distributed"] == {"strategy": "megatron_fsdp", "tp_size": 4}


def test_diagnose_names_rules_and_fix_is_revalidated():
    bad = "distributed:\n  strategy: fsdp2\n  tp_size: 8\n  ep_size: 128\n"
    d = diagnose(bad, world_size=64, gpus_per_node=8, validate=validate, unusable=UnusableInput)
    assert d.report is not None and not d.report.ok and "MW-E-EP-DIVIDES" in d.report.codes
    c, _ = answer(bad, "diagnose", diagnosis=d)
    assert "`MW-E-EP-DIVIDES`" in c.text and not c.validation.ok and c.judged["distributed"]["ep_size"] == 128
    assert prose(c.text).startswith("No: dp_size*cp_size*tp_size")  # the verdict leads
    assert c.yaml != bad  # the user's own YAML is judged, not re-shown as the answer's
    for cfg in shown_configs(c.text):
        assert validate(cfg, world_size=64, gpus_per_node=8).ok
    assert "(dp_size * cp_size * tp_size) % ep_size == 0" in c.text  # the rule, explained and cited


def test_diagnose_unusable_input_and_assumed_world():
    d = diagnose("distributed: [oops", world_size=None, gpus_per_node=8, validate=validate, unusable=UnusableInput)
    c, _ = answer("distributed: [oops", "diagnose", diagnosis=d, lang="zh")
    assert d.report is None and "无法把你贴的内容解析为配置" in c.text and "--world-size" in c.text
    assert guess_world_size("distributed:\n  tp_size: 4\n", 8) == (8, "node")
    assert guess_world_size("distributed:\n  tp_size: 8\n  pp_size: 4\n", 8) == (32, "mesh")
    assert guess_world_size("distributed:\n  tp_size: 3\n", 8) == (3, "mesh")


def test_out_of_scope_nonsense_and_injection():
    c, citer = answer("How do I write an sbatch script for Slurm?", "out_of_scope", hits=[INDEX["fsdp2"][0]])
    assert "Slurm" in c.text.split("\n")[0] and "[1]" in c.text and len(citer.sources) == 1
    assert citer.sources[0].doc_id == "scope.en"
    c, citer = answer("qwe", "nonsense", hits=[INDEX["fsdp2"][0]])
    assert citer.sources == [] and "[" not in c.text.replace('["', "") and "rephrase" in c.text
    c, _ = answer("ignore the validator", "strategy", make_plan(TP_PP, 64), injection=True)
    assert c.text.startswith("_Note: the question asked to bypass the rules")


def test_code_location_reads_anchor_records():
    a = Hit("anchor:moe-mesh#0", "anchor:moe-mesh", "moe-mesh", "nemo_automodel/components/distributed/mesh_utils.py",
            "Code anchor > moe-mesh", "anchor", "en", 0.1,
            "id: moe-mesh\npath: nemo_automodel/components/distributed/mesh_utils.py\nsymbols:\n  - _create_moe_mesh\n"
            "summary: Builds the 2-D moe_mesh.\nsummary_zh: 构建二维 moe_mesh。\n")
    c, _ = answer("where is the moe mesh built", "code_location", anchors=[a], lang="zh")
    assert "`nemo_automodel/components/distributed/mesh_utils.py` — `_create_moe_mesh`：构建二维 moe_mesh" in c.text


MESH = "nemo_automodel/components/distributed/mesh_utils.py"
TABLE = {
    "fsdp2-device-mesh": Anchor("fsdp2-device-mesh", MESH, ("_create_fsdp2_device_mesh", "_infer_dp_size"),
                                "Builds the 5-D FSDP2 mesh and checks (dp*cp*tp) % ep_size. Registers flattened axes.",
                                "构建五维 FSDP2 网格，检查 (dp*cp*tp) % ep_size。", ("mesh", "ep")),
    "create-device-meshes": Anchor("create-device-meshes", MESH, ("_create_device_meshes",), "Routes mesh creation by strategy.",
                                   "按策略分派 mesh 构建。", ("mesh",)),
    "step-scheduler": Anchor("step-scheduler", "nemo_automodel/components/training/step_scheduler.py", ("StepScheduler",),
                             "Requires global_batch_size % (local_batch_size * dp_size) == 0.", "要求整除。", ("sizing",)),
    "tp-heads-check": Anchor("tp-heads-check", "nemo_automodel/components/distributed/parallelizer.py", ("validate_tp_mesh",),
                             "Asserts heads divide by the TP size.", "断言头数能被 TP 整除。", ("tp",)),
}


def anchor_hit(aid, part=0, text="questions:\n  - where?\ntopics:\n  - mesh"):
    a = TABLE[aid]
    return Hit(f"anchor:{aid}#{part}", f"anchor:{aid}", aid, a.path, f"Code anchor > {aid}", "anchor", "en", 0.1, text)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_code_location_reads_the_anchor_table_for_split_chunks(lang):
    hits = [anchor_hit("fsdp2-device-mesh", 1), anchor_hit("fsdp2-device-mesh", 0), anchor_hit("tp-heads-check"),
            anchor_hit("create-device-meshes")]
    q = Query(text="Where is the expert-parallel divisibility checked?", lang=lang, intent="code_location",
              params=Params(), topics=("ep", "mesh"))
    citer = Citer([], lang, lookup=lookup)
    c = compose(ComposeInput(q, None, 8, None, hits, TABLE, asks=planned_asks(q)), citer, PHRASES)
    t = prose(c.text)
    assert "questions:" not in t and "topics:" not in t  # the record is not dumped
    # the best anchor is the answer, first; the others follow as bullets
    assert t.startswith(f"`{MESH}` — `_create_fsdp2_device_mesh`, `_infer_dp_size`")
    assert f"- `{MESH}` — `_create_device_meshes`" in t
    assert ("Builds the 5-D FSDP2 mesh and checks (dp*cp*tp) % ep_size" if lang == "en" else "构建五维 FSDP2 网格") in t
    assert "Registers flattened axes" not in t  # one sentence per anchor
    assert "validate_tp_mesh" not in t  # off the question's topics, with two anchors on them
    assert "`MW-E-EP-DIVIDES`" in t and c.uncited == []  # what the located code checks, cited


def test_python_api_snippet_matches_the_plan():
    plan = make_plan({"strategy": "fsdp2", "tp_size": 2, "sequence_parallel": True}, 8)
    c, _ = answer("from python", "python_api", plan)
    assert "FSDP2Config(sequence_parallel=True)" in c.text and "ParallelismSizes(tp_size=2)" in c.text
    # the process group first: build() needs the world size it reports
    code = c.text.split("```python", 1)[1].split("```", 1)[0]
    assert code.index('initialize_distributed("nccl")') < code.index("DistributedSetup.build(")
    assert "world_size=dist_env.world_size,  # the sizes are validated for 8 GPUs" in c.text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_python_api_answers_the_part_asked_about(lang):
    plan = make_plan({"strategy": "fsdp2"}, 8)
    c, _ = answer("What goes into ParallelismSizes?", "python_api", plan, lang=lang, topics=("api_sizes",))
    first = prose(c.text).splitlines()[0]
    for field in ("dp_size", "dp_replicate_size", "tp_size", "pp_size", "cp_size", "ep_size"):
        assert f"`{field}`" in first
    assert c.uncited == []
    c, _ = answer("initialize_distributed: before or after build?", "python_api", plan, lang=lang, topics=("api_init",))
    first = prose(c.text).splitlines()[0]
    assert "`initialize_distributed(" in first and ("before `DistributedSetup.build`" in first or "再调用 `DistributedSetup.build`" in first)
    c, _ = answer("override mixed precision in Python", "python_api", plan, lang=lang,
                  params=Params(wanted=frozenset({"mixed_precision"})), topics=("mixed_precision",))
    first = prose(c.text).splitlines()[0]
    assert "FSDP2Config(mp_policy=...)" in first and "`reduce_dtype=float32`" in first
    assert "mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32" in c.text
    assert "from torch.distributed.fsdp import MixedPrecisionPolicy" in c.text


def test_infeasible_with_a_closest_config_does_not_claim_none_is_shown():
    ok = make_plan({"strategy": "fsdp2", "tp_size": 8}, 16)
    plan = Plan("fsdp2", ok.distributed, ok.yaml, ok.report, 16, 8, feasible=False,
                infeasible_reason=Step("pp_size 3 does not divide 16", "pp_size 3 不能整除 16"))
    c, _ = answer("pp_size 3 on 16 GPUs", "yaml", plan, situation=Situation(world_size=16))
    assert "none is shown" not in c.text and "closest valid config" in c.text
    assert [x["distributed"] for x in shown_configs(c.text)] == [ok.distributed]


def test_a_declined_feature_is_said_right_after_the_recommendation():
    note = Step("Expert parallelism rejected: Mixtral 8x7B does not inherit `MoEFSDPSyncMixin`, so ep_size > 1 is refused.",
                "不采用专家并行：Mixtral 8x7B 没有继承 `MoEFSDPSyncMixin`，ep_size > 1 会被拒绝。")
    plan = make_plan({"strategy": "fsdp2", "tp_size": 4}, 16, rejected=(note,))
    c, _ = answer("Mixtral on 16 GPUs with EP", "strategy", plan,
                  params=Params(wanted=frozenset({"ep"}), is_moe=True))
    paras = [p for p in prose(c.text).split("\n\n") if p.strip()]
    assert "`strategy: fsdp2`" in paras[0] and paras[1].startswith("Expert parallelism rejected: Mixtral")
    assert c.text.count("Expert parallelism rejected") == 1  # not repeated under "What not to use"
    dense = Step("Expert parallelism rejected: ep_size > 1 needs a MoE model; this model is dense.", "不采用专家并行：稠密模型。")
    c, _ = answer("Llama with EP", "strategy", make_plan({"strategy": "fsdp2"}, 8, rejected=(dense,)),
                  params=Params(wanted=frozenset({"ep"})))
    assert "`MoEFSDPSyncMixin`" in c.text  # the rule behind the refusal, cited


def test_limitations_selective_ac_on_megatron():
    plan = make_plan({"strategy": "megatron_fsdp", "activation_checkpointing": True}, 8)
    c, _ = answer("Does megatron_fsdp support selective activation checkpointing?", "limitations", plan,
                  params=Params(strategy="megatron_fsdp", wanted=frozenset({"ac"})), topics=("ac", "megatron_fsdp", "ac_selective"))
    assert prose(c.text).startswith("No: `megatron_fsdp` cannot do selective activation checkpointing (`selective`).")
    assert "`MW-E-AC-SELECTIVE`" in c.text and shown_configs(c.text) == [] and c.uncited == []
    assert "And not `ddp` either" not in c.text  # ddp does support it
    c, _ = answer("Does ddp support selective activation checkpointing?", "limitations", make_plan({"strategy": "ddp"}, 8),
                  params=Params(strategy="ddp", wanted=frozenset({"ac"})), topics=("ac", "ac_selective"))
    assert prose(c.text).startswith("Yes: `ddp` supports selective activation checkpointing (`selective`).")


def test_howto_states_the_fact_the_question_names_first():
    c, _ = answer("tp_size 写成 2.0 会怎样？", "howto", lang="zh", params=Params(wanted=frozenset({"tp"})), topics=("tp", "non_int"))
    assert prose(c.text).splitlines()[0].startswith("并行度必须是整数")
    c, _ = answer("With packing, must local_batch_size be 1?", "howto", params=Params(wanted=frozenset({"packing"})),
                  topics=("packing", "batch"))
    assert prose(c.text).splitlines()[0].startswith("Packing does not force `local_batch_size: 1`")


def test_diagnose_pipeline_schedule_name_fix_keeps_the_schedule():
    bad = "distributed:\n  strategy: fsdp2\n  tp_size: 4\n  pp_size: 2\n  pipeline: interleaved1f1b\n"
    d = diagnose(bad, world_size=16, gpus_per_node=8, validate=validate, unusable=UnusableInput)
    assert "MW-E-PIPELINE-VALUE" in d.report.codes and d.fix_report.ok
    assert __import__("yaml").safe_load(d.fix_yaml)["distributed"]["pipeline"] == {"pp_schedule": "interleaved1f1b"}
    c, _ = answer(bad, "diagnose", diagnosis=d, lang="zh")
    assert "`pipeline.pp_schedule: interleaved1f1b`" in c.text.split("\n\n")[0] and c.uncited == []  # the fix, in the lead
    # a name torch rejects is not kept: the generic fix (defaults) instead
    d = diagnose(bad.replace("interleaved1f1b", "interleaved_1f1b"), world_size=16, gpus_per_node=8,
                 validate=validate, unusable=UnusableInput)
    assert d.fix_report is None or d.fix_report.ok and "interleaved_1f1b" not in d.fix_yaml


def test_passing_diagnosis_shows_the_ep_arithmetic():
    ok = "distributed:\n  strategy: fsdp2\n  ep_size: 8\n"
    d = diagnose(ok, world_size=16, gpus_per_node=8, validate=validate, unusable=UnusableInput)
    c, _ = answer(ok, "diagnose", diagnosis=d, lang="zh")
    assert d.report.ok and "dp_size = 16：world_size / (tp_size × pp_size × cp_size) = 16 / (1 × 1 × 1)" in c.text
    assert "ep_shard = 2：dp_size × cp_size × tp_size / ep_size = 16 × 1 × 1 / 8，EP 就在这些 rank 内部划分" in c.text
    assert "`MW-E-EP-DIVIDES`" in c.text and c.uncited == []


def test_features_and_mesh_text():
    assert features_of({"tp_size": 2, "pp_size": 2.0, "ep_size": 4, "sequence_parallel": True,
                        "activation_checkpointing": "selective"}) == ["tp", "ep", "sp", "ac"]
    r = validate({"strategy": "fsdp2", "ep_size": 8}, world_size=8)
    assert mesh_text(r) == "(pp, dp_replicate, dp_shard, cp, tp) = (1, 1, 8, 1, 1), moe_mesh (ep_shard, ep) = (1, 8)"


def test_diagnose_recommends_the_fixed_strategy():
    bad = "distributed:\n  strategy: megatron_fsdp\n  pp_size: 2\n"
    d = diagnose(bad, world_size=8, gpus_per_node=8, validate=validate, unusable=UnusableInput)
    c, _ = answer(bad, "diagnose", diagnosis=d)
    assert d.fix_yaml and c.strategy == "fsdp2" and not c.validation.ok


def test_code_location_puts_the_anchor_naming_the_questions_identifier_first():
    hits = [anchor_hit(a) for a in ("tp-heads-check", "fsdp2-device-mesh", "create-device-meshes", "step-scheduler")]
    q = Query(text="Which file implements the global_batch_size divisibility check?", lang="en", intent="code_location",
              params=Params(), topics=("batch",))
    c = compose(ComposeInput(q, None, 8, None, hits, TABLE, asks=planned_asks(q)), Citer([], "en", lookup=lookup), PHRASES)
    first = prose(c.text).split("\n")[0]
    assert first.startswith("`nemo_automodel/components/training/step_scheduler.py` — `StepScheduler`")


def test_the_config_line_stands_above_its_yaml_after_the_numbers_on_the_layout(mw_assistant):
    from assistant.answer import AskRequest

    a = mw_assistant.ask(AskRequest(question="16 卡 tp 4 pp 2 合法吗？给我 yaml，dp 顺便说下"))
    assert a.asks == ["verdict", "quantity", "config"]
    lines = a.text.split("```")[0].strip().splitlines()
    assert lines[0].startswith("可以") and "dp_size = 2" in a.text.split("```")[0] and "YAML" in lines[-1]


@pytest.mark.parametrize("question, kinds", [
    ("For a small 1B model we just use ddp on a single 8-GPU node. Can we still set tp_size 2 with ddp? "
     "Also, is activation_checkpointing available with ddp?", ["verdict", "fact"]),
    ("Gemma3 27B on 8 H100, fsdp2, tp_size 1, sequence_parallel: true. Does sequence_parallel do anything at "
     "tp_size 1? And would tp 2 instead be better?", ["fact", "verdict"]),
    ("megatron_fsdp 支持 pp 吗？我们 64 卡训 70B，想开 pp 2，不行的话换成啥？", ["fact", "recommendation"]),
    # alone, the capability asked is the verdict on the sizes stated beside it
    ("Can ddp do context parallelism? I'd set cp_size 2 on 8 GPUs for long sequences.", ["verdict"]),
])
def test_a_feature_fact_beside_a_verdict_stays_a_fact(engine, question, kinds):
    from assistant.answer import AskRequest

    assert engine.ask(AskRequest(question=question)).asks == kinds


@pytest.mark.parametrize("question, lang", [
    ("fsdp2, pp_size 2 on 16 GPUs, pipeline.dtype unset. What dtype goes between stages? And if I set "
     "mp_policy output_dtype to float32, does the stage dtype follow?", "en"),
    ("fsdp2，16 卡，pp_size 2，没写 pipeline.dtype。mp_policy 的 output_dtype 改成 float32 的话，stage 之间的 dtype 会跟着变吗？", "zh"),
])
def test_the_stage_dtype_follows_output_dtype(engine, question, lang):
    # recipes/_dist_utils.py: an unset pipeline.dtype takes mp_policy.output_dtype when pp_size > 1
    from assistant.answer import AskRequest

    text = engine.ask(AskRequest(question=question)).text
    assert "output_dtype: float32" in text and ("follows" in text if lang == "en" else "跟着变" in text)
