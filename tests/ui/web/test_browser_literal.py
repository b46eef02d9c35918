"""Issue 14.5, in headless Chromium: the validator's arithmetic and identifiers show exactly as written."""
from __future__ import annotations

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.browser]

ANSWER_TIMEOUT_MS = 90_000
YAML = "```yaml\ndistributed:\n  strategy: fsdp2\n  tp_size: 3\n```"
QUESTIONS = {
    "en": f"Is this valid on 8 GPUs?\n{YAML}",
    "zh": f"这个配置在 8 张卡上能跑吗？\n{YAML}",
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_arithmetic_in_an_answer_displays_exactly(page, lang):
    page.fill("#mw-question textarea", QUESTIONS[lang])
    page.click("#mw-ask")
    page.wait_for_function(
        "() => { const e = document.querySelector('#mw-verdict'); return e && e.innerText.includes('MW-E-WORLD-DIVISIBLE'); }",
        timeout=ANSWER_TIMEOUT_MS)
    page.wait_for_function("() => document.querySelector('#mw-question textarea').value === ''")
    answer = page.locator("#mw-chat .message.bot").last
    text = answer.inner_text()
    assert "tp_size*cp_size*pp_size" in text and "3*1*1 = 3" in text, text
    assert answer.locator("em").count() == 0  # nothing of the arithmetic turned into italics
