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


def gather(x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``x[idx]`` for a 1-D array ``x`` and indices ``idx`` into it (as from ``np.flatnonzero``).

    ``take`` with ``mode="wrap"``: the same values as indexing for indices in range (the only
    ones the estimator forms: positions in arrays of the candidates), in about three quarters of
    the instructions of ``take``'s default mode (which checks each index and raises) and two
    thirds of those of indexing (callgrind, numpy 2.4: 10.6 against 14.0 and 14.6 instructions
    per element). Gathers are some 15 % of the estimator's instructions.
    """
    return x.take(idx, mode="wrap")


def sub(x: Any, idx: np.ndarray) -> Any:
    """``x`` at the candidates ``idx`` (per-candidate arrays), or ``x`` itself (a scalar)."""
    if isinstance(x, np.ndarray) and x.ndim:
        if x.ndim == 1 and idx.dtype.kind in "iu":
            # (The terms call this some 350 times a block.)
            return gather(x, idx)
        return x[idx]
    return x


def select(w: Any, x: Any, y: Any, w_not: Any) -> Any:
    """``np.where(w, x, y)`` for weights ``w`` of 0.0 / 1.0 (``w_not``: ``1 - w``), x and y finite.

    ``x * w + y * w_not``: ``x + 0.0`` is x and ``0.0 + y`` is y, bit for bit; three operations
    of about a third of the instructions of one ``np.where`` (callgrind, numpy 2.4).
    """
    return x * w + y * w_not


def raise_at(x: Any, idx: np.ndarray, value: Any, shape: tuple[int, ...]) -> np.ndarray:
    """``x`` as a full array with ``max(x, value)`` at the candidates ``idx``.

    The terms priced on a subset of the candidates raise a path there. ``x`` may be a scalar, a
    broadcast or an array another name still holds, so the result is always a fresh copy.
    """
    out = np.array(np.broadcast_to(x, shape), dtype=np.float64)
    out[idx] = np.maximum(sub(out, idx), value)
    return out


def divides(a: Any, b: Any) -> Any:
    """``a % b == 0`` for integer-valued arrays, through a float division.

    Exact for operands below 2**26 (the quotient's fraction is at least 1 / b, far above the
    rounding of a float64), and several times cheaper than numpy's float or integer modulo.
    """
    return np.floor(a / b) * b == a


def gathered(
    parts: list[tuple[Any, dict[str, Any]]], key: str, shape: tuple[int, ...]
) -> tuple[np.ndarray, ...]:
    """The tuple of arrays ``res[key]`` of the estimator core's parts, put back in place.

    ``parts``: (indices, result) per part, or one (None, result) for the whole ``shape``.
    """
    if parts[0][0] is None:
        return tuple(np.broadcast_to(x, shape) for x in parts[0][1][key])
    out = tuple(np.empty(shape) for _ in parts[0][1][key])
    for idx, res in parts:
        for whole, x in zip(out, res[key], strict=True):
            whole[idx] = x
    return out
