"""Capability questions and "good idea?" verdicts (issue 18, t10 capability)."""
from __future__ import annotations

from tests.assistant.compose.answers.conftest import lead


def test_a_negative_question_is_confirmed(ask):
    a = ask("Is it true megatron_fsdp can't do pp?")
    assert lead(a.text).startswith("Yes, that's true: `megatron_fsdp` cannot do") and "fsdp2" in a.text
    assert "`pp_size: 1` is valid" not in a.text


def test_a_wrong_negative_claim_is_contradicted(ask):
    a = ask("Is it true megatron_fsdp can't do tp?")
    assert lead(a.text).startswith("No: `megatron_fsdp` does support")


def test_good_idea_says_tp_in_the_node_is_fine_beside_the_memory_no(ask):
    a = ask("Llama 3.1 70B full fine-tune on one node of 8x A100 40GB, fsdp2 with tp_size 8. "
            "Is this a reasonable layout?")
    assert "MW-E-MEMORY" in lead(a.text) and "TP 8 inside the node is fine" in a.text
