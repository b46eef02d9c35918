"""Per-question memos: a pure reader that one question calls several times with the same arguments
computes once.

Why: reading one question calls `extract_params` about 9 times (the whole question, then each clause
again from the asks, the sizes dropped, the sizes asked about), on 5 distinct texts; the repeats were
a fifth of the understand stage. The engine calls `forget()` when a question starts, so nothing one
question computed answers the next (a warm benchmark's timed round is not served by its untimed one);
outside the engine each memo is bounded and starts over when full.
"""
from __future__ import annotations

import functools
from typing import Callable, Hashable, TypeVar

MEMO_MAX = 256  # entries per memo; one question needs a few dozen
F = TypeVar("F", bound=Callable)
_MEMOS: list[dict] = []


def per_question(key: Callable[..., Hashable] | None = None) -> Callable[[F], F]:
    """Memoise a pure function for the question being answered. `key(*args)` names a call (default:
    the arguments, which must be hashable); a key built from an object's id keeps the arguments
    alive in the memo, so the id cannot be reused by another object while the entry stands."""

    def wrap(fn: F) -> F:
        memo: dict = {}
        _MEMOS.append(memo)

        @functools.wraps(fn)
        def memoised(*args):
            k = key(*args) if key is not None else args
            hit = memo.get(k)
            if hit is not None:
                return hit[1]
            value = fn(*args)
            if len(memo) >= MEMO_MAX:
                memo.clear()
            memo[k] = (args, value)
            return value

        memoised.cache_clear = memo.clear  # type: ignore[attr-defined]
        return memoised  # type: ignore[return-value]

    return wrap


def forget() -> None:
    """A new question starts: every memo starts empty."""
    for memo in _MEMOS:
        memo.clear()
