"""The fast estimator: the simulator's quantities in closed form, vectorized over tilings.

It prices the same kernel as :mod:`simcore.simulator` with the same cost formulas
(:mod:`simcore.costs`) and the same chunk reuse (:func:`simcore.kernel.operand_traffic`), but
instead of playing every instruction it composes per-step and per-block periods:

* K step period on the MTE1 -> M chain, from the L0 double-buffer flags: with both dbL0A and
  dbL0B = 2 the loads of the next step overlap the MMAD, ``max(mmad, l0a + l0b)``; with dbL0A = 1
  every step is ``mmad + l0a + l0b``; with only dbL0B = 1, ``max(mmad, l0a) + l0b``.
* Block period: the K steps plus, with dbL0C = 1, the drain that the next block's first MMAD
  waits for; with dbL0C = 2 the drain overlaps and only matters when it is longer.
* L1: an operand with a single chunk slot exposes each of its copies to the chain; with two
  slots copies overlap the compute and only their total bounds the time.
* Makespan of a core = the longest of the compute chain and the MTE2 / drain totals, plus the
  start-up (first copies and loads) and wind-down (last step and drain) around it.

Inputs are numpy arrays of struct fields (one entry per candidate); the problem and chip are
scalars. Throughput is millions of candidates per second on one core.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simcore.costs import Costs, ceil_div
from simcore.dtypes import bits, c0_elements
from simcore.hardware import HardwarePreset
from simcore.kernel import chip_bandwidth_cap, operand_traffic, reuse_working_set, slots
from simcore.problem import Problem
from simcore.tiling import TCubeTiling

#: The arrays :func:`estimate_arrays` needs, by struct name.
ESTIMATOR_FIELDS: tuple[str, ...] = (
    "singleCoreM", "singleCoreN", "baseM", "baseN", "baseK", "depthA1", "depthB1",
    "stepM", "stepN", "stepKa", "stepKb", "iterateOrder", "dbL0A", "dbL0B", "dbL0C",
)  # fmt: skip

PIPE_NAMES: tuple[str, ...] = ("MTE2", "MTE1", "M", "FIX", "V", "MTE3")


def _step_period(la: Any, lb: Any, mm: Any, db_a: Any, db_b: Any) -> Any:
    both = np.maximum(mm, la + lb)
    only_b_single = np.maximum(mm, la) + lb
    a_single = mm + la + lb
    return np.where(db_a == 1, a_single, np.where(db_b == 1, only_b_single, both))


def _core(
    c: Costs,
    problem: Problem,
    f: dict[str, Any],
    rows: Any,
    cols: Any,
    cap: Any,
) -> dict[str, Any]:
    """Closed-form schedule of one core with a rows x cols share (arrays)."""
    k = problem.k
    bm, bn, bk = f["baseM"], f["baseN"], f["baseK"]
    m_iter = ceil_div(rows, bm)
    n_iter = ceil_div(cols, bn)
    k_iter = ceil_div(k, bk)
    rm_t = rows - (m_iter - 1) * bm
    cn_t = cols - (n_iter - 1) * bn
    k_t = k - (k_iter - 1) * bk
    db_a, db_b, db_c = f["dbL0A"], f["dbL0B"], f["dbL0C"]

    # Per block type (full/tail rows x full/tail cols): K-loop chain and drain.
    chain = 0.0
    mte1 = 0.0
    cube = 0.0
    drain_total = 0.0
    vec_c = 0.0
    mte3_c = 0.0
    first = None
    last = None
    for r, nr in ((bm, m_iter - 1), (rm_t, 1)):
        la_f = c.la_cycles(r, bk)
        la_t = c.la_cycles(r, k_t)
        for col, nc in ((bn, n_iter - 1), (cn_t, 1)):
            count = nr * nc
            lb_f = c.lb_cycles(col, bk)
            lb_t = c.lb_cycles(col, k_t)
            mm_f = c.mmad_cycles(r, col, bk)
            mm_t = c.mmad_cycles(r, col, k_t)
            steps = (k_iter - 1) * _step_period(la_f, lb_f, mm_f, db_a, db_b) + _step_period(
                la_t, lb_t, mm_t, db_a, db_b
            )
            if c.has_fixpipe:
                drain = c.fix_cycles(r, col, cap)
                out_v = 0.0
                out_m3 = 0.0
            else:
                drain = c.c_to_ub_cycles(r, col)
                out_v = drain
                out_m3 = c.c_ub_to_gm_cycles(r, col, cap)
            block = np.where(db_c == 1, steps + drain, np.maximum(steps, drain))
            chain = chain + count * block
            mte1 = mte1 + count * ((k_iter - 1) * (la_f + lb_f) + la_t + lb_t)
            cube = cube + count * ((k_iter - 1) * mm_f + mm_t)
            drain_total = drain_total + count * drain
            vec_c = vec_c + count * out_v
            mte3_c = mte3_c + count * out_m3
            if first is None:
                first = (la_f, lb_f)
            # The last block of the core is the (tail, tail) one.
            last = (la_t + lb_t + mm_t, drain, out_m3)

    assert first is not None and last is not None
    # Chunk copies (MTE2, and V/MTE3 for the UB ND->NZ path).
    slots_a = slots(f["depthA1"], f["stepM"], f["stepKa"])
    slots_b = slots(f["depthB1"], f["stepN"], f["stepKb"])
    order = f["iterateOrder"]
    loads_a, el_a = operand_traffic(
        rows, bm, f["stepM"], k, bk, f["stepKa"], slots_a, n_iter, order == 0, c.c0
    )
    loads_b, el_b = operand_traffic(
        cols, bn, f["stepN"], k, bk, f["stepKb"], slots_b, m_iter, order == 1, c.c0
    )
    bytes_a = el_a * c.in_bytes
    bytes_b = el_b * c.in_bytes
    p = c.preset
    mte2 = 0.0
    vec = vec_c
    mte3 = mte3_c
    copy_a = _copy_cycles(c, loads_a, bytes_a, True, cap)
    copy_b = _copy_cycles(c, loads_b, bytes_b, False, cap)
    mte2 = copy_a[0] + copy_b[0]
    vec = vec + copy_a[1] + copy_b[1]
    mte3 = mte3 + copy_a[2] + copy_b[2]
    if problem.bias:
        bias_loads = np.where(order == 0, n_iter, m_iter * n_iter)
        mte2 = mte2 + bias_loads * c.bias_load_cycles(bn, cap)
    # A chunk copy as the chain sees it (all legs).
    per_a = (copy_a[0] + copy_a[1] + copy_a[2]) / np.maximum(loads_a, 1)
    per_b = (copy_b[0] + copy_b[1] + copy_b[2]) / np.maximum(loads_b, 1)
    # Single-slot operands: each later copy waits for the reads of the previous chunk and the
    # reads wait for the copy, so the copies add to the chain.
    exposed = np.where(slots_a == 1, (loads_a - 1) * per_a, 0.0) + np.where(
        slots_b == 1, (loads_b - 1) * per_b, 0.0
    )
    prologue = per_a + per_b + first[0] + first[1]
    compute_path = prologue + chain + exposed + np.where(db_c == 1, 0.0, last[1])
    copy_path = mte2 + last[0] + last[1]
    drain_path = prologue + drain_total
    makespan = np.maximum(np.maximum(compute_path, copy_path), drain_path)
    if not c.has_fixpipe:
        makespan = np.maximum(makespan, prologue + mte3) + last[2]
    busy = {
        "MTE2": mte2,
        "MTE1": mte1,
        "M": cube,
        "FIX": drain_total if c.has_fixpipe else 0.0 * drain_total,
        "V": vec,
        "MTE3": mte3,
    }
    del p
    return {
        "makespan": makespan,
        "busy": busy,
        "read_elems": el_a + el_b,
        "bias_bytes": (
            problem.bias
            * np.where(order == 0, n_iter, m_iter * n_iter)
            * bn
            * bits(problem.bias_type)
            / 8.0
        ),
    }


def _copy_cycles(c: Costs, loads: Any, nbytes: Any, is_a: bool, cap: Any) -> tuple[Any, Any, Any]:
    """(MTE2, V, MTE3) cycles of all chunk copies of one operand (linear in loads and bytes)."""
    p = c.preset
    via_ub = c.a_via_ub if is_a else c.b_via_ub
    eff = c.a_eff if is_a else c.b_eff
    if not via_ub:
        nd = c.a_nd if is_a else c.b_nd
        if nd:
            lat, peak = p.nd2nz_latency_cycles, p.nd2nz_peak_bytes_per_cycle * eff
        else:
            lat, peak = p.gm_to_l1_latency_cycles, p.gm_to_l1_peak_bytes_per_cycle
        return loads * lat + nbytes / np.minimum(peak, cap), 0.0, 0.0
    mte2 = loads * p.gm_to_ub_latency_cycles + nbytes / np.minimum(
        p.gm_to_ub_peak_bytes_per_cycle * eff, cap
    )
    vec = loads * p.vector_issue_overhead_cycles + nbytes / p.vector_bytes_per_cycle
    mte3 = loads * p.gm_to_ub_latency_cycles + nbytes / p.ub_to_l1_bytes_per_cycle
    return mte2, vec, mte3


def estimate_arrays(
    problem: Problem, preset: HardwarePreset, fields: dict[str, Any]
) -> dict[str, Any]:
    """Estimates many tilings of one problem at once.

    Args:
        problem: The problem.
        preset: The chip.
        fields: Struct fields (:data:`ESTIMATOR_FIELDS`) as equal-length integer arrays.

    Returns:
        A dict of arrays: ``cycles`` and ``time_us`` (kernel, with launch overhead),
        ``core_cycles`` (slowest core), per-pipe ``busy_<PIPE>`` cycles of the slowest core,
        ``sequential_cycles``, ``resource_cycles``, ``cap_bytes_per_cycle``, ``read_bytes``,
        ``hbm_bytes``.
    """
    f = {name: np.asarray(fields[name], dtype=np.int64) for name in ESTIMATOR_FIELDS}
    c = Costs(problem, preset)
    m, n, k = problem.m, problem.n, problem.k
    sm, sn = f["singleCoreM"], f["singleCoreN"]
    m_cores = ceil_div(m, sm)
    n_cores = ceil_div(n, sn)
    tail_m = m - (m_cores - 1) * sm
    tail_n = n - (n_cores - 1) * sn
    shapes = (
        (sm, sn, (m_cores - 1) * (n_cores - 1)),
        (sm, tail_n, (m_cores - 1)),
        (tail_m, sn, (n_cores - 1)),
        (tail_m, tail_n, np.ones_like(sm)),
    )
    in_b = bits(problem.dtype) / 8.0
    # Chip traffic first (it sets the per-core bandwidth cap), from the closed-form reuse.
    read = 0.0
    for rows, cols, count in shapes:
        m_iter = ceil_div(rows, f["baseM"])
        n_iter = ceil_div(cols, f["baseN"])
        _, el_a = operand_traffic(
            rows, f["baseM"], f["stepM"], k, f["baseK"], f["stepKa"],
            slots(f["depthA1"], f["stepM"], f["stepKa"]), n_iter, f["iterateOrder"] == 0,
            c.c0,
        )  # fmt: skip
        _, el_b = operand_traffic(
            cols, f["baseN"], f["stepN"], k, f["baseK"], f["stepKb"],
            slots(f["depthB1"], f["stepN"], f["stepKb"]), m_iter, f["iterateOrder"] == 1,
            c.c0,
        )  # fmt: skip
        bias = problem.bias * m_iter * n_iter * f["baseN"] * bits(problem.bias_type) / 8.0
        read = read + count * ((el_a + el_b) * in_b + bias)
    write = m * n * bits(problem.c_dtype) / 8.0
    unique = (m + n) * k * in_b + write
    working = reuse_working_set(
        m, n, k, sm, sn, f["baseM"] * f["stepM"], f["baseN"] * f["stepN"], f["iterateOrder"], in_b
    )
    cap, hbm = chip_bandwidth_cap(read, write, unique, working, m_cores * n_cores, preset)

    worst: dict[str, Any] | None = None
    for rows, cols, count in shapes:
        res = _core(c, problem, f, rows, cols, cap)
        span = np.where(count > 0, res["makespan"], -1.0)
        seq = sum(res["busy"][p] for p in PIPE_NAMES)
        rb = np.max(np.stack([np.broadcast_to(res["busy"][p], span.shape) for p in PIPE_NAMES]), 0)
        if worst is None:
            busy0 = {p: np.broadcast_to(res["busy"][p], span.shape) for p in PIPE_NAMES}
            worst = {
                "span": span,
                "seq": np.where(count > 0, seq, 0.0),
                "res": np.where(count > 0, rb, 0.0),
                "busy": busy0,
            }
        else:
            better = span > worst["span"]
            worst["span"] = np.where(better, span, worst["span"])
            worst["seq"] = np.maximum(worst["seq"], np.where(count > 0, seq, 0.0))
            worst["res"] = np.maximum(worst["res"], np.where(count > 0, rb, 0.0))
            worst["busy"] = {
                p: np.where(better, res["busy"][p], worst["busy"][p]) for p in PIPE_NAMES
            }
    assert worst is not None
    launch = preset.launch_overhead_us * preset.clock_mhz
    cycles = worst["span"] + launch
    out: dict[str, Any] = {
        "cycles": cycles,
        "time_us": cycles / preset.clock_mhz,
        "core_cycles": worst["span"],
        "sequential_cycles": worst["seq"] + launch,
        "resource_cycles": worst["res"] + launch,
        "cap_bytes_per_cycle": cap,
        "read_bytes": read,
        "hbm_bytes": hbm,
    }
    for p in PIPE_NAMES:
        out[f"busy_{p}"] = worst["busy"][p]
    return out


def estimate_one(problem: Problem, t: TCubeTiling, preset: HardwarePreset) -> dict[str, float]:
    """Estimates a single tiling; returns the same keys as :func:`estimate_arrays` as floats."""
    fields = {name: np.asarray([getattr(t, name)]) for name in ESTIMATOR_FIELDS}
    res = estimate_arrays(problem, preset, fields)
    return {key: float(np.asarray(v).reshape(-1)[0]) for key, v in res.items()}


del c0_elements  # imported for symmetry with kernel; C0 comes from Costs
