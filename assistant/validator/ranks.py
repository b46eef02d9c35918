"""Where every rank sits: the rank -> coordinate map of a validated layout, and its process groups.

Upstream builds the device mesh with `init_device_mesh(mesh_shape, mesh_dim_names)` (mesh_utils.py), which
lays the global ranks out row-major over the dims in the order given: `(pp, dp_replicate, dp_shard, cp, tp)`
for fsdp2, `(dp, cp, tp)` for megatron_fsdp. A group along some axes is every rank that agrees on all the
other coordinates, listed row-major over the group's axes (what slicing `mesh[...]` and `_flatten()` give).

The MoE mesh is built per pipeline stage: the stage's non-PP axes `(dp_replicate, dp_shard, cp, tp)` are
flattened (row-major) and unflattened to `(ep_shard, ep)`. Because pp is the outermost dim, a stage's ranks
are one contiguous block, so the MoE mesh is itself row-major over `(pp, ep_shard, ep)` on the same ranks.

Pure and torch-free; the picture (ui/plots/mesh.py) and the tests read it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator

from assistant.validator.report import Derived

# mesh_utils registers these flattened axes on the fsdp2 root mesh; megatron_fsdp only dp_cp (when cp > 1).
FSDP2_FLATTENED = {"dp": ("dp_replicate", "dp_shard"), "dp_shard_cp": ("dp_shard", "cp"),
                   "dp_cp": ("dp_replicate", "dp_shard", "cp")}
MEGATRON_FLATTENED = {"dp_cp": ("dp", "cp")}
MOE_DIMS = ("pp", "ep_shard", "ep")


@dataclass(frozen=True)
class RankMesh:
    """A named mesh over ranks 0..size-1, row-major over `dims` (the last dim varies fastest)."""

    dims: tuple[str, ...]
    shape: tuple[int, ...]
    flattened: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (name, source dims) as upstream registers them

    def __post_init__(self) -> None:
        if len(self.dims) != len(self.shape) or any(n < 1 for n in self.shape):
            raise ValueError(f"bad mesh {self.dims} {self.shape}")

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def axes(self, axis: str) -> tuple[str, ...]:
        """A mesh dim, or a flattened axis (dp, dp_cp, ...) -> the mesh dims it spans."""
        if axis in self.dims:
            return (axis,)
        for name, source in self.flattened:
            if name == axis:
                return source
        raise KeyError(f"no axis {axis!r} in mesh {self.dims}")

    def extent(self, axis: str) -> int:
        return math.prod(self.shape[self.dims.index(d)] for d in self.axes(axis))

    def coords(self, rank: int) -> tuple[int, ...]:
        if not 0 <= rank < self.size:
            raise IndexError(f"rank {rank} outside 0..{self.size - 1}")
        out = []
        for n in reversed(self.shape):
            rank, c = divmod(rank, n)
            out.append(c)
        return tuple(reversed(out))

    def rank(self, coords: tuple[int, ...]) -> int:
        r = 0
        for c, n in zip(coords, self.shape, strict=True):
            if not 0 <= c < n:
                raise IndexError(f"coordinate {coords} outside {self.shape}")
            r = r * n + c
        return r

    def group(self, axis: str, rank: int) -> tuple[int, ...]:
        """The ranks of `rank`'s group along `axis`, in the group's own (row-major) order."""
        spans = self.axes(axis)
        base = list(self.coords(rank))
        idx = [self.dims.index(d) for d in spans]
        members = []
        for local in range(self.extent(axis)):
            for i in reversed(idx):
                local, base[i] = divmod(local, self.shape[i])
            members.append(self.rank(tuple(base)))
        return tuple(members)

    def group_index(self, axis: str, rank: int) -> int:
        """Which group along `axis` holds `rank`: row-major over the other dims (upstream's creation order)."""
        spans = set(self.axes(axis))
        g = 0
        for d, n, c in zip(self.dims, self.shape, self.coords(rank)):
            if d not in spans:
                g = g * n + c
        return g

    def group_count(self, axis: str) -> int:
        return self.size // self.extent(axis)

    def groups(self, axis: str) -> Iterator[tuple[int, ...]]:
        """Every group along `axis`, in upstream's creation order (lazy: a big world has many)."""
        seen = -1
        for r in range(self.size):
            g = self.group_index(axis, r)
            if g > seen:
                seen = g
                yield self.group(axis, r)


def rank_mesh(d: Derived) -> RankMesh:
    """The root device mesh of a layout. DDP builds none upstream; it is drawn as one dp axis over the world."""
    if d.strategy == "fsdp2":
        return RankMesh(d.mesh_dim_names, d.mesh_shape, tuple(FSDP2_FLATTENED.items()))
    if d.strategy == "megatron_fsdp":
        flat = tuple(MEGATRON_FLATTENED.items()) if d.cp_size > 1 else ()
        return RankMesh(d.mesh_dim_names, d.mesh_shape, flat)
    return RankMesh(("dp",), (d.world_size,))


def moe_mesh(d: Derived) -> RankMesh | None:
    """The expert mesh `(ep_shard, ep)` of every pipeline stage, as one mesh over `(pp, ep_shard, ep)`."""
    if d.moe_mesh_shape is None:
        return None
    return RankMesh(MOE_DIMS, (d.pp_size, *d.moe_mesh_shape))


def node_of(rank: int, gpus_per_node: int) -> int:
    return rank // gpus_per_node


def crosses_node(members: tuple[int, ...], gpus_per_node: int) -> bool:
    return len({node_of(r, gpus_per_node) for r in members}) > 1


def colour_axes(d: Derived) -> tuple[str, ...]:
    """The axes a picture can colour by, most telling first (sizes above 1 before sizes of 1)."""
    m = rank_mesh(d)
    order = [a for a in ("tp", "pp", "dp_shard", "dp_replicate", "cp", "dp") if a in m.dims]
    return tuple(sorted(order, key=lambda a: m.extent(a) == 1))


@dataclass(frozen=True)
class NodeCrossings:
    """How many groups of a contiguous-block axis (tp of the root mesh, ep of the MoE mesh) span two nodes."""

    crossing: int
    total: int
    first: tuple[int, ...] | None  # the ranks of the first group that crosses


def block_crossings(block: int, world: int, gpus_per_node: int) -> NodeCrossings:
    """Groups [k*block, (k+1)*block) over `world` ranks: counted per period of lcm(block, gpus_per_node) ranks,
    so a world of a million ranks costs a few dozen steps, not a million."""
    total = world // block
    per_period = math.lcm(block, gpus_per_node) // block
    crossing_in = [k for k in range(min(per_period, total))
                   if node_of(k * block, gpus_per_node) != node_of((k + 1) * block - 1, gpus_per_node)]
    full, rest = divmod(total, per_period)
    crossing = full * len(crossing_in) + sum(1 for k in crossing_in if k < rest)
    first = tuple(range(crossing_in[0] * block, (crossing_in[0] + 1) * block)) if crossing_in else None
    return NodeCrossings(crossing, total, first)


def tp_crossings(d: Derived, gpus_per_node: int) -> NodeCrossings:
    # tp is the innermost mesh dim for fsdp2 and megatron_fsdp: its groups are contiguous blocks.
    return block_crossings(d.tp_size, d.world_size, gpus_per_node)


def ep_crossings(d: Derived, gpus_per_node: int) -> NodeCrossings | None:
    # ep is the innermost dim of the MoE mesh: contiguous blocks too.
    return block_crossings(d.ep_size, d.world_size, gpus_per_node) if d.moe_mesh_shape else None
