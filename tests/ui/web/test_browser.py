"""End to end in headless Chromium (Debian's, driven by Playwright): what a user does on the page.

Screenshots go to artifacts/screenshots/ (git-ignored) as test artefacts.
"""
from __future__ import annotations

import json
import re
import time

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.browser]

ANSWER_TIMEOUT_MS = 90_000
ZH_QUESTION = "70B 模型，8 个节点，要 TP+PP，YAML 怎么写？"
EN_QUESTION = "I am training a 70B LLM on 8 nodes and want tensor plus pipeline parallelism. Which strategy and YAML?"


def ask(page, question: str, verdict_contains: str) -> None:
    page.fill("#mw-question textarea", question)
    page.click("#mw-ask")
    page.wait_for_function(
        "([sel, text]) => { const e = document.querySelector(sel); return e && e.innerText.includes(text); }",
        arg=["#mw-verdict", verdict_contains], timeout=ANSWER_TIMEOUT_MS)
    # The question box is emptied and the last message is complete once the verdict is in.
    page.wait_for_function("() => document.querySelector('#mw-question textarea').value === ''")
    wait_answer_start_visible(page)


def wait_answer_start_visible(page) -> None:
    """A long answer is shown from its beginning, not scrolled to its citation list."""
    page.wait_for_function("""() => {
        const bots = document.querySelectorAll('#mw-chat .message.bot');
        const last = bots[bots.length - 1];
        const wrap = last && last.closest('.bubble-wrap');
        if (!wrap) return false;
        const d = last.getBoundingClientRect().top - wrap.getBoundingClientRect().top;
        return d >= -40 && d <= wrap.clientHeight / 2;
    }""", timeout=10_000)


def last_answer(page):
    return page.locator("#mw-chat .message.bot").last


def shot(page, screenshots, name: str) -> None:
    page.screenshot(path=str(screenshots / f"{name}.png"), full_page=True)


def test_chinese_question_shows_validated_yaml_verdict_and_sources(page, screenshots):
    ask(page, ZH_QUESTION, "校验通过")
    answer = last_answer(page)
    # Chinese answer, with the YAML as a highlighted code block that has its own copy button.
    assert re.search(r"[\u4e00-\u9fff]", answer.inner_text())
    code = answer.locator("pre code.language-yaml").first
    assert "strategy: fsdp2" in code.inner_text() and "pp_size: 4" in code.inner_text()
    assert answer.locator(".copy_code_button").count() >= 1
    verdict = page.inner_text("#mw-verdict")
    assert "world_size=64" in verdict and "dp_size 2" in verdict
    sources = page.locator("#mw-sources details")
    assert sources.count() >= 3
    assert "kb/zh/" in page.inner_text("#mw-sources")
    # An excerpt opens on click.
    sources.first.locator("summary").click()
    assert sources.first.locator("pre.mw-excerpt").is_visible()
    shot(page, screenshots, "01-chat-zh")


def test_english_question_then_follow_up_replans(page, screenshots):
    ask(page, EN_QUESTION, "Valid for world size 64")
    first = last_answer(page)
    assert "pp_size: 4" in first.locator("pre code.language-yaml").first.inner_text()
    assert "dp_size 2" in page.inner_text("#mw-verdict")
    assert "kb/en/" in page.inner_text("#mw-sources")
    shot(page, screenshots, "02-chat-en")

    ask(page, "what if only 4 nodes?", "Valid for world size 32")
    assert page.locator("#mw-chat .message.bot").count() == 2  # same conversation, one more answer
    follow = last_answer(page)
    assert "world_size 32" in follow.inner_text().replace("world size", "world_size")
    assert "dp_size 1" in page.inner_text("#mw-verdict")
    time.sleep(0.5)  # past the "show the bottom while it streams" scroll: the answer must stay at its start
    wait_answer_start_visible(page)
    shot(page, screenshots, "03-follow-up")


def test_example_click_asks_at_once(page):
    page.locator("#mw-examples button", has_text="MoE 模型想用专家并行").first.click()
    page.wait_for_selector("#mw-sources details", timeout=ANSWER_TIMEOUT_MS)
    assert "MoE 模型想用专家并行" in page.locator("#mw-chat .message.user").first.inner_text()
    assert "ep_size" in last_answer(page).inner_text()


