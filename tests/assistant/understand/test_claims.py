"""What a claim says a strategy lacks (claims.Claim.denied): the polarity a capability yes/no answers."""
from __future__ import annotations

import pytest

from assistant.understand.claims import Claim


@pytest.mark.parametrize("text, denied", [
    ("Is it true ddp can't do tp? we want tp 2 on 4 GPUs", {"tp"}),  # a size stated does not undo the claim
    ("megatron_fsdp doesn't support tensor parallelism at all, right? so tp_size has to stay 1", {"tp"}),
    ("So megatron_fsdp has no tensor parallelism, right?", {"tp"}),
    ("Is it true megatron_fsdp can't do pp or cp?", {"pp", "cp"}),  # a chain shares its denial
    ("tp isn't supported on ddp, right?", {"tp"}),  # the denial after the name
    ("ddp and megatron_fsdp don't support pp, right?", {"pp"}),
    ("ddp 是不是不支持 tp？我们想在 4 卡上开 tp 2", {"tp"}),
    ("megatron_fsdp 完全不支持张量并行，对吧？", {"tp"}),
    ("pp 是不是不能开", {"pp"}),
    ("megatron_fsdp 是不是没法开张量并行？", {"tp"}),
    ("megatron_fsdp cannot combine with tensor parallel at all", {"tp"}),
])
def test_a_denial_names_the_features_claimed_missing(text, denied):
    assert Claim(text).denied == denied


@pytest.mark.parametrize("text", [
    "pp works with megatron_fsdp, right?",  # a positive claim
    "can megatron_fsdp do tp?",
    "does ddp support tp 2 on 4 GPUs?",
    "megatron_fsdp 能开 cp 吗",
    "ep_size must divide dp_size * cp_size, right?",  # the names of a formula are no features
    "We don't use pp or ep.",  # the user's own exclusion claims nothing of a strategy
    "megatron_fsdp without pp: is tp 4 on 8 GPUs valid?",
])
def test_no_denial_claims_nothing_missing(text):
    assert Claim(text).denied == frozenset()


def test_the_strategies_named_keep_their_order_and_megatron_fsdp_is_not_fsdp2():
    assert Claim("we run fsdp2 today; if we switch to ddp, do we keep cp?").strategies_named == ("fsdp2", "ddp")
    assert Claim("megatron fsdp or FSDP2?").strategies_named == ("megatron_fsdp", "fsdp2")
