"""The error-messages docs: one section per message, headed by its text, so a pasted error finds its
section by its own words (compose/answers/from_kb.explain_error), in both languages."""
from __future__ import annotations

import re
from pathlib import Path

from assistant.compose.answers.from_kb import _quotes_error
from assistant.validator.upstream_errors import match_upstream_error

KB = Path(__file__).resolve().parents[2] / "kb"


def quoted_headings(lang: str) -> list[str]:
    text = (KB / lang / "error-messages.md").read_text(encoding="utf-8")
    return [q for h in re.findall(r"^## (.+)$", text, re.M) for q in re.findall(r'"([^"]+)"', h)]


def test_english_and_chinese_sections_quote_the_same_messages():
    assert quoted_headings("en") == quoted_headings("zh")


def test_every_literal_message_finds_its_section_from_a_printed_error():
    # headings with placeholders ((N), 'X') are the rule-raised messages, matched by the rule tables;
    # a literal one is how a message no rule raises is found, so it must be long enough to find
    literal = [q for q in quoted_headings("en")
               if not re.search(r"\b[A-Z]\b|'X'|\[\.\.\.\]", q) and not match_upstream_error(q)]
    assert len(literal) >= 10
    for quoted in literal:
        assert _quotes_error(f'## "{quoted}"', f"[rank0]: SomeError: {quoted} (in the model)"), quoted


def test_runtime_errors_no_rule_raises_have_sections():
    quoted = " ".join(quoted_headings("en"))
    for message in ("src_shard_order is not None and dst_shard_order is not None", "object has no attribute 'model'",
                    "Invalid mesh_dim_names", "not found in mesh_dim_names", "Hugging Face tp plan is not supported for",
                    "pipeline_config requires pp_size > 1", "Unknown parallel style"):
        assert message in quoted, message
