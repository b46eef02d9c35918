"""kb/code_facts.yaml: every CODE-FACTS point is stated by kb sections in both languages.

A point without a row, a row naming a section that does not exist, or a section that no longer
names the point's identifiers fails here, so the kb cannot silently drift from the code facts.
"""
from __future__ import annotations

import re

import pytest
import yaml

from assistant.config import KB_DIR, UPSTREAM_DIR

LANGS = ("en", "zh")
TABLE = yaml.safe_load((KB_DIR / "code_facts.yaml").read_text(encoding="utf-8"))["points"]
CODE_FACTS = UPSTREAM_DIR / "CODE-FACTS.md"
_HEADING = re.compile(r"^## (.+)$", re.M)
_POINT = re.compile(r"^(\d+)\. ", re.M)


def sections(doc: str, lang: str) -> dict[str, str]:
    """Heading -> text of that `## ` section (heading line included); "" -> the whole body."""
    text = (KB_DIR / lang / f"{doc}.md").read_text(encoding="utf-8")
    body = text[text.index("\n---\n", 4) + 5:]
    marks = list(_HEADING.finditer(body))
    out = {"": body}
    for m, nxt in zip(marks, marks[1:] + [None]):
        out[m.group(1).strip()] = body[m.start(): nxt.start() if nxt else len(body)]
    return out


def resolve(ref: str, lang: str) -> str:
    doc, _, prefix = ref.partition("#")
    path = KB_DIR / lang / f"{doc}.md"
    assert path.is_file(), f"{ref}: no kb/{lang}/{doc}.md"
    found = {h: t for h, t in sections(doc, lang).items() if h.startswith(prefix) and (h or not prefix)}
    assert len(found) == 1, f"{ref} ({lang}): {len(found)} sections match (headings must be unique by prefix)"
    return next(iter(found.values()))


def test_points_are_numbered_from_one_without_gaps():
    assert sorted(TABLE) == list(range(1, len(TABLE) + 1))


@pytest.mark.skipif(not CODE_FACTS.is_file(), reason="CODE-FACTS.md is not beside the repo")
def test_every_code_facts_point_has_a_row():
    points = {int(n) for n in _POINT.findall(CODE_FACTS.read_text(encoding="utf-8"))}
    assert points, "no numbered points read from CODE-FACTS.md"
    assert points - set(TABLE) == set(), f"CODE-FACTS points without kb sections: {sorted(points - set(TABLE))}"


@pytest.mark.parametrize("point", sorted(TABLE))
def test_each_point_is_stated_in_both_languages(point):
    row = TABLE[point]
    assert row.get("claim") and row.get("ids"), f"point {point}: needs a claim and ids"
    for lang in LANGS:
        refs = row.get(lang) or []
        assert refs, f"point {point}: no {lang} section"
        for ref in refs:
            text = resolve(ref, lang)
            missing = [i for i in row["ids"] if str(i) not in text]
            assert not missing, f"point {point}: {lang} {ref} does not name {missing}"


def test_a_section_that_drops_an_identifier_is_caught(monkeypatch):
    """The check can fail: the same row against a section that lacks one of its identifiers."""
    row = TABLE[19]
    text = resolve(row["en"][0], "en").replace("pp_schedule_csv", "the CSV key")
    assert [i for i in row["ids"] if str(i) not in text] == ["pp_schedule_csv"]
