"""Quantities are the validator's derived sizes of the user's layout, each the result first."""
from __future__ import annotations

from answer_checks import shown_configs
from tests.assistant.compose.answers.conftest import lead


def test_every_number_asked_is_in_the_lead(ask):
    # issue 11: three numbers asked, one answered
    a = ask("What are dp_size and the ep_shard size, and how many gradient-accumulation steps with global 64 / "
            "local 2? 32 GPUs, tp_size 2, ep_size 4.")
    first = lead(a.text)
    # dp = 32 / 2 = 16; ep_shard = 16*1*2 / 4 = 8; grad acc = 64 / (2 * 16) = 2
    assert "dp_size = 16" in first and "ep_shard = 8" in first and "Gradient accumulation = 2" in first
    assert a.asks.count("quantity") >= 2 and shown_configs(a.text) == []
    assert a.judged["step_scheduler"] == {"global_batch_size": 64, "local_batch_size": 2}


def test_a_failing_layout_has_a_verdict_not_quantities(ask):
    a = ask("On 24 GPUs with tp_size 8 and pp_size 2, what is dp_size?")
    assert lead(a.text).startswith("No: ") and not a.validation.ok
