"""Drain chains without FixPipe (drains.py), on a 2 x 1 grid of blocks by hand."""

from __future__ import annotations

import numpy as np

from simcore.estimate.drains import c1_drain_chain


def a(x: float) -> np.ndarray:
    return np.array([float(x)])


def test_one_l0c_buffer_chains_mmads_behind_the_ub_to_gm_copy_before() -> None:
    # Blocks: (MMAD chain, L0C->UB, UB->GM) per (row type, column type), 0 full and 1 tail.
    # Rows inner (iterateOrder 0), two row blocks in one column (a core's single column is the
    # tail column type): a full-row block, then the corner block. The full-column types do not
    # occur (their count is 0).
    none = (a(0), a(0), a(0))
    types = {
        (0, 0): none,
        (1, 0): none,
        (0, 1): (a(100), a(10), a(300)),  # full row
        (1, 1): (a(40), a(5), a(80)),  # tail row (the corner)
    }
    # L(b) = L(b-1) + max(mmads(b) - normal, ub_to_gm(b-1)) + l0c_to_ub(b): the tail block's
    # 40-cycle chain hides nothing of the full block's 300-cycle UB->GM copy.
    out = c1_drain_chain(types, a(2), a(1), np.array([True]), a(0.0))
    first = 100 + 10  # the first block's chain and L0C->UB leg
    step = max(40 - 0, 300) + 5  # the tail block after the full one
    assert out[0] == first + step + 80  # then the last UB->GM copy
    # With a part of the first step the MMAD chain does not wait for (normal), less of it.
    out = c1_drain_chain(types, a(2), a(1), np.array([True]), a(20.0))
    assert out[0] == first + max(40 - 20, 300) + 5 + 80
