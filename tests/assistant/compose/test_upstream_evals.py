"""The three public upstream eval tasks, asked in English and in a faithful Chinese translation,
answered offline: every `expected_behavior` item is checked with explicit patterns."""
from __future__ import annotations

import json
import re

import pytest

from answer_checks import (citations, cjk_ratio, dist_of, negated, prose, sentences, sentences_with,
                           shown_configs)
from assistant.answer import AskRequest
from assistant.compose.citations import base_id
from assistant.config import UPSTREAM_SKILL_DIR
from assistant.validator import validate

EVALS = UPSTREAM_SKILL_DIR / "evals" / "evals.json"

# Faithful translations, written as a Chinese ML engineer would ask.
ZH = {
    "nemo-automodel-distributed-training-001-strategy-selection":
        "我要在 8 个节点上训练一个 70B 的大语言模型，想在 NeMo AutoModel 里同时用张量并行和流水线并行。"
        "应该用哪种分布式策略？哪些 YAML 字段比较关键？",
    "nemo-automodel-distributed-training-002-moe-expert-parallel":
        "我在 NeMo AutoModel 里训练一个 MoE 模型，想让专家并行分布在多张 GPU 上。应该从什么样的分布式配置开始？",
    "nemo-automodel-distributed-training-003-megatron-limitations":
        "如果我需要流水线并行、专家并行或者 sequence_parallel，在 NeMo AutoModel 里能用 megatron_fsdp 吗？",
}
KB_DOCS = {"strategy-choice", "fsdp2", "pipeline-parallel", "tensor-parallel", "moe-expert-parallel", "moe-config",
           "megatron-fsdp", "ddp", "device-mesh", "yaml-reference", "pitfall-megatron-limits",
           "pitfall-ep-divisibility", "sizing-dense", "sizing-moe", "hardware-topology", "code-vs-docs"}


def _tasks():
    if not EVALS.is_file():
        return []
    return json.loads(EVALS.read_text(encoding="utf-8"))


TASKS = _tasks()
CASES = [(t, lang) for t in TASKS for lang in ("en", "zh")]
pytestmark = pytest.mark.skipif(not TASKS, reason=f"upstream evals not found at {EVALS}")


@pytest.fixture(scope="module")
def answers(engine):
    out = {}
    for t, lang in CASES:
        q = t["question"] if lang == "en" else ZH[t["id"]]
        req = AskRequest(question=q)
        out[(t["id"], lang)] = (engine.ask(req), engine._prepare(req).composed)
    return out


def _ids(t):
    return t["id"].split("-")[4]


def _neg_all(sents, lang):
    return sents and all(negated(s, lang) for s in sents)


# --- behaviour checks, one function per behaviour text -------------------------------------------
def routes_to_skill(a, lang):
    # Meshwise is this skill: the answer stands on the distributed-training kb, cited.
    docs = {base_id(h.doc_id) for h in a.sources}
    assert docs & KB_DOCS, docs
    assert a.intent not in ("out_of_scope", "nonsense", "code_location")
    assert citations(a.text)


def recommends_fsdp2_tp_pp(a, lang):
    assert a.strategy == "fsdp2"
    first = sentences(a.text)[0]
    assert re.search(r"`strategy: fsdp2`", first), first
    d = dist_of(shown_configs(a.text)[0])
    assert d["strategy"] == "fsdp2" and d["tp_size"] > 1 and d["pp_size"] > 1


def mentions_tp_pp(a, lang):
    p = prose(a.text)
    assert re.search(r"`tp_size: \d+`", p) and re.search(r"`pp_size: \d+`", p)
    # and explains them: what each one splits
    assert sentences_with(a.text, r"`tp_size", r"tensor|张量") and sentences_with(a.text, r"`pp_size", r"stage|阶段")


def mentions_pipeline_subconfig(a, lang):
    p = prose(a.text)
    assert "pp_schedule" in p and "pp_microbatch_size" in p
    d = dist_of(shown_configs(a.text)[0])
    assert isinstance(d.get("pipeline"), dict) and d["pipeline"].get("pp_schedule")


def dp_inferred(a, lang):
    p = prose(a.text)
    assert re.search(r"world_size / \(tp_size \* pp_size \* cp_size\)", p)
    assert a.validation is not None and a.validation.derived is not None
    d = a.validation.derived
    # the arithmetic with the user's numbers (8 nodes x 8 GPUs)
    assert d.world_size == 64
    x = r"\s*[*×]\s*"
    assert re.search(rf"dp_size = (world_size / \(tp_size{x}pp_size{x}cp_size\) = )?64 / "
                     rf"\({d.tp_size}{x}{d.pp_size}{x}{d.cp_size}\) = {d.dp_size}\b", p)


def not_megatron_for_pp(a, lang):
    for cfg in shown_configs(a.text):
        assert dist_of(cfg).get("strategy") != "megatron_fsdp"
    assert _neg_all(sentences_with(a.text, r"megatron_fsdp"), lang)
    assert sentences_with(a.text, r"megatron_fsdp", r"pp_size|pipeline|流水线")


def fsdp2_with_ep(a, lang):
    assert a.strategy == "fsdp2"
    d = dist_of(shown_configs(a.text)[0])
    assert d["strategy"] == "fsdp2" and d["ep_size"] > 1
    assert validate(shown_configs(a.text)[0], world_size=a.validation.world_size, gpus_per_node=8).ok


def mentions_moe_mesh(a, lang):
    assert sentences_with(a.text, r"moe_mesh", r"separate|另建|独立")


