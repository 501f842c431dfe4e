"""The block grid and the block types' totals (grid.py)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from simcore.estimate.grid import block_grid, block_types
from tests.simcore.estimate.support import records


def test_grid_of_a_core_share_by_hand() -> None:
    r = records()
    f = dict(r.f, baseM=np.array([32.0]), baseN=np.array([16.0]), baseK=np.array([32.0]))
    g = block_grid(r.c, 100, f, np.array([100.0]), np.array([40.0]))
    # 100 rows in 32-row blocks: 4 (the tail 4 rows); 40 columns in 16: 3 (the tail 8); K 100
    # in 32: 4 steps (the tail 4).
    assert (g.m_iter[0], g.n_iter[0], g.k_iter[0], g.blocks[0]) == (4, 3, 4, 12)
    assert (g.rm_t[0], g.cn_t[0], g.k_t[0]) == (4, 8, 4)
    assert (g.fr_t[0], g.fc_t[0]) == (1, 1)


def test_busy_totals_are_the_simulators_per_block_formulas() -> None:
    r = records()
    g = replace(r.g)
    bt = block_types(r.c, g, r.f, r.cap, False)
    cube = 0.0
    mte1 = 0.0
    k_iter = int(g.k_iter[0])
    for rows in [float(g.bm[0])] * int(g.m_iter[0] - 1) + [float(g.rm_t[0])]:
        for cols in [float(g.bn[0])] * int(g.n_iter[0] - 1) + [float(g.cn_t[0])]:
            for step in range(k_iter):
                kk = float(g.k_t[0]) if step == k_iter - 1 else float(g.bk[0])
                cube += r.c.mmad_cycles(rows, cols, kk)
                mte1 += r.c.la_cycles(rows, kk) + r.c.lb_cycles(cols, kk)
    # (Summed here block by block, there per block type: equal up to the rounding of the order;
    # the simulator's own sums are matched bit for bit in test_estimator.)
    assert abs(bt.cube[0] - cube) <= 1e-12 * cube
    assert abs(bt.mte1[0] - mte1) <= 1e-12 * mte1
