"""Lines of blocks (lines.py): each line takes the longer of its drains and its chains."""

from __future__ import annotations

import numpy as np

from simcore.estimate.lines import line_phase_path


def a(x: float) -> np.ndarray:
    return np.array([float(x)])


def test_line_phase_is_a_sum_of_per_line_maxima() -> None:
    # (MMAD chain, L0C->UB, UB->GM) per (row type, column type); rows inner, 2 x 2 blocks: a
    # full column (full-row and tail-row block) and the tail column.
    types = {
        (0, 0): (a(100), a(10), a(200)),
        (1, 0): (a(50), a(5), a(100)),
        (0, 1): (a(60), a(6), a(50)),
        (1, 1): (a(30), a(3), a(20)),
    }
    out = line_phase_path(types, np.array([True]), (a(2), a(2)), a(0), a(0), a(0))
    full_line = max(210 + 105, 100 + 50)  # drains bind the full column
    tail_line = max(56 + 23, 60 + 30)  # the MMAD chain binds the tail column
    assert out[0] == full_line + tail_line
    # More than the longer of the two totals (drains 394, chains 240).
    assert out[0] > max(210 + 105 + 56 + 23, 100 + 50 + 60 + 30)