def mentions_moe_subconfig(a, lang):
    assert sentences_with(a.text, r"`moe:`", r"MoEParallelizerConfig", r"ep_size > 1")


def ep_divisibility(a, lang):
    # stated as the code checks it, with the doc's narrower form named
    s = sentences_with(a.text, r"\(dp_size \* cp_size \* tp_size\) % ep_size == 0")
    assert s, "code form of the ep rule missing"
    assert re.search(r"`dp_size \* cp_size`", s[0])


def megatron_no_ep(a, lang):
    s = sentences_with(a.text, r"megatron_fsdp", r"expert|专家|ep_size")
    assert s and all(negated(x, lang) for x in s)


def not_ddp_for_ep(a, lang):
    for cfg in shown_configs(a.text):
        assert dist_of(cfg).get("strategy") != "ddp"
    s = sentences_with(a.text, r"\bddp\b")
    assert _neg_all(s, lang) or not s


def megatron_no_pp(a, lang):
    s = sentences_with(a.text, r"megatron_fsdp", r"pipeline|流水线", r"pp_size")
    assert s and all(negated(x, lang) for x in s)


def megatron_no_sp(a, lang):
    s = sentences_with(a.text, r"megatron_fsdp", r"sequence_parallel")
    assert s and all(negated(x, lang) for x in s)


def answer_says_no(a, lang):
    first = prose(a.text).strip().splitlines()[0]
    assert re.search(r"^\*\*(No\b|不行)", first), first


def fsdp2_for_pp_ep_sp(a, lang):
    assert sentences_with(a.text, r"`fsdp2`", r"PP", r"EP", r"sequence_parallel")
    for cfg in shown_configs(a.text):
        assert dist_of(cfg)["strategy"] == "fsdp2"


def ddp_simple_only(a, lang):
    pat = r"simple data parallelism only" if lang == "en" else r"只是简单的数据并行"
    assert sentences_with(a.text, r"`ddp`", pat)


BEHAVIOURS = {
    "Routes to nemo-automodel-distributed-training": routes_to_skill,
    "Recommends strategy: fsdp2 for TP plus PP": recommends_fsdp2_tp_pp,
    "Mentions tp_size and pp_size as the key parallelism controls": mentions_tp_pp,
    "Mentions pipeline sub-config fields such as pp_schedule or pp_microbatch_size": mentions_pipeline_subconfig,
    "Explains that dp_size is inferred from world_size / (tp_size * pp_size * cp_size)": dp_inferred,
    "Does not recommend Megatron FSDP for pipeline parallelism": not_megatron_for_pp,
    "Recommends fsdp2 with ep_size > 1": fsdp2_with_ep,
    "Mentions the separate moe_mesh for expert parallelism": mentions_moe_mesh,
    "Mentions the moe sub-config when relevant": mentions_moe_subconfig,
    "Mentions the ep_size divisibility constraint": ep_divisibility,
    "States that MegatronFSDP does not support EP": megatron_no_ep,
    "Does not suggest DDP for expert parallelism": not_ddp_for_ep,
    "States megatron_fsdp does not support pipeline parallelism": megatron_no_pp,
    "States megatron_fsdp does not support expert parallelism": megatron_no_ep,
    "States megatron_fsdp does not support sequence_parallel": megatron_no_sp,
    "Recommends fsdp2 for PP, EP, or sequence_parallel": fsdp2_for_pp_ep_sp,
    "Mentions DDP is simple data parallelism only": ddp_simple_only,
}


def test_every_behaviour_has_a_check():
    for t in TASKS:
        for b in t["expected_behavior"]:
            assert b in BEHAVIOURS, b


@pytest.mark.parametrize("task,lang", CASES, ids=[f"{_ids(t)}-{lang}" for t, lang in CASES])
def test_expected_behaviours(answers, task, lang):
    a, composed = answers[(task["id"], lang)]
    failures = []
    for b in task["expected_behavior"]:
        try:
            BEHAVIOURS[b](a, lang)
        except AssertionError as exc:
            failures.append(f"{b}: {exc}")
    assert not failures, "\n".join(failures) + "\n\n" + a.text


@pytest.mark.parametrize("task,lang", CASES, ids=[f"{_ids(t)}-{lang}" for t, lang in CASES])
def test_answer_quality(answers, task, lang):
    a, composed = answers[(task["id"], lang)]
    assert a.language == lang
    if lang == "zh":
        assert cjk_ratio(a.text) > 0.35, a.text
    # every stated kb fact is grounded, and every citation points at a listed source
    assert composed.uncited == [], composed.uncited
    nums = citations(a.text)
    assert nums and all(1 <= n <= len(a.sources) for n in nums)
    # every shown config validates at the user's numbers
    for cfg in shown_configs(a.text):
        assert validate(cfg, world_size=a.validation.world_size if a.validation else 8, gpus_per_node=8).ok
    # an engineer's answer, not a dump: short, no sentence said twice, strategy before YAML before sources
    assert len(prose(a.text)) < 4000
    sents = [s for s in sentences(a.text) if len(s) > 30]
    assert len(sents) == len(set(sents)), [s for s in sents if sents.count(s) > 1]
    t = a.text
    if "```yaml" in t:
        assert t.index("fsdp2") < t.index("```yaml")
    heading = "**Sources**" if lang == "en" else "**来源**"
    assert heading in t and t.rstrip().splitlines()[-1].startswith(f"[{len(a.sources)}]")
