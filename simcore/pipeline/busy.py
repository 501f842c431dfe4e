"""The busy totals of a core's pipes that its base block fixes: cube, L1->L0 and drains.

A core of ``rows x cols`` cut into ``baseM x baseN`` blocks over K in ``baseK`` steps issues the
same MMADs, L1->L0 loads and drains whatever its steps, L1 depths, iterate order and L0 flags
(seed 004, the kernel of :mod:`simcore.pipeline.traffic`): each block runs ``k_iter`` K steps
(``k_iter - 1`` full ones of baseK, the K tail last) and is drained once. Blocks come in four types
(full or tail row x full or tail column), so each total is a sum over the types of the type's
block count times one block's work, priced with :class:`simcore.pipeline.costs.Costs`.

These are the totals both the per-operand floors of the estimator
(:mod:`simcore.estimate.bounds`) and the search's group bounds (:mod:`tiler.bounds`) start from,
written once here. The simulator's M, MTE1 and FIX busy cycles of the core are these sums
(``tests/simcore/pipeline/test_busy.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from simcore.pipeline.costs import Costs, ceil_div

__all__ = [
    "BlockSteps",
    "block_steps",
    "block_types",
    "compute_busy",
    "compute_busy_of",
    "cube_busy",
    "drain_busy",
]


@dataclass(frozen=True, slots=True)
class BlockSteps:
    """One block type's K steps, priced once.

    Its extent and count on the core (``rows``, ``cols``, ``count``), then the MTE1 cycles of a
    step's A and B slices and the step's MMAD cycles: at a full step of baseK (``la``, ``lb``,
    ``mm``) and at the K tail (``la_t``, ``lb_t``, ``mm_t``).
    """

    rows: Any
    cols: Any
    count: Any
    la: Any
    lb: Any
    mm: Any
    la_t: Any
    lb_t: Any
    mm_t: Any


def block_steps(
    c: Costs, k: int, rows: Any, cols: Any, base_m: Any, base_n: Any, base_k: Any
) -> list[BlockSteps]:
    """Each block type's (:func:`block_types`) full-K and K-tail step costs, priced once.

    For callers that need the busy totals and more of the same figures (the search's compute
    chain): :func:`compute_busy_of` gives the totals from them.
    """
    k_iter = ceil_div(k, base_k)
    k_t = k - (k_iter - 1) * base_k
    return [
        BlockSteps(
            r,
            col,
            count,
            c.la_cycles(r, base_k),
            c.lb_cycles(col, base_k),
            c.mmad_cycles(r, col, base_k),
            c.la_cycles(r, k_t),
            c.lb_cycles(col, k_t),
            c.mmad_cycles(r, col, k_t),
        )
        for r, col, count in block_types(rows, cols, base_m, base_n)
    ]


def compute_busy_of(steps: list[BlockSteps], k_iter: Any) -> tuple[Any, Any]:
    """:func:`compute_busy` from :func:`block_steps` (the same sums, term by term)."""
    cube: Any = 0.0
    mte1: Any = 0.0
    for b in steps:
        cube = cube + b.count * ((k_iter - 1) * b.mm + b.mm_t)
        mte1 = mte1 + b.count * ((k_iter - 1) * (b.la + b.lb) + b.la_t + b.lb_t)
    return cube, mte1


def block_types(rows: Any, cols: Any, base_m: Any, base_n: Any) -> list[tuple[Any, Any, Any]]:
    """``(rows, cols, count)`` of the full / tail block types of a ``rows x cols`` core.

    In the order full row x full column, full row x tail column, tail row x full column, tail
    row x tail column (the order the sums below run in; the corner block's count is 1). A type
    with no block has a count of 0.
    """
    m_iter, n_iter = ceil_div(rows, base_m), ceil_div(cols, base_n)
    rm_t = rows - (m_iter - 1) * base_m
    cn_t = cols - (n_iter - 1) * base_n
    out = []
    for r, nr in ((base_m, m_iter - 1), (rm_t, 1)):
        for col, nc in ((base_n, n_iter - 1), (cn_t, 1)):
            out.append((r, col, nr * nc))
    return out


def compute_busy(
    c: Costs, k: int, rows: Any, cols: Any, base_m: Any, base_n: Any, base_k: Any
) -> tuple[Any, Any]:
    """The cube's (M) and L1->L0's (MTE1) busy cycles of a core, fixed by its base block.

    Every block runs ``k_iter - 1`` full K steps and the K tail; each step loads the block's A
    (L1->L0A) and B (L1->L0B) slices and runs one MMAD (:meth:`Costs.la_cycles`,
    :meth:`Costs.lb_cycles`, :meth:`Costs.mmad_cycles`).

    Args:
        c: The costs of the problem on its chip and data path.
        k: The problem's K.
        rows: The core's rows (singleCoreM); arrays broadcast.
        cols: The core's columns (singleCoreN).
        base_m: baseM.
        base_n: baseN.
        base_k: baseK.

    Returns:
        (M cycles, MTE1 cycles).
    """
    return compute_busy_of(
        block_steps(c, k, rows, cols, base_m, base_n, base_k), ceil_div(k, base_k)
    )


def cube_busy(c: Costs, k: int, rows: Any, cols: Any, base_m: Any, base_n: Any, base_k: Any) -> Any:
    """The cube's (M) busy cycles of a core alone (see :func:`compute_busy`)."""
    k_iter = ceil_div(k, base_k)
    k_t = k - (k_iter - 1) * base_k
    cube: Any = 0.0
    for r, col, count in block_types(rows, cols, base_m, base_n):
        cube = cube + count * (
            (k_iter - 1) * c.mmad_cycles(r, col, base_k) + c.mmad_cycles(r, col, k_t)
        )
    return cube


def drain_busy(
    c: Costs,
    rows: Any,
    cols: Any,
    base_m: Any,
    base_n: Any,
    cap: Any,
    last_mmad: Any | None = None,
) -> tuple[Any, Any, Any, Any]:
    """The drains' busy cycles of a core: every block drained once out of L0C.

    With FixPipe a block's drain is one FixPipe transfer (:meth:`Costs.fix_cycles`); without it an
    L0C->UB leg on the vector pipe (:meth:`Costs.c_to_ub_cycles`) and a UB->GM leg on MTE3
    (:meth:`Costs.c_ub_to_gm_cycles`). The GM writes move at most ``cap`` bytes a cycle (the
    core's share of the chip's bandwidth; the drain cost is non-increasing in it).

    With UnitFlag (:attr:`Costs.unit_flag_overlap`) the last drain is what of it outlasts the
    block's last MMAD (``last_mmad`` cycles; :meth:`Costs.fix_last_drain_cycles`), or, with
    ``last_mmad`` None (the search's bounds, which do not know that MMAD), its least value, one
    grain (:meth:`Costs.fix_grain_cycles`).

    Returns:
        (FIX cycles, V cycles, MTE3 cycles, the last (corner) block's drain, both legs); the legs
        a chip does not have are 0.0.
    """
    drain_fix: Any = 0.0
    drain_v: Any = 0.0
    drain_m3: Any = 0.0
    types = block_types(rows, cols, base_m, base_n)
    for r, col, count in types:
        if c.has_fixpipe:
            drain_fix = drain_fix + count * c.fix_cycles(r, col, cap)
        else:
            drain_v = drain_v + count * c.c_to_ub_cycles(r, col)
            drain_m3 = drain_m3 + count * c.c_ub_to_gm_cycles(r, col, cap)
    rm_t, cn_t, _ = types[3]
    if c.unit_flag_overlap:
        dr_last = (
            c.fix_grain_cycles(cap)
            if last_mmad is None
            else c.fix_last_drain_cycles(rm_t, cn_t, cap, last_mmad)
        )
    elif c.has_fixpipe:
        dr_last = c.fix_cycles(rm_t, cn_t, cap)
    else:
        dr_last = c.c_to_ub_cycles(rm_t, cn_t) + c.c_ub_to_gm_cycles(rm_t, cn_t, cap)
    return drain_fix, drain_v, drain_m3, dr_last
