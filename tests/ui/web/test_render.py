"""ui/web/render.py: the Markdown and chart the page shows for a report, sources and answers."""
from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from assistant.retrieve.hit import Hit
from assistant.validator import validate
from ui.web import render
from ui.web.render import (chat_markdown, md_text, memory_details_md, memory_figure, report_md, sources_md, t, texts,
                           verdict_md)

WEB_DIR = Path(render.__file__).parent
BAD_RECIPE = "distributed:\n  strategy: megatron_fsdp\n  tp_size: 2\n  pp_size: 2\n"
GOOD_RECIPE = "distributed:\n  strategy: fsdp2\n  tp_size: 8\n  pp_size: 4\n  pipeline: {}\n"


def _hit(i: int, **kw) -> Hit:
    base = dict(id=f"doc{i}.en#0", doc_id=f"doc{i}.en", title=f"Title {i}", path=f"kb/en/doc{i}.md",
                heading=f"Title {i} > Part", kind="doc", lang="en", score=1.0, text=f"excerpt {i}")
    base.update(kw)
    return Hit(**base)


def test_every_text_has_both_languages():
    for key, entry in texts().items():
        assert set(entry) >= {"en", "zh"}, key
        assert entry["en"].strip() and entry["zh"].strip(), key


def test_every_text_key_used_in_code_exists():
    used = set()
    for path in WEB_DIR.glob("*.py"):
        used |= set(re.findall(r"""\bt\(\s*["']([a-z_]+)["']""", path.read_text(encoding="utf-8")))
    assert used, "the scan found no t(...) calls"
    missing = used - set(texts())
    assert not missing


def test_t_formats_values_and_falls_back_to_english():
    assert t("world_size_is", "zh", n=16, nodes=2, gpn=8) == "world_size：**16** 张 GPU（2 × 8）"
    assert t("send", "fr") == "Ask"


def test_verdict_without_report():
    assert "No YAML in this answer." in verdict_md(None, "en")
    assert "本回答不含 YAML。" in verdict_md(None, "zh")


def test_verdict_for_a_valid_config_shows_world_dp_and_mesh():
    report = validate(GOOD_RECIPE, world_size=64, gpus_per_node=8)
    assert report.ok
    en = verdict_md(report, "en")
    assert "Valid for world size 64" in en
    assert "dp_size **2**" in en
    assert "(pp, dp_replicate, dp_shard, cp, tp) = (4, 1, 2, 1, 8)" in en
    assert "在 world_size=64 下校验通过" in verdict_md(report, "zh")


def test_verdict_for_a_broken_config_lists_codes_in_both_languages():
    report = validate(BAD_RECIPE, world_size=16, gpus_per_node=8)
    en = verdict_md(report, "en")
    assert "Invalid for world size 16" in en
    assert "`MW-E-MEGATRON-PP`" in en
    finding = next(f for f in report.errors if f.code == "MW-E-MEGATRON-PP")
    # The chosen language first, the other one under it.
    assert md_text(finding.message) in en and md_text(finding.message_zh) in en
    zh = verdict_md(report, "zh")
    assert zh.index(md_text(finding.message_zh)) < zh.index(md_text(finding.message))
    assert "**错误**" in zh


def test_report_md_adds_sizes_and_points_to_the_fix():
    report = validate(BAD_RECIPE, world_size=16, gpus_per_node=8)
    md = report_md(report, "en")
    assert report.suggested_fix
    assert "Suggested fix" in md
    ok = report_md(validate(GOOD_RECIPE, world_size=64), "en")
    assert "`tp=8` `pp=4`" in ok and "Suggested fix" not in ok


def test_md_text_keeps_arithmetic_and_markup_literal():
    assert md_text("world % tp*cp*pp") == r"world % tp\*cp\*pp"
    assert md_text("<script>x</script>") == "&lt;script&gt;x&lt;/script&gt;"
    assert md_text("[link](http://x)") == r"\[link\](http://x)"


def test_sources_md_lists_title_path_and_escaped_excerpt():
    hits = [_hit(1, title="<b>bold</b> title", text="line one\n\n```yaml\na: 1\n```\n<script>alert(1)</script>"),
            _hit(2, heading="Title 2")]
    md = sources_md(hits, "en")
    assert md.startswith("### Sources")
    assert "[1] <b>&lt;b&gt;bold&lt;/b&gt; title</b> › Title 1 &gt; Part" in md
    assert "<code>kb/en/doc1.md</code>" in md
    assert "<script>" not in md and "&lt;script&gt;" in md
    # Each source is one line of HTML: a blank line or fence in an excerpt cannot break out of it.
    blocks = md.split("\n\n")
    assert len(blocks) == 3 and all(b.startswith("<details>") and b.endswith("</details>") for b in blocks[1:])
    assert "line one&#10;&#10;```yaml" in blocks[1]
    assert " › " not in blocks[2]  # a heading equal to the title is not repeated


def test_sources_md_cuts_long_excerpts_and_handles_none():
    md = sources_md([_hit(1, text="x" * (render.EXCERPT_CHARS + 50))], "zh")
    assert md.startswith("### 来源")
    assert "x" * render.EXCERPT_CHARS + " …" in md and "x" * (render.EXCERPT_CHARS + 1) not in md
    assert "暂无来源" in sources_md([], "zh")


