"""assistant/retrieve/evaluate.py: recall@k and MRR on base ids, and the labelled set itself."""
from __future__ import annotations

import yaml

from assistant.config import KB_DIR
from assistant.retrieve.evaluate import LabelledQuery, load_queries, score


def test_scores_count_the_first_expected_base_id():
    qs = [LabelledQuery("a", "en", "en", "q1", ("x",)), LabelledQuery("b", "zh", "zh", "q2", ("y", "z")),
          LabelledQuery("c", "zh", "mixed", "q3", ("w",))]
    ranked = {"q1": ["x", "y"], "q2": ["a", "b", "z"], "q3": ["a", "b", "c", "d", "e", "w"]}
    s = score(lambda q: ranked[q], qs, k=5)
    assert (s["en"].recall, s["en"].mrr) == (1.0, 1.0)
    assert s["zh"].recall == 0.5 and abs(s["zh"].mrr - (1 / 3) / 2) < 1e-9
    assert s["zh"].misses == ["c"] and s["all"].n == 3


def test_labelled_set_is_big_bilingual_and_names_catalog_ids():
    qs = load_queries()
    catalog = yaml.safe_load((KB_DIR / "catalog.yaml").read_text(encoding="utf-8"))
    ids = set(catalog["docs"]) | set(catalog["pitfalls"])
    assert len(qs) >= 80
    assert sum(q.lang == "zh" for q in qs) * 2 >= len(qs)
    assert {"zh", "mixed"} <= {q.style for q in qs if q.lang == "zh"}
    assert len({q.id for q in qs}) == len(qs)
    for q in qs:
        assert q.expected and set(q.expected) <= ids, q.id
