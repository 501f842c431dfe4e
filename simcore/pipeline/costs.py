"""Cost primitives of the AI Core: cycles of one transfer or one cube instruction.

The formulas live in modules named for what they price: :mod:`simcore.pipeline.transfer` (MTE2
copies, UB staging legs, column DMA, bias slices, MTE1 loads), :mod:`simcore.pipeline.mmad`
(MMAD), :mod:`simcore.pipeline.drain` (FixPipe, L0C->UB, UB->GM). :class:`Costs` binds them to one
problem on one chip for the simulator and the estimator.

Every function takes scalars or numpy arrays (broadcasting), so the pipeline simulator and the
vectorized estimator price an instruction with the same formula. The constants come from the
preset (see ``simcore/hardware/data/model_constants.json`` for their sources):

* MTE2 GM->L1: ``latency + bytes / min(peak x stride efficiency, per-core share of L2/HBM)``,
  fitted to msKPP's GM_TO_L1 curve (NZ inputs) or GM_TO_L1_TRANS curve (on-the-fly ND->NZ).
* MTE1 L1->L0A/L0B: ``latency + bytes / rate`` (256 / 128 B per cycle on 910B-class chips).
* MMAD: one 16 x 16 x C0 fractal per ``16*16*C0 / macs_per_cycle`` cycles plus a fixed overhead.
* FixPipe L0C->GM: ``max(min_cycles, bytes / rate)`` (flat below ~8 KiB in msKPP's curve);
  with C left in UB on arch 3510, L0C->UB at the spec's rate (``fixpipe_to_ub_cycles``).
* Chips without FixPipe / on-the-fly ND->NZ stage through UB: GM->UB (MTE2), a vector reorder (V),
  UB->L1 (MTE3); and L0C->UB (V), UB->GM (MTE3). The reorders cost what the vector model
  (:mod:`simcore.ub.reorder`) says for the UB layout of :mod:`simcore.ub.path`, bank conflicts
  included: the ND rows land compact in UB, each rounded up to 32 B (a row of exactly 512 B gets
  the kernel's one-block pad, :func:`ub_nd_pitch_bytes`), so a row pitch that is a multiple of
  512 B puts the 8 blocks of a repeat in one bank group (8 cycles per repeat instead of 1, seed
  000 table 4).
* The kernel takes that vector path only when its two ``transLength`` halves fit in UB
  (:attr:`simcore.ub.path.UbPlan.vector_path`, ``Costs(..., vector_path=False)`` otherwise). Then
  ND inputs go GM->L1 by MTE2 one 32 B column at a time (one DMA instruction per column, each
  paying the GM->L1 latency: :meth:`Costs.load_instructions`), and the result goes L0C->UB (V, a
  plain move) and UB->GM by MTE3 one ND row at a time (one instruction per row), with no vector
  reorder and no UB->L1 leg.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from simcore.hardware.dtypes import (
    FRACTAL_ROW_BYTES,
    FRACTAL_ROWS,
    bits,
    c0_elements,
    scale_bytes_per_element,
)
from simcore.hardware.presets import HardwarePreset
from simcore.pipeline.alignment import stride_row_factor
from simcore.pipeline.arith import Num, align_up, at_least, at_most, ceil_div
from simcore.pipeline.drain import (
    fixpipe_cycles,
    fixpipe_to_ub_cycles,
    l0c_to_ub_cycles,
    l0c_to_ub_table,
    ub_to_gm_cycles,
    unit_flag_drain_tail,
    unit_flag_grain_bytes,
)
from simcore.pipeline.mmad import mmad_cycles
from simcore.pipeline.transfer import l1_to_l0_cycles
from simcore.tiling import footprints
from simcore.tiling.problem import Format, Problem, Template
from simcore.tiling.tcube import TCubeTiling
from simcore.ub import reorder
from simcore.ub.sizes import share_ub_size_array, staging_pitch_bytes, trans_length_array

# (The array arithmetic lives in simcore.pipeline.arith; re-exported for the callers of costs.)
__all__ = [
    "Costs",
    "Num",
    "align_up",
    "at_least",
    "at_most",
    "ceil_div",
    "takes_vector_path",
    "ub_nd_pitch_bytes",
    "vector_path_array",
]


def ub_nd_pitch_bytes(row_bytes: Num) -> Num:
    """Pitch of ND rows that MTE2 stages in UB (:func:`simcore.ub.sizes.staging_pitch_bytes`).

    Rows land compact, each rounded up to one 32 B block, except that the kernel pads a row of
    exactly 512 B by one block; longer multiples of 512 B repeat the bank group every row and the
    reorder pays seed 000's 8 cycles per repeat.
    """
    return staging_pitch_bytes(row_bytes)


def takes_vector_path(problem: Problem, t: TCubeTiling, preset: HardwarePreset) -> bool:
    """Whether the kernel reorders through UB with the vector unit (the rule of ``ub_plan``).

    True on UB-path chips when ``max(shareUbSize, 2 x transLength)`` fits in UB; false on chips
    without a UB path (there it does not matter).
    """
    if not footprints.uses_ub_path(problem, preset):
        return False
    need = max(
        footprints.share_ub_size(problem, t, preset),
        2 * footprints.trans_length(problem, t, preset),
    )
    return need <= preset.ub_bytes


def vector_path_array(
    problem: Problem, fields: dict[str, Any], preset: HardwarePreset
) -> np.ndarray | None:
    """:func:`takes_vector_path` over arrays of tiling fields; None on chips without a UB path."""
    if not footprints.uses_ub_path(problem, preset):
        return None
    need = np.maximum(
        share_ub_size_array(problem, fields, preset),
        2 * trans_length_array(problem, fields, preset),
    )
    out: np.ndarray = need <= preset.ub_bytes
    return out


class Costs:
    """Per-instruction cycle formulas for one problem on one chip.

    Args:
        problem: The Matmul problem (dtypes, formats and transposes decide the data paths).
        preset: The chip.
        vector_path: Whether the tiling's UB plan takes the vector reorder path
            (:func:`takes_vector_path`); ignored on chips without a UB path.
    """

    def __init__(self, problem: Problem, preset: HardwarePreset, vector_path: bool = True) -> None:
        self.preset = preset
        self.vector_path = vector_path
        self.in_bits = bits(problem.dtype)
        self.c_dtype = problem.c_dtype
        elem_bytes = self.in_bits / 8.0
        # MX operands move one e8m0 scale per 32 K elements along with the data, GM -> L1 ->
        # their own L0 MX buffers (ascend950.md): bytes moved per element, 0 extra otherwise.
        self.in_bytes = elem_bytes + scale_bytes_per_element(problem.dtype)
        self.out_bytes = bits(problem.c_dtype) / 8.0
        self.bias_bytes = bits(problem.bias_type) / 8.0
        self.c0 = c0_elements(problem.dtype)
        # Cycles one 16 x 16 x C0 fractal MAC takes: 1 for fp16/bf16/int8/int4, 2 for hf32, 4
        # for fp32 (ascend_soc_params.md conflict 5).
        self.fractal_cycles = (
            FRACTAL_ROWS
            * FRACTAL_ROWS
            * self.c0
            / float(preset.cube_macs_per_cycle.get(problem.dtype, 4096))
        )
        p = preset
        # The template (Norm copies one base block per GM->L1 copy, MDL a chunk) and the extents
        # that set how many cores read the same rows (simcore.pipeline.transfer).
        self.norm = problem.template is Template.NORM
        self.m = problem.m
        self.n = problem.n
        self.k = problem.k
        self.trans_a = problem.trans_a
        self.trans_b = problem.trans_b
        self.a_nd = problem.format_a is Format.ND
        self.b_nd = problem.format_b is Format.ND
        # ND inputs on chips without on-the-fly ND->NZ go GM -> UB -> (vector) -> L1 when the
        # reorder halves fit in UB, else GM -> L1 by one DMA per 32 B column.
        self.a_via_ub = self.a_nd and not p.nd2nz_on_the_fly and vector_path
        self.b_via_ub = self.b_nd and not p.nd2nz_on_the_fly and vector_path
        self.a_by_column = self.a_nd and not p.nd2nz_on_the_fly and not vector_path
        self.b_by_column = self.b_nd and not p.nd2nz_on_the_fly and not vector_path
        # ND inputs converted to NZ by the GM->L1 copy itself (the 910B class): the copies the
        # Norm template splits per base block and the same-address factor slows.
        self.a_on_the_fly = self.a_nd and p.nd2nz_on_the_fly
        self.b_on_the_fly = self.b_nd and p.nd2nz_on_the_fly
        # GM row pitch of each ND operand: A is M x K (K contiguous) unless transposed.
        a_pitch = (problem.m if problem.trans_a else problem.k) * elem_bytes
        b_pitch = (problem.k if problem.trans_b else problem.n) * elem_bytes
        self.a_pitch_bytes = a_pitch
        self.b_pitch_bytes = b_pitch
        self.a_eff = self._stride_efficiency(a_pitch) if self.a_nd else 1.0
        self.b_eff = self._stride_efficiency(b_pitch) if self.b_nd else 1.0
        # The row requests of an on-the-fly ND->NZ copy at the operand's GM row alignment
        # (simcore.pipeline.alignment: 1 at a 512 B-aligned pitch, up to 10/3 unaligned).
        self.a_row_factor = stride_row_factor(p, a_pitch) if self.a_on_the_fly else 1.0
        self.b_row_factor = stride_row_factor(p, b_pitch) if self.b_on_the_fly else 1.0
        self.has_fixpipe = p.has_fixpipe
        # C left in UB for a fused epilogue (arch 3510 only, Problem.c_position): FixPipe
        # drains L0C -> UB instead of L0C -> GM.
        self.c_to_ub = problem.c_position == "UB"
        # UnitFlag's fine-grained MMAD / FixPipe overlap: chips with FixPipe only (arch 2002
        # has no unitFlag: ascend-notes section 5, matmul_chip_cap.h).
        self.unit_flag_overlap = problem.unit_flag and p.has_fixpipe

    def _stride_efficiency(self, pitch_bytes: float) -> float:
        # GM strides that are not a multiple of the preferred alignment lose bandwidth
        # (ascend-notes.md §2.3: ~70 % at 32 B alignment versus 512 B on 910B).
        aligned = float(pitch_bytes) % self.preset.gm_stride_align_bytes == 0
        return 1.0 if aligned else self.preset.misaligned_stride_efficiency

    # --- sizes ---------------------------------------------------------------------------------

    def l1_tile_bytes(self, rows: Num, k: Num) -> Num:
        """Bytes of an NZ tile in L1: rows aligned to 16, K aligned to C0."""
        return align_up(rows, FRACTAL_ROWS) * align_up(k, self.c0) * self.in_bytes

    # --- MTE2 / MTE3 ---------------------------------------------------------------------------

    def gm_to_l1_cycles(self, nbytes: Num, nd: bool, eff: float, cap_bpc: Num) -> Num:
        """MTE2 cycles of one GM->L1 copy (on-the-fly ND->NZ when ``nd``)."""
        p = self.preset
        if nd:
            return p.nd2nz_latency_cycles + nbytes / at_most(
                cap_bpc, p.nd2nz_peak_bytes_per_cycle * eff
            )
        return p.gm_to_l1_latency_cycles + nbytes / at_most(
            cap_bpc, p.gm_to_l1_peak_bytes_per_cycle
        )

    def copy_rate(self, is_a: bool) -> tuple[float, float]:
        """(MTE2 latency per copy in cycles, peak bytes per cycle) of an operand's chunk copies.

        The GM->UB leg when it is staged through UB, else the GM->L1 copy: converted on the fly
        for ND, by 32 B columns when it cannot be (the extra latency per column is the
        caller's), plain for NZ. The rate is further capped by the core's bandwidth share.
        """
        p = self.preset
        eff = self.a_eff if is_a else self.b_eff
        if self.a_via_ub if is_a else self.b_via_ub:
            return p.gm_to_ub_latency_cycles, p.gm_to_ub_peak_bytes_per_cycle * eff
        if self.a_by_column if is_a else self.b_by_column:
            return p.gm_to_l1_latency_cycles, p.gm_to_l1_peak_bytes_per_cycle * eff
        if self.a_nd if is_a else self.b_nd:
            return p.nd2nz_latency_cycles, p.nd2nz_peak_bytes_per_cycle * eff
        return p.gm_to_l1_latency_cycles, p.gm_to_l1_peak_bytes_per_cycle

    def a_load_cycles(self, nbytes: Num, cap_bpc: Num) -> Num:
        """MTE2 cycles of one direct A copy of ``nbytes`` (NZ or ND on the fly: one instruction)."""
        return self.gm_to_l1_cycles(nbytes, self.a_nd, self.a_eff, cap_bpc)

    def b_load_cycles(self, nbytes: Num, cap_bpc: Num) -> Num:
        """MTE2 cycles of one direct B copy of ``nbytes`` (NZ or ND on the fly: one instruction)."""
        return self.gm_to_l1_cycles(nbytes, self.b_nd, self.b_eff, cap_bpc)

    def load_instructions(self, is_a: bool, rows: Num, k: Num) -> Num:
        """MTE2 instructions of one direct GM->L1 chunk copy of ``rows`` x ``k``.

        One, except on the column path (ND input, no on-the-fly ND->NZ, no room for the vector
        reorder): one DMA per 32 B column of the ND rows, each paying the GM->L1 latency.
        """
        if is_a and self.a_by_column:
            return ceil_div(self.a_nd_rows(rows, k)[1], FRACTAL_ROW_BYTES)
        if not is_a and self.b_by_column:
            return ceil_div(self.b_nd_rows(rows, k)[1], FRACTAL_ROW_BYTES)
        return 1

    def direct_load_cycles(
        self,
        is_a: bool,
        rows: Num,
        k: Num,
        cap_bpc: Num,
        pieces: tuple[Num, Num] = (1, 1),
        contention: Num = 1.0,
        nbytes: Num | None = None,
    ) -> Num:
        """MTE2 cycles to bring a ``rows`` x ``k`` chunk into L1 directly (not through UB).

        NZ input, ND converted on the fly (910B class, :meth:`nd_copy_cycles`), or ND by 32 B
        columns (see :meth:`load_instructions`). For the ND->NZ copy ``pieces`` are the chunk's
        DMA copies along its rows and along K (:func:`simcore.pipeline.transfer.copy_pieces`:
        one per base block under the Norm template), ``contention`` the same-address factor
        (:func:`simcore.pipeline.transfer.same_address_factor`). ``nbytes`` overrides the L1
        tile's bytes (rows already aligned, e.g. averaged over groups).
        """
        p = self.preset
        if nbytes is None:
            nbytes = self.l1_tile_bytes(rows, k)
        by_column = self.a_by_column if is_a else self.b_by_column
        eff = self.a_eff if is_a else self.b_eff
        if by_column:
            return self.load_instructions(
                is_a, rows, k
            ) * p.gm_to_l1_latency_cycles + nbytes / at_most(
                cap_bpc, p.gm_to_l1_peak_bytes_per_cycle * eff
            )
        if self.a_nd if is_a else self.b_nd:
            return self.nd_copy_cycles(is_a, rows, k, cap_bpc, pieces, nbytes, contention)
        # NZ input: one copy per chunk at msKPP's GM_TO_L1 curve (the pieces and the
        # same-address factor were measured on the ND->NZ path only; the UB-path chips' terms
        # price a chunk copy as one).
        return p.gm_to_l1_latency_cycles + nbytes / at_most(
            cap_bpc, p.gm_to_l1_peak_bytes_per_cycle
        )

    def nd_copy_cycles(
        self,
        is_a: bool,
        rows: Num,
        k: Num,
        cap_bpc: Num,
        pieces: tuple[Num, Num] = (1, 1),
        nbytes: Num | None = None,
        contention: Num = 1.0,
    ) -> Num:
        """MTE2 cycles of an on-the-fly ND->NZ GM->L1 copy of a ``rows`` x ``k`` chunk.

        ``copies x latency + max(ND rows x row cycles x contention, bytes / rate)``: the DMA
        issues one request per contiguous ND row, so short rows (a 64-element K slice of fp16 is
        128 B) are bound by the row count, long ones by the bandwidth
        (measured_msprof_910b1_8192.csv, fit in scripts/fit_board.py). Cores reading the same
        rows at once serialize those requests (``contention``,
        :func:`simcore.pipeline.transfer.same_address_factor`); a bandwidth-bound copy is bound by
        the chip's share instead. A copy split into ``pieces`` (rows, K) moves each ND row once per
        piece along the contiguous dimension. A GM row pitch that is not 512 B aligned stretches
        every row request (:func:`simcore.pipeline.alignment.stride_row_factor`), unless the
        copy takes whole rows (:meth:`whole_row_factor`).
        """
        p = self.preset
        trans = self.trans_a if is_a else not self.trans_b
        nd_rows = self.nd_row_count(is_a, rows, k)
        # The contiguous dimension is K for A (M x K) and for B transposed (N x K), else M / N.
        split = pieces[0] if trans else pieces[1]
        eff = self.a_eff if is_a else self.b_eff
        row_factor = self.whole_row_factor(is_a, rows, k, split)
        if nbytes is None:
            nbytes = self.l1_tile_bytes(rows, k)
        stream = nbytes / at_most(cap_bpc, p.nd2nz_peak_bytes_per_cycle * eff)
        return pieces[0] * pieces[1] * p.nd2nz_latency_cycles + np.maximum(
            nd_rows * split * p.nd2nz_row_cycles * contention * row_factor, stream
        )

    def whole_row_factor(self, is_a: bool, rows: Num, k: Num, split: Num) -> Num:
        """The row alignment factor of one ND->NZ copy (:func:`stride_row_factor`).

        The operand's factor, except for a copy whose pieces each take whole rows of the matrix
        (one piece along the contiguous dimension, covering all of it): its rows lie back to
        back in GM, one contiguous span whatever the pitch (catlass' ``dValue == srcDValue``
        case, ascend-notes.md §3.3), so its requests pay no alignment (factor 1).
        """
        trans = self.trans_a if is_a else not self.trans_b
        factor = self.a_row_factor if is_a else self.b_row_factor
        if factor == 1.0:
            return factor
        extent = rows if trans else k
        full = (self.m if is_a else self.n) if trans else self.k
        whole = (split == 1) & (extent >= full)
        if isinstance(whole, np.ndarray):
            return np.where(whole, 1.0, factor)
        return 1.0 if whole else factor

    def gm_to_ub_cycles(self, nbytes: Num, eff: float, cap_bpc: Num) -> Num:
        """MTE2 cycles of a GM->UB copy (first leg of the UB ND->NZ path)."""
        p = self.preset
        return p.gm_to_ub_latency_cycles + nbytes / at_most(
            cap_bpc, p.gm_to_ub_peak_bytes_per_cycle * eff
        )

    def nd_row_count(self, is_a: bool, rows: Num, k: Num) -> Num:
        """The ND rows of :meth:`a_nd_rows` (:meth:`b_nd_rows` for B) without their bytes."""
        # (The row bytes cost a multiply and a ceiling division per call, unused here.)
        if is_a:
            return k if self.trans_a else rows
        return rows if self.trans_b else k

    def a_nd_rows(self, rows: Num, k: Num) -> tuple[Num, Num]:
        """(rows, row bytes) of an A chunk of ``rows`` x ``k`` as it lies in GM (ND)."""
        if self.trans_a:
            return k, ceil_div(rows * self.in_bits, 8)
        return rows, ceil_div(k * self.in_bits, 8)

    def b_nd_rows(self, cols: Num, k: Num) -> tuple[Num, Num]:
        """(rows, row bytes) of a B chunk of ``k`` x ``cols`` as it lies in GM (ND)."""
        if self.trans_b:
            return cols, ceil_div(k * self.in_bits, 8)
        return k, ceil_div(cols * self.in_bits, 8)

    def nd2nz_a_cycles(self, rows: Num, k: Num) -> Num:
        """Vector cycles to reorder an A chunk (``rows`` x ``k``) from ND into NZ in UB."""
        nd_rows, row_bytes = self.a_nd_rows(rows, k)
        return reorder.nd2nz_reorder_cycles(
            nd_rows, row_bytes, ub_nd_pitch_bytes(row_bytes), self.preset
        )

    def nd2nz_shape_cycles(self, is_a: bool) -> Callable[[Num, Num], Num]:
        """:meth:`nd2nz_a_cycles` (B: :meth:`nd2nz_b_cycles`) of an operand's chunk shapes.

        A function ``(rows, k) -> cycles`` over arrays, the same values, that computes the
        share of the reorder each rows and each K object decides once (the ND rows come from
        one, the row bytes from the other: :meth:`a_nd_rows`, :meth:`b_nd_rows`).
        """
        in_bits = self.in_bits
        # The ND rows are the chunk's rows (A, or B transposed), else its K.
        rows_first = not self.trans_a if is_a else self.trans_b
        shapes = reorder.nd2nz_reorder_shapes(self.preset)

        def layout(src: Any) -> tuple[Any, Any]:
            row_bytes = ceil_div(src * in_bits, 8)
            return row_bytes, ub_nd_pitch_bytes(row_bytes)

        def cycles(rows: Num, k: Num) -> Num:
            return shapes(rows, k, layout) if rows_first else shapes(k, rows, layout)

        return cycles

    def nd2nz_b_cycles(self, cols: Num, k: Num) -> Num:
        """Vector cycles to reorder a B chunk (``k`` x ``cols``) from ND into NZ in UB."""
        nd_rows, row_bytes = self.b_nd_rows(cols, k)
        return reorder.nd2nz_reorder_cycles(
            nd_rows, row_bytes, ub_nd_pitch_bytes(row_bytes), self.preset
        )

    def ub_to_l1_cycles(self, nbytes: Num) -> Num:
        """MTE3 cycles of a UB->L1 copy (last leg of the UB ND->NZ path)."""
        p = self.preset
        return p.gm_to_ub_latency_cycles + nbytes / p.ub_to_l1_bytes_per_cycle

    # --- MTE1 and cube -------------------------------------------------------------------------

    def la_cycles(self, rows: Num, k: Num) -> Num:
        """MTE1 cycles to load a rows x k A block from L1 into L0A."""
        k_bytes = align_up(k, self.c0) * self.in_bytes
        return l1_to_l0_cycles(self.preset, True, align_up(rows, FRACTAL_ROWS), k_bytes)

    def lb_cycles(self, cols: Num, k: Num) -> Num:
        """MTE1 cycles to load a k x cols B block from L1 into L0B."""
        k_bytes = align_up(k, self.c0) * self.in_bytes
        return l1_to_l0_cycles(self.preset, False, align_up(cols, FRACTAL_ROWS), k_bytes)

    def mmad_cycles(self, rows: Num, cols: Num, k: Num) -> Num:
        """Cube cycles of one MMAD over a rows x cols x k block (whole fractals)."""
        return mmad_cycles(
            self.preset.mmad_overhead_cycles,
            self.fractal_cycles,
            ceil_div(rows, FRACTAL_ROWS),
            ceil_div(cols, FRACTAL_ROWS),
            ceil_div(k, self.c0),
        )

    @property
    def mmad_restart_cycles(self) -> float:
        """Cube cycles an MMAD adds on an idle cube (:mod:`simcore.pipeline.restart`)."""
        return self.preset.mmad_restart_cycles

    # --- output --------------------------------------------------------------------------------

    def c_bytes(self, rows: Num, cols: Num) -> Num:
        """Bytes of one output block as written to GM."""
        return rows * cols * self.out_bytes

    def fix_cycles(self, rows: Num, cols: Num, cap_bpc: Num) -> Num:
        """FixPipe cycles to drain a rows x cols block from L0C to GM (NZ->ND on the way).

        With C left in UB (arch 3510) the named L0C -> UB cost instead
        (:func:`simcore.pipeline.drain.fixpipe_to_ub_cycles`).
        """
        if self.c_to_ub:
            return fixpipe_to_ub_cycles(self.preset, self.c_bytes(rows, cols))
        return fixpipe_cycles(self.preset, self.c_bytes(rows, cols), cap_bpc)

    def fix_grain_cycles(self, cap_bpc: Num) -> Num:
        """FixPipe cycles of one UnitFlag grain (``drain.unit_flag_grain_bytes``, 512 B).

        At the block's rate (:meth:`fix_cycles` without its start-up floor: the grain is part of
        a drain already under way).
        """
        grain = unit_flag_grain_bytes()
        if self.c_to_ub:
            return grain / self.preset.l0c_to_ub_bytes_per_cycle
        return grain / at_most(cap_bpc, self.preset.fixpipe_bytes_per_cycle)

    def fix_last_drain_cycles(self, rows: Num, cols: Num, cap_bpc: Num, last_mmad: Num) -> Num:
        """FixPipe cycles a block's drain ends after its last MMAD (``last_mmad`` cycles) ends.

        :meth:`fix_cycles` without UnitFlag; with it the drain starts with that MMAD
        (:func:`simcore.pipeline.drain.unit_flag_drain_tail`).
        """
        dr = self.fix_cycles(rows, cols, cap_bpc)
        if not self.unit_flag_overlap:
            return dr
        return unit_flag_drain_tail(last_mmad, dr, self.fix_grain_cycles(cap_bpc))

    def c_to_ub_cycles(self, rows: Num, cols: Num) -> Num:
        """Vector cycles to move a block L0C->UB and reorder it NZ->ND (chips without FixPipe).

        See :func:`simcore.pipeline.drain.l0c_to_ub_cycles`.
        """
        return l0c_to_ub_cycles(self.preset, rows, cols, bits(self.c_dtype), self.vector_path)

    def c_to_ub_table(self, rows: Sequence[Num], cols: Sequence[Num]) -> dict[tuple[int, int], Num]:
        """:meth:`c_to_ub_cycles` of every block ``rows[i] x cols[j]``, keyed ``(i, j)``.

        See :func:`simcore.pipeline.drain.l0c_to_ub_table`.
        """
        return l0c_to_ub_table(self.preset, rows, cols, bits(self.c_dtype), self.vector_path)

    def c_ub_to_gm_cycles(self, rows: Num, cols: Num, cap_bpc: Num) -> Num:
        """MTE3 cycles to write a block UB->GM (chips without FixPipe).

        See :func:`simcore.pipeline.drain.ub_to_gm_cycles`.
        """
        return ub_to_gm_cycles(
            self.preset, rows, self.c_bytes(rows, cols), cap_bpc, self.vector_path
        )

    def bias_load_cycles(self, cols: Num, cap_bpc: Num) -> Num:
        """MTE2 cycles to fetch one baseN bias block."""
        return self.gm_to_l1_cycles(cols * self.bias_bytes, False, 1.0, cap_bpc)
