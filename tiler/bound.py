"""Lower bounds of the estimated time of every point of a group (core split x base block).

The estimator (:func:`simcore.estimate.estimator.estimate_arrays`) prices a tiling as

    cycles = min(max(makespan, resource), sequential) + launch

where ``resource`` is the busiest pipe (or the HBM floor) and ``sequential`` the sum of all pipe
work (or the HBM floor); both are exact busy totals. So with lower bounds ``MK <= makespan``,
``RB <= resource`` and ``SQ <= sequential`` every point of a group costs at least
``min(max(MK, RB), SQ) + launch``. The bounds below are minimums over the inner fields
(steps, L1 depths, iterateOrder, dbL0A/B/C):

* **M, MTE1, FIX**: fixed by the group (every K step's MMAD and L0 loads are the same whatever
  the inner fields; the drain is priced with the largest bandwidth share a core can get).
* **MTE2 (and the UB legs V / MTE3)**: for each iterate order, each of the four reuse cases
  of :func:`simcore.pipeline.traffic.pass_coefficients` that L1 can hold: an operand is loaded once
  only when what must stay resident fits next to one block of the other operand (the inner
  operand: all its blocks of the core; the outer one: one K panel), otherwise once per block of
  the other operand. The copies move at most at ``min(L2 share, core rate)``, the core rate
  slowed by the L2 misses of at least the smallest working set of that order
  (:func:`simcore.pipeline.traffic.chip_bandwidth_cap` is decreasing in traffic and working set).
  Each copy pays its latency; the copy count per pass is at least the operand's blocks over its
  share of L1, and A's and B's shares are traded off over intervals of A's share.
* **Vector reorder and column DMAs** (UB-path chips, :func:`_pass_floor`): per pass at least
  the repeats of the operand's ND rows, each issued alone in chunks of more than 255 ND rows
  (every repeat then pays the issue overhead); on the column path one DMA per 32 B column of
  every row group (or K chunk) of a pass.
* **HBM floor**: the unique bytes plus the reload misses of the chip's reads in each reuse
  case (the cores with the largest core's rows load A as it does; likewise B by columns).
* **UB staging paths**: through UB the estimator's makespan is at least ``V(inputs) +
  max(GM->UB, UB->L1) + la + lb + mm + dr_last`` (every reorder waits for the previous UB->L1
  copy and every GM->UB copy for the previous reorder, across both operands).

* **Copy and first-block paths**: the estimator's makespan is at least its copy path, ``mte2 +
  tail_after`` with ``tail_after = (k_iter - last_step - 1) x per + la + lb + mm + dr_last
  (+ the UB legs of the last copy)``, every term non-negative, so at least the MTE2 bound
  above plus one typical step's loads and MMAD plus the last drain (all fixed by the group but
  the drain, priced with the largest bandwidth share), plus the steps left after the last
  copy: fewer only where an operand's last K chunk starts later, which takes more copies of
  it, each paying its latency (:func:`_last_chunk_steps`); and at least its first-block path
  ``first_end + drains`` with ``first_end >= la + lb + mm`` (at the block dimensions averaged
  over the core's blocks, :func:`_average_step`) plus the latency of the first pass's last A
  and B copies (direct copies only) and of the bias slice.
* **L1 slots** (:func:`_one_slot_chain`): an operand holds one slot (db = 1, chunks of up to
  its share of L1) or two (chunks of up to half of it: twice the copies at least), and the
  four combinations are priced apart. With one slot each copy waits for the last read of the
  chunk before, so its copies and all but two MMADs of each chunk run in series; where more
  copies would shorten that chain they lengthen the pipe the copies load, and the least of
  the larger of the two is taken.
* **Per-case core rate**: the hit ratio of :func:`simcore.pipeline.traffic.chip_bandwidth_cap`
  falls as the chip's reads grow, so each reuse case's least reads cap the copy rate (and the tail
  cores read as the largest one does where they reuse the operand alike).
* **Column sweeps** (UB-path chips, ND rows = the operand's rows): a row group whose K panel
  does not fit its slots is swept by every block of it, one DMA per 32 B of K each sweep.
* **UB tiles**: an operand loaded once through UB has chunks of at least half of what stays
  resident; where two such tiles exceed UB the case has no vector-path tiling. On the vector
  path every chunk is one UB tile and two tiles fit UB, which caps a chunk's blocks (more
  copies, and more passes below).
* **L0 flags**: a group only holds the dbL0A / dbL0B / dbL0C its blocks fit (tiler.space
  ``dbA_max`` ...).
* **MK**: the estimator's compute path (``simcore/estimate/estimator.py``, ``compute_path = start -
  (per - mm) + span + bound_ex + inner + dr_last`` with ``bound_ex, inner >= 0``) is at least the
  sum over every K step of its period plus the last drain. A step's period is
  ``max(mm + wa*la + wb*lb, la + lb)``; for each L0 buffering class the smallest period and the
  smallest ``start - (per - mm)`` of that class are taken, the start-up after the first A and
  B copies' MTE2 legs (:func:`_chain_classes`, :func:`_first_copy_legs`). Per class,
  ``bound_ex`` is at least: with one L0C buffer, ``max(dr - normal, 0)`` at every block
  boundary (the drain out of L0C beyond the boundary period's loads); without FixPipe, the
  stalls of the blocks that start a pass of an operand staged through UB, whose copies queue
  behind the previous block's drain legs, L0C->UB on the vector queue and UB->GM on MTE3
  (:func:`_pass_start_stalls`: the passes at least, each block's stall at least the drain
  legs and the average reorder and UB->L1 leg of a copy).

Every tiling falls in one reuse case and one interval of A's share of L1, where each of its
busy totals and paths is at least what is priced there, and ``min(max(MK, RB), SQ)`` is
non-decreasing in each; so the bound is the smallest over the cases and intervals of the
figure combined in each (not the combination of separate minimums).

On UB-path chips (no on-the-fly ND->NZ) a tiling whose reorder halves do not fit in UB takes the
column DMA path with other costs (:func:`simcore.pipeline.costs.vector_path_array`): the bound is
the smaller of the two paths'.

A bound is only useful while it never exceeds the estimate: ``tests/tiler/test_bound.py`` checks
it on random legal tilings and :func:`tiler.screen.screen` checks every scored point against its
group's bound (a violation turns pruning off and the certificate says so).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from simcore.hardware.dtypes import FRACTAL_ROWS, bits
from simcore.hardware.presets import HardwarePreset
from simcore.pipeline.costs import Costs, align_up, ceil_div, vector_path_array
from simcore.pipeline.scalar import scalar_cycles
from simcore.pipeline.traffic import kernel_us, l2_share_most
from simcore.tiling.problem import Problem
from simcore.ub.vector import strided_repeat_cycles

FloatArray = npt.NDArray[np.float64]

#: Relative safety margin against floating-point rounding (the estimator sums in another order).
_ROUNDING = 1e-9
#: Whether the makespan (compute chain) term is used; it relies on the structure of the
#: estimator's compute path (see the module doc), the resource terms only on its busy totals.
USE_CHAIN_BOUND = True
#: Intervals of A's share of L1 in the copy-count bound.
_SPLITS = 8


def cube_lower_bounds(space: Any, idx: Any = None) -> FloatArray:
    """A cheap bound (us): the M pipe's busy time plus launch, for groups ``idx`` (all: None).

    Valid because the estimate is at least the busiest pipe and the M pipe's work is fixed by
    the group.
    """
    problem, preset = space.problem, space.preset
    g = _select(space.groups, idx)
    c = Costs(problem, preset)
    cube = _cube_mte1(c, problem.k, g)[0]
    # (The estimate's time: simcore.pipeline.traffic.kernel_us, issue 17.)
    out = kernel_us(preset, cube / preset.clock_mhz)
    return np.asarray(out * (1.0 - _ROUNDING), dtype=np.float64)


def group_lower_bounds(
    space: Any, idx: Any = None, splits: int = _SPLITS, stalls: bool = True
) -> FloatArray:
    """A lower bound of the estimated time (us) of every point of each group (module doc).

    Args:
        space: A :class:`tiler.space.Space`.
        idx: Indices of the groups to bound (None: every group).
        splits: Intervals of A's share of L1 (module doc). Each interval of a finer cut lies
            in one of a coarser cut whose figure is no larger, so more splits never lower the
            bound; 1 is several times cheaper, a first pass before the full bound.
        stalls: Whether to price the pass-start stalls (:func:`_pass_start_stalls`; see
            :func:`pass_start_stalls_apply`). Leaving them out only lowers the bound and
            makes it about a fifth cheaper where they apply: a first pass.

    Returns:
        One bound per selected group, in microseconds (launch overhead included).
    """
    problem, preset = space.problem, space.preset
    g = _select(space.groups, idx)
    orders = [space.fixed["iterateOrder"]] if "iterateOrder" in space.fixed else [0, 1]
    best = np.full(g["baseM"].shape, np.inf)
    for vector_path, reach in _reachable_paths(space, g):
        sub = g if reach is None else {name: arr[reach] for name, arr in g.items()}
        if sub["baseM"].shape[0] == 0:
            continue
        c = Costs(problem, preset, vector_path)
        part: Any = np.inf
        shared = _order_free_terms(space, c, sub)
        shared["stalls"] = stalls
        for order in orders:
            part = np.minimum(part, _bound(space, c, sub, order, splits, shared))
        if reach is None:
            best = np.minimum(best, part)
        else:
            best[reach] = np.minimum(best[reach], part)
    # (The estimate's time: simcore.pipeline.traffic.kernel_us, issue 17.)
    out = kernel_us(preset, best / preset.clock_mhz)
    return np.asarray(out * (1.0 - _ROUNDING), dtype=np.float64)


def pass_start_stalls_apply(space: Any) -> bool:
    """Whether the group bound prices pass-start stalls (no FixPipe, an operand staged in UB)."""
    c = Costs(space.problem, space.preset, True)
    return USE_CHAIN_BOUND and not space.preset.has_fixpipe and (c.a_via_ub or c.b_via_ub)


def _reachable_paths(space: Any, g: dict[str, Any]) -> list[tuple[bool, Any]]:
    """The data paths (vector reorder or not) some tiling of each group can take.

    On chips without the two UB paths only the one (``None``: every group). Otherwise
    (:func:`simcore.pipeline.costs.vector_path_array`) the vector path needs ``max(shareUbSize, 2 x
    transLength) <= UB``, where shareUbSize is fixed by the group and transLength is the
    largest of the A, B, C and bias tiles in UB, each non-decreasing in the steps (a tile of
    ``rows x cols`` takes ``rows x cols`` elements, ``rows x (cols + 16)`` when cols is a
    multiple of 256, and the step extents are multiples of 16): a group reaches the vector
    path only if it fits with every step at 1, and the column path only if it does not fit
    with every step at its largest (the core's blocks, all of K).
    """
    problem, preset = space.problem, space.preset
    if not _has_two_paths(problem, preset):
        return [(True, None)]
    if preset.nd2nz_on_the_fly:
        # Only the C drain differs (no FixPipe): price both paths everywhere.
        return [(True, None), (False, None)]
    one = np.ones_like(g["baseM"])
    lo = {**g, "stepM": one, "stepN": one, "stepKa": one, "stepKb": one}
    hi = {
        **g,
        "stepM": g["m_iter"],
        "stepN": g["n_iter"],
        "stepKa": g["k_iter"],
        "stepKb": g["k_iter"],
    }
    vec_lo = vector_path_array(problem, lo, preset)
    vec_hi = vector_path_array(problem, hi, preset)
    if vec_lo is None or vec_hi is None:
        return [(True, None)]
    return [(True, np.flatnonzero(vec_lo)), (False, np.flatnonzero(~vec_hi))]


def _select(groups: dict[str, Any], idx: Any) -> dict[str, Any]:
    if idx is None:
        return groups
    return {name: arr[idx] for name, arr in groups.items()}


def _has_two_paths(problem: Problem, preset: HardwarePreset) -> bool:
    # Costs differ between the vector and the column path only for ND inputs on chips without
    # on-the-fly ND->NZ (simcore.pipeline.costs.Costs: a_via_ub / a_by_column), and for the C drain
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


def _average_step(c: Costs, g: dict[str, Any]) -> Any:
    """A full-K step's ``la + lb + mm`` at the block dimensions averaged over the core's blocks.

    Estimator formula (simcore/estimate/estimator.py ``_core``, slot cycles and first block): those
    paths price the steps with the fractal counts averaged over the core's blocks, ``fr_1 =
    ((m_iter - 1) x fr_f + fr_t) / m_iter`` (likewise the columns), ``la = lat1 + fr_1 x 16 x
    ka_f / rate_a``, ``mm = ovh + fr_1 x fc_1 x fk_f x frc``. With tail blocks this is below
    the typical block's.
    """
    p = c.preset
    bm, bn, bk = g["baseM"], g["baseN"], g["baseK"]
    m_iter, n_iter = g["m_iter"], g["n_iter"]
    rm_t = g["singleCoreM"] - (m_iter - 1) * bm
    cn_t = g["singleCoreN"] - (n_iter - 1) * bn
    fr = ((m_iter - 1) * ceil_div(bm, FRACTAL_ROWS) + ceil_div(rm_t, FRACTAL_ROWS)) / m_iter
    fc = ((n_iter - 1) * ceil_div(bn, FRACTAL_ROWS) + ceil_div(cn_t, FRACTAL_ROWS)) / n_iter
    fk = ceil_div(bk, c.c0)
    k_bytes = (fk * c.c0) * c.in_bytes
    la = p.mte1_latency_cycles + (fr * FRACTAL_ROWS) * k_bytes / p.l1_to_l0a_bytes_per_cycle
    lb = p.mte1_latency_cycles + (fc * FRACTAL_ROWS) * k_bytes / p.l1_to_l0b_bytes_per_cycle
    mm = p.mmad_overhead_cycles + fr * fc * fk * c.fractal_cycles
    return la + lb + mm


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


def _chain_classes(
    c: Costs, k: int, g: dict[str, Any], fixed: dict[str, int], ready: tuple[Any, Any]
) -> list[tuple[Any, Any, Any, Any]]:
    """Per L0 class: the sum of the K-step periods plus the start-up's least share.

    The estimator's compute path is ``start - (per - mm) + span + ... + dr_last`` with
    ``start >= a_rdy + la + lb`` (the first copy, then the first A and B reads of a typical
    block), ``per`` and ``mm`` the typical block's period and MMAD and ``span`` the sum of the
    periods of every step. Per class of (dbL0A, dbL0B):

    * dbL0A = 1: ``per = mm + la + lb`` so ``start - (per - mm) >= a_rdy``;
    * dbL0A = 2, dbL0B = 1: ``per = max(mm, la) + lb``, so it is ``>= a_rdy + min(la, mm)``;
    * both 2: ``per = max(mm, la + lb)``, so it is ``>= a_rdy + min(la + lb, mm)``;

    where ``start = max(a_rdy + la, b_rdy) + lb``, so ``start - (per - mm)`` is at least
    ``a_rdy`` plus the A offset below and at least ``b_rdy`` plus the B offset (the three cases
    above are the A offsets). The first copies: ``a_rdy >= ga1`` and ``b_rdy >= ga1 + gb1`` on
    every data path (``ga1``, ``gb1`` the average MTE2 leg of an A, B copy: B's first copy
    follows A's on MTE2, and through UB the reorder and UB->L1 legs only add), and ``ready``
    gives lower bounds of ``ga1`` and ``gb1``.

    Each class also gives ``la + lb - (per - mm)`` and ``lb - (per - mm)`` of the typical block
    (what the estimator's block-boundary stalls ``ex_a0`` / ``ex_b0`` add to a copy's ready
    time, see :func:`_pass_start_stalls`): ``0`` and ``-la`` with dbL0A = 1; ``min(la, mm)``
    and ``-max(la - mm, 0)`` with only dbL0B = 1; ``min(la + lb, mm)`` and ``lb - max(la + lb
    - mm, 0)`` with both 2.

    And the part of a block boundary's period beside its MMAD, ``normal = per_bd - mm_kt``
    (``per_bd`` the period of the typical block's K-tail MMAD ``mm_kt`` with the next
    block's loads): ``la + lb`` with dbL0A = 1, ``max(lb, la + lb - mm_kt)`` with only dbL0B
    = 1, ``max(la + lb - mm_kt, 0)`` with both 2 (with one L0C buffer the estimator adds
    ``max(dr - normal, 0)`` at every block boundary, see :func:`_bound`).

    Returns:
        One ``(chain, A offset, B offset, normal)`` per L0 class the pins and the group allow.
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
    mm_kt = c.mmad_cycles(r1, c1, k_t)
    a_pin, b_pin = fixed.get("dbL0A"), fixed.get("dbL0B")
    # A group only holds the L0 flags its blocks fit (tiler.space: dbA_max / dbB_max, 1 where
    # two base blocks do not fit in L0A / L0B): the other classes are out of reach there.
    no_a2 = np.where(g["dbA_max"] >= 2, 0.0, np.inf) if "dbA_max" in g else 0.0
    no_b2 = np.where(g["dbB_max"] >= 2, 0.0, np.inf) if "dbB_max" in g else 0.0
    ga1, gb1 = ready
    offsets = []
    if a_pin in (None, 1):
        offsets.append((spans["a1"], 0.0 * la1, -la1, la1 + lb1))
    if a_pin in (None, 2) and b_pin in (None, 1):
        offsets.append(
            (
                spans["b1"] + no_a2,
                np.minimum(la1, mm1),
                -np.maximum(la1 - mm1, 0.0),
                np.maximum(lb1, la1 + lb1 - mm_kt),
            )
        )
    if a_pin in (None, 2) and b_pin in (None, 2):
        offsets.append(
            (
                spans["both"] + no_a2 + no_b2,
                np.minimum(la1 + lb1, mm1),
                lb1 - np.maximum(la1 + lb1 - mm1, 0.0),
                np.maximum(la1 + lb1 - mm_kt, 0.0),
            )
        )
    return [
        (span + np.maximum(ga1 + off_a, ga1 + gb1 + off_b), off_a, off_b, normal)
        for span, off_a, off_b, normal in offsets
    ]


def _order_free_terms(space: Any, c: Costs, g: dict[str, Any]) -> dict[str, Any]:
    """The terms of :func:`_bound` that do not depend on the iterate order (computed once).

    The compute chain's L0 classes (:func:`_chain_classes`, the first copies' bytes at the
    largest bandwidth share any order allows: the L2 share with every reload hitting), the
    M and MTE1 work, the typical and averaged step, the per-pass floors (:func:`_pass_floor`)
    and the one-slot chains' MMAD figures.
    """
    problem, p = space.problem, space.preset
    k = problem.k
    rows, cols = g["singleCoreM"], g["singleCoreN"]
    bm, bn, bk = g["baseM"], g["baseN"], g["baseK"]
    m_iter, n_iter, k_iter = g["m_iter"], g["n_iter"], g["k_iter"]
    rm_t = rows - (m_iter - 1) * bm
    cn_t = cols - (n_iter - 1) * bn
    r1 = np.where(m_iter == 1, rm_t, bm)
    c1 = np.where(n_iter == 1, cn_t, bn)
    la1, lb1, mm1 = c.la_cycles(r1, bk), c.lb_cycles(c1, bk), c.mmad_cycles(r1, c1, bk)
    active = ceil_div(problem.m, rows) * ceil_div(problem.n, cols)
    # (The ND->NZ share of the chip's L2 rate: simcore.pipeline.traffic.l2_share_most.)
    chip = p.l2_bytes_per_cycle * l2_share_most(problem, p)
    cap = np.minimum(chip / np.maximum(active, 1), p.l2_core_port)
    ready = _first_copy_legs(c, k, (rm_t, cn_t), k_iter, cap)
    cube, mte1 = _cube_mte1(c, k, g)
    # One-slot chains (:func:`_one_slot_chain`): the MMAD cycles of full-K steps (each
    # block's last step left out) and twice the largest full-K MMAD; or the full-K steps at
    # the smallest full-K MMAD each, and twice that.
    mm_max = c.mmad_cycles(np.where(m_iter > 1, bm, rm_t), np.where(n_iter > 1, bn, cn_t), bk)
    mm_steps: Any = 0.0
    for r, col, count in _block_types(g, k):
        mm_steps = mm_steps + count * np.maximum(k_iter - 1, 0) * c.mmad_cycles(r, col, bk)
    steps = m_iter * n_iter * np.maximum(k_iter - 1, 0)
    mm_min = c.mmad_cycles(rm_t, cn_t, bk)
    return {
        "cube": cube,
        "mte1": mte1,
        "chain_classes": _chain_classes(c, k, g, space.fixed, ready),
        "step1": la1 + lb1 + mm1,
        # The least period of a typical block's full-K step (every L0 class).
        "per_lo": np.maximum(mm1, la1 + lb1),
        # The first-block path prices its steps with the block dimensions averaged over the
        # core's blocks (_average_step), which can be shorter than the typical block's.
        "step_avg": _average_step(c, g),
        "a_pass": _pass_floor(c, True, rows, bm, rm_t, k, bk),
        "b_pass": _pass_floor(c, False, cols, bn, cn_t, k, bk),
        "mmads": (
            (mm_steps, np.maximum(2.0 * mm_max, 1e-9)),
            (steps * mm_min, np.maximum(2.0 * mm_min, 1e-9)),
        ),
    }


def _bound(
    space: Any,
    c: Costs,
    g: dict[str, Any],
    order: int,
    splits: int = _SPLITS,
    shared: dict[str, Any] | None = None,
) -> Any:
    """``min(max(MK, RB), SQ)`` in cycles (no launch) for one path and one iterate order.

    ``shared`` passes :func:`_order_free_terms` of the same path and groups (computed here
    when None).
    """
    if shared is None:
        shared = _order_free_terms(space, c, g)
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
    # Smallest working set of this order (simcore.pipeline.traffic.reuse_working_set with step 1).
    if order == 0:
        working = (m_cores * np.minimum(rows, problem.m) + n_cores * bn) * k * in_b
    else:
        working = (n_cores * np.minimum(cols, problem.n) + m_cores * bm) * k * in_b
    miss = np.clip(1.0 - p.l2_bytes / np.maximum(working, 1.0), 0.0, 1.0)
    reload_frac = np.maximum(1.0 - unique / np.maximum(total_min, 1.0), 0.0)
    hit_max = 1.0 - reload_frac * miss
    core_rate = p.l2_core_port * (hit_max + (1.0 - hit_max) / p.l2_miss_slowdown)
    chip = p.l2_bytes_per_cycle * l2_share_most(problem, p)
    cap = np.minimum(chip / np.maximum(active, 1), core_rate)
    hbm_floor = (unique + np.maximum(total_min - unique, 0.0) * miss) / p.hbm_bytes_per_cycle

    # --- M, MTE1, drain --------------------------------------------------------------------
    cube, mte1 = shared["cube"], shared["mte1"]
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

    # --- fixed by the group: the compute chain, the last step and drain, the first block ------
    bias_mte2: Any = 0.0
    if problem.bias:
        # The estimator fetches one bias slice per block before its copies (exact).
        bias_mte2 = m_iter * n_iter * p.gm_to_l1_latency_cycles + m_iter * cols * (
            c.bias_bytes / np.minimum(p.gm_to_l1_peak_bytes_per_cycle, cap)
        )
    fixed = [cube, mte1, drain] if p.has_fixpipe else [cube, mte1]
    # The scalar pipe's work (simcore.pipeline.scalar, issue 17) with the least copies: under
    # Norm every base block of a direct operand is copied at least once, one copy each.
    least_copies: Any = 0.0
    if c.norm:
        least_copies = (m_iter * (not c.a_via_ub) + n_iter * (not c.b_via_ub)) * k_iter
    fixed.append(scalar_cycles(p, problem, m_iter * n_iter * k_iter, least_copies))
    fixed_busy = np.maximum.reduce([np.broadcast_to(x, rows.shape) for x in fixed])
    fixed_sum = sum(fixed)
    step1, per_lo, step_avg = shared["step1"], shared["per_lo"], shared["step_avg"]
    chain_classes = shared["chain_classes"]
    makespan_fixed: Any = 0.0
    if USE_CHAIN_BOUND:
        chain = (
            np.minimum.reduce([np.broadcast_to(x[0], rows.shape) for x in chain_classes]) + dr_last
        )
        # The estimator's first-block path: the first block's step and then every drain (see
        # the module doc).
        first_copies = _first_copy_latency(c, True) + _first_copy_latency(c, False)
        if problem.bias:
            first_copies += p.gm_to_l1_latency_cycles
        first_path = first_copies + step_avg + drain + (0.0 if p.has_fixpipe else c_out)
        makespan_fixed = np.maximum(chain, first_path)
        # One L0C buffer (dbL0C = 1: pinned, or two blocks do not fit, dbC_max): each block's
        # first MMAD waits for the previous block's drain out of L0C. The estimator prices
        # it in its compute path (``start - (per - mm) + span + bound_ex + inner + dr_last``):
        # ``bound_ex`` adds at least ``ex_c = max(dr - normal, 0)`` at each of the ``blocks -
        # 1`` block boundaries (``dr`` the full block's drain leg out of L0C, ``normal`` the
        # boundary period's loads, per L0 class: _chain_classes), beside the span of every
        # step's period. (Every MMAD and drain leg in series would overshoot it: the span's
        # K-tail steps carry the K-tail loads, shorter than ``normal``.)
        c_pin = space.fixed.get("dbL0C")
        one_c: Any = c_pin == 1
        if c_pin is None and "dbC_max" in g:
            one_c = g["dbC_max"] < 2
        dr_full = (
            c.fix_cycles(np.minimum(bm, rows), np.minimum(bn, cols), cap)
            if p.has_fixpipe
            else c.c_to_ub_cycles(np.minimum(bm, rows), np.minimum(bn, cols))
        )
        drain_ex = [
            np.where(one_c, (m_iter * n_iter - 1) * np.maximum(dr_full - cl[3], 0.0), 0.0)
            for cl in chain_classes
        ]
        drain_chain = np.minimum.reduce(
            [cl[0] + ex for cl, ex in zip(chain_classes, drain_ex, strict=True)]
        )
        makespan_fixed = np.maximum(makespan_fixed, drain_chain + dr_last)
    via_ub = c.a_via_ub or c.b_via_ub
    # Without FixPipe a block's staged copies queue behind the previous block's drain legs
    # (_pass_start_stalls): the full block's L0C->UB leg.
    dr_block = (
        0.0 if p.has_fixpipe else c.c_to_ub_cycles(np.minimum(bm, rows), np.minimum(bn, cols))
    )
    blocks = m_iter * n_iter

    # --- copies: every reuse case L1 can hold, and the split of L1 between A and B ----------
    room = p.l1_bytes - g["bias_l1"]
    a_blk = bm * bk * in_b
    b_blk = bn * bk * in_b
    # Through UB (the vector path) a chunk is one UB tile and two tiles fit UB
    # (simcore.pipeline.costs.vector_path_array: 2 x transLength <= UB, transLength at least the
    # chunk's bytes, simcore.tiling.footprints.trans_length): a chunk holds at most this many
    # blocks.
    ub_cap_a = np.floor(p.ub_bytes / (2.0 * a_blk)) if c.a_via_ub else np.inf
    ub_cap_b = np.floor(p.ub_bytes / (2.0 * b_blk)) if c.b_via_ub else np.inf
    a_panel = bm * k_iter * bk * in_b
    b_panel = bn * k_iter * bk * in_b
    # Resident need of an operand loaded once: all its blocks when inner, one panel when outer.
    a_need = m_iter * a_panel if order == 0 else a_panel
    b_need = n_iter * b_panel if order == 1 else b_panel
    # Copies per pass: each moves step x stepK blocks, no more than the operand's share of L1,
    # and a pass covers all the operand's (row block, K step) blocks. A and B share L1, so
    # their copy counts trade off: for A holding ``ua`` blocks, B holds at most
    # ``(room - ua x a_blk) / b_blk``. The range of ``ua`` is cut into intervals; on each, A's
    # copies are at least those at its top and B's at least those at its bottom. Every tiling
    # of the group falls in one reuse case and one interval, where each of its busy totals and
    # paths is at least the figure priced here, and ``min(max(MK, RB), SQ)`` is non-decreasing
    # in each: the bound is the smallest over the cases and intervals of the combined figure.
    a_total = m_iter * k_iter
    b_total = n_iter * k_iter
    a_pass, b_pass = shared["a_pass"], shared["b_pass"]
    # Chip reads of each reuse case. Whether an operand is loaded once depends on its L1 slots
    # (shared by all cores) and on the core's row groups, so every core with the largest
    # core's rows loads A as it does (once, or at least once per block of its columns); the
    # tail-row cores, with fewer rows, at least once, and as the largest core does when they
    # reuse A alike (simcore.pipeline.traffic.operand_passes): A outer (iterateOrder 1), whose reuse
    # does not depend on its block count, or as many row blocks as the largest core. Likewise
    # B by columns. The HBM floor is increasing in the reads (at the least miss rate).
    tail_m = problem.m - (m_cores - 1) * rows
    tail_n = problem.n - (n_cores - 1) * cols
    full_m = (m_cores - 1) + (tail_m == rows)
    full_n = (n_cores - 1) + (tail_n == cols)
    a_col_blocks = (n_cores - 1) * n_iter + ceil_div(tail_n, bn)
    b_row_blocks = (m_cores - 1) * m_iter + ceil_div(tail_m, bm)
    a_rows_k = rows * k * in_b * full_m
    b_cols_k = cols * k * in_b * full_n
    a_tail_k = (tail_m != rows) * tail_m * k * in_b
    b_tail_k = (tail_n != cols) * tail_n * k * in_b
    a_tail_alike = (order == 1) | (ceil_div(tail_m, bm) == m_iter)
    b_tail_alike = (order == 0) | (ceil_div(tail_n, bn) == n_iter)
    mmads = shared["mmads"]
    best: Any = np.inf
    for a_once in (True, False):
        for b_once in (True, False):
            a_lo = np.ceil(np.where(a_once, a_need, a_blk) / a_blk)
            b_lo = np.ceil(np.where(b_once, b_need, b_blk) / b_blk)
            a_hi = np.floor((room - b_lo * b_blk) / a_blk)
            infeasible = np.where(a_hi >= a_lo, 0.0, np.inf)
            # Through UB an operand's chunk is one UB tile of at least its blocks' bytes, and
            # the vector path needs two tiles in UB (simcore.pipeline.costs.vector_path_array).
            # Loaded once, its chunks fill at most two slots (depth = step x stepK x db, db <= 2),
            # so a chunk holds at least half of what must stay resident.
            for once, via, need, blk in (
                (a_once, c.a_via_ub, a_need, a_blk),
                (b_once, c.b_via_ub, b_need, b_blk),
            ):
                if once and via:
                    tile = np.ceil(np.ceil(need / blk) / 2.0) * blk
                    infeasible = infeasible + np.where(2.0 * tile > p.ub_bytes, np.inf, 0.0)
            a_passes = 1 if a_once else n_iter
            b_passes = 1 if b_once else m_iter
            read = (
                a_rows_k * (n_cores if a_once else a_col_blocks)
                + a_tail_k * (n_cores if a_once else np.where(a_tail_alike, a_col_blocks, n_cores))
                + b_cols_k * (m_cores if b_once else b_row_blocks)
                + b_tail_k * (m_cores if b_once else np.where(b_tail_alike, b_row_blocks, m_cores))
            )
            hbm = (unique + np.maximum(read + write - unique, 0.0) * miss) / p.hbm_bytes_per_cycle
            hbm = np.maximum(hbm, hbm_floor)
            # The core rate of this case: the hit ratio falls as the reloads grow
            # (chip_bandwidth_cap: ``1 - miss x (1 - unique / traffic)``), so the case's least
            # traffic and the order's least miss rate give its largest rate.
            traffic = np.maximum(read + write, 1.0)
            hit_case = 1.0 - np.maximum(traffic - unique, 0.0) * miss / traffic
            rate_case = p.l2_core_port * (hit_case + (1.0 - hit_case) / p.l2_miss_slowdown)
            cap_case = np.minimum(cap, rate_case)
            a_terms = _copy_terms(c, True, a_passes, rows, k, cap_case, a_pass, (bm, bk))
            b_terms = _copy_terms(c, False, b_passes, cols, k, cap_case, b_pass, (bn, bk))
            # Without FixPipe, per operand, slot count and L0 class: its pass-start stalls
            # (_pass_start_stalls), with the largest chunk any split allows (A's share at
            # most a_hi, B's at most what A's least share leaves): the stalls only fall as the
            # chunks grow, so this holds in every split.
            stalls: list[list[list[Any]]] = [[], []]
            if USE_CHAIN_BOUND and not p.has_fixpipe and via_ub and shared.get("stalls", True):
                m3c = c.c_ub_to_gm_cycles(np.minimum(bm, rows), np.minimum(bn, cols), cap_case)
                b_most = np.floor((room - a_lo * a_blk) / b_blk)
                for i, (terms, passes, most, ub_cap, iters, via, off) in enumerate(
                    (
                        (a_terms, a_passes, a_hi, ub_cap_a, m_iter, c.a_via_ub, 1),
                        # B's stalls bound the sum when ex_ab0 >= ex_b0: both staged (see
                        # _pass_start_stalls).
                        (b_terms, b_passes, b_most, ub_cap_b, n_iter, c.a_via_ub and c.b_via_ub, 2),
                    )
                ):
                    for sl in (0, 1):
                        if not via:
                            stalls[i].append([0.0 for _ in chain_classes])
                            continue
                        chunk = np.maximum(np.minimum(np.floor(most / (sl + 1.0)), ub_cap), 1.0)
                        least = _pass_start_stalls(
                            terms, (dr_block, m3c), (sl, chunk, iters, passes, blocks, k_iter)
                        )
                        stalls[i].append([least(cl[off]) for cl in chain_classes])
            # Their compute path per slot pair (the same in every split): per L0 class its
            # chain plus the largest of the stall sums (bound_ex is at least each), then the
            # last drain.
            stalled = [
                [
                    np.minimum.reduce(
                        [
                            cl[0] + np.maximum(np.maximum(st_a, st_b), st_c)
                            for cl, st_a, st_b, st_c in zip(
                                chain_classes, stalls[0][sa], stalls[1][sb], drain_ex, strict=True
                            )
                        ]
                    )
                    + dr_last
                    for sb in (0, 1)
                ]
                for sa in (0, 1)
                if stalls[0]
            ]
            for j in range(splits):
                u0 = a_lo + np.floor(j / splits * (a_hi - a_lo))
                u1 = np.maximum(a_lo + np.floor((j + 1) / splits * (a_hi - a_lo)), 1.0)
                ub_max = np.maximum(np.floor((room - u0 * a_blk) / b_blk), 1.0)
                # Each operand holds one L1 slot (db = 1: chunks of up to its share) or two
                # (chunks of up to half of it, twice the copies); with one slot its copies and
                # the MMADs they feed chain (:func:`_one_slot_chain`). Price the four
                # combinations apart (the chain and the copy count move in opposite ways).
                legs_a = []
                legs_b = []
                # Blocks one chunk holds at most (L1 slot, UB tile), per slot count.
                chunk_a = []
                chunk_b = []
                # Column DMAs at least (0 off the column path), the same for either slot count.
                instr_a = _least_instructions(a_terms, u1)
                instr_b = _least_instructions(b_terms, ub_max)
                for n_slots in (1.0, 2.0):
                    chunk_a.append(np.maximum(np.minimum(np.floor(u1 / n_slots), ub_cap_a), 1.0))
                    chunk_b.append(
                        np.maximum(np.minimum(np.floor(ub_max / n_slots), ub_cap_b), 1.0)
                    )
                    a_copies = np.ceil(a_total / chunk_a[-1])
                    b_copies = np.ceil(b_total / chunk_b[-1])
                    legs_a.append(_copies(a_terms, a_passes * a_copies, instr_a))
                    legs_b.append(_copies(b_terms, b_passes * b_copies, instr_b))
                # Per operand and slot count (combined per pair below): the steps left after
                # its last copy in the copy path, with the copies that shortening costs
                # (_last_chunk_steps).
                after = [
                    [
                        _last_chunk_steps(per_lo, k_iter, terms[0], passes, chunks[sl], legs[sl][3])
                        for sl in (0, 1)
                    ]
                    for terms, passes, chunks, legs in (
                        (a_terms, a_passes, chunk_a, legs_a),
                        (b_terms, b_passes, chunk_b, legs_b),
                    )
                ]
                for sa in (0, 1):
                    for sb in (0, 1):
                        ga, va, ua, _ = legs_a[sa]
                        gb, vb, ub, _ = legs_b[sb]
                        mte2 = ga + gb + bias_mte2
                        vec = va + vb
                        mte3 = ua + ub
                        # Without FixPipe the drain's legs are on V and MTE3 too.
                        pipes = (
                            [mte2, vec, mte3]
                            if p.has_fixpipe
                            else [mte2, drain + vec, c_out + mte3]
                        )
                        busiest = np.maximum(np.maximum(np.maximum.reduce(pipes), fixed_busy), hbm)
                        total = np.maximum(sum(pipes) + fixed_sum, hbm)
                        makespan = makespan_fixed
                        if USE_CHAIN_BOUND:
                            # The estimator's copy path: all MTE2 copies, then the steps left
                            # after the last copy, a typical block's last step and the last
                            # drain (_last_chunk_steps: fewer steps left take more copies).
                            makespan = np.maximum(
                                makespan,
                                mte2 + np.minimum(after[0][sa], after[1][sb]) + step1 + dr_last,
                            )
                            if stalled:
                                # Each block that starts a pass of a staged operand waits for
                                # the drain legs before its copies (_pass_start_stalls).
                                makespan = np.maximum(makespan, stalled[sa][sb])
                            if via_ub:
                                # Its UB staging paths (module doc).
                                g_ub = ga * c.a_via_ub + gb * c.b_via_ub
                                makespan = np.maximum(
                                    makespan, vec + np.maximum(g_ub, mte3) + step1 + dr_last
                                )
                            # One slot: the slot chain against the pipe its copies load
                            # (max(makespan, busiest) is at least both, see _one_slot_chain).
                            for one_slot, terms, via, legs in (
                                (sa == 0, a_terms, c.a_via_ub, legs_a),
                                (sb == 0, b_terms, c.b_via_ub, legs_b),
                            ):
                                if one_slot:
                                    pipe = mte3 if via else mte2 + step1 + dr_last
                                    busiest = np.maximum(
                                        busiest,
                                        _one_slot_chain(terms, via, legs[0][3], mmads, pipe),
                                    )
                        split = np.minimum(np.maximum(makespan, busiest), total)
                        best = np.minimum(best, split + infeasible)
    return best


def _last_chunk_steps(per: Any, k_iter: Any, lat: Any, passes: Any, chunk: Any, priced: Any) -> Any:
    """Least ``steps x per`` left after an operand's last copy, plus the copies that costs.

    Estimator formulas (simcore/estimate/estimator.py ``_core``): ``copy_path = mte2 + tail_after``
    with ``tail_after = (k_iter - last_step - 1) x per + la + lb + mm + dr_last``, where
    ``last_step`` is the larger of ``D_a = (kc_a - 1) x stepKa`` and ``D_b`` (the start of
    each operand's last K chunk), ``per`` is the typical block's period (at least ``max(mm, la
    + lb)``, ``per`` given here) and every copy pays its latency ``lat`` on MTE2 (``mte2``
    sums all copies).

    An operand's chunks hold at most ``s`` K steps (``stepK <= chunk blocks``), so ``D <= (kc
    - 1) x s`` and a pass has ``kc >= 1 + D / s`` copies; with ``p`` passes at least (each of
    ``kc`` copies) its copies are at least ``p x (1 + D / s)``, of which the caller already
    priced ``i0`` (its instructions at least; ``i0 >= p``). The steps left are ``k_iter - 1 -
    D`` with ``D = max(D_a, D_b)``: the operand with the larger D pays ``lat x max(p x (1 + D /
    s) - i0, 0)`` beyond the caller's figure and the other nothing more, so the caller takes
    the smaller of the two operands' figures. Relaxed to a real D in ``[0, k_iter - 1]`` the
    sum is convex piecewise linear with one knee, so its least is at D = 0, at the knee or at
    ``k_iter - 1``.

    Args:
        per: A step's period at least.
        k_iter: K steps.
        lat: The operand's latency per copy.
        passes: Its passes at least.
        chunk: Blocks one of its chunks holds at most.
        priced: Its copies (instructions) the caller already priced.

    Returns:
        Cycles to add to the caller's copies, steps after them, a step and the drain.
    """
    k1 = np.maximum(k_iter - 1, 0)
    s = np.maximum(np.minimum(chunk, k_iter), 1.0)
    # Up to the knee no copy is added (and D = 0 leaves more steps than the knee does): the
    # knee's figure is its steps alone; at k_iter - 1 no step is left.
    knee = np.minimum(np.maximum((priced / passes - 1.0) * s, 0.0), k1)
    at_end = lat * np.maximum(passes * (1.0 + k1 / s) - priced, 0.0)
    return np.minimum(per * (k1 - knee), at_end)


def _pass_start_stalls(
    terms: tuple[Any, ...], drain: tuple[Any, Any], chunking: tuple[Any, ...]
) -> Any:
    """The least stall sum, as a function of the L0 class offset, at an operand's pass starts.

    Estimator formulas (simcore/estimate/estimator.py ``_core``, block boundaries, no FixPipe): the
    compute path ``start - (per - mm) + span + bound_ex + inner + dr_last`` adds ``bound_ex =
    both x max(ex_ab0, ex_c) + only_a x max(ex_a0, ex_c) + only_b x max(ex_b0, ex_c) + rest x
    ex_c`` over the block boundaries (``both = min(pa, pb)``, ``only_a = pa - both``, ...,
    ``pa = passes_a - 1`` the boundaries where A starts a pass, all counts >= 0), with, for
    an operand staged through UB, ``ex_a0 = max(a_ready + la + lb - per + mm, 0)``, ``a_ready
    = dr + max(m3c, va1) + ua1`` (the drain's L0C->UB leg ``dr`` and UB->GM copy ``m3c`` of a
    full block, then the average reorder ``va1`` and UB->L1 leg ``ua1`` of A's copies),
    ``ex_b0 = max(b_ready + lb - per + mm, 0)`` likewise, ``ex_ab0 = max(ex_a0, ab_ready + lb
    - per + mm)``. As ``ex_ab0 >= ex_a0``, ``bound_ex >= pa x ex_a0``; with both operands
    staged ``ab_ready = a_ready + vb1 + ub1 >= b_ready``, so ``ex_ab0 >= ex_b0`` and
    ``bound_ex >= pb x ex_b0`` too. ``la + lb - per + mm`` (``lb - per + mm``) is the class
    offset of :func:`_chain_classes`, so the compute path of each L0 class is at least its
    chain plus this figure plus ``dr_last``.

    The pass count (operand A; B alike): ``passes_a`` counts A's group passes, each of ``kc``
    chunk copies (``loads_a = passes_a x kc``, :func:`simcore.pipeline.traffic.operand_passes`).
    With its K chunks streamed (``kc > slots``) every block reloads its group: ``passes_a`` is the
    block count. Otherwise ``kc <= slots`` (the slot count, 1 or 2: depth = step x stepK x db,
    db <= 2), so ``stepKa >= ceil(k_iter / slots)``, a chunk holds ``stepM x stepKa`` blocks
    at most ``chunk`` (the caller's L1 share per slot, and the UB tile through UB), ``stepM <=
    chunk / ceil(k_iter / slots)`` and there are ``ceil(m_iter / stepM)`` groups, each loaded
    at least ``passes0`` times (once, or once per block of the other operand: the caller's
    reuse case). ``va1 = va / loads_a`` and ``ua1 = ua / loads_a``: with ``q = (P - 1) / (P x
    kc)`` (``P = passes_a``), ``pa x ua1 = pa x lat + q x bytes / rate`` and ``pa x va1 >= q x
    repeats + pa x issue`` (the per-pass floors of :func:`_copy_terms`, over ``passes0`` passes
    of all the core's rows), each non-decreasing in P and non-increasing in ``kc`` (at most
    ``slots``, or ``k_iter`` when streamed); ``pa x (dr + lat + offset)`` is non-decreasing in P
    where ``dr + lat + offset >= 0`` (else at least its value at the block count).

    Args:
        terms: The operand's :func:`_copy_terms` (its reorder and UB->L1 terms).
        drain: ``dr`` and ``m3c`` (at the case's largest bandwidth share: ``m3c`` is
            non-increasing in it).
        chunking: (slot index: 0 one slot, 1 two; chunk blocks at most; the operand's blocks
            along its dimension; passes at least of each group; blocks of the core; K steps).

    Returns:
        ``offset -> cycles``: the least ``bound_ex`` over the tilings of the caller's case.
    """
    dr, m3c = drain
    slot, chunk, iters, passes0, blocks, k_iter = chunking
    n_slots = slot + 1.0
    _, _, v_rep, _, v_ovh, u_lat, u_bytes = terms[:7]
    per_group = np.floor(chunk / np.ceil(k_iter / n_slots))
    fits = np.minimum(blocks, passes0 * np.ceil(iters / np.maximum(per_group, 1.0)))
    # Per case (K chunks in the slots, or streamed): the boundaries ``count - 1`` and the
    # stall sum without the offset (with ``x = dr + lat + offset >= 0``, else see ``least``).
    cases = []
    for count, kc_max in ((np.where(per_group >= 1, fits, blocks), n_slots), (blocks, k_iter)):
        bounds = count - 1.0
        q = bounds / (count * kc_max)
        staged = np.maximum(bounds * m3c, q * v_rep + bounds * v_ovh)
        cases.append((bounds, bounds * (dr + u_lat) + staged + q * u_bytes))

    def least(offset: Any) -> Any:
        x = dr + u_lat + offset
        # (Where x < 0 the boundaries' share is at least blocks - 1 of them; A's offsets are
        # never negative, so this is rare.)
        negative = bool(np.any(x < 0.0))
        out: Any = np.inf
        for bounds, base in cases:
            total = base + bounds * offset
            if negative:
                total = total + np.minimum(x, 0.0) * (blocks - 1.0 - bounds)
            out = np.minimum(out, np.maximum(total, 0.0))
        return out

    return least


def _first_copy_latency(c: Costs, is_a: bool) -> float:
    """Cycles one direct chunk copy of an operand takes at least (0 through UB or by column).

    A direct copy is one instruction, latency plus bytes (:meth:`simcore.pipeline.costs.Costs.
    gm_to_l1_cycles`); the other paths are left at 0.
    """
    p = c.preset
    if (c.a_via_ub if is_a else c.b_via_ub) or (c.a_by_column if is_a else c.b_by_column):
        return 0.0
    if c.a_nd if is_a else c.b_nd:
        return float(p.nd2nz_latency_cycles)
    return float(p.gm_to_l1_latency_cycles)


def _pass_floor(
    c: Costs, is_a: bool, rows: Any, base: Any, tail: Any, k: int, base_k: Any
) -> tuple[Any, Any, Any, Any, Any]:
    """Least reorder repeat cycles, reorder issues and column DMAs of one pass of an operand.

    A pass copies every K chunk of every row group of the core's ``rows`` once. Whatever the
    steps (stepM / stepKa for A), the chunks tile ``rows`` x K, so:

    * a reorder (:func:`simcore.ub.vector.nd2nz_reorder_cycles`) of a chunk of ``r`` ND rows of
      ``w`` bytes costs ``ceil(r / 8) x ceil(w / 32)`` repeats of at least the cheapest strided
      repeat (:func:`simcore.ub.vector.strided_repeat_cycles`), and the sums of ceilings over the
      chunks are at least the ceilings of the sums: ``ceil(R / 8) x ceil(W / 32)`` repeats per
      pass, with (R, W) the operand's ND rows and row bytes (K x rows bytes or rows x K bytes
      by its transpose);
    * each group of 8 ND rows of a chunk is issued at least once (``ceil(R / 8)`` issues per
      pass), and a chunk of more than 255 ND rows issues every repeat on its own (the NZ side's
      uint8 repeat stride): when the ND rows are the operand's rows and ``base`` > 255, every
      row group but a lone tail block (``tail`` rows) has more than 255 rows; when they are
      K rows and baseK > 255, every K chunk but a lone K tail;
    * on the column path a chunk takes one DMA per 32 B column of its ND rows, and the chunks
      that share ND rows (the K chunks of one row group when the ND rows are the operand's
      rows, the row groups of one K chunk when they are K rows) tile one row of W bytes:
      ``ceil(W / 32)`` DMAs per row group (or K chunk), of which a pass has at least
      ``iters / step`` (``iters`` the blocks along that dimension, see :func:`_copies`); when
      the ND rows are the operand's rows, a row group whose K chunks do not all fit in its
      slots is swept again by every block of it (:func:`simcore.pipeline.traffic.operand_passes`).

    Returns:
        Per pass: repeat cycles, issues, column DMAs per row group (or K chunk), ``iters``,
        and the K blocks of one row group when the ND rows are the operand's rows (0 when
        they are K rows); arrays broadcast over the groups.
    """
    p = c.preset
    # K is the ND row dimension when A is transposed (A^T is K x M) or B is not (B is K x N).
    k_rows = c.trans_a if is_a else not c.trans_b
    k_t = k - (ceil_div(k, base_k) - 1) * base_k
    if k_rows:
        nd_rows, row_bytes = 0 * rows + k, rows * c.in_bytes
        big_base, big_tail = base_k, k_t
        iters = ceil_div(k, base_k)
        panel = 0 * rows
    else:
        nd_rows, row_bytes = rows, 0 * rows + k * c.in_bytes
        big_base, big_tail = base, tail
        iters = ceil_div(rows, base)
        panel = ceil_div(k, base_k) + 0 * rows
    blocks, max_repeat = 8, 255
    per_repeat = float(np.min(strided_repeat_cycles(np.arange(p.ub_bank_groups) * 32, p)))
    columns = np.ceil(row_bytes / 32.0)
    repeats = np.ceil(nd_rows / blocks) * columns
    # ND rows in chunks of more than 255 rows: all, or all but a lone tail of <= 255.
    big = np.where(
        big_base > max_repeat, np.where(big_tail > max_repeat, nd_rows, nd_rows - big_tail), 0
    )
    issues = np.maximum(np.ceil(nd_rows / blocks), np.ceil(big / blocks) * columns)
    return repeats * per_repeat, issues, columns, iters, panel


def _first_copy_legs(
    c: Costs, k: int, least_rows: tuple[Any, Any], k_iter: Any, cap: Any
) -> tuple[Any, Any]:
    """Least average MTE2 leg of an A copy and of a B copy (the start-up of the compute path).

    Estimator formula (simcore/estimate/estimator.py ``_core``): ``ga1 = ga / loads_a``, ``ga =
    loads_a x lat + bytes / min(peak, cap)`` (plus the column path's extra DMA latencies, >= 0): at
    least the latency plus the bytes of the average copy, and a copy moves ``bytes / loads``
    on average, where the passes move groups of at least the tail block's rows (16-aligned)
    over all of K, each in at most ``k_iter`` chunks. ``cap`` is at least the estimator's
    bandwidth share; ``least_rows`` are the tail block's rows and columns.
    """
    legs = []
    for is_a, rows in ((True, least_rows[0]), (False, least_rows[1])):
        lat, peak = c.copy_rate(is_a)
        stream = c.l1_tile_bytes(rows, k) / np.minimum(peak, cap) / k_iter
        legs.append(lat + np.maximum(stream, _nd_row_floor(c, is_a, rows, k / k_iter)))
    return legs[0], legs[1]


def _on_the_fly(c: Costs, is_a: bool) -> bool:
    """The operand's copies are on-the-fly ND->NZ GM->L1 copies (910B class)."""
    staged = c.a_via_ub or c.a_by_column if is_a else c.b_via_ub or c.b_by_column
    return not staged and (c.a_nd if is_a else c.b_nd) and c.preset.nd2nz_on_the_fly


def _nd_row_floor(
    c: Costs, is_a: bool, rows: Any, k: Any, bases: tuple[Any, Any] | None = None
) -> Any:
    """Least row-request cycles of on-the-fly ND->NZ copies of ``rows`` x ``k`` (issue 17).

    :meth:`simcore.pipeline.costs.Costs.nd_copy_cycles` is ``latency + max(ND rows x row
    cycles x contention, bytes / rate)``, every piece requesting its rows again: at least one
    piece (MDL), under Norm one per base block along the contiguous dimension (``bases``: the
    operand's base rows and baseK), and a contention of 1. Zero for the other copy paths.
    """
    if not _on_the_fly(c, is_a):
        return 0.0
    k_rows = not c.trans_a if is_a else c.trans_b  # (K is the contiguous dimension)
    if c.norm and bases is not None:
        pieces = ceil_div(k, bases[1]) if k_rows else ceil_div(rows, bases[0])
    else:
        pieces = 1
    return (rows if k_rows else k) * pieces * c.preset.nd2nz_row_cycles


def _copy_terms(
    c: Costs,
    is_a: bool,
    passes: Any,
    rows: Any,
    k: int,
    cap: Any,
    per_pass: tuple[Any, ...],
    bases: tuple[Any, Any] | None = None,
) -> tuple[Any, ...]:
    """The parts of :func:`_copies` that do not depend on the copy count.

    ``passes`` loads of an operand's ``rows`` x K: bytes as L1 stores them (rows aligned to
    16, K to C0), moved at no more than ``min(peak, cap)``; the vector reorder's repeats and
    least issues (:func:`_pass_floor`) per pass; on the column path the column DMAs.

    Returns:
        (MTE2 latency per copy, MTE2 bytes time, V repeat cycles, least V issues, V issue
        cycles, MTE3 latency per copy, MTE3 bytes time, passes x column DMAs per chunk row,
        the block count those columns repeat over, the K blocks of a row group or 0: see
        :func:`_pass_floor`); V and MTE3 terms are 0 for direct copies.
    """
    p = c.preset
    nbytes = passes * c.l1_tile_bytes(rows, k)
    via_ub = c.a_via_ub if is_a else c.b_via_ub
    eff = c.a_eff if is_a else c.b_eff
    rep_cycles, issues, columns, iters, panel = per_pass
    if via_ub:
        return (
            p.gm_to_ub_latency_cycles,
            nbytes / np.minimum(p.gm_to_ub_peak_bytes_per_cycle * eff, cap),
            passes * rep_cycles,
            passes * issues,
            p.vector_issue_overhead_cycles,
            p.gm_to_ub_latency_cycles,
            nbytes / p.ub_to_l1_bytes_per_cycle,
            0.0,
            1.0,
            0.0,
        )
    by_column = c.a_by_column if is_a else c.b_by_column
    lat, peak = c.copy_rate(is_a)
    least = passes * columns if by_column else 0.0
    # (Each pass requests every ND row at least once: _nd_row_floor over the pass.)
    rows_floor = passes * _nd_row_floor(c, is_a, rows, k, bases)
    stream = np.maximum(nbytes / np.minimum(peak, cap), rows_floor)
    if c.norm and bases is not None and _on_the_fly(c, is_a):
        # Norm copies each base block of an on-the-fly ND operand apart, each paying the copy
        # latency: a pass is at least its blocks' copies (issue 17; iters 1, panel 0 keep
        # _least_instructions at this count).
        least = passes * ceil_div(rows, bases[0]) * ceil_div(k, bases[1])
        return (lat, stream, 0.0, 0.0, 0.0, 0.0, 0.0, least, 1.0, 0.0)
    return (lat, stream, 0.0, 0.0, 0.0, 0.0, 0.0, least, iters, panel)


def _copies(terms: tuple[Any, ...], loads: Any, least: Any) -> tuple[Any, Any, Any, Any]:
    """(MTE2, V, MTE3, instructions) at least of an operand's ``loads`` copies.

    Each copy pays the copy latency and the bytes move at their rate (:func:`_copy_terms`).
    The vector reorder pays the repeats and issues of :func:`_pass_floor` per pass and at
    least one issue per copy. On the column path a chunk takes one DMA per 32 B column of its
    ND rows: the columns of one pass tile ``iters`` x the columns of :func:`_pass_floor` (each
    row group, or each K chunk, spans the whole other dimension), and the operand holding at
    most ``share`` blocks of L1 cuts the ``iters`` blocks into at least ``iters / share``
    groups or K chunks. When the ND rows are the operand's rows, a row group of ``step``
    blocks whose ``panel`` K blocks do not all fit in its slots (``share < step x panel``) is
    streamed and swept again by each of its blocks (:func:`simcore.pipeline.traffic.operand_passes`:
    ``iters`` sweeps a pass, whatever the step); one that fits has ``step <= share / panel``,
    so a pass has at least ``iters / floor(share / panel)`` sweeps; each sweep of a row group
    moves all its K bytes, ``ceil(W / 32)`` DMAs at least (sum of ceilings >= ceiling of sum):
    ``least`` (:func:`_least_instructions`).
    """
    g_lat, g_bytes, v_rep, v_issues, v_ovh, u_lat, u_bytes = terms[:7]
    instructions = np.maximum(loads, least)
    mte2 = instructions * g_lat + g_bytes
    vec = v_rep + np.maximum(loads, v_issues) * v_ovh
    mte3 = loads * u_lat + u_bytes
    return mte2, vec, mte3, instructions


def _least_instructions(terms: tuple[Any, ...], share: Any) -> Any:
    """Column DMAs at least of an operand holding ``share`` blocks (see :func:`_copies`)."""
    least, iters, panel = terms[7:]
    if np.isscalar(least) and least == 0.0:
        return 0.0
    share = np.maximum(share, 1.0)
    fit_step = np.floor(share / np.maximum(panel, 1))
    sweeps = np.where(
        panel > 0,
        np.where(fit_step >= 1, np.ceil(iters / np.maximum(fit_step, 1.0)), iters),
        np.ceil(iters / share),
    )
    return least * sweeps


def _one_slot_chain(
    terms: tuple[Any, ...],
    via_ub: bool,
    instr: Any,
    mmads: tuple[tuple[Any, Any], ...],
    partner: Any,
) -> Any:
    """Least ``max(makespan, busiest)`` with an operand in one L1 slot (db = 1).

    Simulator precedences, a floor of the estimator's slot chains. With one slot, chunk
    ``j + 1``'s copy (its slot-waiting leg: the GM->L1 copy, all its column DMAs, or the
    UB->L1 leg through UB) waits for the last read of chunk ``j``, the read of some step
    ``t``, which waits for its L0 buffer (dbL0 <= 2): the MMAD of step ``t - 2`` is done. Each
    step reads one chunk and, with one slot, the steps of a chunk are consecutive; the M pipe
    runs in order, so every MMAD of chunk ``j`` but its last two ran between chunk ``j``'s
    arrival and chunk ``j + 1``'s copy. The arrivals chain, and the makespan is at least
    ``sum_j d(j) + sum_j e(j)``: ``d`` the copy legs (latency per instruction plus bytes at
    the capped rate), ``e(j)`` chunk ``j``'s MMADs but its last two, at least ``m(j) - 2 x
    mm_max`` (``m(j)`` its MMAD cycles, ``mm_max`` the largest full-K MMAD) and at least
    ``(s(j) - 2) x mm_min`` (``s(j)`` its steps, ``mm_min`` the smallest full-K MMAD), and
    ``>= 0``. Only full-K steps are counted (every block's K steps but its last: dropping a
    step never raises the figure), so with ``work`` = their MMAD cycles (or their count x
    ``mm_min``) and ``per_copy`` = ``2 x mm_max`` (or ``2 x mm_min``), ``L`` copies, ``I``
    instructions at least (``instr``: ``max(loads, column DMAs)``, see :func:`_copies`) and
    latency ``lat``, the sum is at least ``bytes + g(L)``, ``g(L) = max(L, I) x lat +
    max(work - L x per_copy, 0)``, non-increasing for ``L <= I``; both pairs are priced and
    the larger figure kept.

    Where ``lat < per_copy`` more copies shorten that chain but lengthen the pipe the
    copies load (``partner``: the copy path ``mte2 + step + dr_last`` for direct copies, the
    MTE3 busy through UB, priced at ``instr``; each further copy adds ``lat``), and the
    estimate's ``max(makespan, busiest)`` is at least both. So the figure returned is the
    least over ``L >= I`` of ``max(chain(L), partner(L))``: both convex piecewise linear in
    ``L``, their maximum too, so the least is at ``I`` or at a break point above it (the
    chain's knee ``work / per_copy``, their crossing): at ``I`` where ``lat >= per_copy``
    (both rise), else at the crossing clipped to ``[I, knee]`` (the chain falls
    there, the partner rises, and past the knee both rise). It is non-decreasing in
    ``partner``, so any lower bound of that pipe may be passed.

    Estimator formulas it relies on (simcore/estimate/estimator.py ``_core``): ``chain_a`` /
    ``chain_b`` (a single slot: ``passes x ((kc - 1) x hop_f + hop_l)``, hop = slot-waiting leg
    + the chunk's reads :func:`_restart_reads`, at least ``(r - 2) x mm`` for ``r`` steps, +
    ``stay``, the compute of the other blocks that read the chunk) enter its makespan with
    ``+ mm + dr_last``; ``tests/tiler/test_bound.py`` checks the bound against it.
    """
    g_lat, g_bytes, _, _, _, u_lat, u_bytes = terms[:7]
    # (Through UB the UB->L1 leg is one instruction a copy: instr = loads.)
    lat, nbytes = (u_lat, u_bytes) if via_ub else (g_lat, g_bytes)
    base = instr * lat
    out: Any = 0.0
    for work, per_copy in mmads:
        knee = work / per_copy
        cross = (nbytes + work - partner + base) / per_copy
        # Where lat >= per_copy both lines rise from L = I on; otherwise the chain falls until
        # the knee and the partner rises: the least is at their crossing, clipped to [I, knee].
        n = np.where(lat < per_copy, np.clip(cross, instr, np.maximum(knee, instr)), instr)
        extra = (n - instr) * lat
        chain = nbytes + base + extra + np.maximum(work - n * per_copy, 0.0)
        out = np.maximum(out, np.maximum(chain, partner + extra))
    return out


del align_up
