"""GM row alignment of on-the-fly ND->NZ copies: the row requests of an unaligned stride.

An on-the-fly ND->NZ copy (the 910B class, ``Intrinsic_data_move_out2l1_nd2nz``) issues one
request per contiguous ND row (:meth:`simcore.pipeline.costs.Costs.nd_copy_cycles`, the row
term). Each row starts at ``row x pitch`` bytes in GM, so the pitch (the operand's row length
in bytes: K for A and for B transposed, N for B) decides how every row request meets the GM
bursts. ascend-notes.md §3.3 (catlass' measured ND2NZ bandwidth model for A2,
``GetBandwidth``): the per-core ND2NZ bandwidth of short rows is multiplied by 100/30, 80/30,
50/30 or 40/30 when the source stride is a multiple of 256, 128, 64 or 16 fp16 elements (512,
256, 128 or 32 B) and by 1 otherwise, before the 80 GB/s cap that long rows reach whatever
their alignment. ascend-notes.md §3.3 and §5 say the same in words: ND2NZ bandwidth drops
sharply when the GM stride is not 512 B aligned.

The model's row term was fitted on 512 B-aligned strides (measured_msprof_910b1_8192.csv, K =
8192), so a row request takes :func:`stride_row_factor` times as long at a coarser alignment:
the catlass ratios relative to 512 B (1.25 at 256 B, 2 at 128 B, 2.5 at 32 B, 10/3 below).
Only the row term is stretched: a bandwidth-bound copy (long rows) keeps its stream, which the
stride efficiency of :meth:`simcore.pipeline.costs.Costs._stride_efficiency` already slows
(asc-devkit's ~70 % at 32 B against 512 B, ascend-notes.md §2.3). The factors are in bytes: the
catlass model is for 16-bit inputs, and the same byte alignments are taken for the others.
"""

from __future__ import annotations

from simcore.hardware.presets import HardwarePreset


def stride_row_factor(preset: HardwarePreset, pitch_bytes: float) -> float:
    """How much longer each ND row request of a copy takes at a GM row pitch of ``pitch_bytes``.

    The factor of the coarsest alignment in ``preset.nd2nz_stride_row_factors`` (bytes ->
    factor) that divides the pitch; a pitch that none divides (not even 1 B: a half-byte int4
    row) takes the largest factor. 1 on a preset without the table (the mechanism off).

    Args:
        preset: The chip.
        pitch_bytes: Bytes from one ND row of the operand in GM to the next.
    """
    table = preset.nd2nz_stride_row_factors
    if not table:
        return 1.0
    for align in sorted(table, reverse=True):
        if float(pitch_bytes) % align == 0:
            return float(table[align])
    return float(max(table.values()))
