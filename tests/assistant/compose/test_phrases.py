"""The phrasebook agrees with the facts it words."""
from __future__ import annotations


def test_strategy_lacks_names_exactly_what_the_validator_refuses():
    """phrases.yaml only says which fact words each refusal; which features a strategy refuses is the
    validator's capability table (one fact, one place)."""
    from assistant.compose.phrases import Phrases
    from assistant.validator.capabilities import FEATURES, STRATEGY_NAMES, capabilities

    ph = Phrases.load()
    for strategy in STRATEGY_NAMES:
        said = {f for f in ph.strategy_lacks.get(strategy, {}) if f in FEATURES}
        assert said == set(capabilities(strategy).refusals), strategy


def test_a_cue_with_parts_needs_every_part():
    from assistant.compose.phrases import Phrases

    p = Phrases.load()
    assert "replicate_not_nodes" in p.cued("Is dp_replicate_size the number of nodes?")
    assert "replicate_not_nodes" in p.cued("dp_replicate_size 就是节点数吗")
    assert "replicate_not_nodes" not in p.cued("how many nodes do I need for 70B?")


def test_worked_quotient_needs_both_values():
    from assistant.compose.phrases import Phrases

    p = Phrases.load()
    assert p.worked_out("cp_per_rank", "en", {"seq_len": 131072, "cp_size": 4}) == \
        "With your 131072 tokens and cp_size 4: 32768 tokens per GPU."
    assert p.worked_out("cp_per_rank", "en", {"cp_size": 4}) is None


def test_worked_alternatives_fall_back_when_a_size_is_not_stated():
    from assistant.compose.phrases import Phrases

    # "I have 128k tokens" and no cp_size: the per-GPU length at the usual CP sizes
    assert Phrases.load().worked_out("cp_per_rank", "en", {"seq_len": 131072}) == \
        "With your 131072 tokens: 65536 tokens per GPU at cp_size 2, 32768 at 4, 16384 at 8."


def test_the_experts_rule_is_cued_by_its_own_words():
    from assistant.compose.phrases import Phrases

    p = Phrases.load()
    assert "ep_experts" in p.cued("Quick q: does ep_size have to divide the number of experts?")
    assert "ep_experts" in p.cued("ep_size 必须整除专家数吗")
    assert "ep_experts" not in p.cued("We have 64 experts; what ep_size fits 48 GPUs?")
