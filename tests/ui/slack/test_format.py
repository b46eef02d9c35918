from assistant.answer import Answer
from assistant.retrieve.hit import Hit
from ui.slack.format import MAX_BLOCKS, SECTION_CHARS, render_answer, to_mrkdwn


def test_markdown_becomes_mrkdwn_but_code_is_untouched():
    md = "## Strategy\nUse **fsdp2** [docs](https://example.org/x).\n```yaml\ndistributed:\n  tp_size: 8  # **not bold**\n```"
    out = to_mrkdwn(md)
    assert "*Strategy*" in out and "*fsdp2*" in out and "<https://example.org/x|docs>" in out
    assert "  tp_size: 8  # **not bold**" in out  # inside the code block nothing changes
    assert "```yaml" not in out and out.count("```") == 2


def _sections(msg):
    return [b["text"]["text"] for b in msg.blocks if b["type"] == "section"]


def test_a_long_answer_is_one_message_within_slacks_limits():
    hit = Hit(id="hsdp.zh#1", doc_id="hsdp.zh", title="HSDP", path="kb/zh/hsdp.md", heading="HSDP", kind="doc",
              lang="zh", score=0.9, text="...")
    code = "```yaml\n" + "\n".join(f"key_{i}: {i}" for i in range(150)) + "\n```"
    ans = Answer(id="a1", text="建议 **fsdp2**。\n\n" + code + "\n\n" + "\n\n".join(["内容 " * 400] * 40), language="zh",
                 intent="strategy", strategy="fsdp2", yaml=None, validation=None, sources=[hit])
    msg = render_answer(ans)  # one message, never a chain
    sections = _sections(msg)
    assert len(msg.blocks) <= MAX_BLOCKS and all(len(t) <= SECTION_CHARS for t in sections)
    assert all(t.count("```") % 2 == 0 for t in sections)
    assert [t for t in sections if "key_0: 0" in t] == [t for t in sections if "key_149: 149" in t]  # code in one block
    assert "kb/zh/hsdp.md" in "\n".join(sections)  # sources survive the shortening
    assert "缩短" in msg.text or "缩短" in "\n".join(sections)  # and the reader is told it was shortened
    assert len(msg.text) <= 4000 and msg.text.count("```") % 2 == 0


def test_an_oversized_code_block_stays_one_block_and_is_cut_with_a_note():
    code = "```\n" + "\n".join("x" * 50 for _ in range(200)) + "\n```"
    ans = Answer(id="a2", text="Here:\n\n" + code, language="en", intent="config", strategy=None, yaml=None,
                 validation=None, sources=[])
    msg = render_answer(ans)
    code_sections = [t for t in _sections(msg) if "```" in t]
    assert len(code_sections) == 1 and len(code_sections[0]) <= SECTION_CHARS
    notes = [e["text"] for b in msg.blocks if b["type"] == "context" for e in b["elements"]]
    assert len(notes) == 1 and "shortened" in notes[0] and "shortened" in msg.text


def test_a_short_answer_is_unchanged():
    ans = Answer(id="a3", text="Use **fsdp2**.", language="en", intent="strategy", strategy="fsdp2", yaml=None,
                 validation=None, sources=[])
    msg = render_answer(ans)
    assert _sections(msg) == ["Use *fsdp2*."] and "shortened" not in msg.text


def test_mrkdwn_keeps_arithmetic_and_identifiers_literal():
    """Issue 14.5 in Slack: `*a*` is bold and `_a_` italic in mrkdwn; the validator's arithmetic must not be."""
    out = to_mrkdwn("world_size (8) must be divisible by tp_size*cp_size*pp_size (3*1*1 = 3)")
    assert "`tp_size*cp_size*pp_size`" in out and "`3*1*1`" in out
    assert out.replace("`", "") == "world_size (8) must be divisible by tp_size*cp_size*pp_size (3*1*1 = 3)"
