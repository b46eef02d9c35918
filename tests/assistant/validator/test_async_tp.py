"""enable_async_tensor_parallel, checked where upstream parallelizes the model: the dense FSDP2 path
needs sequence_parallel (components/distributed/parallelizer.py), the MoE path refuses it
(components/moe/parallelizer.py parallelize_model)."""
from __future__ import annotations

import pytest

from assistant.validator import validate


def _codes(dist: dict, world: int = 16) -> list[str]:
    return [f.code for f in validate({"distributed": {"strategy": "fsdp2", **dist}}, world_size=world).errors]


@pytest.mark.parametrize("dist, codes", [
    ({"tp_size": 4, "enable_async_tensor_parallel": True}, ["MW-E-ASYNC-TP-SP"]),
    ({"tp_size": 4, "enable_async_tensor_parallel": True, "sequence_parallel": True}, []),
    ({"tp_size": 1, "enable_async_tensor_parallel": True}, []),  # no TP: the check is never reached
    ({"tp_size": 2, "ep_size": 8, "enable_async_tensor_parallel": True, "sequence_parallel": True}, ["MW-E-ASYNC-TP-SP"]),
    ({"tp_size": 4, "enable_async_tensor_parallel": False}, []),
])
def test_async_tp_needs_sequence_parallel_and_no_ep(dist, codes):
    assert _codes(dist) == codes


def test_the_fix_for_async_tp_passes():
    r = validate({"distributed": {"strategy": "fsdp2", "tp_size": 4, "enable_async_tensor_parallel": True}}, world_size=16)
    assert r.suggested_fix and validate(r.suggested_fix, world_size=16).ok


def test_the_message_names_the_upstream_error_in_both_languages():
    f = validate({"distributed": {"strategy": "fsdp2", "tp_size": 4, "enable_async_tensor_parallel": True}},
                 world_size=16).errors[0]
    assert "requires sequence_parallel=True" in f.message and "requires sequence_parallel=True" in f.message_zh
    assert f.upstream.endswith("parallelizer.py fsdp2_strategy_parallelize")
