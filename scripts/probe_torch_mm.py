"""The torch.mm trend in N on 910B2 against the kernel aclnn runs (issue 17): a probe, not the model.

Edits nothing in ``simcore``: it wraps the simulator's per-core rate cap inside a ``with`` block
and plays two kernel structures for each square torch.mm row of
``measured_gemm_910b2_torch_mm.csv`` (docs/calibration.md, "Open items", torch.mm trend):

* ``csv``: the model's case (tests/support/board.py): the GetTiling split of
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

The rate mechanism probed (``--refetch``): the bytes HBM serves per call (first touches and L2
tile re-fetches, from an LRU walk of the kernel's operand tiles over two back-to-back calls
with the usable L2, so inputs a previous call left in L2 hit) miss at msKPP's 1/4.5 rate
(ascend-notes.md §3.1) in the hit mix the model already applies to reload misses; the ND->NZ
share of the L2 rate is refitted so that the 910B1 cases 6-8 keep their rate.

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


def _mix(missed: float, total: float, preset: HardwarePreset) -> float:
    hit = 1.0 - missed / max(total, 1.0)
    return hit + (1.0 - hit) / preset.l2_miss_slowdown


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


def csv_hbm_read_bytes(case: BoardCase) -> float:
    """HBM reads per call of the model's kernel: none when A + B + C stay in the usable L2
    between back-to-back calls, else A once and B once per L2 round (reloads inside a round are
    the model's reload-miss term)."""
    p, hw = case.problem, case.preset
    in_b, out_b = bits(p.dtype) / 8.0, traffic.c_gm_bytes_per_element(p)
    a, b, c = p.m * p.k * in_b, p.k * p.n * in_b, p.m * p.n * out_b
    if a + b + c <= hw.l2_bytes * hw.l2_usable_fraction:
        return 0.0
    return a + p.l2_rounds * b


@contextmanager
def _rate(
    refetch: float, share: float | None, forced: tuple[float, float] | None = None
) -> Iterator[None]:
    """The simulator's cap with ``refetch`` HBM reads in the hit mix and ``share`` for ND->NZ."""
    original = traffic.chip_bandwidth_cap

    def cap(read_bytes: Any, write_bytes: Any, unique_bytes: Any, working_set_bytes: Any,
            active_cores: Any, preset: HardwarePreset, l2_share: Any = 1.0) -> tuple[Any, Any]:  # fmt: skip
        read, write, unique, ws, active = (read_bytes, write_bytes, unique_bytes,
                                           working_set_bytes, active_cores)  # fmt: skip
        if forced is not None:
            return forced
        frac = (1.0 - l2_share) / max(1.0 - preset.nd2nz_l2_share, 1e-9)
        s = l2_share if share is None else 1.0 - (1.0 - share) * frac
        rate, hbm = original(read, write, unique, ws, active, preset, s)
        # The model's cap is linear in the hit mix (both the chip's share and the core's port
        # are scaled by it), and HBM serves the unique bytes plus the reload misses: so the
        # refetched bytes enter by rescaling the model's own rate, not by restating its rule.
        total = read + write
        reload_miss = max(hbm - unique, 0.0)
        rate = rate * _mix(reload_miss + refetch, total, preset) / _mix(reload_miss, total, preset)
        return rate, hbm

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
    p, hw = case.problem, case.preset
    in_b, out_b = bits(p.dtype) / 8.0, traffic.c_gm_bytes_per_element(p)
    hbm = v3_hbm_read_bytes(p.m, p.n, p.k, in_b, out_b, hw.l2_bytes * hw.l2_usable_fraction)
    reads = _v3_reads(case)
    mix = _mix(hbm if refetch else 0.0, reads, hw)
    rate = min(hw.l2_bytes_per_cycle * share * mix / hw.cube_core_count, hw.l2_core_port * mix)
    proxy, tiling = _v3_proxy(case)
    unique = (p.m + p.n) * p.k * in_b + p.m * p.n * out_b
    floor_hbm = (hbm if refetch else 0.0) + unique
    with _rate(0.0, None, forced=(rate, floor_hbm)):
        return _run(proxy, tiling, hw, depth).time_us


def _refit_share(cases: list[BoardCase]) -> float:
    """The ND->NZ share that keeps cases 6-8's rate with their HBM reads in the hit mix."""
    mixes = []
    for c in cases[6:9]:
        ct = traffic.chip_traffic(c.problem, c.tiling, c.preset)
        mixes.append(_mix(csv_hbm_read_bytes(c), ct.read_bytes + ct.write_bytes, c.preset))
    return cases[0].preset.nd2nz_l2_share / (sum(mixes) / len(mixes))


def _msprof_table(cases: list[BoardCase], share: float, depth: int | None) -> None:
    print(f"{'case':8} {'meas us':>9} {'model':>9} {'err':>7} {'refetch':>9} {'err':>7} "
          f"{'MTE2 err':>8} {'HBM MiB':>8}")  # fmt: skip
    times = []
    for c in cases:
        if depth is not None and c.name in ("case0", "case1"):
            continue  # 10.5 M and 1.3 M instructions: not moved by the queues (probe_open_items)
        now = _run(c.problem, c.tiling, c.preset, depth)
        hbm = csv_hbm_read_bytes(c)
        with _rate(hbm, share):
            sim = simulate(c.problem, c.tiling, c.preset)
            new = _run(c.problem, c.tiling, c.preset, depth)
        total = sum(x.shape.cores for x in sim.cores)
        mte2 = sum(x.busy_cycles["MTE2"] * x.shape.cores for x in sim.cores) / total
        mte2_err = mte2 / c.preset.clock_mhz / c.pipes_us["MTE2"] - 1
        # The device time: the end-to-end figure less the launch overhead (no floor at 8192^3).
        dev_now = now.time_us - c.preset.launch_overhead_us + c.preset.device_startup_us
        dev_new = new.time_us - c.preset.launch_overhead_us + c.preset.device_startup_us
        times.append((c.name, c.time_us, dev_new))
        print(f"{c.name:8} {c.time_us:9.1f} {dev_now:9.1f} {dev_now / c.time_us - 1:+7.1%} "
              f"{dev_new:9.1f} {dev_new / c.time_us - 1:+7.1%} {mte2_err:+8.1%} {hbm / MIB:8.0f}")  # fmt: skip
    ordered = sorted(times, key=lambda x: -x[1])
    strict = all(a[2] > b[2] for a, b in itertools.pairwise(ordered))
    ties = [f"{a[0]} = {b[0]}" for a, b in itertools.pairwise(ordered) if abs(a[2] - b[2]) < 0.05]
    print(f"all ranked in measured order: {strict}; ties (0.05 us): {', '.join(ties) or 'none'}")


def _torch_table(share: float, depth: int | None) -> None:
    print("torch.mm end to end us, error, TFLOPS: board | csv now | csv+refetch | v3 | v3+refetch")
    rows: dict[str, list[float]] = {}
    for c in torch_mm_cases():
        if c.problem.dtype.value == "fp32":
            continue
        p, hw = c.problem, c.preset
        now = _run(p, c.tiling, hw, depth).time_us
        with _rate(csv_hbm_read_bytes(c), share):
            csv_new = _run(p, c.tiling, hw, depth).time_us
        v3 = _v3_time(c, hw.nd2nz_l2_share, refetch=False, depth=depth)
        v3_new = _v3_time(c, share, refetch=True, depth=depth)
        f_v3 = v3_hbm_read_bytes(p.m, p.n, p.k, bits(p.dtype) / 8,
                                 traffic.c_gm_bytes_per_element(p),
                                 hw.l2_bytes * hw.l2_usable_fraction)  # fmt: skip
        cells = [f"{c.time_us:7.1f} {p.flops / c.time_us / 1e6:4.0f}"]
        for t in (now, csv_new, v3, v3_new):
            cells.append(f"{t:7.1f} {t / c.time_us - 1:+6.1%} {p.flops / t / 1e6:4.0f}")
        print(f"{c.name[9:]:10} " + " | ".join(cells)
              + f"  v3 HBM {f_v3 / MIB:.0f} MiB ({f_v3 / _v3_reads(c):.1%})")  # fmt: skip
        for key, t in zip(("board", "csv", "csv+refetch", "v3", "v3+refetch"),
                          (c.time_us, now, csv_new, v3, v3_new), strict=True):  # fmt: skip
            rows.setdefault(f"{p.dtype.value} {key}", []).append(p.flops / t / 1e6)
    print("TFLOPS at N = 2048 / 4096 / 8192 / 10240; trend as the board (rise to 4096, then fall):")
    for key, tf in rows.items():
        big = tf[1:]
        trend = big[0] < big[1] > big[2] > big[3]
        print(f"  {key:20} " + " / ".join(f"{x:5.1f}" for x in big) + f"  trend {trend}")


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
    share = _refit_share(cases)
    print(f"ND->NZ share refitted on cases 6-8 with their HBM reads in the hit mix: "
          f"{cases[0].preset.nd2nz_l2_share} -> {share:.4f}; in-order issue depth {args.issue}")  # fmt: skip
    _mac_bound(torch_mm_cases())
    _msprof_table(cases, share, args.issue)
    _torch_table(share, args.issue)


if __name__ == "__main__":
    main()
