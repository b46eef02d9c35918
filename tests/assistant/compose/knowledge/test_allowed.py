"""The values one field may take with the rest of the layout kept, judged by the validator itself."""
from __future__ import annotations

from assistant.compose.knowledge.allowed import allowed_values
from assistant.validator import validate


def test_pp_sizes_that_fit_beside_tp_8_on_40_gpus():
    # world_size must be divisible by tp*cp*pp: with tp 8 on 40 GPUs only pp 1 and 5 leave a whole dp
    found = allowed_values("pp_size", {"distributed": {"strategy": "fsdp2", "tp_size": 8, "pp_size": 2}}, 40,
                           validate, gpus_per_node=8)
    assert found.values == (1, 5) and found.current == 2


def test_microbatch_sizes_divide_the_local_batch_and_leave_a_microbatch_per_stage():
    # train_ft.py asserts lbs // mbs >= pp_size, autopipeline.py that mbs divides lbs: 6 at pp 2 -> 1, 2, 3
    recipe = {"distributed": {"strategy": "fsdp2", "tp_size": 8, "pp_size": 2, "pipeline": {"pp_microbatch_size": 4}},
              "step_scheduler": {"local_batch_size": 6, "global_batch_size": 12}}
    assert allowed_values("pp_microbatch_size", recipe, 16, validate, gpus_per_node=8).values == (1, 2, 3)


def test_replica_counts_divide_dp_and_stay_below_it():
    found = allowed_values("dp_replicate_size", {"distributed": {"strategy": "fsdp2", "dp_replicate_size": 5}}, 24,
                           validate, gpus_per_node=8)
    assert found.values == (1, 2, 3, 4, 6, 8, 12)


def test_the_nearest_global_batch_sizes_either_side_of_the_one_given():
    recipe = {"distributed": {"strategy": "fsdp2", "tp_size": 2},
              "step_scheduler": {"global_batch_size": 100, "local_batch_size": 4}}
    found = allowed_values("global_batch_size", recipe, 16, validate, dp_size=8, gpus_per_node=8)
    assert found.values == (96, 128) and found.step == 32


def test_a_field_it_cannot_vary_is_none():
    assert allowed_values("pp_schedule", {"distributed": {}}, 8, validate) is None
