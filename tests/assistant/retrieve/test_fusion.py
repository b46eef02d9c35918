"""assistant/retrieve/fusion.py: reciprocal rank fusion."""
from __future__ import annotations

import pytest

from assistant.retrieve.fusion import rrf


def test_agreement_beats_a_single_first_place():
    fused = dict(rrf([["a", "b", "c"], ["b", "c", "a"], ["b", "x"]]))
    assert max(fused, key=fused.get) == "b"
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61 + 1 / 61)


def test_weights_and_ties():
    assert [k for k, _ in rrf([["a"], ["b"]])] == ["a", "b"]  # tie: first seen first
    assert [k for k, _ in rrf([["a"], ["b"]], weights=[1.0, 2.0])] == ["b", "a"]
    with pytest.raises(ValueError):
        rrf([["a"]], weights=[1.0, 2.0])
