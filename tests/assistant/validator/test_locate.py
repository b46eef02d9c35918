"""Finding places: the node a dotted path names, the parent section for an implied default, the
override argument that set or caused a finding."""
from __future__ import annotations

from dataclasses import dataclass

from assistant.validator import validate
from assistant.validator.locate import Location, compose_tree, locate, locate_report, node_mark, segments
from assistant.validator.report import Finding

RECIPE = """\
model:
  name: x
distributed:
  strategy: fsdp2
  tp_size: 8
  pp_size: 4
  pipeline:
    pp_schedule: interleaved_1f1b
step_scheduler:
  local_batch_size: 2
"""


@dataclass(frozen=True)
class Override:  # the shape launch-in's assistant/launch/ hands over: only .path/.argument/.index are read
    path: str
    value: object
    argument: str
    index: int


def _finding(path: str, message: str = "m", code: str = "MW-E-X") -> Finding:
    return Finding(code, "error", message, "m", path, "u")


def test_segments():
    assert segments("distributed.pipeline.pp_schedule") == ["distributed", "pipeline", "pp_schedule"]
    assert segments("a.b[2].c") == ["a", "b", 2, "c"]
    assert segments(("a", 1)) == ["a", 1]


def test_the_key_of_the_named_node():
    tree = compose_tree(RECIPE)
    assert node_mark(tree, "distributed.tp_size") == (5, 3)
    assert node_mark(tree, "distributed.pipeline.pp_schedule") == (8, 5)
    assert node_mark(tree, "step_scheduler.local_batch_size") == (10, 3)


def test_an_implied_default_stands_at_its_parent_section():
    tree = compose_tree(RECIPE)
    assert node_mark(tree, "distributed.cp_size") == (3, 1)  # not written: the distributed: key
    assert node_mark(tree, "distributed.pipeline.pp_microbatch_size") == (7, 3)
    assert node_mark(tree, "packed_sequence.packed_sequence_size") == (1, 1)  # no such section at all


def test_bare_mapping_and_lists_and_repeated_keys():
    assert node_mark(compose_tree("strategy: fsdp2\ntp_size: 3\n"), "distributed.tp_size") == (2, 1)
    tree = compose_tree("distributed:\n  activation_checkpointing_scope:\n    - mlp\n    - bogus\n")
    assert node_mark(tree, "distributed.activation_checkpointing_scope[1]") == (4, 7)
    # the loader keeps the last of a repeated key, so the finding is about that one
    assert node_mark(compose_tree("distributed:\n  tp_size: 2\n  tp_size: 3\n"), "distributed.tp_size") == (3, 3)


def test_not_yaml_stands_at_line_1():
    assert compose_tree("a: [") is None and node_mark(None, "distributed.tp_size") == (1, 1)


def test_override_of_the_key_or_a_section_above_names_the_argument():
    tree = compose_tree(RECIPE)
    later = Override("distributed.tp_size", 2, "--distributed.tp_size 2", 5)
    earlier = Override("distributed.tp_size", 3, "--distributed.tp_size=3", 2)
    loc = locate(_finding("distributed.tp_size"), tree, [later, earlier], "r.yaml")
    assert loc == Location("r.yaml", 5, 3, "--distributed.tp_size 2")  # the last one on the line wins
    section = Override("distributed", {"tp_size": 2}, "--distributed={tp_size: 2}", 1)
    assert locate(_finding("distributed.tp_size"), tree, [section]).argument == "--distributed={tp_size: 2}"


def test_a_sibling_override_names_the_finding_its_message_names():
    tree = compose_tree(RECIPE)
    pp = Override("distributed.pp_size", 2, "--distributed.pp_size 2", 1)
    divisible = _finding("distributed.tp_size", "world_size (4) must be divisible by tp_size*cp_size*pp_size (8*1*2 = 16)")
    assert locate(divisible, tree, [pp]).argument == "--distributed.pp_size 2"
    # a sibling the message does not name, or a key of another section, is not the cause
    assert locate(_finding("distributed.tp_size", "tp_size must divide heads"), tree, [pp]).argument is None
    other = Override("step_scheduler.pp_size", 2, "--step_scheduler.pp_size 2", 1)
    assert locate(divisible, tree, [other]).argument is None
    # an override path given as a sequence of keys works the same
    seq = Override(("distributed", "pp_size"), 2, "--distributed.pp_size 2", 1)  # type: ignore[arg-type]
    assert locate(divisible, tree, [seq]).argument == "--distributed.pp_size 2"


def test_locate_report_places_every_finding_of_a_real_report():
    report = validate(RECIPE, world_size=48)
    placed = locate_report(report, RECIPE, "r.yaml")
    assert [f for f, _ in placed] == [*report.errors, *report.warnings]
    by_code = {f.code: loc for f, loc in placed}
    assert by_code["MW-E-WORLD-DIVISIBLE"] == Location("r.yaml", 5, 3)
    assert locate_report(validate("distributed: {tp_size: 2}", world_size=8), "distributed: {tp_size: 2}") == []
