"""Recommendations and configs: the plan's layout, with the sizes an asked-for feature sets in the lead."""
from __future__ import annotations

from tests.assistant.compose.answers.conftest import lead


def test_config_for_hsdp_across_nodes_has_the_split_in_the_lead(ask):
    a = ask("2 machines with 4 GPUs each. Replicate between machines, shard within each machine: what should I put in the config?")
    first = lead(a.text)
    assert "dp_replicate_size 2" in first and "dp_shard = 4" in first
    assert {"config", "recommendation"} & set(a.asks) and "dp_replicate_size: 2" in a.text
