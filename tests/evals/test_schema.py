"""The case set and its loaders: our YAML/JSONL format and the upstream evals.json format."""
from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from assistant.config import UPSTREAM_SKILL_DIR
from assistant.validator import validate
from evals.schema import (
    CASES_DIR,
    CATEGORIES,
    CaseFormatError,
    HELDOUT_DIR,
    QUESTION_FIRST_CATEGORIES,
    default_set_paths,
    load_case_file,
    load_fact_library,
    load_set,
    upstream_cases,
)
from evals.scorer import user_yaml_blocks

UPSTREAM_EVALS = UPSTREAM_SKILL_DIR / "evals" / "evals.json"
COMMON_ERROR_CODES = (
    "MW-E-DIST-NOT-MAPPING MW-E-STRATEGY-UNKNOWN MW-E-STRATEGY-OPTION MW-E-AC-VALUE MW-E-AC-SELECTIVE "
    "MW-E-AC-SCOPE MW-E-PP-NO-PIPELINE MW-E-PIPELINE-OPTION MW-E-PIPELINE-VALUE MW-E-MOE-OPTION "
    "MW-E-HSDP-STRATEGY MW-E-MEGATRON-PP MW-E-MEGATRON-EP MW-E-DDP-PARALLEL MW-E-WORLD-DIVISIBLE "
    "MW-E-DP-REPLICATE-DIVIDES MW-E-DP-REPLICATE-LT-DP MW-E-EP-DIVIDES MW-E-DP-MISMATCH MW-E-BATCH-POSITIVE "
    "MW-E-BATCH-DIVISIBLE MW-E-PP-MICROBATCH-COUNT MW-E-PP-MICROBATCH-DIVIDES MW-E-PP-SCHEDULE MW-E-MEMORY"
).split()


@pytest.fixture(scope="module")
def our_cases():
    return load_set([CASES_DIR])


def test_set_size_languages_and_categories(our_cases):
    assert len(our_cases) >= 150
    # The issue-11 cases (`q-en-*`, `q-zh-*`) are written per language on two branches; their sizes are
    # held per language in tests/evals/test_case_files.py. The balance holds for the rest of the set.
    rest = [c for c in our_cases if not c.id.startswith("q-")]
    langs = Counter(c.lang for c in rest)
    assert langs["zh"] * 2 >= len(rest)
    cats = Counter(c.category for c in our_cases)
    assert set(cats) <= set(CATEGORIES)
    # The question-first categories (issue 11) are held per language in tests/evals/test_case_files.py,
    # counting the held-out files as well.
    for cat in set(CATEGORIES) - set(QUESTION_FIRST_CATEGORIES):
        assert {c.lang for c in our_cases if c.category == cat} == {"en", "zh"}, cat


def test_chinese_cases_use_pure_chinese_terms(our_cases):
    zh = " ".join(c.question for c in our_cases if c.lang == "zh")
    for term in ("张量并行", "流水线并行", "专家并行", "上下文并行", "混合分片数据并行", "激活检查点"):
        assert term in zh, term


def test_every_error_code_is_diagnosed_at_least_once(our_cases):
    named = {code for c in our_cases for alts in c.expect.rule_codes for code in alts}
    assert set(COMMON_ERROR_CODES) <= named


def test_pasted_yaml_has_the_stated_verdict(our_cases):
    """Consistency of the set: each pasted config gets the verdict and error codes the case expects
    (held-out cases too: this only runs the validator on their pasted YAML, never the engine)."""
    checked = 0
    for c in [*our_cases, *load_set([HELDOUT_DIR])]:
        blocks = user_yaml_blocks(c.question)
        if not blocks or c.expect.valid is None or c.history:
            continue
        rep = validate(blocks[0], world_size=c.assumed_world_size or 8, gpus_per_node=c.assumed_gpus_per_node or 8,
                       model=c.expect.model, gpu=c.expect.gpu)
        assert rep.ok == c.expect.valid, (c.id, rep.codes)
        errors = {f.code for f in rep.errors}
        for alts in c.expect.rule_codes:
            assert errors & set(alts), (c.id, alts, errors)
        if c.expect.dp_size is not None:
            assert rep.derived.dp_size == c.expect.dp_size, c.id
        checked += 1
    assert checked >= 40


def test_ids_are_unique_and_descriptive(our_cases):
    ids = [c.id for c in our_cases]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z0-9-]+", i) for i in ids)


def test_fact_library_regexes_compile_and_are_used(our_cases):
    lib = load_fact_library()
    used = {g.name for c in our_cases for g in (*c.expect.facts, *c.expect.forbid)}
    assert {"ep_rule_code", "dp_formula", "megatron_no_pp"} <= used
    assert {"f_ep_rule_without_tp", "f_interleaved_underscore", "f_megatron_for_pp"} <= used
    assert lib.facts and lib.forbidden