def test_validate_tab_shows_error_code_fix_and_memory_chart(page, screenshots):
    page.get_by_role("tab", name="Validate YAML").click()
    editor = page.locator("#mw-yaml .cm-content")
    editor.click()
    page.keyboard.insert_text("distributed:\n  strategy: megatron_fsdp\n  tp_size: 2\n  pp_size: 2\n")
    page.fill("#mw-vworld input", "16")
    page.click("#mw-validate")
    page.wait_for_function("() => document.querySelector('#mw-report').innerText.includes('MW-E-')",
                           timeout=ANSWER_TIMEOUT_MS)
    report = page.inner_text("#mw-report")
    assert "Invalid for world size 16" in report
    assert "MW-E-MEGATRON-PP" in report
    assert "流水线并行" in report  # the Chinese message is shown under the English one
    fix = page.inner_text("#mw-fix")
    assert "strategy: fsdp2" in fix and "pipeline" in fix
    shot(page, screenshots, "04-validate-invalid")

    # A valid config with a model and a GPU: the per-GPU memory chart.
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text("distributed:\n  strategy: fsdp2\n  tp_size: 8\n")
    page.locator("#mw-vmodel input").fill("llama-3.1-70b")
    page.keyboard.press("Enter")
    page.click("#mw-validate")
    page.wait_for_selector("#mw-memory img", timeout=ANSWER_TIMEOUT_MS)
    assert "GiB" in page.inner_text("#mw-report")
    shot(page, screenshots, "05-validate-memory")


def test_thumbs_down_is_stored_in_the_jsonl_file(page, web_server, screenshots):
    store = web_server["feedback"]
    before = store.read_text(encoding="utf-8").splitlines() if store.exists() else []
    page.fill("#mw-question textarea", "Can I use megatron_fsdp if I need pipeline parallelism?")
    page.click("#mw-ask")
    page.wait_for_selector("#mw-sources details", timeout=ANSWER_TIMEOUT_MS)  # set with the final answer
    last_answer(page).hover()
    page.locator("#mw-chat button[aria-label='Dislike']").last.click()
    page.wait_for_function("() => document.querySelector('#mw-thanks').innerText.includes('recorded')")
    deadline = time.monotonic() + 10
    rows = []
    while time.monotonic() < deadline:
        lines = store.read_text(encoding="utf-8").splitlines() if store.exists() else []
        rows = [json.loads(line) for line in lines[len(before):]]
        if rows:
            break
        time.sleep(0.2)
    assert rows, "no feedback row was written"
    row = rows[-1]
    assert row["liked"] is False
    assert row["question"] == "Can I use megatron_fsdp if I need pipeline parallelism?"
    assert row["answer_id"].startswith("web-") and row["answer"]
    assert row["settings"]["llm"] == "offline"
    shot(page, screenshots, "06-thumbs-down")


def test_interface_switches_to_chinese(page, screenshots):
    from playwright.sync_api import expect

    page.get_by_label("中文").check()
    expect(page.locator("#mw-ask")).to_contain_text("提问")
    expect(page.get_by_role("tab", name="校验 YAML")).to_be_visible()
    expect(page.locator("#mw-clear")).to_contain_text("新对话")
    expect(page.locator("#mw-verdict")).to_contain_text("校验结果")
    expect(page.locator("#mw-question textarea")).to_have_attribute("placeholder", re.compile("例如"))
    page.click("#mw-settings")
    expect(page.get_by_text("每节点 GPU 数").first).to_be_visible()
    expect(page.locator("#mw-world")).to_contain_text("从问题中读取")
    shot(page, screenshots, "07-interface-zh")
    # Answers follow the chosen language too, even for an English question.
    ask(page, "Which strategy for an 8B model on 8 GPUs?", "校验通过")
    assert re.search(r"[\u4e00-\u9fff]", last_answer(page).inner_text())
    shot(page, screenshots, "08-zh-answer-to-en-question")
