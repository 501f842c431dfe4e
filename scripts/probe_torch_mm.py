"""The torch.mm trend in N on 910B2 against the kernel aclnn runs (issue 17): a probe, not the model.

Edits nothing in ``simcore``: it wraps the simulator's per-core rate cap inside a ``with`` block
and plays two kernel structures for each square torch.mm row of
``measured_gemm_910b2_torch_mm.csv`` (docs/calibration.md, "Open items", torch.mm trend):

* ``csv``: the model's case until model 2026.11.28.4 (tests/support/board.py,
  ``torch_mm_cases(kernel="gettiling")``; the model now prices the ``v3`` kernel as a dealt
  split, which gives the ``v3 all-hit`` figures): the GetTiling split of
  ``cann_default_tilings.csv`` (4096: 4 x 6 cores of 1024 x 768, the last column 1024 x 256),
  each core one singleCoreM x singleCoreN, MatMulV3's L2 rounds along M.
* ``v3``: the kernel aclnn's MatMulV3 runs for these shapes (hicann/ops-nn
  ``matmul/mat_mul_v3/op_host/op_tiling/matmul_v3_base_tiling.cpp``: ``SetBaseBlockTiling``
  128 x 256 x 64 on 24 cores, ``singleCoreM / N`` = the base block; ``DoL2CacheTiling`` /
  ``CalcTile``: L2 tiles whose A + B + C stay within ``l2Size / 192 MiB x 100 MiB``, "100M is
  experimental data, ensuring no L2 data replacement", else 4 x 6 block groups;
  ``op_kernel/mat_mul_base_kernel.h``: M tiles outer, N tiles inner in serpentine order;
  ``mat_mul_base_block.h``: each tile's base blocks dealt to the cores in rounds, the tail
  rotating over the cores). The slowest core takes ``ceil(blocks / 24)`` base blocks, each
  streaming its A and B rows (K = N, MDL chunks stepKa 8 / stepKb 4 as in the csv tiling); played
  as a core of ``ceil(blocks / 24)`` blocks stacked along M at the real kernel's rate cap.

The rate mechanism (the refetch term, shipped off,
:func:`simcore.pipeline.traffic.call_refetch`): the bytes HBM serves per call miss at msKPP's
1/4.5 rate (ascend-notes.md §3.1). ``csv`` is the model as shipped (the term off) and with the
term on (``l2_refetch``, the share of ``scripts.fit_board.fit_nd2nz_share``); ``v3`` takes the
term's rule with the bytes of an LRU walk of MatMulV3's L2 tiles over two back-to-back calls
with the usable L2 (inputs a previous call left in L2 hit), a walk the closed form does not
cover (the model's kernel has no L2 tiles). ``v3 all-hit`` is that kernel with every read an
L2 hit at the all-hit share (``scripts.fit_board.ALL_HIT_ND2NZ_SHARE``).

With ``--issue D`` every figure is played under seed 004's in-order issue with ``D``-entry
queues (:mod:`scripts.inorder_issue`; cases 0 and 1 skipped).

    uv run --frozen python -m scripts.probe_torch_mm [--issue 8]
"""

from __future__ import annotations

import argparse
import itertools
import math
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import simcore.pipeline.traffic as traffic
from scripts.fit_board import ALL_HIT_ND2NZ_SHARE, fit_nd2nz_share
from scripts.inorder_issue import IssueRun, run_case
from simcore.hardware.dtypes import bits
from simcore.hardware.presets import HardwarePreset
from simcore.pipeline.simulator import simulate
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import Problem
from tests.support.board import BoardCase, msprof_cases, torch_mm_cases

MIB = 1024 * 1024
#: MatMulV3's replacement-free L2 bytes per L2 tile on a 192 MiB L2 (matmul_v3_base_tiling.cpp).
V3_TILE_BYTES = 100 * MIB
V3_BASE = (128, 256)


def _lru_misses(walk: list[list[tuple[str, float, bool]]], capacity: float) -> float:
    """Bytes read from HBM in the second of two back-to-back calls of ``walk``.

    ``walk`` lists per step the tiles touched: (name, bytes, read). Written tiles (C) take L2
    space but are not read.
    """
    lru: OrderedDict[str, float] = OrderedDict()
    missed = 0.0
    for call in range(2):
        for step in walk:
            for name, size, read in step:
                if name in lru:
                    lru.move_to_end(name)
                else:
                    missed += size * read * call
                    lru[name] = size
                while sum(lru.values()) > capacity and len(lru) > 1:
                    lru.popitem(last=False)
    return missed