@pytest.mark.skipif(not UPSTREAM_EVALS.is_file(), reason="upstream skill folder not present")
def test_upstream_evals_json_loads_with_every_behaviour_mapped():
    cases = upstream_cases(UPSTREAM_EVALS)
    assert len(cases) == 3
    raw = json.loads(UPSTREAM_EVALS.read_text(encoding="utf-8"))
    for case, task in zip(cases, raw):
        assert case.question == task["question"] and case.lang == "en" and case.category == "upstream"
        assert not any(g.name.startswith("unmapped") for g in case.expect.facts), case.id
        assert case.expect.intent_not  # "routes to the skill" became an in-scope check
    moe = cases[1]
    assert moe.expect.strategy == "fsdp2"
    assert "ep_rule_code" in {g.name for g in moe.expect.facts}
    assert "f_ep_rule_without_tp" in {g.name for g in moe.expect.forbid}
    assert default_set_paths()[-1] == UPSTREAM_EVALS


def test_unmapped_upstream_behaviour_becomes_a_failing_fact(tmp_path):
    path = tmp_path / "evals.json"
    path.write_text(json.dumps([{"id": "x-1", "question": "Which strategy for TP?", "ground_truth": "fsdp2",
                                 "expected_behavior": ["Routes to nemo-automodel-distributed-training",
                                                       "Sings a song about NCCL"]}]), encoding="utf-8")
    (case,) = upstream_cases(path)
    names = [g.name for g in case.expect.facts]
    assert names == ["unmapped behaviour: Sings a song about NCCL"]


def test_jsonl_format(tmp_path):
    path = tmp_path / "mine.jsonl"
    rows = [
        {"id": "j-1", "lang": "zh", "category": "sizing", "question": "16 卡 tp 2 dp 多少？",
         "expect": {"world_size": 16, "dp_size": 8, "facts": ["dp_formula"]}},
        {"id": "j-2", "lang": "en", "category": "followup", "question": "and on 32?",
         "history": [{"role": "user", "content": "16 GPUs with tp 2?"}], "expect": {"world_size": 32}},
    ]
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    a, b = load_case_file(path)
    assert a.expect.dp_size == 8 and a.expect.facts[0].name == "dp_formula"
    assert b.history[0].role == "user" and b.assumed_world_size == 32


@pytest.mark.parametrize(
    "case, message",
    [
        ({"id": "x", "lang": "fr", "category": "sizing", "question": "q"}, "lang"),
        ({"id": "x", "lang": "en", "category": "misc", "question": "q"}, "category"),
        ({"id": "x", "lang": "en", "category": "sizing", "question": "q", "expect": {"facts": ["no_such_fact"]}}, "unknown facts"),
        ({"id": "x", "lang": "en", "category": "sizing", "question": "q", "expect": {"facts": [{"any": ["(unclosed"]}]}}, "bad regex"),
        ({"id": "x", "lang": "en", "category": "sizing", "question": "q", "expect": {"dp_size": 0}}, "positive integer"),
        ({"id": "x", "lang": "en", "category": "sizing", "question": "q", "expect": {"rule_codes": ["E-EP"]}}, "rule code"),
        ({"id": "x", "lang": "en", "category": "sizing", "question": "q", "expect": {"yaml": {"a.b": {"near": 1}}}}, "use one of"),
        ({"id": "x", "lang": "en", "category": "sizing", "question": "q", "colour": "red"}, "unknown keys"),
    ],
)
def test_bad_cases_are_rejected_with_a_clear_message(tmp_path, case, message):
    path = tmp_path / "bad.yaml"
    import yaml

    path.write_text(yaml.safe_dump({"cases": [case]}, allow_unicode=True), encoding="utf-8")
    with pytest.raises(CaseFormatError, match=message):
        load_case_file(path)


def test_duplicate_ids_across_files_are_rejected(tmp_path):
    import yaml

    for name in ("a.yaml", "b.yaml"):
        (tmp_path / name).write_text(yaml.safe_dump({"cases": [{"id": "same", "lang": "en", "category": "sizing",
                                                                "question": "q"}]}), encoding="utf-8")
    with pytest.raises(CaseFormatError, match="duplicate"):
        load_set([tmp_path])


def test_held_out_cases_are_not_in_the_default_set():
    paths = [p.resolve() for p in default_set_paths()]
    assert HELDOUT_DIR.resolve() not in paths
    assert all(HELDOUT_DIR.resolve() not in p.parents for p in paths)
    # a held-out set already scored moves into the tuning set as evals/cases/h<N>_*.yaml, ids kept
    promoted = {c.id for p in sorted(CASES_DIR.glob("h*_*.yaml")) if re.match(r"h\d+_", p.name) for c in load_set([p])}
    assert not any(re.match(r"h\d*-", c.id) and c.id not in promoted for c in load_set(default_set_paths()))
