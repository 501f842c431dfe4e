"""Per-operand lower bounds of the estimator on chips with a UB path (310P, 910A).

:func:`simcore.estimate.estimator.operand_floor_arrays` bounds the estimate of every tiling that
shares one operand's L1 choice on chips without a UB path. On UB-path chips it returns None: there
the data path of a tiling (vector reorder through UB, or 32 B column DMA into L1 when the two
``transLength`` halves do not fit in UB, :func:`simcore.pipeline.costs.vector_path_array`) depends
on both operands' buffers. :func:`ub_operand_floor_arrays` fills that gap from the busy totals and
cost formulas of :mod:`simcore.pipeline.costs` and :mod:`simcore.pipeline.traffic` (not from the
estimator's schedule code), taking the smaller of the two paths wherever the partner operand can
put the tiling on either.

Why it is a bound. The estimator prices a tiling as ``min(max(start-up + makespan, busiest
pipe), sum of busy) + launch`` (its contract, :mod:`simcore.estimate.estimator`; the start-up
:func:`simcore.pipeline.scalar.startup_cycles`, 0 where it overlaps the pipes, combined by
:func:`simcore.pipeline.scalar.after_startup`). For an operand's L1 choice (A:
stepM, stepKa, depthA1; B: stepN, stepKb, depthB1; with the core split, base block and
iterateOrder), on a given data path:

* its chunk copies on the largest core (the one the estimator prices) are fixed: the loads and
  elements of :func:`simcore.pipeline.traffic.operand_traffic`, each GM->UB (MTE2), vector reorder
  (V) and UB->L1 (MTE3) leg or direct / column-DMA copy priced with :mod:`simcore.pipeline.costs`'s
  formulas at the largest bandwidth share any tiling of the core split can get (every transfer cost
  is ``bytes / min(peak, cap)``, non-increasing in the cap);
* the cube (M), L1->L0 (MTE1) and drain (V / MTE3 without FixPipe, FIX with it) work of the
  core is fixed by the base block (the same instructions whatever the steps and flags), and so
  is the bias fetch on MTE2; the scalar pipe's is at least its start-up and one step per K step
  (:func:`simcore.pipeline.scalar.least_scalar_cycles`: no copy counted), so it holds the start-up;
* so each pipe's busy total is at least the operand's own share plus the fixed work (the
  partner's copies are >= 0), the busiest pipe at least the largest of these and the sum of
  busy at least their sum;
* through UB the estimator's makespan is at least ``V(inputs) + max(GM->UB, UB->L1) + la + lb
  + mm + last drain`` (its UB staging paths: every reorder waits for the previous UB->L1 copy
  and every GM->UB copy for the previous reorder), and the operand's own reorders and legs are
  part of those sums;

and ``min(max(start-up + MK, RB), SQ)`` is non-decreasing in each of MK, RB and SQ (off UB, MK
is 0: the start-up alone). None of these terms
reads an L0 flag or a field of the other operand. The path: the vector path needs
``max(shareUbSize, 2 x transLength) <= UB``; shareUbSize is fixed by the core split and base
block, and transLength is the largest of the A, B, C and bias tiles in UB, each non-decreasing
in the steps (a ``rows x cols`` tile takes ``rows x cols`` elements, ``rows x (cols + 16)``
when cols is a multiple of 256, and the step extents are multiples of 16). So the partner can
make the vector path only if it fits with the partner's steps at 1, and the column path only
if it does not fit with the partner's steps at their largest (its whole core extent and K);
the floor is the smallest over the paths the partner can reach.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from simcore.hardware.presets import HardwarePreset
from simcore.pipeline.busy import compute_busy, drain_busy
from simcore.pipeline.costs import Costs, ceil_div, vector_path_array
from simcore.pipeline.scalar import after_startup, least_scalar_cycles, startup_cycles
from simcore.pipeline.traffic import (
    kernel_us,
    l2_share_most,
    largest_core_extent,
    operand_traffic,
    slots,
)
from simcore.pipeline.transfer import chunk_cost_sum  # the estimator's V and DMA totals
from simcore.tiling.footprints import computes_ub_sizes, uses_ub_path
from simcore.tiling.problem import Problem
from simcore.ub.sizes import operand_ub_tile_bytes_array

__all__ = [
    "FixedWork",
    "FloorParts",
    "PathWork",
    "split_bandwidth_cap",
    "ub_operand_copies",
    "ub_operand_floor_arrays",
    "ub_pair_floor_from_copies",
    "ub_pair_floor_us",
    "ub_path_work",
]

#: Relative margin against floating-point rounding (the estimator sums in another order).
_ROUNDING = 1e-9


def ub_operand_floor_arrays(
    problem: Problem,
    preset: HardwarePreset,
    fields: dict[str, Any],
    parts: bool = False,
    operands: tuple[bool, ...] = (True, False),
    work: dict[bool, FixedWork] | None = None,
) -> dict[str, Any] | None:
    """Lower bounds of the estimate that depend on one operand's L1 choice (UB-path chips).

    For each entry, ``time_a_us`` is at most the estimated time of every tiling with the same
    core split, base block, iterateOrder and A choice (stepM, stepKa, depthA1), whatever its B
    choice and L0 flags; ``time_b_us`` likewise for B. The proof is in the module doc.

    Args:
        problem: The problem.
        preset: The chip.
        fields: Struct fields as integer arrays (``singleCoreM, singleCoreN, baseM, baseN,
            baseK, stepM, stepN, stepKa, stepKb, depthA1, depthB1, iterateOrder``); only the
            operand's own L1 fields are read for its floor.
        parts: Also return, as ``parts_a`` and ``parts_b``, each operand's :class:`FloorParts`
            per data path it can reach (for :func:`ub_pair_floor_us`).
        operands: The operands whose floors to compute (True: A, False: B); a caller with the
            rows of one operand's options needs that operand's only (the other's figures of
            the same rows would be computed for nothing: half the cost).
        work: The work fixed by the group per data path (:class:`FixedWork`), filled here and
            reused by later calls on the same problem and chip (a batch's A rows, then its B
            rows: the same groups); None: shared by this call's operands only.

    Returns:
        ``time_a_us`` and ``time_b_us`` per entry (launch overhead included; those of
        ``operands``), or None on chips without a UB path (there
        :func:`simcore.estimate.estimator.operand_floor_arrays` applies).
    """
    f = {name: np.asarray(v, dtype=np.int64) for name, v in fields.items()}
    if vector_path_array(problem, f, preset) is None:
        return None
    k = problem.k
    sm, bm, bn, bk = f["singleCoreM"], f["baseM"], f["baseN"], f["baseK"]
    core, cap = _core_and_cap(problem, preset, f)
    m_iter = ceil_div(core["singleCoreM"], bm)
    n_iter, k_iter = ceil_div(core["singleCoreN"], bn), ceil_div(k, bk)
    one = np.ones_like(bm)
    out: dict[str, Any] = {}
    work = {} if work is None else work
    for is_a in operands:
        # The partner's steps at their smallest and largest decide which paths it can reach.
        lo, hi = dict(f), dict(f)
        step, step_k = ("stepN", "stepKb") if is_a else ("stepM", "stepKa")
        lo[step], lo[step_k] = one, one
        hi[step], hi[step_k] = (n_iter if is_a else m_iter), k_iter
        vec_lo = vector_path_array(problem, lo, preset)
        vec_hi = vector_path_array(problem, hi, preset)
        assert vec_lo is not None and vec_hi is not None
        best: Any = np.inf
        by_path: list[FloorParts] = []
        for on_vector, reachable in ((True, vec_lo), (False, ~vec_hi)):
            if not reachable.any():
                continue
            c = Costs(problem, preset, on_vector)
            fixed = _fixed_work_by_group(c, problem, core, cap, work.get(on_vector))
            work[on_vector] = fixed
            part = _floor_parts(c, problem, core, is_a, fixed.rows)
            floor = _combine(part.pipes, part.makespan, part.fixed[8])
            best = np.minimum(best, np.where(reachable, floor, np.inf))
            if parts:
                by_path.append(dataclasses.replace(part, on_vector=on_vector, reach=reachable))
        if parts:
            out["parts_a" if is_a else "parts_b"] = by_path
        cycles = np.broadcast_to(best, sm.shape) * (1.0 - _ROUNDING)
        out["time_a_us" if is_a else "time_b_us"] = kernel_us(preset, cycles / preset.clock_mhz)
    return out


def _core_and_cap(
    problem: Problem, preset: HardwarePreset, f: dict[str, Any]
) -> tuple[dict[str, Any], Any]:
    """The fields at the largest core's share, and the largest bandwidth cap of the split."""
    m, n = problem.m, problem.n
    sm, sn = f["singleCoreM"], f["singleCoreN"]
    # The largest core's share, as the estimator prices it (singleCoreN above N: N columns).
    core = {
        **f,
        "singleCoreM": largest_core_extent(m, sm),
        "singleCoreN": largest_core_extent(n, sn),
    }
    return core, split_bandwidth_cap(problem, preset, sm, sn)


