"""A node or GPU count as a launcher reads it, and the WorldSize it makes (en + zh errors).

Shared by every reader of the launch context (world.py, ci.py, launch_line.py, sbatch.py), so none of
them imports another for it.
"""
from __future__ import annotations

from typing import Any

from assistant.defaults import MAX_WORLD_SIZE
from assistant.launch.types import LaunchError, WorldSize


def count(value: Any, what: str, what_zh: str) -> int:
    """A positive whole number of nodes or GPUs, or a LaunchError saying which one is bad."""
    if isinstance(value, str):
        text = value.strip()
        if ":" in text:
            lo, _, hi = text.partition(":")
            if lo.strip() != hi.strip():
                raise LaunchError(
                    f"{what} {value!r} is an elastic range (MIN:MAX): the world size is only known when the job runs; "
                    "give a fixed count (--nnodes N) or --world-size",
                    f"{what_zh} {value!r} 是弹性范围（MIN:MAX）：world size 只有在作业运行时才确定；"
                    "请给出固定数目（--nnodes N）或 --world-size")
            text = lo.strip()
        value = int(text) if text.isdigit() else value
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_WORLD_SIZE:
        raise LaunchError(f"{what} must be a positive whole number, got {value!r}",
                          f"{what_zh} 必须是正整数，实际为 {value!r}")
    return value


def make(nodes: int | None, gpus_per_node: int | None, source: str, source_zh: str,
         world_size: int | None = None) -> WorldSize:
    world = world_size if world_size is not None else (nodes or 1) * (gpus_per_node or 1)
    return WorldSize(world_size=world, gpus_per_node=gpus_per_node, nodes=nodes, source=source, source_zh=source_zh)


def gpus_in(text: str) -> str:
    """The count in a GPU spec: "8" -> "8", "h100:8" -> "8" (Slurm's --gpus-per-node / SLURM_GPUS_PER_NODE)."""
    return text.rsplit(":", 1)[-1].strip()
