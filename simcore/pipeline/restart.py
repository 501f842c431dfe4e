"""The MMAD restart: the cube's pipeline fill when an MMAD starts on an idle cube.

The cube is a pipeline: MMADs queued back to back overlap one's fill with the previous one's
drain, but an MMAD that starts after the cube has gone idle (it waited for its L0A / L0B data)
pays the fill again, and the profiler counts it as MAC busy time
(measured_msprof_910b1_8192.csv: the Norm cases 0-3, whose cube waits for every K step's copies
and reads, hold 59-68 cycles per MMAD of MAC time above the MMADs' fractal time; the MDL cases,
whose cube is fed ahead, 7-54).

Where the model knows the cube idles from the kernel's structure alone, both fidelities price the
restart (the simulator lengthens those MMADs, the estimator adds the same count to the cube's busy
total and to the paths that end in such an MMAD):

* **the Norm step hand-off** (:func:`simcore.pipeline.transfer.norm_step_handoff`): a chunk's
  first MMAD waits for its reads, which wait for the chunk's copies, which wait for every read
  before them. The cube idles there unless the previous MMAD outlasts a chunk's copies and reads,
  which no L0-legal block of the measured family does (a 64 x 64 x 64 step copies in ~560
  cycles against a 66-cycle MMAD, a 128 x 256 x 64 step in ~1,380 against 514).

Elsewhere (a cube fed ahead by double-buffered L0, or waiting on MTE2 only now and then) the
restart is not priced: the file's MDL cases are within 10 % of their MAC time without it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simcore.pipeline.arith import ceil_div

__all__ = ["restart_at_step", "restart_on_last_step", "restarts_per_block"]


def restart_at_step(handoff: bool, step: int, step_k: int) -> bool:
    """Whether the K step ``step`` of a block starts its MMAD on an idle cube.

    Under the Norm step hand-off each chunk's first step (``step % step_k == 0``; stepKa =
    stepKb there) waits for the chunk's copies and reads.
    """
    return handoff and step % step_k == 0


def restarts_per_block(handoff: Any, k_iter: Any, step_k: Any) -> Any:
    """MMAD restarts of one block: its chunk starts, ``ceil(k_iter / stepK)``, under the hand-off.

    The count of steps :func:`restart_at_step` marks (0 where the hand-off does not hold).
    Scalars or arrays.
    """
    return np.where(handoff, ceil_div(k_iter, step_k), 0)


def restart_on_last_step(handoff: Any, k_iter: Any, step_k: Any) -> Any:
    """Whether a block's last K step restarts the cube (its chunk starts there): 0 or 1."""
    return np.where(handoff & ((k_iter - 1) % step_k == 0), 1, 0)