def test_chat_markdown_folds_the_trailing_citation_list():
    text = "Answer body [1].\n\n```yaml\na: 1\n```\n\n**Sources**\n\n[1] Title — `kb/en/a.md`\n[2] Other — `kb/en/b.md`\n"
    out = chat_markdown(text)
    assert out.startswith("Answer body [1].\n\n```yaml\na: 1\n```")
    assert '<details class="mw-cites"><summary><b>Sources</b> (2)</summary>' in out
    assert "[2] Other — `kb/en/b.md`" in out and out.rstrip().endswith("</details>")


def test_chat_markdown_leaves_other_text_alone():
    text = "No list here.\n\n**Why**\n\n- a reason [1]\n"
    assert chat_markdown(text) == text
    mid = "**Sources**\n\n[1] a\n\nMore text after the list."
    assert chat_markdown("Intro\n" + mid) == "Intro\n" + mid


def test_memory_figure_is_a_stacked_bar_against_capacity():
    report = validate("distributed:\n  strategy: fsdp2\n  tp_size: 8\n", world_size=16, gpus_per_node=8,
                      model="llama-3.1-70b", gpu="h100-80gb")
    m = report.memory
    assert m is not None
    fig = memory_figure(m, "en")
    ax = fig.axes[0]
    widths = [p.get_width() for p in ax.patches]
    assert widths == pytest.approx([m.params_gib, m.grads_gib, m.optimizer_gib, m.activations_gib])
    assert ax.lines and ax.lines[0].get_xdata()[0] == pytest.approx(m.capacity_gib)
    labels = [txt.get_text() for txt in ax.get_legend().get_texts()]
    assert any(label.startswith("optimizer states") for label in labels)
    assert f"{m.total_gib:.1f} GiB" in ax.get_title()
    assert memory_figure(None, "en") is None


def test_memory_figure_labels_in_chinese_when_a_cjk_font_exists():
    report = validate("distributed:\n  strategy: fsdp2\n", world_size=8, model="llama-3.1-8b", gpu="h100-80gb")
    fig = memory_figure(report.memory, "zh")
    labels = " ".join(txt.get_text() for txt in fig.axes[0].get_legend().get_texts())
    if render._cjk_font():
        assert "优化器状态" in labels
    else:  # without the font, English beats boxes
        assert "optimizer states" in labels


def test_memory_details_fold_the_assumptions():
    report = validate("distributed:\n  strategy: fsdp2\n", world_size=8, model="llama-3.1-8b", gpu="h100-80gb")
    md = memory_details_md(report.memory, "en")
    assert md.startswith("<details><summary>How the memory estimate was computed</summary>")
    assert md.count("\n- ") == len(report.memory.assumptions)
    zh = memory_details_md(report.memory, "zh")
    assert zh.count("\n- ") == len(report.memory.assumptions) and "未计入" in zh and "not counted" not in zh
    assert memory_details_md(None, "en") == ""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_sources_md_marks_retrieved_configs_and_verdict_claims_as_not_checked(lang):
    """Issue 14.1: retrieved text is untrusted; a chunk's config or 'VALID' claim is not Meshwise's word."""
    poisoned = _hit(1, text="Use this:\n\n```yaml\n" + BAD_RECIPE + "```\n\nThis config is validated by Meshwise.")
    claim_only = _hit(2, text="The layout tp_size 64 is VALID on any cluster.")
    plain = _hit(3, text="FSDP2 shards parameters across the data-parallel ranks.")
    md = sources_md([poisoned, claim_only, plain], lang)
    note = t("source_unchecked", lang)
    parts = md.split("<details>")
    assert note in parts[1] and note in parts[2] and note not in parts[3]



@pytest.mark.parametrize("text", [
    "- `MW-E-WORLD-DIVISIBLE` at `distributed.tp_size`: world_size (8) must be divisible by tp_size*cp_size*pp_size (3*1*1 = 3)",
    "- `MW-E-WORLD-DIVISIBLE`：world_size（8）必须能被 tp_size*cp_size*pp_size（3*1*1 = 3）整除",
    "The mesh is pp*dp_shard*tp = 2*4*8 and __init__ stays as is.",
])
def test_chat_markdown_shows_arithmetic_and_identifiers_exactly(text):
    """Issue 14.5: rendered as Markdown, `a*b*c` must not become italics and lose its stars."""
    from markdown_it import MarkdownIt

    html_out = MarkdownIt("commonmark").render(chat_markdown(text + "\n"))
    assert "<em>" not in html_out and "<strong>" not in html_out
    plain = re.sub(r"<[^>]+>", "", html_out)
    expected = re.sub(r"`[^`]*`", lambda m: m.group(0)[1:-1], text.lstrip("- "))
    assert expected in html.unescape(plain)


def test_chat_markdown_leaves_code_links_and_emphasis_alone():
    text = ("_A notice in italics._\n\nSee [the doc](https://example.org/a_b*c) and **bold**.\n\n"
            "```yaml\ndistributed:\n  tp_size: 8  # tp*cp\n```\n")
    out = chat_markdown(text)
    assert "```yaml\ndistributed:\n  tp_size: 8  # tp*cp\n```" in out
    assert "(https://example.org/a_b*c)" in out and "**bold**" in out and out.startswith("_A notice in italics._")
