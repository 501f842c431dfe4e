"""Lower bounds of the estimated time of every point of a group (core split x base block).

The estimator (:func:`simcore.estimator.estimate_arrays`) prices a tiling as

    cycles = min(max(makespan, resource), sequential) + launch

where ``resource`` is the busiest pipe (or the HBM floor) and ``sequential`` the sum of all pipe
work (or the HBM floor); both are exact busy totals. So with lower bounds ``MK <= makespan``,
``RB <= resource`` and ``SQ <= sequential`` every point of a group costs at least
``min(max(MK, RB), SQ) + launch``. The bounds below are minimums over the inner fields
(steps, L1 depths, iterateOrder, dbL0A/B/C):

* **M, MTE1, FIX**: fixed by the group (every K step's MMAD and L0 loads are the same whatever
  the inner fields; the drain is priced with the largest bandwidth share a core can get).
* **MTE2 (and the UB legs V / MTE3)**: for each iterate order, the cheapest of the four reuse
  cases of :func:`simcore.kernel.pass_coefficients` that L1 can hold: an operand is loaded once
  only when what must stay resident fits next to one block of the other operand (the inner
  operand: all its blocks of the core; the outer one: one K panel), otherwise once per block of
  the other operand. The copies move at most at ``min(L2 share, core rate)``, the core rate
  slowed by the L2 misses of at least the smallest working set of that order
  (:func:`simcore.kernel.chip_bandwidth_cap` is decreasing in traffic and working set).
* **HBM floor**: the unique bytes plus the reload misses of the least traffic.
* **Copy and first-block paths**: the estimator's makespan is at least its copy path, ``mte2 +
  tail_after`` with ``tail_after = (k_iter - last_step - 1) x per + la + lb + mm + dr_last
  (+ the UB legs of the last copy)``, every term non-negative, so at least the MTE2 bound
  above plus one typical step's loads and MMAD plus the last drain (all fixed by the group but
  the drain, priced with the largest bandwidth share); and at least its first-block path
  ``first_end + drains`` with ``first_end >= la + lb + mm`` plus the latency of the first
  pass's last A and B copies (direct copies only) and of the bias slice.
* **MK**: the estimator's compute path (``simcore/estimator.py``, ``compute_path = start -
  (per - mm) + span + bound_ex + inner + dr_last`` with ``bound_ex, inner >= 0``) is at least the
  sum over every K step of its period plus the last drain. A step's period is
  ``max(mm + wa*la + wb*lb, la + lb)``; for each L0 buffering class the smallest period and the
  smallest ``start - (per - mm)`` of that class are taken (see :func:`_chain_bound`).

On UB-path chips (no on-the-fly ND->NZ) a tiling whose reorder halves do not fit in UB takes the
column DMA path with other costs (:func:`simcore.costs.vector_path_array`): the bound is the
smaller of the two paths'.

A bound is only useful while it never exceeds the estimate: ``tests/tiler/test_bound.py`` checks
it on random legal tilings and :func:`tiler.screen.screen` checks every scored point against its
group's bound (a violation turns pruning off and the certificate says so).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from simcore.costs import Costs, align_up, ceil_div
from simcore.dtypes import FRACTAL_ROWS, bits
from simcore.hardware import HardwarePreset
from simcore.problem import Problem

FloatArray = npt.NDArray[np.float64]

#: Relative safety margin against floating-point rounding (the estimator sums in another order).
_ROUNDING = 1e-9
#: Whether the makespan (compute chain) term is used; it relies on the structure of the
#: estimator's compute path (see the module doc), the resource terms only on its busy totals.
USE_CHAIN_BOUND = True
#: Intervals of A's share of L1 in the copy-count bound.
_SPLITS = 16


def cube_lower_bounds(space: Any, idx: Any = None) -> FloatArray:
    """A cheap bound (us): the M pipe's busy time plus launch, for groups ``idx`` (all: None).

    Valid because the estimate is at least the busiest pipe and the M pipe's work is fixed by
    the group.
    """
    problem, preset = space.problem, space.preset
    g = _select(space.groups, idx)
    c = Costs(problem, preset)
    cube = _cube_mte1(c, problem.k, g)[0]
    launch = preset.launch_overhead_us * preset.clock_mhz
    return np.asarray((cube + launch) / preset.clock_mhz * (1.0 - _ROUNDING), dtype=np.float64)


def group_lower_bounds(space: Any, idx: Any = None) -> FloatArray:
    """A lower bound of the estimated time (us) of every point of each group (module doc).

    Args:
        space: A :class:`tiler.space.Space`.
        idx: Indices of the groups to bound (None: every group).

    Returns:
        One bound per selected group, in microseconds (launch overhead included).
    """
    problem, preset = space.problem, space.preset
    g = _select(space.groups, idx)
    orders = [space.fixed["iterateOrder"]] if "iterateOrder" in space.fixed else [0, 1]
    paths = [True, False] if _has_two_paths(problem, preset) else [True]
    best: Any = np.inf
    for vector_path in paths:
        c = Costs(problem, preset, vector_path)
        for order in orders:
            best = np.minimum(best, _bound(space, c, g, order))
    launch = preset.launch_overhead_us * preset.clock_mhz
    out = (np.broadcast_to(best, g["baseM"].shape) + launch) / preset.clock_mhz
    return np.asarray(out * (1.0 - _ROUNDING), dtype=np.float64)


def _select(groups: dict[str, Any], idx: Any) -> dict[str, Any]:
    if idx is None:
        return groups
    return {name: arr[idx] for name, arr in groups.items()}


def _has_two_paths(problem: Problem, preset: HardwarePreset) -> bool:
    # Costs differ between the vector and the column path only for ND inputs on chips without
    # on-the-fly ND->NZ (simcore.costs.Costs: a_via_ub / a_by_column), and for the C drain
    # without FixPipe.
    return not preset.nd2nz_on_the_fly or not preset.has_fixpipe


def _block_types(g: dict[str, Any], k: int) -> list[tuple[Any, Any, Any]]:
    """(rows, cols, count) of the full / tail block types of the largest core."""
    rows, cols = g["singleCoreM"], g["singleCoreN"]
    bm, bn = g["baseM"], g["baseN"]
    m_iter, n_iter = g["m_iter"], g["n_iter"]
    rm_t = rows - (m_iter - 1) * bm
    cn_t = cols - (n_iter - 1) * bn
    out = []
    for r, nr in ((bm, m_iter - 1), (rm_t, 1)):
        for col, nc in ((bn, n_iter - 1), (cn_t, 1)):
            out.append((r, col, nr * nc))
    del k
    return out


def _cube_mte1(c: Costs, k: int, g: dict[str, Any]) -> tuple[Any, Any]:
    bk, k_iter = g["baseK"], g["k_iter"]
    k_t = k - (k_iter - 1) * bk
    cube: Any = 0.0
    mte1: Any = 0.0
    for r, col, count in _block_types(g, k):
        cube = cube + count * (
            (k_iter - 1) * c.mmad_cycles(r, col, bk) + c.mmad_cycles(r, col, k_t)
        )
        mte1 = mte1 + count * (
            (k_iter - 1) * (c.la_cycles(r, bk) + c.lb_cycles(col, bk))
            + c.la_cycles(r, k_t)
            + c.lb_cycles(col, k_t)
        )
    return cube, mte1


def _chain_bound(c: Costs, k: int, g: dict[str, Any], fixed: dict[str, int]) -> Any:
    """Sum of the K-step periods plus the start-up's least share, smallest over L0 classes.

    The estimator's compute path is ``start - (per - mm) + span + ... + dr_last`` with
    ``start >= a_rdy + la + lb`` (the first copy, then the first A and B reads of a typical
    block), ``per`` and ``mm`` the typical block's period and MMAD and ``span`` the sum of the
    periods of every step. Per class of (dbL0A, dbL0B):

    * dbL0A = 1: ``per = mm + la + lb`` so ``start - (per - mm) >= a_rdy``;
    * dbL0A = 2, dbL0B = 1: ``per = max(mm, la) + lb``, so it is ``>= a_rdy + min(la, mm)``;
    * both 2: ``per = max(mm, la + lb)``, so it is ``>= a_rdy + min(la + lb, mm)``;

    with ``a_rdy >= 0`` taken as 0 (the first copy's time is left out).
    """
    bk, k_iter = g["baseK"], g["k_iter"]
    k_t = k - (k_iter - 1) * bk
    m_iter, n_iter = g["m_iter"], g["n_iter"]
    rows, cols = g["singleCoreM"], g["singleCoreN"]
    bm, bn = g["baseM"], g["baseN"]
    span = {"a1": 0.0, "b1": 0.0, "both": 0.0}
    spans: dict[str, Any] = dict(span)
    for r, col, count in _block_types(g, k):
        for kk, steps in ((bk, k_iter - 1), (k_t, 1)):
            la = c.la_cycles(r, kk)
            lb = c.lb_cycles(col, kk)
            mm = c.mmad_cycles(r, col, kk)
            spans["a1"] = spans["a1"] + count * steps * (mm + la + lb)
            spans["b1"] = spans["b1"] + count * steps * np.maximum(np.maximum(mm, la) + lb, la + lb)
            spans["both"] = spans["both"] + count * steps * np.maximum(mm, la + lb)
    # The typical block of the estimator: the tail when the core has a single block.
    r1 = np.where(m_iter == 1, rows - (m_iter - 1) * bm, bm)
    c1 = np.where(n_iter == 1, cols - (n_iter - 1) * bn, bn)
    la1, lb1, mm1 = c.la_cycles(r1, bk), c.lb_cycles(c1, bk), c.mmad_cycles(r1, c1, bk)
    classes = []
    a_pin, b_pin = fixed.get("dbL0A"), fixed.get("dbL0B")
    if a_pin in (None, 1):
        classes.append(spans["a1"])
    if a_pin in (None, 2) and b_pin in (None, 1):
        classes.append(spans["b1"] + np.minimum(la1, mm1))
    if a_pin in (None, 2) and b_pin in (None, 2):
        classes.append(spans["both"] + np.minimum(la1 + lb1, mm1))
    return np.minimum.reduce([np.broadcast_to(x, rows.shape) for x in classes])


def _bound(space: Any, c: Costs, g: dict[str, Any], order: int) -> Any:
    """``min(max(MK, RB), SQ)`` in cycles (no launch) for one path and one iterate order."""
    problem, preset = space.problem, space.preset
    p = preset
    k = problem.k
    rows, cols = g["singleCoreM"], g["singleCoreN"]
    bm, bn, bk = g["baseM"], g["baseN"], g["baseK"]
    m_iter, n_iter, k_iter = g["m_iter"], g["n_iter"], g["k_iter"]
    in_b = bits(problem.dtype) / 8.0
    m_cores = ceil_div(problem.m, rows)
    n_cores = ceil_div(problem.n, cols)
    active = m_cores * n_cores

    # --- chip traffic at least, and the largest per-core rate it allows ---------------------
    write = problem.m * problem.n * bits(problem.c_dtype) / 8.0
    unique = (problem.m + problem.n) * k * in_b + write
    once_read = (n_cores * problem.m + m_cores * problem.n) * k * in_b
    total_min = once_read + write
    # Smallest working set of this order (simcore.kernel.reuse_working_set with step 1).
    if order == 0:
        working = (m_cores * np.minimum(rows, problem.m) + n_cores * bn) * k * in_b
    else:
        working = (n_cores * np.minimum(cols, problem.n) + m_cores * bm) * k * in_b
    miss = np.clip(1.0 - p.l2_bytes / np.maximum(working, 1.0), 0.0, 1.0)
    reload_frac = np.maximum(1.0 - unique / np.maximum(total_min, 1.0), 0.0)
    hit_max = 1.0 - reload_frac * miss
    core_rate = p.l2_bytes_per_cycle_per_core * (hit_max + (1.0 - hit_max) / p.l2_miss_slowdown)
    cap = np.minimum(p.l2_bytes_per_cycle / np.maximum(active, 1), core_rate)
    hbm_floor = (unique + np.maximum(total_min - unique, 0.0) * miss) / p.hbm_bytes_per_cycle

    # --- M, MTE1, drain --------------------------------------------------------------------
    cube, mte1 = _cube_mte1(c, k, g)
    drain: Any = 0.0
    c_out: Any = 0.0
    for r, col, count in _block_types(g, k):
        if p.has_fixpipe:
            drain = drain + count * c.fix_cycles(r, col, cap)
        else:
            drain = drain + count * c.c_to_ub_cycles(r, col)
            c_out = c_out + count * c.c_ub_to_gm_cycles(r, col, cap)
    rm_t = rows - (m_iter - 1) * bm
    cn_t = cols - (n_iter - 1) * bn
    if p.has_fixpipe:
        dr_last = c.fix_cycles(rm_t, cn_t, cap)
    else:
        dr_last = c.c_to_ub_cycles(rm_t, cn_t) + c.c_ub_to_gm_cycles(rm_t, cn_t, cap)

    # --- copies: the cheapest reuse case L1 can hold -----------------------------------------
    room = p.l1_bytes - g["bias_l1"]
    a_blk = bm * bk * in_b
    b_blk = bn * bk * in_b
    a_panel = bm * k_iter * bk * in_b
    b_panel = bn * k_iter * bk * in_b
    # Resident need of an operand loaded once: all its blocks when inner, one panel when outer.
    a_need = m_iter * a_panel if order == 0 else a_panel
    b_need = n_iter * b_panel if order == 1 else b_panel
    # Copies per pass: each moves step x stepK blocks, no more than the operand's share of L1,
    # and a pass covers all the operand's (row block, K step) blocks. A and B share L1, so
    # their copy counts trade off: for A holding ``ua`` blocks, B holds at most
    # ``(room - ua x a_blk) / b_blk``. The range of ``ua`` is cut into intervals; on each, A's
    # copies are at least those at its top and B's at least those at its bottom.
    a_total = m_iter * k_iter
    b_total = n_iter * k_iter
    mte2: Any = np.inf
    vec: Any = np.inf
    mte3: Any = np.inf
    for a_once in (True, False):
        for b_once in (True, False):
            a_lo = np.ceil(np.where(a_once, a_need, a_blk) / a_blk)
            b_lo = np.ceil(np.where(b_once, b_need, b_blk) / b_blk)
            a_hi = np.floor((room - b_lo * b_blk) / a_blk)
            feasible = a_hi >= a_lo
            a_passes = 1 if a_once else n_iter
            b_passes = 1 if b_once else m_iter
            best_g: Any = np.inf
            best_v: Any = np.inf
            best_u: Any = np.inf
            for j in range(_SPLITS):
                u0 = a_lo + np.floor(j / _SPLITS * (a_hi - a_lo))
                u1 = a_lo + np.floor((j + 1) / _SPLITS * (a_hi - a_lo))
                ub_max = np.maximum(np.floor((room - u0 * a_blk) / b_blk), 1.0)
                a_copies = np.ceil(a_total / np.maximum(u1, 1.0))
                b_copies = np.ceil(b_total / ub_max)
                ga, va, ua = _copies(c, True, a_passes, a_copies, rows, k, cap)
                gb, vb, ub = _copies(c, False, b_passes, b_copies, cols, k, cap)
                best_g = np.minimum(best_g, ga + gb)
                best_v = np.minimum(best_v, va + vb)
                best_u = np.minimum(best_u, ua + ub)
            inf = np.where(feasible, 0.0, np.inf)
            mte2 = np.minimum(mte2, best_g + inf)
            vec = np.minimum(vec, best_v + inf)
            mte3 = np.minimum(mte3, best_u + inf)
    if problem.bias:
        # The estimator fetches one bias slice per block before its copies (exact).
        mte2 = mte2 + (
            m_iter * n_iter * p.gm_to_l1_latency_cycles
            + m_iter * cols * (c.bias_bytes / np.minimum(p.gm_to_l1_peak_bytes_per_cycle, cap))
        )
    if p.has_fixpipe:
        pipes = [cube, mte1, drain, mte2, vec, mte3]
    else:
        pipes = [cube, mte1, mte2, drain + vec, c_out + mte3]
    shape = rows.shape
    pipes = [np.broadcast_to(np.asarray(x, dtype=np.float64), shape) for x in pipes]
    resource = np.maximum(np.maximum.reduce(pipes), hbm_floor)
    sequential = np.maximum(sum(pipes), hbm_floor)
    if not USE_CHAIN_BOUND:
        return resource
    chain = _chain_bound(c, k, g, space.fixed) + dr_last
    # The estimator's copy path (all MTE2 copies, then at least the last step's loads and MMAD
    # of a typical block and the last drain) and first-block path (the first block's step and
    # then every drain); see the module doc.
    r1 = np.where(m_iter == 1, rm_t, bm)
    c1 = np.where(n_iter == 1, cn_t, bn)
    step1 = c.la_cycles(r1, bk) + c.lb_cycles(c1, bk) + c.mmad_cycles(r1, c1, bk)
    copy_path = mte2 + step1 + dr_last
    first_copies = _first_copy_latency(c, True) + _first_copy_latency(c, False)
    if problem.bias:
        first_copies += p.gm_to_l1_latency_cycles
    first_path = first_copies + step1 + drain + (0.0 if p.has_fixpipe else c_out)
    makespan = np.maximum(np.maximum(chain, copy_path), first_path)
    return np.minimum(np.maximum(makespan, resource), sequential)


def _first_copy_latency(c: Costs, is_a: bool) -> float:
    """Cycles one direct chunk copy of an operand takes at least (0 through UB or by column).

    A direct copy is one instruction, latency plus bytes (:meth:`simcore.costs.Costs.
    gm_to_l1_cycles`); the other paths are left at 0.
    """
    p = c.preset
    if (c.a_via_ub if is_a else c.b_via_ub) or (c.a_by_column if is_a else c.b_by_column):
        return 0.0
    if c.a_nd if is_a else c.b_nd:
        return float(p.nd2nz_latency_cycles)
    return float(p.gm_to_l1_latency_cycles)


def _copies(
    c: Costs, is_a: bool, passes: Any, copies: Any, rows: Any, k: int, cap: Any
) -> tuple[Any, Any, Any]:
    """(MTE2, V, MTE3) cycles at least of ``passes`` loads of an operand's ``rows`` x K.

    At least ``copies`` copies per pass, each paying the copy latency; bytes as L1 stores them
    (rows aligned to 16, K to C0) for the copies, unaligned for the vector reorder (each
    8-row x 32 B repeat moves at most 256 B).
    """
    p = c.preset
    nbytes = passes * c.l1_tile_bytes(rows, k)
    loads = passes * copies
    via_ub = c.a_via_ub if is_a else c.b_via_ub
    eff = c.a_eff if is_a else c.b_eff
    if via_ub:
        mte2 = loads * p.gm_to_ub_latency_cycles + nbytes / np.minimum(
            p.gm_to_ub_peak_bytes_per_cycle * eff, cap
        )
        raw = passes * rows * k * c.in_bytes
        vec = loads * p.vector_issue_overhead_cycles + raw / p.vector_bytes_per_cycle
        mte3 = loads * p.gm_to_ub_latency_cycles + nbytes / p.ub_to_l1_bytes_per_cycle
        return mte2, vec, mte3
    nd = c.a_nd if is_a else c.b_nd
    if (c.a_by_column if is_a else c.b_by_column) or not nd:
        lat, peak = (
            p.gm_to_l1_latency_cycles,
            p.gm_to_l1_peak_bytes_per_cycle * (eff if nd else 1.0),
        )
    else:
        lat, peak = p.nd2nz_latency_cycles, p.nd2nz_peak_bytes_per_cycle * eff
    mte2 = loads * lat + nbytes / np.minimum(peak, cap)
    zero = 0.0 * mte2
    return mte2, zero, zero


del align_up, FRACTAL_ROWS
