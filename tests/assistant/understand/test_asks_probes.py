"""Asks read from the labelled clauses of paraphrases_probes.yaml (issue 18) and the "or" side of a
verdict: what a stated layout IS, and whether to set a size upstream derives."""
from __future__ import annotations

import pytest

from assistant.understand import understand


@pytest.fixture(scope="module")
def read(mw_assistant):
    def _read(q: str, **kw):
        return understand(q, encoders=mw_assistant._clause_encoders, **kw)
    return _read


def test_is_that_hsdp_asks_the_kind_of_layout_not_a_verdict(read):
    q = read("16 GPUs, fsdp2, tp_size 2, dp_replicate_size 2. Is that HSDP?")
    assert [(a.kind, a.target) for a in q.asks] == [("quantity", "layout_kind")]


@pytest.mark.parametrize("question", [
    "pp_size 4 with 30 layers on Llama, is that going to work or do I need to set layers_per_stage?",
    "Qwen3-8B 36 层，40 卡，pp_size 5。能直接跑吗，还是必须自己设 layers_per_stage？",
])
def test_the_or_side_of_a_verdict_on_layers_per_stage_gets_the_split(read, question):
    # the verdict first, then the split upstream makes itself (pipelining/functional.py)
    asks = [(a.kind, a.target) for a in read(question).asks]
    assert asks[0][0] == "verdict" and ("quantity", "layers_per_stage") in asks, asks
