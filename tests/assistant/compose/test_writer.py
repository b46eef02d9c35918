"""The pen: what is already in an answer's body is not written again, and a heading appears only
over new content (two asks can reach the same module)."""
from __future__ import annotations

from assistant.compose.citations import Citer
from assistant.compose.phrases import Phrases
from assistant.compose.writer import Writer


def _writer() -> Writer:
    return Writer("en", Phrases.load(), Citer([], "en"))


def test_a_repeated_section_is_written_once():
    w = _writer()
    for _ in range(2):
        w.para("_Assumed:_ 8 GPUs.")
        w.bullets(["dp_size = 8 / 2 = 4"], heading="sizing")
    text = w.render()
    assert text.count("_Assumed:_ 8 GPUs.") == 1
    assert text.count("dp_size = 8 / 2 = 4") == 1
    assert text.count("**") == 2  # one heading


def test_a_heading_with_nothing_new_under_it_is_dropped():
    w = _writer()
    w.code("distributed:\n  strategy: fsdp2\n")
    w.heading("yaml", " — again")
    w.code("distributed:\n  strategy: fsdp2\n")
    w.bullets(["new line"], heading="why")
    text = w.render()
    assert "again" not in text
    assert text.count("```yaml") == 1
    assert "new line" in text


def test_new_items_of_a_repeated_list_are_kept():
    w = _writer()
    w.bullets(["a", "b"], heading="why")
    w.bullets(["b", "c"], heading="why")
    lines = w.render().splitlines()
    assert [l for l in lines if l.startswith("- ")] == ["- a", "- b", "- c"]


def test_no_budget_keeps_every_bullet():
    w = _writer()
    w.bullets([f"fact {i} " + "y" * 80 for i in range(6)])
    assert w.render().count("- fact") == 6
