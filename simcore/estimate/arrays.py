"""Array helpers of the estimator's terms: ceiling division, subsets, raising a path on some.

The terms price numpy arrays of candidate tilings; some apply to a subset of the candidates only
(given as an index array) and raise the makespan there. These helpers keep that bookkeeping in
one place.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: A path length that never wins a maximum (finite, so that multiplying it by 0 stays 0).
NEVER = -1e30


def cdiv(a: Any, b: Any) -> Any:
    """Integer ceiling division, kept in float64 on arrays (Python ints stay ints).

    :func:`simcore.pipeline.costs.ceil_div` without its cast back to int64: the values are the same
    (every operand is an integer below 2**31, exact in float64), the cast is a third of its
    cost, and float operands make the mixed arithmetic after it cheaper.
    """
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.ceil(np.true_divide(a, b))
    return -(-a // b)


def sub(x: Any, idx: np.ndarray) -> Any:
    """``x`` at the candidates ``idx`` (per-candidate arrays), or ``x`` itself (a scalar)."""
    if isinstance(x, np.ndarray) and x.ndim:
        if x.ndim == 1 and idx.dtype.kind in "iu":
            # ``take`` gathers in about two thirds of the time of indexing (numpy 2.4); the
            # terms call this some 350 times a block.
            return x.take(idx)
        return x[idx]
    return x


def raise_at(x: Any, idx: np.ndarray, value: Any, shape: tuple[int, ...]) -> np.ndarray:
    """``x`` as a full array with ``max(x, value)`` at the candidates ``idx``.

    The terms priced on a subset of the candidates raise a path there. ``x`` may be a scalar, a
    broadcast or an array another name still holds, so the result is always a fresh copy.
    """
    out = np.array(np.broadcast_to(x, shape), dtype=np.float64)
    out[idx] = np.maximum(out[idx], value)
    return out


def divides(a: Any, b: Any) -> Any:
    """``a % b == 0`` for integer-valued arrays, through a float division.

    Exact for operands below 2**26 (the quotient's fraction is at least 1 / b, far above the
    rounding of a float64), and several times cheaper than numpy's float or integer modulo.
    """
    return np.floor(a / b) * b == a


def select_bits(cond: Any) -> Any:
    """The mask of :func:`select` for a boolean array ``cond``: every bit set where it holds.

    None where ``cond`` is not a boolean array (:func:`select` then falls back to ``np.where``).
    """
    if not isinstance(cond, np.ndarray) or cond.dtype != np.bool_:
        return None
    return np.negative(cond.view(np.int8), dtype=np.int64)


def select(cond: Any, x: Any, y: Any, bits: Any = None) -> Any:
    """``np.where(cond, x, y)``, bit for bit, as integer bit operations on float64 arrays.

    ``np.where`` branches per element (about 10 instructions per element under callgrind, 8x
    an addition); ``y ^ ((x ^ y) & mask)`` on the floats' bits takes three vectorized passes
    and picks the same bits. ``bits`` (:func:`select_bits` of ``cond``) shares the mask between
    the selects of one condition; without it the mask is made here (an integer cast and a
    negation, still fewer instructions than the ``np.where``). Falls back to ``np.where``
    where an operand is not float64 or neither has the condition's shape (the floors' integer
    fields, scalars).
    """
    xa, ya = np.asarray(x), np.asarray(y)
    if (
        not isinstance(cond, np.ndarray)
        or cond.dtype != np.bool_
        or xa.dtype != np.float64
        or ya.dtype != np.float64
        or (xa.shape != cond.shape and ya.shape != cond.shape)
        or xa.shape not in ((), cond.shape)
        or ya.shape not in ((), cond.shape)
    ):
        return np.where(cond, x, y)
    yi = ya.view(np.int64)
    out = np.bitwise_xor(xa.view(np.int64), yi)
    np.bitwise_and(out, select_bits(cond) if bits is None else bits, out=out)
    np.bitwise_xor(out, yi, out=out)
    return out.view(np.float64)