def split_bandwidth_cap(problem: Problem, preset: HardwarePreset, sm: Any, sn: Any) -> Any:
    """The largest share of the chip's bandwidth a core of the split can get (bytes a cycle).

    Every reload hitting L2: :func:`simcore.pipeline.traffic.chip_bandwidth_cap` with hit = 1,
    for the core split ``singleCoreM = sm``, ``singleCoreN = sn``.
    """
    cores = ceil_div(problem.m, sm) * ceil_div(problem.n, sn)
    return np.minimum(
        preset.l2_bytes_per_cycle * l2_share_most(problem, preset) / np.maximum(cores, 1),
        preset.l2_core_port,
    ).astype(np.float64)


def ub_operand_copies(
    problem: Problem, preset: HardwarePreset, fields: dict[str, Any], is_a: bool
) -> dict[bool, tuple[Any, Any, Any, Any]] | None:
    """One operand's own copy cycles per row and data path (UB-path chips), for pair bounds.

    Args:
        problem: The problem.
        preset: The chip.
        fields: The core split, base block, iterateOrder and the operand's L1 fields (A:
            ``stepM, stepKa, depthA1``; B: ``stepN, stepKb, depthB1``) as integer arrays.
        is_a: Whether the rows are A's options (else B's).

    Returns:
        Per data path (True: the vector path), the (MTE2, V, MTE3) cycles ``g, v, u`` of
        :func:`ub_pair_floor_us`'s parts (the same figures) and, on the vector path, whether
        the operand's UB tile fits (``2 x`` its tile within UB: a tiling is on the vector path
        only where both operands' tiles and the group's fit, ``simcore.ub.path``); None on
        chips without a UB path.
    """
    f = {name: np.asarray(v, dtype=np.int64) for name, v in fields.items()}
    if not uses_ub_path(problem, preset):
        return None
    core, cap = _core_and_cap(problem, preset, f)
    # (Where the chip sizes no UB buffer, transLength is 0 and no operand tile counts.)
    tile = operand_ub_tile_bytes_array(problem, f, is_a) * computes_ub_sizes(preset)
    out: dict[bool, tuple[Any, Any, Any, Any]] = {}
    for on_vector in (True, False):
        c = Costs(problem, preset, on_vector)
        g, v, u, _ = _own_copies(c, problem, core, is_a, cap)
        shape = core["baseM"].shape
        g, v, u = (np.broadcast_to(np.asarray(x, dtype=np.float64), shape) for x in (g, v, u))
        fits = 2 * tile <= preset.ub_bytes if on_vector else np.ones(shape, dtype=bool)
        out[on_vector] = (g, v, u, fits)
    return out


