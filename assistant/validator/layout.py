"""One type for a parallel layout: the sizes, what follows from them, and the rules they must obey.

In the spirit of torchtitan's `ParallelDims`: a frozen dataclass of plain ints whose derived sizes
are properties and whose checks live in one method. The validator's rules replay upstream's handling
of odd raw values (bools, floats, strings) and then build a Layout; the planner, the memory
estimate, the fixer and the composer read sizes from it instead of recomputing them.

    lay = Layout.of("fsdp2", 16, tp=2, ep=8)
    lay.dp, lay.dp_shard, lay.ep_shard, lay.mesh_shape   # 8, 8, 2, (1, 1, 8, 1, 2)
    lay.findings()                                        # [] when upstream builds this mesh
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping

from assistant.defaults import DEFAULT_GPUS_PER_NODE
from assistant.validator.capabilities import SIZE_FEATURES, capabilities
from assistant.validator.derive import times
from assistant.validator.findings import describe, make_finding
from assistant.validator.report import Derived, Finding, ValidationReport, quick_init

FSDP2_DIMS = ("pp", "dp_replicate", "dp_shard", "cp", "tp")
MEGATRON_DIMS = ("dp", "cp", "tp")
_DIM_NAMES = {"fsdp2": FSDP2_DIMS, "megatron_fsdp": MEGATRON_DIMS, "ddp": ()}  # ddp builds no mesh


@quick_init
@dataclass(frozen=True)
class Layout:
    strategy: str  # canonical: fsdp2, megatron_fsdp, ddp
    world_size: int
    gpus_per_node: int = DEFAULT_GPUS_PER_NODE
    tp: int = 1
    pp: int = 1
    cp: int = 1
    ep: int = 1
    dp: int = 1  # resolved: the explicit dp_size, else what upstream infers (ddp: the world)
    dp_replicate: int = 1
    dp_explicit: bool = False  # dp was stated (upstream then uses it as is, without checking the world)

    @classmethod
    def of(cls, strategy: str, world_size: int, *, gpus_per_node: int = DEFAULT_GPUS_PER_NODE, tp: int = 1,
           pp: int = 1, cp: int = 1, ep: int = 1, dp: int | None = None, dp_replicate: int = 1) -> Layout:
        """A layout with dp resolved as upstream does: an explicit dp is kept, otherwise
        world / (tp*cp*pp) (megatron: world / (tp*cp); ddp: the world). A world that does not divide
        keeps the floor (at least 1); findings() reports it."""
        name = strategy if strategy in _DIM_NAMES else capabilities(strategy).strategy
        if name == "ddp":
            resolved = world_size
        elif dp is not None:
            resolved = dp
        else:
            resolved = max(world_size // (tp * cp * (pp if name == "fsdp2" else 1)), 1)  # = non_dp
        return cls(name, world_size, gpus_per_node, tp, pp, cp, ep, resolved, dp_replicate, dp is not None)

    def with_sizes(self, **changes: Any) -> Layout:
        """The same layout with some fields changed and dp resolved again (kept when it was explicit)."""
        fields = {k: getattr(self, k) for k in ("strategy", "world_size", "gpus_per_node", "tp", "pp", "cp", "ep",
                                                 "dp_replicate")}
        fields["dp"] = self.dp if self.dp_explicit else None
        fields.update(changes)
        return Layout.of(fields.pop("strategy"), fields.pop("world_size"), **fields)

    # --- derived sizes -------------------------------------------------------------------------

    @property
    def non_dp(self) -> int:
        """The sizes dp is inferred around: tp*cp*pp (megatron_fsdp: tp*cp; ddp builds no mesh: 1)."""
        if self.strategy == "fsdp2":
            return self.tp * self.cp * self.pp
        return self.tp * self.cp if self.strategy == "megatron_fsdp" else 1

    @property
    def non_pp(self) -> int:
        """dp*cp*tp: the ranks of one pipeline stage, which the expert mesh splits into (ep_shard, ep)."""
        return self.dp * self.cp * self.tp

    @property
    def dp_shard(self) -> int:
        return 1 if self.strategy == "ddp" else self.dp // self.dp_replicate

    @property
    def ep_shard(self) -> int | None:
        """mesh_utils: non_pp / ep (1 when ep is at least non_pp); None without expert parallelism."""
        if self.strategy != "fsdp2" or self.ep <= 1:
            return None
        return self.non_pp // self.ep if self.ep < self.non_pp else 1

    @property
    def mesh_dim_names(self) -> tuple[str, ...]:
        return _DIM_NAMES[self.strategy]

    @property
    def mesh_shape(self) -> tuple[int, ...]:
        if self.strategy == "fsdp2":
            return (self.pp, self.dp_replicate, self.dp_shard, self.cp, self.tp)
        return (self.dp, self.cp, self.tp) if self.strategy == "megatron_fsdp" else ()

    @property
    def moe_mesh_shape(self) -> tuple[int, int] | None:
        """(ep_shard, ep), one per pipeline stage."""
        shard = self.ep_shard
        return (shard, self.ep) if shard is not None else None

    @property
    def features(self) -> frozenset[str]:
        """The parallel features in use: tp, pp, cp, ep (size > 1) and hsdp (dp_replicate > 1)."""
        return frozenset(f for f in SIZE_FEATURES if self._size(f) > 1)

    @property
    def node_replicas(self) -> int | None:
        """HSDP's usual layout: one sharding group per node (dp_shard = gpus_per_node / (tp*cp)),
        replicated across nodes; the dp_replicate that gives it, None when it is not a valid one."""
        per_node = self.gpus_per_node // (self.tp * self.cp) if self.gpus_per_node % (self.tp * self.cp) == 0 else 0
        if self.strategy != "fsdp2" or per_node < 1 or self.dp % per_node:
            return None
        replicas = self.dp // per_node
        return replicas if 1 < replicas < self.dp else None

    def _size(self, feature: str) -> int:
        return self.dp_replicate if feature == "hsdp" else getattr(self, feature)

    def grad_acc_steps(self, global_batch_size: int, local_batch_size: int) -> int | None:
        """StepScheduler's quotient, None when the batches do not divide (dp counts data-parallel ranks only)."""
        denom = local_batch_size * self.dp
        return global_batch_size // denom if denom > 0 and global_batch_size % denom == 0 else None

    def local_batch_for(self, global_batch_size: int, grad_acc_steps: int) -> int | None:
        """The local_batch_size that makes `grad_acc_steps` of StepScheduler's quotient: global / (steps * dp);
        None when no whole size does."""
        denom = grad_acc_steps * self.dp
        return global_batch_size // denom if denom > 0 and global_batch_size % denom == 0 else None

    def global_batch_for(self, local_batch_size: int, grad_acc_steps: int) -> int:
        """The global_batch_size that makes `grad_acc_steps`: steps * local * dp."""
        return grad_acc_steps * local_batch_size * self.dp

    def derived(self, grad_acc_steps: int | None = None) -> Derived:
        ddp = self.strategy == "ddp"
        ep_shard = self.ep_shard
        return Derived(
            self.strategy, self.world_size, self.tp, self.pp, self.cp, self.ep, self.dp,
            self.world_size if ddp else self.dp_replicate,  # ddp: every rank holds a full replica
            self.dp_shard, ep_shard, self.mesh_dim_names, self.mesh_shape,
            (ep_shard, self.ep) if ep_shard is not None else None, grad_acc_steps,
        )

    @classmethod
    def from_report(cls, report: ValidationReport) -> Layout | None:
        """The sizes of a validated mesh, when the report built one (None for an invalid layout)."""
        if report.derived is None:
            return None
        return cls.from_derived(report.derived, report.gpus_per_node or DEFAULT_GPUS_PER_NODE)

    @classmethod
    def from_derived(cls, d: Derived, gpus_per_node: int = DEFAULT_GPUS_PER_NODE) -> Layout:
        """The layout of a validated mesh (its dp fills the world, so it counts as inferred)."""
        dpr = 1 if d.strategy == "ddp" else d.dp_replicate_size
        return cls(d.strategy, d.world_size, gpus_per_node, d.tp_size, d.pp_size, d.cp_size, d.ep_size, d.dp_size, dpr)

    # --- the rules -----------------------------------------------------------------------------

    def findings(self, stated: Mapping[str, Any] | None = None) -> list[Finding]:
        """Upstream's mesh checks in upstream order (it stops at its first error; so do these
        groups), then Meshwise's topology advice for a layout that passes. `stated`: the raw sizes
        as written, when the caller has them, for the HSDP test and the messages."""
        return self.strategy_errors(stated) or self.mesh_errors() or self.advice()

    def strategy_errors(self, stated: Mapping[str, Any] | None = None) -> list[Finding]:
        """_create_device_meshes: HSDP outside FSDP2, then the sizes the strategy refuses."""
        refusals = capabilities(self.strategy).refusals
        if not refusals:  # fsdp2
            return []
        raw_dpr = stated.get("dp_replicate_size") if stated is not None else self.dp_replicate
        if "hsdp" in refusals and raw_dpr is not None and raw_dpr > 1:
            return [make_finding("MW-E-HSDP-STRATEGY", "distributed.dp_replicate_size", dpr=describe(raw_dpr),
                                 strategy=self.strategy)]
        out = []
        for feature in ("tp", "pp", "cp", "ep"):
            code = refusals.get(feature)
            v = self._size(feature)
            if code is None or v <= 1:
                continue
            key = SIZE_FEATURES[feature]
            values = {"MW-E-MEGATRON-PP": {"pp": v}, "MW-E-MEGATRON-EP": {"ep": v}}.get(code, {"key": key, "got": v})
            out.append(make_finding(code, f"distributed.{key}", **values))
        return out

    def mesh_errors(self) -> list[Finding]:
        """_infer_dp_size and the mesh builders' divisibility checks; an explicit dp must fill the world."""
        failure = self._mesh_failure()
        return [failure()] if failure is not None else []

    @property
    def mesh_ok(self) -> bool:
        """The same checks as `mesh_errors`, without writing the message: the planner asks thousands of times."""
        return self._mesh_failure() is None

    def _mesh_failure(self) -> Callable[[], Finding] | None:
        """The first mesh check that fails, as the finding it makes (built only when asked for)."""
        if self.strategy == "ddp":
            return None
        world, tp, cp, pp, dp, dpr, ep = self.world_size, self.tp, self.cp, self.pp, self.dp, self.dp_replicate, self.ep
        megatron = self.strategy == "megatron_fsdp"
        factors, expr = ((tp, cp), "tp_size*cp_size") if megatron else ((tp, cp, pp), "tp_size*cp_size*pp_size")
        non_dp = self.non_dp
        if not self.dp_explicit and world % non_dp:
            return lambda: make_finding("MW-E-WORLD-DIVISIBLE", _world_path(factors, expr), world=world, expr=expr,
                                        factors=times(*factors), product=non_dp)
        if megatron:
            if tp * cp * dp != world:
                return lambda: _mismatch(dp, world, "dp_size*cp_size*tp_size", (dp, cp, tp), non_dp)
            return None
        if dp % dpr:
            return lambda: make_finding("MW-E-DP-REPLICATE-DIVIDES", "distributed.dp_replicate_size", dp=dp, dpr=dpr,
                                        rem=dp % dpr)
        if dpr >= dp and dpr != 1:
            return lambda: make_finding("MW-E-DP-REPLICATE-LT-DP", "distributed.dp_replicate_size", dp=dp, dpr=dpr)
        non_pp = self.non_pp
        if non_pp % ep:
            return lambda: make_finding("MW-E-EP-DIVIDES", "distributed.ep_size", dp=dp, cp=cp, tp=tp, non_pp=non_pp,
                                        ep=ep, rem=non_pp % ep)
        if pp * dp * cp * tp != world:
            return lambda: _mismatch(dp, world, "pp_size*dp_size*cp_size*tp_size", (pp, dp, cp, tp), non_dp)
        return None

    def advice(self) -> list[Finding]:
        """Meshwise's topology warnings: TP groups that span nodes, a partly used node."""
        out = []
        tp, gpn, world = self.tp, self.gpus_per_node, self.world_size
        if tp > 1 and (tp > gpn or gpn % tp != 0):
            rel, rel_zh = ("is larger than", "大于") if tp > gpn else ("does not divide", "不能整除")
            out.append(make_finding("MW-W-TP-CROSS-NODE", "distributed.tp_size", tp=tp, gpn=gpn, relation=rel,
                                    relation_zh=rel_zh))
        # a job smaller than one node is a common, deliberate choice; a partial node in a multi-node job is not
        if world > gpn and world % gpn != 0:
            out.append(make_finding("MW-W-WORLD-NOT-NODE-MULTIPLE", "", world=world, gpn=gpn, rem=world % gpn))
        return out


