"""A fix as override flags and as the edited launch line; each flag reads back as the fixed value upstream."""
from __future__ import annotations

import shlex

from assistant.launch import apply_overrides, edited_line, fix_as_overrides, parse_launch_line, parse_overrides
from assistant.launch.as_launched import not_expressible


def test_flags_round_trip_through_upstream_reading():
    original = {"distributed": {"pp_size": 2, "dp_size": 4, "tp_size": 1}, "step_scheduler": {"local_batch_size": 8}}
    fixed = {"distributed": {"pp_size": 1, "dp_size": None, "tp_size": 1, "name": "2", "on": True, "mode": "1f1b",
                             "pipeline": {}}}
    flags = fix_as_overrides(original, fixed)
    assert "--distributed.pp_size 1" in flags and "--distributed.dp_size none" in flags
    overrides, _ = parse_overrides([w for f in flags for w in shlex.split(f)])
    assert apply_overrides(original, overrides)["distributed"] == fixed["distributed"]
    assert not fix_as_overrides(original, {"distributed": original["distributed"]})


def test_removed_keys_cannot_be_flags():
    assert not_expressible({"distributed": {"tp_size": 2, "x": 1}}, {"distributed": {"tp_size": 2}}) == ["distributed.x"]


def test_edited_line_replaces_in_place_and_appends():
    launch = parse_launch_line("automodel c.yaml --distributed.pp_size 2 --nproc-per-node 4 --distributed.tp_size=2")
    line = edited_line(launch, ["--distributed.pp_size 1", "--distributed.pipeline.pp_schedule 1f1b"])
    assert line == ("automodel c.yaml --distributed.pp_size 1 --nproc-per-node 4 --distributed.tp_size=2 "
                    "--distributed.pipeline.pp_schedule 1f1b")
