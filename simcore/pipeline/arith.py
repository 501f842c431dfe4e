"""Array arithmetic of the cost formulas: bounds against cached arrays, ceiling division.

Shared by the cost modules (:mod:`simcore.pipeline.costs`, :mod:`simcore.pipeline.transfer`), the
kernel's traffic and the estimator; :mod:`simcore.pipeline.costs` re-exports them.
"""

from __future__ import annotations

import functools
from typing import Any, TypeAlias

import numpy as np

Num: TypeAlias = Any  # a float or an ndarray of floats: the formulas broadcast


#: Shortest array that :func:`at_least` and :func:`at_most` compare with a filled array.
_FILLED_MIN_SIZE = 1024


# (A block meets some twenty bounds, in two sizes where the UB-path chips split it.)
@functools.lru_cache(maxsize=64)
def _filled(value: Any, dtype: np.dtype[Any], size: int) -> np.ndarray:
    """A read-only array of ``size`` copies of ``value`` (cached: blocks repeat one size)."""
    out = np.full(size, value, dtype=dtype)
    out.flags.writeable = False
    return out


def at_least(values: Any, bound: Any) -> Any:
    """``np.maximum(values, bound)`` for a scalar ``bound``, with the same values and dtype.

    numpy vectorizes the maximum of two contiguous arrays but not that of an array and a scalar
    (about 3x the instructions per element, numpy 2.4), so a long 1-D array meets a cached
    array of the bound instead.
    """
    if isinstance(values, np.ndarray) and values.ndim == 1 and values.size >= _FILLED_MIN_SIZE:
        return np.maximum(values, _filled(bound, np.result_type(values, bound), values.size))
    return np.maximum(values, bound)


def at_most(values: Any, bound: Any) -> Any:
    """``np.minimum(values, bound)`` for a scalar ``bound`` (see :func:`at_least`)."""
    if isinstance(values, np.ndarray) and values.ndim == 1 and values.size >= _FILLED_MIN_SIZE:
        return np.minimum(values, _filled(bound, np.result_type(values, bound), values.size))
    return np.minimum(values, bound)


def ceil_div(a: Num, b: Num) -> Num:
    """Integer ceiling division for ints or integer arrays.

    On arrays it goes through float64 (exact for operands below 2**31, which every tiling field
    is): numpy's integer division is several times slower than a float divide and ``ceil``, and
    the estimator calls this on millions of candidates.
    """
    if isinstance(a, np.ndarray) and a.dtype == np.int64 and type(b) is int and b > 0:
        # An integer array over a positive int (block sizes, fractal and C0 sizes, the search's
        # fields): floor((a + b - 1) / b) in int64, the same values in one to three times fewer
        # passes (numpy divides by a scalar with a multiply and shift; a power of two is a shift).
        if b & (b - 1) == 0:
            return (a + (b - 1)) >> (b.bit_length() - 1)
        return (a + (b - 1)) // b
    if type(b) is int and b > 0 and b & (b - 1) == 0 and _is_float_array(a):
        # A float array over a power of two (fractal rows, C0, bytes): the multiply by its
        # reciprocal is exact like the divide (a scaling by 2**-k of integers below 2**53),
        # at about half the cost; the estimator does this some 60 times a block.
        return np.ceil(a * (1.0 / b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        q = np.ceil(np.true_divide(a, b))
        # Float operands (the estimator's fields, held as float64) keep float: the result feeds
        # float arithmetic, and a cast to int64 and back would cost two passes for equal values.
        if np.result_type(a, b).kind == "f":
            return q
        return q.astype(np.int64)
    return -(-a // b)


def integer_array(x: Any) -> Any:
    """``x`` as an array of integers for :func:`ceil_div`'s formulas: float64 kept, else int64.

    The estimator holds its shapes as float64 arrays of integers far below 2**26, where every
    ceiling by a power of two is exact: keeping them float spares a cast to int64 and back and
    int64 arithmetic (SIMD in float64 only), with the same values. The simulator's and the
    bounds' integers (ints, lists, int arrays) become int64.
    """
    if _is_float_array(x):
        return x
    return np.asarray(x, dtype=np.int64)


def _is_float_array(a: Any) -> bool:
    """Whether ``a`` is an ndarray of float64."""
    return isinstance(a, np.ndarray) and a.dtype == np.float64


def align_up(a: Num, b: Num) -> Num:
    """Rounds ``a`` up to a multiple of ``b`` (ints or integer arrays)."""
    return ceil_div(a, b) * b
