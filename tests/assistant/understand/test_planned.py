"""The asks a question is answered by, planned after understanding (understand/planned.py)."""
from __future__ import annotations

import pytest

from assistant.understand import understand
from assistant.understand.planned import planned_asks
from assistant.understand.query import Params, Query


@pytest.mark.parametrize("question, kinds", [
    # a fact the field reference states stays a fact beside stated sizes (it was turned into a second verdict)
    ("Two things: (1) is ep 8 fine on 16 GPUs with tp 2, (2) what's the default for reshard_after_forward in moe?",
     ["verdict", "fact"]),
    ("does pp_schedule interleaved1f1b need layers_per_stage, and is pp 2 ok on 8 gpus", ["fact", "verdict"]),
    # other work that names the domain in passing is out of scope as a whole
    ("帮我写个周报，内容就是这周调了调 FSDP2", ["out_of_scope"]),
])
def test_planned_asks_keep_each_ask_its_kind(question, kinds):
    q = understand(question)
    assert [a.kind for a in planned_asks(q)] == kinds


def test_a_hand_built_query_without_asks_is_asked_what_its_intent_means():
    assert [a.kind for a in planned_asks(Query(text="What is HSDP?", lang="en", intent="concept", params=Params()))] == ["fact"]
