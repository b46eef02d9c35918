from assistant.answer import Answer
from assistant.retrieve.hit import Hit
from ui.slack.format import MESSAGE_LIMIT, render_answer, split_message, to_mrkdwn


def test_markdown_becomes_mrkdwn_but_code_is_untouched():
    md = "## Strategy\nUse **fsdp2** [docs](https://example.org/x).\n```yaml\ndistributed:\n  tp_size: 8  # **not bold**\n```"
    out = to_mrkdwn(md)
    assert "*Strategy*" in out and "*fsdp2*" in out and "<https://example.org/x|docs>" in out
    assert "  tp_size: 8  # **not bold**" in out  # inside the code block nothing changes
    assert "```yaml" not in out and out.count("```") == 2


def test_split_never_cuts_a_code_block():
    yaml_block = "```\n" + "\n".join(f"  key_{i}: {i}" for i in range(60)) + "\n```"
    text = "\n\n".join(["para " * 150, yaml_block, "tail " * 300, yaml_block])
    parts = split_message(text, limit=1200)
    assert all(len(p) <= 1200 for p in parts)
    assert all(p.count("```") % 2 == 0 for p in parts)
    assert "".join(parts).count("key_59") == 2


def test_oversized_code_block_is_closed_and_reopened():
    block = "```\n" + "\n".join("x" * 50 for _ in range(200)) + "\n```"
    parts = split_message(block, limit=1000)
    assert len(parts) > 1
    assert all(p.startswith("```") and p.endswith("```") and len(p) <= 1000 for p in parts)


def test_render_answer_has_sources_and_stays_in_limit():
    hit = Hit(id="hsdp.zh#1", doc_id="hsdp.zh", title="HSDP", path="kb/zh/hsdp.md", heading="HSDP", kind="doc",
              lang="zh", score=0.9, text="...")
    ans = Answer(id="a1", text="建议 **fsdp2**。\n\n" + "内容 " * 3000, language="zh", intent="strategy",
                 strategy="fsdp2", yaml=None, validation=None, sources=[hit])
    msgs = render_answer(ans)
    assert len(msgs) > 1 and all(len(m) <= MESSAGE_LIMIT for m in msgs)
    assert "*来源*" in msgs[-1] and "kb/zh/hsdp.md" in msgs[-1]
