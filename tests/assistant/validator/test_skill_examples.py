"""The upstream skill's own YAML examples, validated at the world sizes they describe.

All its distributed examples are accepted by the code. What the code rejects is in its prose: the
schedule spellings it lists (interleaved_1f1b, looped_bfs, dfs, v_schedule, zero_bubble), and a
recipe made only of its packing fragment (no distributed: section at all).
"""
from __future__ import annotations

import re

import pytest
import yaml

from assistant.config import UPSTREAM_SKILL_DIR
from assistant.validator import validate

SKILL = UPSTREAM_SKILL_DIR / "SKILL.md"
pytestmark = pytest.mark.skipif(not SKILL.is_file(), reason="upstream skill not present")


def _blocks() -> list[str]:
    if not SKILL.is_file():
        return []
    return re.findall(r"```yaml\n(.*?)```", SKILL.read_text(encoding="utf-8"), flags=re.S)


# distinctive text of a block -> (world sizes it describes, warnings expected there)
EXPECTED = [
    ("tp_size: 8\n  pp_size: 4", [32, 64], set()),  # "TP plus PP for a large multi-node model"
    ("ep_size: 8\n  moe:", [8], set()),
    ("dp_size: none             # auto-calculated", [8], {"MW-W-PIPELINE-DROPPED", "MW-W-MOE-IGNORED"}),
    ("distributed:\n  strategy: fsdp2\n  tp_size: 1\n  cp_size: 1\n$", [8], set()),  # basic FSDP2
    ("tp_size: 4        # 2, 4, or 8", [8, 16], set()),
    ("pp_size: 2\n  pipeline:\n    pp_schedule: interleaved1f1b   #", [8], set()),
    ("dp_replicate_size: 2   # must divide dp_size", [16, 32], set()),
    ("distributed:\n  activation_checkpointing: true\n$", [8], set()),
    ("defer_fsdp_grad_sync: true   # default", [8], set()),
    ("checkpoint:\n  model_save_format", [8], set()),  # "8B model on 8 GPUs, PP=2 + DP=4"
    ("cp_size: 2   # or 4, 8", [8], set()),
    ("strategy: fsdp2\n  ep_size: 8\n  activation_checkpointing: true\n$", [8], set()),
    ("ignore_router_for_ac: false", [8], set()),
    ("sequence_parallel: false\n  activation_checkpointing: true", [8], set()),  # Qwen3-30B-A3B on 8 GPUs
]


def _find(marker: str) -> str:
    """The one block containing `marker` (a trailing $ anchors it at the block's end)."""
    if marker.endswith("$"):
        found = [b for b in _blocks() if b.endswith(marker[:-1])]
    else:
        found = [b for b in _blocks() if marker in b]
    assert len(found) == 1, (marker, len(found))
    return found[0]


@pytest.mark.parametrize("marker, worlds, warnings", EXPECTED, ids=[m[:30] for m, _, _ in EXPECTED])
def test_skill_example_is_accepted(marker, worlds, warnings):
    block = _find(marker)
    for world in worlds:
        r = validate(block, world_size=world)
        assert r.ok, (world, [e.message for e in r.errors])
        assert warnings <= set(r.codes)


def test_every_distributed_block_is_covered():
    covered = {_find(m) for m, _, _ in EXPECTED}
    distributed = [b for b in _blocks() if "distributed:" in b]
    assert set(distributed) <= covered


def test_packing_fragment_alone_is_not_a_runnable_recipe():
    block = next(b for b in _blocks() if "packed_sequence:" in b)
    r = validate(block, world_size=8)
    assert not r.ok and r.errors[0].code == "MW-E-DIST-NOT-MAPPING"
    # with a distributed section it runs; the doc's "local_batch_size must be 1" is not enforced by the code
    assert validate({**yaml.safe_load(block), "distributed": {"cp_size": 2}}, world_size=8).ok


def test_documented_schedule_list_against_torch():
    text = SKILL.read_text(encoding="utf-8")
    listed = re.findall(r"^- `([a-z0-9_]+)`", text.split("### Supported schedules", 1)[1].split("###", 1)[0], flags=re.M)
    assert listed == ["1f1b", "gpipe", "interleaved_1f1b", "looped_bfs", "dfs", "v_schedule", "zero_bubble"]
    verdicts = {name: validate({"pp_size": 2, "pipeline": {"pp_schedule": name}}, world_size=8).ok for name in listed}
    assert verdicts == {"1f1b": True, "gpipe": True, "interleaved_1f1b": False, "looped_bfs": False, "dfs": False,
                        "v_schedule": False, "zero_bubble": False}
