"""Per-question defaults and limits: what a question that leaves a size out is assumed to mean, and
the largest sizes any entry point accepts. One module, so the CLI, web, Slack, engine, planner and
validator agree (they used to hold 8, 1_000_000 and 1 << 20 in separate files)."""
from __future__ import annotations

DEFAULT_GPUS_PER_NODE = 8  # the common server (DGX/HGX): 8 GPUs behind one NVLink switch
ASSUMED_GPU = "h100-80gb"  # the GPU a memory answer assumes when the user names none
DEFAULT_WORLD_SIZE = 8  # one such node, when neither a world size nor a node count is given
MAX_WORLD_SIZE = 1 << 20  # far beyond any cluster; keeps the arithmetic and the fixer's search bounded
MAX_GPUS_PER_NODE = 64  # more than any server holds; a larger value is a typo for a world size
