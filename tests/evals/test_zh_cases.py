"""The issue-11 Chinese cases: the size and mix the eval brief asks for, questions written in Chinese,
real questions citing their source, and the Chinese lead patterns telling a verdict from its negation.

Held-out cases are only loaded here (format check), never run.
"""
from __future__ import annotations

import re
from collections import Counter

import pytest

from evals.schema import CASES_DIR, HELDOUT_DIR, QUESTION_FIRST_CATEGORIES, load_case_file, load_fact_library
from evals.scorer import cjk_ratio, fact_present

MIN_ZH_TUNING = 52
MIN_ZH_HELDOUT = 28
MIN_ZH_REAL = 20


@pytest.fixture(scope="module")
def lib():
    return load_fact_library()


@pytest.fixture(scope="module")
def zh_cases(lib):
    paths = sorted(CASES_DIR.glob("q_*_zh.yaml")) + sorted(HELDOUT_DIR.glob("*_zh.yaml"))
    return [c for p in paths for c in load_case_file(p, lib)]


def test_chinese_tuning_and_held_out_sizes_and_mix(zh_cases):
    tuning = [c for c in zh_cases if c.id.startswith("q-zh-")]
    held = [c for c in zh_cases if re.match(r"h\d+-zh-", c.id)]  # every held-out version
    assert len(tuning) >= MIN_ZH_TUNING and len(held) >= MIN_ZH_HELDOUT
    assert len(tuning) + len(held) == len(zh_cases)
    assert set(QUESTION_FIRST_CATEGORIES) <= {c.category for c in tuning}
    assert {"verdict", "quantity", "field_fact", "pasted_log", "multipart"} <= {c.category for c in held}, Counter(c.category for c in held)


def test_every_chinese_case_is_asked_in_chinese(zh_cases):
    for c in zh_cases:
        cjk, _share = cjk_ratio(c.question)
        assert c.lang == "zh" and cjk >= 1, c.id  # "tp4pp2 16卡 dp?" is Chinese too


def test_chinese_real_user_questions_cite_their_source(zh_cases):
    real = [c for c in zh_cases if c.category == "real_user" or "://" in c.note]
    assert len(real) >= MIN_ZH_REAL
    assert all(re.search(r"https?://", c.note) for c in real), [c.id for c in real if "://" not in c.note]


def test_chinese_cases_check_the_lead_or_the_length(zh_cases):
    for c in zh_cases:
        e = c.expect
        assert e.lead or e.max_chars or e.yaml_fields, c.id


@pytest.mark.parametrize(
    "name, text, expected",
    [
        ("zh_verdict_yes", "可以跑：32 卡上 tp_size 4、ep_size 8 合法，dp_size = 8。", True),
        ("zh_verdict_yes", "能跑。", True),
        ("zh_verdict_yes", "不可以：40 不能被 12 整除。", False),
        ("zh_verdict_yes", "不行，这个配置不合法，也不可行。", False),
        ("zh_verdict_yes", "无效：ddp 会拒绝 tp_size 2。", False),
        ("zh_verdict_no", "不行：40 不能被 tp*pp = 12 整除，启动时会报错。", True),
        ("zh_verdict_no", "不是：ep_size 只需整除 dp*cp*tp。", True),
        ("zh_verdict_no", "可以，合法，dp = 8。", False),
        ("zh_ignored", "不会生效：ep_size 为 1 时 moe 块被直接丢弃。", True),
        ("zh_ignored", "会生效，按你写的值使用。", False),
        ("zh_rephrase", "没看懂你的问题，能换个方式描述一下吗？", True),
        ("zh_rephrase", "dp_size = 4。", False),
    ],
)
def test_chinese_lead_patterns_tell_a_verdict_from_its_negation(lib, name, text, expected):
    assert fact_present(lib.facts[name], text) is expected