@dataclass(frozen=True)
class PathWork:
    """What the group fixes on one data path, for :func:`ub_pair_floor_from_copies`.

    Attributes:
        fixed: :attr:`FloorParts.fixed` per entry.
        via_ub: Whether A and whether B are staged through UB on this path.
    """

    fixed: tuple[Any, ...]
    via_ub: tuple[bool, bool]


def ub_path_work(
    problem: Problem, preset: HardwarePreset, fields: dict[str, Any], on_vector: bool
) -> PathWork:
    """The work the groups ``fields`` (core split and base block per entry) fix on one path."""
    f = {name: np.asarray(v, dtype=np.int64) for name, v in fields.items()}
    core, cap = _core_and_cap(problem, preset, f)
    c = Costs(problem, preset, on_vector)
    work = _fixed_work_by_group(c, problem, core, cap).rows
    fixed = _fixed_parts(c, problem, core, work, np.zeros(f["baseM"].shape))
    return PathWork(fixed, (bool(c.a_via_ub), bool(c.b_via_ub)))


def ub_pair_floor_from_copies(
    preset: HardwarePreset,
    work: PathWork,
    at: Any,
    own: tuple[tuple[Any, Any, Any], tuple[Any, Any, Any]],
) -> Any:
    """:func:`ub_pair_floor_us` on one data path from given copy figures of A and B (us).

    ``work``: :func:`ub_path_work` of the groups, taken at entries ``at``; ``own``: A's and B's
    (MTE2, V, MTE3) copy cycles at those entries (:func:`ub_operand_copies`). The figure is
    non-decreasing in each of them (:func:`_pair_cycles`), so with each at most that of an
    option of the group, it is at most the pair floor of every pair of those options on this
    path, and so at most their estimates.
    """
    value = _pair_cycles(work.fixed, at, own[0], own[1], work.via_ub)
    cycles = np.broadcast_to(value, np.shape(at)) * (1.0 - _ROUNDING)
    return kernel_us(preset, cycles / preset.clock_mhz)


