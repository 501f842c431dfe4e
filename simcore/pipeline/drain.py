"""Cycles of draining an output block: FixPipe L0C->GM, or L0C->UB (V) and UB->GM (MTE3).

Chips with FixPipe write a block from L0C to GM in one instruction (NZ->ND on the way); chips
without it move the block L0C->UB with the vector unit (and reorder it NZ->ND there on the vector
path) and copy it UB->GM with MTE3, through one C staging buffer. The simulator (through
:class:`simcore.pipeline.costs.Costs`) and the estimator price a drain with these functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from simcore.hardware.dtypes import ACCUMULATOR_BYTES, FRACTAL_ROW_BYTES, FRACTAL_ROWS
from simcore.hardware.presets import HardwarePreset
from simcore.pipeline.arith import align_up, at_least, at_most, ceil_div
from simcore.ub import reorder


def fixpipe_cycles(preset: HardwarePreset, c_bytes: Any, cap_bpc: Any) -> Any:
    """FixPipe cycles of one block of ``c_bytes``: ``max(bytes / min(cap, rate), min cycles)``."""
    rate = at_most(cap_bpc, preset.fixpipe_bytes_per_cycle)
    return at_least(c_bytes / rate, preset.fixpipe_min_cycles)


def fixpipe_to_ub_cycles(preset: HardwarePreset, c_bytes: Any) -> Any:
    """FixPipe cycles of one block written L0C -> UB (arch 3510, C left in UB).

    ``max(bytes / L0C->UB rate, min cycles)``: the spec's L0C to UB path (128 B per cycle,
    ascend950.md) with FixPipe's start-up (``fixpipe_min_cycles``, an assumption: measured on
    the L0C -> GM path only). The block does not leave the core, so the chip's GM bandwidth
    share does not bound it.
    """
    return at_least(c_bytes / preset.l0c_to_ub_bytes_per_cycle, preset.fixpipe_min_cycles)


def l0c_to_ub_cycles(
    preset: HardwarePreset, rows: Any, cols: Any, c_bits: int, vector_path: bool
) -> Any:
    """Vector cycles to move a block L0C->UB and, on the vector path, reorder it NZ->ND.

    The move (with the fp32 -> output conversion) streams the accumulator at the L0C->UB rate;
    the reorder writes ``rows`` ND rows of ``cols`` outputs of ``c_bits`` each, compact in UB
    (rows rounded up to 32 B, no pad: simcore.ub.path lays the C block out that way). Off the
    vector path the block stays NZ in UB and MTE3 writes it row by row.
    """
    p = preset
    acc = align_up(rows, FRACTAL_ROWS) * align_up(cols, FRACTAL_ROWS) * ACCUMULATOR_BYTES
    if not vector_path:
        return p.vector_issue_overhead_cycles + acc / p.l0c_to_ub_bytes_per_cycle
    row_bytes = ceil_div(cols * c_bits, 8)
    return (
        p.vector_issue_overhead_cycles
        + acc / p.l0c_to_ub_bytes_per_cycle
        + reorder.nz2nd_reorder_cycles(rows, row_bytes, align_up(row_bytes, FRACTAL_ROW_BYTES), p)
    )


def l0c_to_ub_table(
    preset: HardwarePreset,
    rows: Sequence[Any],
    cols: Sequence[Any],
    c_bits: int,
    vector_path: bool,
) -> dict[tuple[int, int], Any]:
    """:func:`l0c_to_ub_cycles` of every block ``rows[i] x cols[j]``, keyed ``(i, j)``.

    Each rows' and each columns' share of the work (the alignments, the row bytes and their
    reorder parts) is computed once: the estimator's block types pair two of each.
    """
    p = preset
    rows_al = [align_up(r, FRACTAL_ROWS) for r in rows]
    cols_al = [align_up(col, FRACTAL_ROWS) for col in cols]
    out: dict[tuple[int, int], Any] = {}
    if not vector_path:
        for j, ac in enumerate(cols_al):
            for i, ar in enumerate(rows_al):
                acc = ar * ac * ACCUMULATOR_BYTES
                out[(i, j)] = p.vector_issue_overhead_cycles + acc / p.l0c_to_ub_bytes_per_cycle
        return out
    row_bytes = [ceil_div(col * c_bits, 8) for col in cols]
    pitches = [align_up(rb, FRACTAL_ROW_BYTES) for rb in row_bytes]
    reorders = reorder.nz2nd_reorder_table(rows, row_bytes, pitches, p)
    for j, ac in enumerate(cols_al):
        for i, ar in enumerate(rows_al):
            acc = ar * ac * ACCUMULATOR_BYTES
            out[(i, j)] = (
                p.vector_issue_overhead_cycles
                + acc / p.l0c_to_ub_bytes_per_cycle
                + reorders[(i, j)]
            )
    return out


def ub_to_gm_cycles(
    preset: HardwarePreset, rows: Any, c_bytes: Any, cap_bpc: Any, vector_path: bool
) -> Any:
    """MTE3 cycles to write a block of ``c_bytes`` UB->GM.

    One copy of the reordered ND block on the vector path; one copy per ND row otherwise. The
    row copies are latency-bound (one row is at most a few KiB), so the chip's averaged bandwidth
    share, a figure for continuous streams, does not slow them: they move at the UB->GM peak.
    """
    p = preset
    if not vector_path:
        return rows * p.ub_to_gm_latency_cycles + c_bytes / p.ub_to_gm_peak_bytes_per_cycle
    return p.ub_to_gm_latency_cycles + c_bytes / at_most(cap_bpc, p.ub_to_gm_peak_bytes_per_cycle)


def unit_flag_db_l0c(db_l0c: Any) -> Any:
    """The L0C hand-off of a kernel compiled with UnitFlag: as with two L0C buffers.

    With UnitFlag FixPipe drains the block at 512 B grain while its last MMADs still run, so the
    next block's first MMAD waits for a drain that ends with the block, not one that starts
    after it (measured_msprof_910b1_8192.csv case 8 against case 7: 41 us less, the ~30 us of
    exposed 128 x 256 drains of case 7 and more). Scalars or arrays.
    """
    return np.maximum(db_l0c, 2)


def unit_flag_grain_bytes() -> int:
    """Bytes of the grain FixPipe drains at with UnitFlag: one 16 x 32 B output fractal, 512 B.

    (shared/reference README, measured_msprof_910b1_8192.csv case 8: "FixPipe overlapped with
    MMAD at 512 B grain"; ascend-notes section 5: "Mmad unitFlag lets FixPipe drain each
    finished fractal".)
    """
    return FRACTAL_ROWS * FRACTAL_ROW_BYTES


def unit_flag_drain_start(last_mmad_start: Any) -> Any:
    """The earliest start of a block's FixPipe drain with UnitFlag: its last MMAD's start.

    FixPipe drains each fractal of L0C as the last K step's MMAD finishes it, so the drain
    waits for that MMAD to start, not to end (without UnitFlag: its end,
    :func:`simcore.pipeline.precedence.drain_ready`). Scalars or arrays.
    """
    return last_mmad_start


def unit_flag_drain_end(
    drain_start: Any, drain_cycles: Any, last_mmad_end: Any, grain_cycles: Any
) -> Any:
    """The end of a block's FixPipe drain with UnitFlag that starts at ``drain_start``.

    No earlier than its start plus its full FixPipe time, and no earlier than the last MMAD's
    end plus the drain of the last fractal it finishes (``grain_cycles``, one
    :func:`unit_flag_grain_bytes` grain). Scalars or arrays.
    """
    return np.maximum(drain_start + drain_cycles, last_mmad_end + grain_cycles)


def unit_flag_drain_tail(last_mmad_cycles: Any, drain_cycles: Any, grain_cycles: Any) -> Any:
    """Cycles a block's UnitFlag drain ends after its last MMAD ends, the drain starting with it.

    :func:`unit_flag_drain_end` of a drain that starts at the last MMAD's start
    (:func:`unit_flag_drain_start`), measured from that MMAD's end:
    ``max(drain - last MMAD, grain)``, at most the drain (what follows the last MMAD without
    UnitFlag). The estimator's and the bounds' last-drain term. Scalars or arrays.
    """
    start = unit_flag_drain_start(0.0)
    return unit_flag_drain_end(start, drain_cycles, start + last_mmad_cycles, grain_cycles) - (
        start + last_mmad_cycles
    )
