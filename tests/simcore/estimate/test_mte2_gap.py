"""MTE2 idling behind slot-waiting copies (mte2_gap.py), by hand."""

from __future__ import annotations

import numpy as np

from simcore.estimate.mte2_gap import b_slot_gap_behind_a


def a(x: float) -> np.ndarray:
    return np.array([float(x)])


def test_b_second_copy_waits_for_the_release_behind_the_a_chunk_under_it() -> None:
    # A chunks of 2 steps (copies of 50, the K tail's 30), B chunks of 3 steps: B's chunk 0 is
    # released at the MMAD start of step 2, which follows A's chunk 1 (steps 2, 3), copied
    # after A's chunk 0 ... MTE2 has copied A's chunk 1 (x_m = floor(3 / 2) = 1) by then.
    def qa(r: np.ndarray) -> np.ndarray:
        return 11.0 * r  # the release of an r-step chunk from A's arrival (its MMAD start)

    idle = b_slot_gap_behind_a((a(4), a(2), a(3)), (a(50), a(30)), (qa, a(0)))
    # x = floor((3 - 1) / 2) = 1: A's copies up to chunk 1 (50), the release of step 2 from
    # its arrival (r = 1: 11); less MTE2's own copies up to x_m = 1 (50).
    assert idle[0] == max(50 + 11, 0) - 50