@dataclass(frozen=True)
class FloorParts:
    """One operand's floor on one data path, in its parts (cycles, per entry).

    Attributes:
        on_vector: The data path (vector reorder through UB, or not).
        reach: Where the partner operand can put the tiling on this path.
        via_ub: Whether the operand is staged through UB on this path.
        own: The operand's own (MTE2, V, MTE3) copy cycles: ``g``, ``v``, ``u``.
        fixed: The work fixed by the group: M, MTE1, the bias slices on MTE2, the drain's V,
            MTE3 and FIX legs, ``step1 + dr_last`` (what follows the last copy), the scalar
            pipe's least busy total and the serial start-up (0.0 where it overlaps).
        pipes: The seven busy floors with the operand's own copies (M, MTE1, MTE2, V, MTE3,
            FIX, SCALAR).
        makespan: The UB staging path with the operand's own legs (0 off UB), before the
            start-up.
    """

    on_vector: bool
    reach: Any
    via_ub: bool
    own: tuple[Any, Any, Any]
    fixed: tuple[Any, Any, Any, Any, Any, Any, Any, Any, float]
    pipes: list[Any]
    makespan: Any


def _combine(pipes: list[Any], makespan: Any, startup: float) -> Any:
    """``min(max(start-up + MK, RB), SQ)``: RB the busiest of ``pipes``, SQ their sum.

    (:func:`simcore.pipeline.scalar.after_startup`; the pipes hold the scalar pipe's, whose
    total holds the start-up.)
    """
    resource = np.maximum.reduce(pipes)
    sequential = sum(pipes)
    return after_startup(makespan, resource, sequential, startup)


def ub_pair_floor_us(
    preset: HardwarePreset, parts: tuple[list[FloorParts], list[FloorParts]], ia: Any, ib: Any
) -> Any:
    """A floor (us) of every tiling with A's choice ``ia`` and B's ``ib`` (UB-path chips).

    ``parts`` are the ``parts_a`` and ``parts_b`` of :func:`ub_operand_floor_arrays` over the
    rows of the two operands' choices (the same group and iterateOrder for each pair ``ia[i]``,
    ``ib[i]``). The pair's copies share the pipes: MTE2 carries A's and B's (and the bias
    slices), V both reorders and the drain's L0C->UB leg, MTE3 both UB->L1 legs and the drain's
    UB->GM leg; through UB the staging path is ``V(both inputs) + max(GM->UB, UB->L1 of both) +
    step1 + dr_last``. Each is the module's per-operand argument with the partner's copies
    counted instead of left at zero, so this is at least both operand floors of the pair, and
    still at most the estimate. The pair's data path is one both operands can reach, so the
    least over the paths both reach is taken.
    """
    best: Any = np.inf
    for pa in parts[0]:
        for pb in parts[1]:
            if pa.on_vector != pb.on_vector:
                continue
            reach = np.asarray(pa.reach)[ia] & np.asarray(pb.reach)[ib]
            own_a = tuple(_take(x, ia) for x in pa.own)
            own_b = tuple(_take(x, ib) for x in pb.own)
            value = _pair_cycles(pa.fixed, ia, own_a, own_b, (pa.via_ub, pb.via_ub))
            best = np.minimum(best, np.where(reach, value, np.inf))
    cycles = np.broadcast_to(best, np.shape(ia)) * (1.0 - _ROUNDING)
    return kernel_us(preset, cycles / preset.clock_mhz)


