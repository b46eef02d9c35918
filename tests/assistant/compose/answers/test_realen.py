"""Multi-ask posts (issue 18, t9 realen): the smallest world a failing layout needs, a recommendation
asked instead of a layout the verdict warns about (and the numbers asked of it), and a recommendation
that is the layout a verdict already judged, said once."""
from __future__ import annotations

from tests.assistant.compose.answers.conftest import body


def test_the_smallest_world_of_a_layout_that_does_not_fit(ask):
    a = ask("4 GPUs, fsdp2, tp_size 2, pp_size 4 fails with world_size (4) must be divisible by "
            "(tp_size * cp_size * pp_size) (2 * 1 * 4 = 8). How many GPUs do I need at minimum for tp 2 + pp 4?")
    assert "At least 8 GPUs" in a.text


def test_instead_of_a_warned_layout_the_tp_stays_in_the_node(ask):
    a = ask("Llama 3.1 70B, 4 nodes x 8 H100.\n\n```yaml\ndistributed:\n  strategy: fsdp2\n  tp_size: 16\n```\n\n"
            "Is tp_size 16 across two nodes a bad idea? What would you use instead on 32 GPUs, and what dp_size "
            "does that give?")
    assert "tp_size: 8\n" in a.text and "  tp_size: 16\n" not in a.text  # the config shown is the replacement
    assert "dp_size = 2:" not in a.text  # the user's tp 16 layout is not the one asked about
    assert "**Fields that matter**" not in body(a.text)  # the verdict said the why; the replacement is brief


def test_a_recommendation_that_is_the_judged_layout_is_said_once(ask):
    a = ask("Diffusion-style run but same distributed section as the LLM recipes, 2 nodes x 8 GPUs:\n\n```yaml\n"
            "distributed:\n  strategy: fsdp2\n  tp_size: 1\n  cp_size: 2\n  dp_replicate_size: 2\n```\n\n"
            "The docs say FSDP2 mean-reduces over the flattened dp_shard_cp mesh when CP is on. With HSDP on top, is "
            "this combination even valid? What are dp_size and dp_shard_size? Or should I just drop dp_replicate_size?")
    assert "```yaml" not in body(a.text)


def test_a_layout_tried_in_the_story_is_the_one_diagnosed(ask):
    a = ask("2 nodes x 8 GPUs, 13B model:\n\n```yaml\ndistributed:\n  strategy: fsdp2\n  tp_size: 2\n"
            "  dp_replicate_size: 2\n```\n\nWhat's dp_shard_size with this? I also tried dp_replicate_size: 8 to cut "
            "all-gathers and got a ValueError, what am I missing?")
    assert "With `dp_replicate_size: 8`: No:" in a.text
