"""Cube cycles of one MMAD: a fixed overhead plus one fractal time per 16 x 16 x C0 fractal.

The simulator (:meth:`simcore.pipeline.costs.Costs.mmad_cycles`) and the estimator both call
these, with the fractal counts of the block (rows / 16, columns / 16, K / C0, each rounded up).
"""

from __future__ import annotations

from typing import Any


def mmad_cycles(overhead: float, fractal_cycles: float, fr: Any, fc: Any, fk: Any) -> Any:
    """``overhead + fr x fc x fk x fractal_cycles`` (in that order of operations)."""
    return overhead + fr * fc * fk * fractal_cycles


def mmad_k_cycles(overhead: float, k_fractal_cycles: Any, fk: Any) -> Any:
    """:func:`mmad_cycles` with ``fr x fc x fractal_cycles`` given (one per block type).

    The estimator prices a full and a K-tail step of each block type from one product; the
    values are those of :func:`mmad_cycles` (products of whole fractal counts and a fractal time
    of 1, 2 or 4 cycles are exact in float64 whichever way they are grouped).
    """
    return overhead + k_fractal_cycles * fk