def _pair_cycles(
    fixed: tuple[Any, ...], at: Any, own_a: tuple[Any, ...], own_b: tuple[Any, ...], via: Any
) -> Any:
    """:func:`ub_pair_floor_us`'s ``min(max(MK, RB), SQ)`` of one data path (cycles).

    ``fixed`` (:attr:`FloorParts.fixed`) taken at entries ``at``; ``own_a`` and ``own_b`` the
    operands' (MTE2, V, MTE3) copy cycles; ``via`` whether each is staged through UB. The
    figure is non-decreasing in each copy figure (sums, maxima and minima of them, each
    monotone in floating point too), which :func:`ub_pair_floor_from_copies` relies on.
    """
    cube, mte1, bias, drain_v, drain_m3, drain_fix, after, scalar, startup = fixed
    # (What the pair does not move, summed per A row before the gathers; the scalar pipe's
    # least total among them.)
    fixed_most = _take(np.maximum(np.maximum(np.maximum(cube, mte1), drain_fix), scalar), at)
    fixed_sum = _take(np.asarray(cube) + mte1 + drain_fix + scalar, at)
    ga, va, ua = own_a
    gb, vb, ub = own_b
    mte2 = _take(bias, at) + ga + gb
    v_in = va + vb
    u_in = ua + ub
    vec = _take(drain_v, at) + v_in
    mte3 = _take(drain_m3, at) + u_in
    resource = np.maximum(np.maximum(fixed_most, mte2), np.maximum(vec, mte3))
    sequential = fixed_sum + mte2 + vec + mte3
    makespan: Any = 0.0
    if via[0] or via[1]:
        g_ub = ga * via[0] + gb * via[1]
        makespan = v_in + np.maximum(g_ub, u_in) + _take(after, at)
    # (The start-up, 0.0 unless it runs serial, before the path: the scalar pipe in the sum.)
    return after_startup(makespan, resource, sequential, startup)


def _take(x: Any, idx: Any) -> Any:
    """Entries ``idx`` of a per-entry array (a scalar stays a scalar)."""
    arr = np.asarray(x, dtype=np.float64)
    return arr[idx] if arr.ndim else arr


def _own_copies(
    c: Costs, problem: Problem, f: dict[str, Any], is_a: bool, cap: Any
) -> tuple[Any, Any, Any, bool]:
    """One operand's own (MTE2, V, MTE3) copy cycles ``g, v, u`` on ``c``'s data path.

    The chunk copies of the largest core (``f``: its extents) at the bandwidth cap ``cap``;
    also whether the operand is staged through UB there.
    """
    p = c.preset
    k = problem.k
    rows, cols = f["singleCoreM"], f["singleCoreN"]
    bm, bn, bk = f["baseM"], f["baseN"], f["baseK"]
    m_iter, n_iter = ceil_div(rows, bm), ceil_div(cols, bn)
    order0 = f["iterateOrder"] == 0
    reorder: Any
    if is_a:
        extent, base, step, step_k, depth = rows, bm, f["stepM"], f["stepKa"], f["depthA1"]
        other_blocks, inner = n_iter, order0
        via_ub, by_column, reorder = c.a_via_ub, c.a_by_column, c.nd2nz_a_cycles
    else:
        extent, base, step, step_k, depth = cols, bn, f["stepN"], f["stepKb"], f["depthB1"]
        other_blocks, inner = m_iter, ~order0
        via_ub, by_column, reorder = c.b_via_ub, c.b_by_column, c.nd2nz_b_cycles
    n_slots = slots(depth, step, step_k)
    loads, elements = operand_traffic(
        extent, base, step, k, bk, step_k, n_slots, other_blocks, inner, c.c0
    )
    nbytes = elements * c.in_bytes
    zero = 0.0 * nbytes
    lat, peak = c.copy_rate(is_a)
    if via_ub:
        g = loads * lat + nbytes / np.minimum(peak, cap)
        v = chunk_cost_sum(reorder, extent, base, step, n_slots, other_blocks, inner, k, bk, step_k)
        u = loads * p.gm_to_ub_latency_cycles + nbytes / p.ub_to_l1_bytes_per_cycle
    else:
        instructions = loads
        if by_column:
            # One MTE2 instruction (and latency) per 32 B column.
            instructions = chunk_cost_sum(
                lambda r, kk: c.load_instructions(is_a, r, kk),
                extent, base, step, n_slots, other_blocks, inner, k, bk, step_k,
            )  # fmt: skip
        g = instructions * lat + nbytes / np.minimum(peak, cap)
        v, u = zero, zero
    return g, v, u, bool(via_ub)


