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
