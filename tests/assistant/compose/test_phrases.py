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


def test_each_cued_fact_is_a_fact_of_the_phrasebook():
    from assistant.compose.phrases import Phrases
    from assistant.understand.cues import fact_cue_keys

    facts = Phrases.load().facts
    assert fact_cue_keys() and all(k in facts for k in fact_cue_keys())