def _floor_parts(
    c: Costs, problem: Problem, f: dict[str, Any], is_a: bool, work: tuple[Any, ...]
) -> FloorParts:
    """One operand's choice on one data path, in the parts of ``min(max(MK, RB), SQ)``.

    ``work``: :func:`_fixed_work` of the entries (with ``cap``, the bandwidth cap, last).
    """
    g, v, u, via_ub = _own_copies(c, problem, f, is_a, work[-1])
    fixed = _fixed_parts(c, problem, f, work, 0.0 * g)
    cube, mte1, bias, drain_v, drain_m3, drain_fix, _, scalar, _ = fixed
    mte2 = g + bias
    pipes = [cube, mte1, mte2, drain_v + v, drain_m3 + u, drain_fix, scalar]
    shape = f["singleCoreM"].shape
    pipes = [np.broadcast_to(np.asarray(x, dtype=np.float64), shape) for x in pipes]
    makespan = 0.0 * g
    if via_ub:
        # (Summed in this order, not through ``after``: the same floats as before.)
        step1, dr_last = work[6], work[5]
        makespan = v + np.maximum(g, u) + step1 + dr_last
    # (on_vector and reach are the caller's: it knows the path and who can reach it.)
    return FloorParts(
        on_vector=True,
        reach=None,
        via_ub=bool(via_ub),
        own=(g, v, u),
        fixed=fixed,
        pipes=pipes,
        makespan=makespan,
    )


def _fixed_parts(
    c: Costs, problem: Problem, f: dict[str, Any], work: tuple[Any, ...], zero: Any
) -> tuple[Any, Any, Any, Any, Any, Any, Any, Any, float]:
    """:attr:`FloorParts.fixed` of the entries ``f`` from their :func:`_fixed_work` ``work``.

    ``zero``: zeros of the entries' shape (the bias slices' figure where there is no bias).
    """
    p = c.preset
    rows, cols = f["singleCoreM"], f["singleCoreN"]
    m_iter, n_iter = ceil_div(rows, f["baseM"]), ceil_div(cols, f["baseN"])
    cube, mte1, drain_v, drain_fix, drain_m3, dr_last, step1, scalar, cap = work
    bias: Any = zero
    if problem.bias:
        # One bias slice per block before its copies (fixed by the base block).
        bias = zero + (
            m_iter * n_iter * p.gm_to_l1_latency_cycles
            + m_iter * cols * (c.bias_bytes / np.minimum(p.gm_to_l1_peak_bytes_per_cycle, cap))
        )
    startup = startup_cycles(p, problem)
    return cube, mte1, bias, drain_v, drain_m3, drain_fix, step1 + dr_last, scalar, startup


@dataclass(frozen=True)
class FixedWork:
    """:func:`_fixed_work` per distinct core split and base block, and at a call's entries.

    Attributes:
        radix: The code of an entry: its fields (``_KEY_FIELDS``) in these radices.
        codes: The distinct codes, sorted.
        values: :func:`_fixed_work` at each distinct code, with the bandwidth cap last.
        rows: ``values`` at the entries of the call that computed or reused this.
    """

    radix: tuple[int, ...]
    codes: Any
    values: tuple[Any, ...]
    rows: tuple[Any, ...]


#: The fields that fix :func:`_fixed_work` (and the bandwidth cap, from the core count).
_KEY_FIELDS = ("singleCoreM", "singleCoreN", "baseM", "baseN", "baseK")


