"""The one dotted-path setter of recipe mappings."""
from __future__ import annotations

from assistant.validator.paths import put_path


def test_put_path_makes_and_replaces_mappings_along_the_way():
    r = {"distributed": {"strategy": "fsdp2", "pipeline": None}}
    put_path(r, "distributed.pipeline.pp_schedule", "1f1b")
    put_path(r, "step_scheduler.local_batch_size", 4)
    put_path(r, "distributed.tp_size", 2)
    assert r == {"distributed": {"strategy": "fsdp2", "pipeline": {"pp_schedule": "1f1b"}, "tp_size": 2},
                 "step_scheduler": {"local_batch_size": 4}}