def _world_path(factors: tuple[int, ...], expr: str) -> str:
    # point at the largest non-dp factor: the one a user most likely got wrong
    names = [n.strip() for n in expr.split("*")]
    i = max(range(len(factors)), key=lambda j: factors[j])
    return f"distributed.{names[i]}"


def _mismatch(dp: int, world: int, expr: str, factors: tuple[int, ...], non_dp: int) -> Finding:
    product = math.prod(factors)
    # what upstream does with it (CODE-FACTS 4): torch refuses a bigger mesh when it is built; a
    # smaller one passes start-up, and the ranks outside it break the run later
    if product > world:
        rel = (f"{product - world} ranks more than the world: torch's init_device_mesh refuses it at start-up "
               f"(\"Mesh should not be bigger than default world size\")")
        rel_zh = (f"比 world 多出 {product - world} 个 rank：torch 的 init_device_mesh 在启动时就会拒绝"
                  f"（\"Mesh should not be bigger than default world size\"）")
    elif product == 1:
        rel = (f"an all-ones mesh: start-up passes, but only one rank is in it and the other {world - 1} of "
               f"{world} ranks sit idle, so the job trains on one GPU")
        rel_zh = f"全 1 的 mesh：启动能通过，但 mesh 里只有一个 rank，其余 {world - 1}/{world} 个 rank 闲置，实际只用一张 GPU 训练"
    else:
        rel = (f"which leaves {world - product} of {world} ranks outside the mesh: start-up accepts it, but those "
               f"ranks fail the first time they use the mesh, so the run does not work")
        rel_zh = f"有 {world - product}/{world} 个 rank 落在 mesh 之外：启动时不会报错，但这些 rank 第一次使用 mesh 时就会失败，训练无法进行"
    inferred, inferred_zh = "", ""
    if world % non_dp == 0:
        inferred = f" (world_size / {non_dp} = {world // non_dp})"
        inferred_zh = f"（world_size / {non_dp} = {world // non_dp}）"
    return make_finding("MW-E-DP-MISMATCH", "distributed.dp_size", dp=dp, world=world, expr=expr,
                        factors=times(*factors), product=product, relation=rel, relation_zh=rel_zh,
                        inferred=inferred, inferred_zh=inferred_zh)