def _fixed_work_by_group(
    c: Costs, problem: Problem, f: dict[str, Any], cap: Any, known: FixedWork | None = None
) -> FixedWork:
    """:func:`_fixed_work` once per distinct core split and base block among the entries.

    A caller passes the options of a few groups, hundreds each; the drain costs go through the
    vector model, so pricing each group once and gathering is several times cheaper. ``known``:
    the figures of an earlier call on the same path, problem and chip, gathered where they hold
    every entry's code (the B rows of a batch after its A rows) instead of priced again.
    """
    if (
        known is not None
        and known.codes.shape[0]
        and all(
            not f[name].size or int(f[name].max()) < radix
            for name, radix in zip(_KEY_FIELDS, known.radix, strict=True)
        )
    ):
        code = _codes(f, known.radix)
        at = np.minimum(np.searchsorted(known.codes, code), known.codes.shape[0] - 1)
        if np.array_equal(known.codes[at], code):
            rows = tuple(x[at] for x in known.values)
            return dataclasses.replace(known, rows=rows)
    radix = tuple(int(f[name].max()) + 1 if f[name].size else 1 for name in _KEY_FIELDS)
    if np.prod(np.array(radix, dtype=np.float64)) >= 2.0**62:
        work = (*_fixed_work(c, problem, f, cap), cap)
        rows = tuple(np.broadcast_to(x, f["baseM"].shape) for x in work)
        return FixedWork(radix, np.zeros(0, dtype=np.int64), rows, rows)
    code = _codes(f, radix)
    codes, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    sub = {name: f[name][first] for name in _KEY_FIELDS}
    cap_sub = np.broadcast_to(cap, code.shape)[first]
    values = tuple(
        np.broadcast_to(x, first.shape) for x in (*_fixed_work(c, problem, sub, cap_sub), cap_sub)
    )
    return FixedWork(radix, codes, values, tuple(x[inverse] for x in values))


def _codes(f: dict[str, Any], radix: tuple[int, ...]) -> Any:
    """Each entry's :data:`_KEY_FIELDS` as one integer in the radices ``radix``."""
    code = np.zeros(f["baseM"].shape, dtype=np.int64)
    for name, base in zip(_KEY_FIELDS, radix, strict=True):
        code = code * base + f[name]
    return code


def _fixed_work(c: Costs, problem: Problem, f: dict[str, Any], cap: Any) -> tuple[Any, ...]:
    """Work of the largest core fixed by its base block (cycles).

    The busy totals are :mod:`simcore.pipeline.busy`'s (the search's group bounds use the same).

    Returns:
        M, MTE1, the drains (V, FIX, MTE3 legs), the last drain, a typical block's K-tail step
        (its loads and MMAD), which follows the last copy, and the scalar pipe's least busy
        total.
    """
    k = problem.k
    rows, cols = f["singleCoreM"], f["singleCoreN"]
    bm, bn, bk = f["baseM"], f["baseN"], f["baseK"]
    m_iter, n_iter = ceil_div(rows, bm), ceil_div(cols, bn)
    rm_t = rows - (m_iter - 1) * bm
    cn_t = cols - (n_iter - 1) * bn
    cube, mte1 = compute_busy(c, k, rows, cols, bm, bn, bk)
    # The typical block of the estimator: the tail when the core has a single one.
    r1 = np.where(m_iter == 1, rm_t, bm)
    c1 = np.where(n_iter == 1, cn_t, bn)
    mm1 = c.mmad_cycles(r1, c1, bk)
    # What follows the last copy: at least the K-tail step (its depth bk where it divides K;
    # simcore.estimate.paths.steps_after_last_copy).
    bk_t = k - (ceil_div(k, bk) - 1) * bk
    step1 = c.la_cycles(r1, bk_t) + c.lb_cycles(c1, bk_t) + c.mmad_cycles(r1, c1, bk_t)
    # (The last drain follows step1's MMAD: with UnitFlag what of it outlasts that MMAD.)
    drain_fix, drain_v, drain_m3, dr_last = drain_busy(c, rows, cols, bm, bn, cap, mm1)
    # The scalar pipe with the core's K steps (one per MMAD) and no copy: at most its busy total.
    scalar = least_scalar_cycles(c.preset, problem, m_iter * n_iter * ceil_div(k, bk))
    return cube, mte1, drain_v, drain_fix, drain_m3, dr_last, step1, scalar
