"""cued_facts reads each fact's one-part cues with one pattern: it must find exactly what checking
every cue's parts one by one finds."""
from pathlib import Path

import yaml

from assistant.understand.fact_cues import _fact_cues, answers_itself, cued_facts, fact_roles

ROOT = Path(__file__).resolve().parents[3]


def _one_by_one(text: str) -> tuple[str, ...]:
    q = text.lower()
    return tuple(k for k, cues in _fact_cues().items() if any(all(p in q for p in c.split(" + ")) for c in cues))


def _texts() -> list[str]:
    out = [c.replace(" + ", " and ") for cues in _fact_cues().values() for c in cues]  # each cue, and its parts joined
    out += [p for cues in _fact_cues().values() for c in cues if " + " in c for p in c.split(" + ")]  # one part alone
    for path in sorted((ROOT / "evals" / "cases").glob("t10_*.yaml"))[:6]:
        for case in yaml.safe_load(path.read_text(encoding="utf-8")).get("cases") or []:
            out.append(str(case.get("question", "")))
    return out


def test_cued_facts_finds_what_each_cue_checked_alone_finds():
    texts = _texts()
    assert len(texts) > 300
    assert [cued_facts(t) for t in texts] == [_one_by_one(t) for t in texts]


def test_a_cue_with_parts_needs_every_part():
    key, cue = next((k, c) for k, cues in _fact_cues().items() for c in cues if " + " in c)
    first, *rest = cue.split(" + ")
    assert key in cued_facts(" ... ".join([first, *rest]))
    if not any(first in c and " + " not in c for c in _fact_cues()[key]):
        assert key not in cued_facts(first)


def test_an_answering_fact_answers_itself():
    key = fact_roles().answering[0]
    cue = _fact_cues()[key][0].replace(" + ", " ")
    assert answers_itself(cue)
    assert not answers_itself("zzz qqq")
