"""Small arithmetic on raw values shared by the rules and the fixer (the layout sizes live in layout.py)."""
from __future__ import annotations

import math


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
