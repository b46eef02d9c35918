"""Size arithmetic shared by the rules and the fixer: degrees, dp inference, mesh shapes, grad-acc."""
from __future__ import annotations

import math

from assistant.validator.report import Derived

FSDP2_DIMS = ("pp", "dp_replicate", "dp_shard", "cp", "tp")
MEGATRON_DIMS = ("dp", "cp", "tp")


def degree(value: object) -> int:
    """mesh_utils._degree: anything that is not a positive int counts as 1 (True is an int: 1)."""
    return int(value) if isinstance(value, int) and value > 0 else 1


def is_positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def is_nan(value: object) -> bool:
    return isinstance(value, float) and math.isnan(value)


def times(*factors: int) -> str:
    return "*".join(str(f) for f in factors)


_DIVISOR_SCAN = 1 << 12  # trial division bound: sizes are small; anything huge gets only its small divisors


def divisors(n: int) -> list[int]:
    """Positive divisors of n, ascending (n >= 1). For huge n, only those from divisors up to 4096."""
    small, large = [], []
    i = 1
    while i * i <= n and i <= _DIVISOR_SCAN:
        if n % i == 0:
            small.append(i)
            if i != n // i:
                large.append(n // i)
        i += 1
    return sorted(set(small + large))


def log_ratio(a: int | float, b: int | float) -> float:
    """|log(a/b)| for positive sizes, safe for huge ints."""
    return abs(math.log(max(a, 1)) - math.log(max(b, 1)))


def grad_acc_steps(gbs: int, lbs: int, dp: int) -> int:
    return gbs // (lbs * dp)


def fsdp2_derived(world: int, tp: int, cp: int, pp: int, ep: int, dp: int, dpr: int) -> Derived:
    non_pp = dp * cp * tp
    ep_shard = (non_pp // ep if ep < non_pp else 1) if ep > 1 else None
    dp_shard = dp // dpr
    return Derived(
        strategy="fsdp2", world_size=world, tp_size=tp, pp_size=pp, cp_size=cp, ep_size=ep,
        dp_size=dp, dp_replicate_size=dpr, dp_shard_size=dp_shard, ep_shard_size=ep_shard,
        mesh_dim_names=FSDP2_DIMS, mesh_shape=(pp, dpr, dp_shard, cp, tp),
        moe_mesh_shape=(ep_shard, ep) if ep_shard is not None else None, grad_acc_steps=None,
    )


def megatron_derived(world: int, tp: int, cp: int, dp: int) -> Derived:
    return Derived(
        strategy="megatron_fsdp", world_size=world, tp_size=tp, pp_size=1, cp_size=cp, ep_size=1,
        dp_size=dp, dp_replicate_size=1, dp_shard_size=dp, ep_shard_size=None,
        mesh_dim_names=MEGATRON_DIMS, mesh_shape=(dp, cp, tp), moe_mesh_shape=None, grad_acc_steps=None,
    )


def ddp_derived(world: int) -> Derived:
    # DDP builds no device mesh: every rank holds a full replica, dp is the world.
    return Derived(
        strategy="ddp", world_size=world, tp_size=1, pp_size=1, cp_size=1, ep_size=1,
        dp_size=world, dp_replicate_size=world, dp_shard_size=1, ep_shard_size=None,
        mesh_dim_names=(), mesh_shape=(), moe_mesh_shape=None, grad_acc_steps=None,
    )