def v3_l2_tiles(m: int, n: int, k: int, in_b: float, out_b: float, cores: int) -> tuple[int, int]:
    """Rows and columns of MatMulV3's L2 tile (``CalcTile``; the whole matrix when it fits)."""
    base_m, base_n = V3_BASE
    if (m * k + k * n) * in_b + m * n * out_b <= V3_TILE_BYTES:
        return m, n
    best: tuple[int, int] | None = None
    conflicts = (0, 0)
    for outer in range(cores, max(cores // 6, 1) - 1, -1):
        for inner in range(cores, max(cores // 6, 1) - 1, -1):
            n_split = math.ceil(math.ceil(n / max(n // (base_n * outer), 1)) / base_n) * base_n
            m_split = math.ceil(math.ceil(m / max(m // (base_m * inner), 1)) / base_m) * base_m
            if (m_split * k + k * n_split) * in_b + m_split * n_split * out_b > V3_TILE_BYTES:
                continue
            n_tail = math.ceil((((n + n_split - 1) % n_split) + 1) / base_n)
            m_tail = math.ceil((((m + m_split - 1) % m_split) + 1) / base_m)
            if n_tail * 6 < cores or m_tail * 6 < cores:
                continue
            c = (math.ceil(cores / n_tail), math.ceil(cores / m_tail))
            if best is None or (conflicts[0] >= c[0] and conflicts[1] >= c[1]):
                best, conflicts = (m_split, n_split), c
    return best if best is not None else (m, n)


def v3_hbm_read_bytes(m: int, n: int, k: int, in_b: float, out_b: float, cap: float) -> float:
    """HBM reads per call of MatMulV3's tile walk (M tiles outer, N tiles serpentine)."""
    m_split, n_split = v3_l2_tiles(m, n, k, in_b, out_b, 24)
    m_tiles, n_tiles = math.ceil(m / m_split), math.ceil(n / n_split)
    walk = []
    for i in range(m_tiles):
        rows = min(m_split, m - i * m_split)
        order = range(n_tiles) if i % 2 == 0 else range(n_tiles - 1, -1, -1)
        for j in order:
            cols = min(n_split, n - j * n_split)
            walk.append(
                [(f"A{i}", rows * k * in_b, True), (f"B{j}", cols * k * in_b, True),
                 (f"C{i},{j}", rows * cols * out_b, False)]
            )  # fmt: skip
    return _lru_misses(walk, cap)


def model_lru_read_bytes(case: BoardCase) -> float:
    """HBM reads per call of the model's kernel by an LRU walk (the check of ``call_refetch``).

    The chip walks its blocks in lock step: every core's ``i``-th M block and ``j``-th N block
    at once, M inner under ``iterateOrder`` 0, one L2 round of each core's rows after the other.
    A tile is one block index over all the cores along that dimension (A's rows of every core
    row's ``i``-th block, all of K); C's block is written.
    """
    p, t, hw = case.problem, case.tiling, case.preset
    in_b, out_b = bits(p.dtype) / 8.0, traffic.c_gm_bytes_per_element(p)
    m_cores, n_cores = math.ceil(p.m / t.singleCoreM), math.ceil(p.n / t.singleCoreN)
    round_rows = math.ceil(t.singleCoreM / p.l2_rounds)
    m_blocks, n_blocks = math.ceil(round_rows / t.baseM), math.ceil(t.singleCoreN / t.baseN)
    a_tile = min(m_cores * t.baseM, p.m) * p.k * in_b
    b_tile = min(n_cores * t.baseN, p.n) * p.k * in_b
    c_tile = min(m_cores * t.baseM, p.m) * min(n_cores * t.baseN, p.n) * out_b
    walk = []
    for r in range(p.l2_rounds):
        pairs = (
            [(i, j) for j in range(n_blocks) for i in range(m_blocks)]
            if t.iterateOrder == 0
            else [(i, j) for i in range(m_blocks) for j in range(n_blocks)]
        )
        for i, j in pairs:
            ai = r * m_blocks + i
            walk.append(
                [(f"A{ai}", a_tile, True), (f"B{j}", b_tile, True),
                 (f"C{ai},{j}", c_tile, False)]
            )  # fmt: skip
    return _lru_misses(walk, hw.l2_bytes * hw.l2_usable_fraction)


@contextmanager
def _forced_rate(rate: float, write_rate: float, hbm: float) -> Iterator[None]:
    """The simulator's rate caps and HBM bytes forced (the v3 kernel's, not its proxy's)."""
    original = traffic.chip_bandwidth_cap

    def cap(*_args: Any, **_kwargs: Any) -> tuple[Any, Any, Any]:
        return rate, write_rate, hbm

    traffic.chip_bandwidth_cap = cap
    try:
        yield
    finally:
        traffic.chip_bandwidth_cap = original


def _v3_proxy(case: BoardCase) -> tuple[Problem, Any]:
    p, hw = case.problem, case.preset
    blocks = math.ceil(p.m / V3_BASE[0]) * math.ceil(p.n / V3_BASE[1])
    per_core = math.ceil(blocks / hw.cube_core_count)
    proxy = Problem(
        m=V3_BASE[0] * per_core, n=V3_BASE[1] * hw.cube_core_count, k=p.k, dtype=p.dtype.value,
        out_dtype=p.out_dtype, template="mdl",
    )  # fmt: skip
    t = case.tiling
    fields = {
        "usedCoreNum": hw.cube_core_count, "singleCoreM": proxy.m, "singleCoreN": V3_BASE[1],
        "baseM": V3_BASE[0], "baseN": V3_BASE[1], "baseK": t.baseK, "depthA1": t.depthA1,
        "depthB1": t.depthB1, "stepM": 1, "stepN": 1, "stepKa": t.stepKa, "stepKb": t.stepKb,
        "iterateOrder": 0, "dbL0A": 2, "dbL0B": 2, "dbL0C": t.dbL0C,
    }  # fmt: skip
    return proxy, complete_tiling(fields, proxy, hw)


def _v3_reads(case: BoardCase) -> float:
    p = case.problem
    in_b = bits(p.dtype) / 8.0
    blocks = math.ceil(p.m / V3_BASE[0]) * math.ceil(p.n / V3_BASE[1])
    return blocks * (V3_BASE[0] + V3_BASE[1]) * p.k * in_b


def _run(problem: Problem, tiling: Any, hw: HardwarePreset, depth: int | None) -> IssueRun:
    return run_case(problem, tiling, hw, depth, device=False)


def _v3_time(case: BoardCase, share: float, refetch: bool, depth: int | None = None) -> float:
    """The v3 kernel at the model's rate rule (its L2 tiles' HBM reads as the refetch term)."""
    p, hw = case.problem, case.preset
    in_b, out_b = bits(p.dtype) / 8.0, traffic.c_gm_bytes_per_element(p)
    hbm = v3_hbm_read_bytes(p.m, p.n, p.k, in_b, out_b, hw.l2_bytes * hw.l2_usable_fraction)
    unique = (p.m + p.n) * p.k * in_b + p.m * p.n * out_b
    # (Its L2 tiles fit L2 by construction: no reload misses; the tiles' re-reads are refetched.)
    read_cap, write_cap, _ = traffic.chip_bandwidth_cap(
        _v3_reads(case), p.m * p.n * out_b, unique, 1.0, hw.cube_core_count, hw, share,
        refetch=traffic.CallRefetch(hbm if refetch else 0.0, 0.0),
    )  # fmt: skip
    proxy, tiling = _v3_proxy(case)
    with _forced_rate(float(read_cap), float(write_cap), (hbm if refetch else 0.0) + unique):
        return _run(proxy, tiling, hw, depth).time_us


def _msprof_table(cases: list[BoardCase], depth: int | None) -> None:
    print(f"{'case':8} {'meas us':>9} {'model':>9} {'err':>7} {'MTE2 err':>8} {'refetch MiB':>11} "
          f"{'LRU MiB':>8}")  # fmt: skip
    times = []
    for c in cases:
        if depth is not None and c.name in ("case0", "case1"):
            continue  # 10.5 M and 1.3 M instructions: not moved by the queues (probe_open_items)
        sim = simulate(c.problem, c.tiling, c.preset)
        now = _run(c.problem, c.tiling, c.preset, depth)
        refetch = traffic.call_refetch(c.problem, c.preset.model_copy(update={"l2_refetch": True}))
        total = sum(x.shape.cores for x in sim.cores)
        mte2 = sum(x.busy_cycles["MTE2"] * x.shape.cores for x in sim.cores) / total
        mte2_err = mte2 / c.preset.clock_mhz / c.pipes_us["MTE2"] - 1
        # The device time: the end-to-end figure less the launch overhead (no floor at 8192^3).
        dev = now.time_us - c.preset.launch_overhead_us + c.preset.device_startup_us
        times.append((c.name, c.time_us, dev))
        refetch_mib = (refetch.first_touch_bytes + refetch.round_bytes) / MIB
        print(f"{c.name:8} {c.time_us:9.1f} {dev:9.1f} {dev / c.time_us - 1:+7.1%} "
              f"{mte2_err:+8.1%} {refetch_mib:11.0f} {model_lru_read_bytes(c) / MIB:8.0f}")  # fmt: skip
    ordered = sorted(times, key=lambda x: -x[1])
    strict = all(a[2] > b[2] for a, b in itertools.pairwise(ordered))
    ties = [f"{a[0]} = {b[0]}" for a, b in itertools.pairwise(ordered) if abs(a[2] - b[2]) < 0.05]
    print(f"all ranked in measured order: {strict}; ties (0.05 us): {', '.join(ties) or 'none'}")


def _torch_table(depth: int | None, share_on: float) -> None:
    print("torch.mm end to end us, error, TFLOPS: board | csv (the model) | csv, term on | "
          "v3 all-hit | v3, term on")  # fmt: skip
    rows: dict[str, list[float]] = {}
    for c in torch_mm_cases(kernel="gettiling"):
        if c.problem.dtype.value == "fp32":
            continue
        p, hw = c.problem, c.preset
        now = _run(p, c.tiling, hw, depth).time_us
        on = hw.model_copy(update={"l2_refetch": True, "nd2nz_l2_share": share_on})
        csv_on = _run(p, c.tiling, on, depth).time_us
        v3_hit = _v3_time(c, ALL_HIT_ND2NZ_SHARE, refetch=False, depth=depth)
        v3 = _v3_time(c, share_on, refetch=True, depth=depth)
        f_v3 = v3_hbm_read_bytes(p.m, p.n, p.k, bits(p.dtype) / 8,
                                 traffic.c_gm_bytes_per_element(p),
                                 hw.l2_bytes * hw.l2_usable_fraction)  # fmt: skip
        cells = [f"{c.time_us:7.1f} {p.flops / c.time_us / 1e6:4.0f}"]
        for t in (now, csv_on, v3_hit, v3):
            cells.append(f"{t:7.1f} {t / c.time_us - 1:+6.1%} {p.flops / t / 1e6:4.0f}")
        print(f"{c.name[9:]:10} " + " | ".join(cells)
              + f"  v3 HBM {f_v3 / MIB:.0f} MiB ({f_v3 / _v3_reads(c):.1%}); csv refetch "
              + f"{_refetch_mib(c):.0f} MiB, LRU {model_lru_read_bytes(c) / MIB:.0f}")  # fmt: skip
        for key, t in zip(("board", "csv", "csv on", "v3 all-hit", "v3 on"),
                          (c.time_us, now, csv_on, v3_hit, v3), strict=True):  # fmt: skip
            rows.setdefault(f"{p.dtype.value} {key}", []).append(p.flops / t / 1e6)
    print("TFLOPS at N = 2048 / 4096 / 8192 / 10240; trend as the board (rise to 4096, then fall):")
    for key, tf in rows.items():
        big = tf[1:]
        trend = big[0] < big[1] > big[2] > big[3]
        print(f"  {key:20} " + " / ".join(f"{x:5.1f}" for x in big) + f"  trend {trend}")


def _refetch_mib(case: BoardCase) -> float:
    r = traffic.call_refetch(case.problem, case.preset.model_copy(update={"l2_refetch": True}))
    return (r.first_touch_bytes + r.round_bytes) / MIB


def _mac_bound(cases: list[BoardCase]) -> None:
    """The csv 4096 tiling's heavy core against the board's time per call."""
    for c in cases:
        if c.problem.m != 4096 or c.problem.dtype.value == "fp32":
            continue
        hw, t = c.preset, c.tiling
        macs = t.singleCoreM * t.singleCoreN * c.problem.k
        mac_us = macs / hw.cube_macs_per_cycle[c.problem.dtype] / hw.clock_mhz
        print(f"{c.name}: csv core {t.singleCoreM} x {t.singleCoreN}: pure MAC time {mac_us:.1f} us"
              f" + launch {hw.launch_overhead_us} us; board {c.time_us:.1f} us per call")  # fmt: skip


def main() -> None:
    """Print the 910B1 cases and the torch.mm rows under each kernel structure and rate rule."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--issue", type=int, default=None, help="in-order issue queue depth")
    args = parser.parse_args()
    cases = msprof_cases()
    share_on, _ = fit_nd2nz_share({c.name: c for c in cases})
    print(f"ND->NZ share {cases[0].preset.nd2nz_l2_share} (all-hit {ALL_HIT_ND2NZ_SHARE}; "
          f"with the refetch term {share_on:.4f}); in-order issue depth {args.issue}")  # fmt: skip
    _mac_bound(torch_mm_cases(kernel="gettiling"))
    _msprof_table(cases, args.issue)
    _torch_table(args.issue, share_on)


if __name__ == "__main__":
    main()
