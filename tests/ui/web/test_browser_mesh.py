"""The device-mesh picture in headless Chromium: beside the chat's verdict, and in the Validate tab with its
axis selector and MoE view, in English and Chinese. Screenshots go to artifacts/screenshots/ (mesh-*)."""
from __future__ import annotations

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.browser]

ANSWER_TIMEOUT_MS = 90_000
EN_QUESTION = "I am training a 70B LLM on 8 nodes and want tensor plus pipeline parallelism. Which strategy and YAML?"
ZH_QUESTION = "70B 模型，8 个节点，要 TP+PP，YAML 怎么写？"
MOE_YAML = ("distributed:\n  strategy: fsdp2\n  tp_size: 2\n  pp_size: 2\n  ep_size: 4\n  pipeline:\n"
            "    pp_schedule: 1f1b\n    pp_microbatch_size: 1\n")


def shot(page, screenshots, name: str) -> None:
    page.screenshot(path=str(screenshots / f"{name}.png"), full_page=True)


def picture_src(page, sel: str, before: str | None = None, timeout: int = ANSWER_TIMEOUT_MS) -> str:
    """The src of the picture in `sel` once it is loaded (and differs from `before`)."""
    page.wait_for_function(
        """([sel, before]) => { const i = document.querySelector(sel + ' img');
            return i && i.complete && i.naturalWidth > 400 && i.getAttribute('src') !== before; }""",
        arg=[sel, before], timeout=timeout)
    return page.locator(f"{sel} img").first.get_attribute("src")


def ask(page, question: str, verdict_contains: str) -> None:
    page.fill("#mw-question textarea", question)
    page.click("#mw-ask")
    page.wait_for_function(
        "([sel, text]) => { const e = document.querySelector(sel); return e && e.innerText.includes(text); }",
        arg=["#mw-verdict", verdict_contains], timeout=ANSWER_TIMEOUT_MS)


@pytest.mark.parametrize("lang,question,verdict", [
    ("en", EN_QUESTION, "Valid for world size 64"),
    ("zh", ZH_QUESTION, "校验通过"),
])
def test_chat_answer_with_a_tp_pp_layout_shows_its_mesh(page, screenshots, lang, question, verdict):
    from playwright.sync_api import expect

    if lang == "zh":
        page.get_by_label("中文").check()
    expect(page.locator("#mw-mesh")).to_be_hidden()  # no answer yet, no picture
    ask(page, question, verdict)
    picture_src(page, "#mw-mesh")
    box = page.locator("#mw-mesh img").bounding_box()
    verdict_box = page.locator("#mw-verdict").bounding_box()
    assert box["y"] >= verdict_box["y"] + verdict_box["height"] - 2  # right under the verdict
    assert abs(box["x"] - verdict_box["x"]) < 60
    page.locator("#mw-mesh").scroll_into_view_if_needed()
    shot(page, screenshots, f"mesh-chat-{lang}")
    page.locator("#mw-mesh img").screenshot(path=str(screenshots / f"mesh-chat-{lang}-picture.png"))
    # A new conversation has no layout: the picture goes away.
    page.click("#mw-clear")
    expect(page.locator("#mw-mesh")).to_be_hidden()


@pytest.mark.parametrize("lang,tab,axis_pp,moe", [
    ("en", "Validate YAML", "pp stage", "MoE mesh (ep_shard × ep)"),
    ("zh", "校验 YAML", "pp stage", "MoE mesh（ep_shard × ep）"),
])
def test_validate_tab_switches_axis_and_opens_the_moe_view(page, screenshots, lang, tab, axis_pp, moe):
    from playwright.sync_api import expect

    if lang == "zh":
        page.get_by_label("中文").check()
    page.get_by_role("tab", name=tab).click()
    editor = page.locator("#mw-yaml .cm-content")
    editor.click()
    page.keyboard.insert_text(MOE_YAML)
    page.fill("#mw-vworld input", "16")
    page.fill("#mw-vgpn input", "4")
    page.click("#mw-validate")
    first = picture_src(page, "#mw-vmesh")
    expect(page.locator("#mw-mesh-axis")).to_be_visible()
    expect(page.locator("#mw-mesh-axis")).to_contain_text("按此着色" if lang == "zh" else "Colour by")
    shot(page, screenshots, f"mesh-validate-{lang}-tp")

    page.locator("#mw-mesh-axis").get_by_label(axis_pp).check()
    by_stage = picture_src(page, "#mw-vmesh", before=first)
    assert by_stage != first
    shot(page, screenshots, f"mesh-validate-{lang}-pp")

    page.locator("#mw-mesh-view").get_by_label(moe).check()
    moe_src = picture_src(page, "#mw-vmesh", before=by_stage)
    assert moe_src not in (first, by_stage)
    expect(page.locator("#mw-mesh-axis")).to_be_hidden()  # the MoE view is coloured by node, not by an axis
    page.locator("#mw-vmesh").scroll_into_view_if_needed()
    shot(page, screenshots, f"mesh-validate-{lang}-moe")
    page.locator("#mw-vmesh img").screenshot(path=str(screenshots / f"mesh-validate-{lang}-moe-picture.png"))

    # An invalid config has no mesh: the picture and its controls go away.
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text("distributed:\n  strategy: fsdp2\n  tp_size: 3\n")
    page.click("#mw-validate")
    expect(page.locator("#mw-vmesh")).to_be_hidden(timeout=ANSWER_TIMEOUT_MS)
    expect(page.locator("#mw-mesh-view")).to_be_hidden()
