"""Fact questions are answered by the fact, not a topic summary with a YAML."""
from __future__ import annotations

from answer_checks import shown_configs
from tests.assistant.compose.answers.conftest import lead


def test_a_field_default_is_the_first_sentence_and_no_config_is_shown(ask):
    # issue 11: "What does reshard_after_forward default to in moe:?" got an fsdp2 topic summary with a YAML
    a = ask("What does `reshard_after_forward` default to in `moe:`?")
    assert "reshard_after_forward" in lead(a.text) and "false" in lead(a.text).lower()
    assert shown_configs(a.text) == [] and a.judged is None and "fact" in a.asks


def test_aliases_are_answered_as_the_same_strategy(ask):
    a = ask("Are megatron-fsdp and mfsdp different strategies?")
    assert "same strategy" in lead(a.text) and shown_configs(a.text) == []


def test_a_recommendation_keeps_the_rest_data_parallel(ask):
    # issue 11: "pp_size 2 and the rest as data parallel" got a tp_size 4 added
    a = ask("13B model on 16 GPUs: pp_size 2 and the rest as data parallel. Give me the YAML.")
    configs = shown_configs(a.text)
    assert configs
    for cfg in configs:
        d = cfg.get("distributed", cfg)
        assert d.get("pp_size") == 2 and d.get("tp_size", 1) == 1 and d.get("cp_size", 1) == 1
