"""The UB data path of chips without on-the-fly ND->NZ or without FixPipe: buffers, need, conflicts.

On Ascend910A, Ascend310P and Ascend310B the Matmul moves data through the Unified Buffer:

* ND inputs (chips without on-the-fly ND->NZ): each L1 chunk of A or B goes GM->UB by MTE2, rows
  landing compact in UB, is reordered ND->NZ by the vector unit, and goes UB->L1 by MTE3;
* the result (chips without FixPipe): each baseM x baseN block goes L0C->UB in NZ order, is
  reordered NZ->ND by the vector unit and goes UB->GM by MTE3.

:func:`ub_plan` lays the buffers of that path out in UB, says how much UB the tiling needs and
whether it fits, and prices each reorder's repeat with the bank model of seed 000
(:mod:`simcore.ub.banks`), naming every conflict. :func:`simcore.ub.sizes.ub_path_arrays` gives the
same sizes, pitches and cycles over numpy arrays of tiling fields, for the estimator and the
simulator.

How much UB, and when (``ascend-notes.md`` §1.8 and CANN's Matmul kernel as published in
asc-devkit, read for its behaviour):

* The workspace the kernel always needs is ``shareUbSize``: the ND tail-padding buffer plus, on
  chips without FixPipe, the C staging block baseM x baseN x sizeof(C) (once, not x dbL0C: the
  struct's shareUbSize counts it once and reproduces all 857 Ascend310P3 rows of CANN's tilings).
  :data:`simcore.tiling.legality.RULES` ``UB_CAPACITY`` makes a tiling whose shareUbSize exceeds
  the UB illegal. CANN's fp32 rows with baseM = baseN = 256 fill the 256 KiB UB exactly, so the
  limit is ``<=``.
* The vector reorders need a source and a destination half of ``transLength`` each
  (``UB >= max(shareUbSize, 2 x transLength)``, CANN's MatmulGetTmpBufSize). The kernel takes
  that path only when it fits (CANN's docs: enable ``enVecND2NZ`` when the UB exceeds 2 x
  transLength); otherwise ND rows go GM->L1 by DMA, one 32 B column at a time, and the result
  leaves UB row by row through MTE3, with no vector reorder. 783 of CANN's 857 Ascend310P3 rows
  have ``2 x transLength`` above the UB (transLength counts whole stepM x stepKa chunks), so this
  need is *not* a legality rule: reading it as one would reject CANN's own tilings.
  :attr:`UbPlan.vector_path` says which path the tiling gets.

Row pitches in UB: MTE2 lands ND rows compact, ``pitch = row bytes rounded up to 32 B``, except
that CANN's kernel pads a row of exactly 16 blocks (512 B) by one block against bank conflicts;
longer rows that are multiples of 512 B stay unpadded (the kernel's test is ``blocks * 32 % 512
== 0 and blocks < 32``). The C block's ND rows are compact. A pitch that is a multiple of 512 B
puts the 8 rows of a reorder repeat in one bank group: 8 cycles per repeat instead of 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from simcore.hardware.dtypes import FRACTAL_ROWS, nbytes
from simcore.hardware.presets import HardwarePreset
from simcore.tiling import footprints
from simcore.tiling.problem import Format, Problem
from simcore.tiling.tcube import TCubeTiling
from simcore.ub.banks import (
    BLOCK_BYTES,
    BLOCKS_PER_REPEAT,
    BlockAccess,
    Conflict,
    analyze_repeat,
    base_repeat_cycles,
)
from simcore.ub.reorder import (
    nd2nz_reorder_cycles,
    nz2nd_reorder_cycles,
    strided_repeat_cycles,
)
from simcore.ub.sizes import align_up, staging_pitch_bytes

ReorderName = Literal["nd2nz_a", "nd2nz_b", "nz2nd_c"]


_ROLE_TEXT: dict[str, str] = {
    "a_nd": "A chunk as MTE2 lands it (ND rows)",
    "a_nz": "A chunk reordered to NZ, for MTE3 to L1",
    "b_nd": "B chunk as MTE2 lands it (ND rows)",
    "b_nz": "B chunk reordered to NZ, for MTE3 to L1",
    "c_nz": "C block as L0C->UB leaves it (NZ)",
    "c_nd": "C block reordered to ND rows, for MTE3 to GM",
    "c_staging": "C block as L0C->UB leaves it, copied to GM row by row by MTE3",
    "bias": "bias block (baseN values)",
    "nd_tail_pad": "ND tail-padding buffer (rows whose contiguous dim is not 32 B aligned)",
}


@dataclass(frozen=True)
class UbBuffer:
    """One buffer of the UB path.

    Attributes:
        name: ``a_nd``, ``a_nz``, ``b_nd``, ``b_nz``, ``c_nz``, ``c_nd``, ``c_staging``, ``bias`` or
            ``nd_tail_pad``.
        purpose: What it holds, in words.
        offset: Start address in UB (bytes).
        size_bytes: Bytes it takes.
        rows: Rows of the tile it holds (0 for a flat buffer).
        row_bytes: Bytes of one row.
        pitch_bytes: Distance between consecutive rows in UB (32 B in an NZ buffer, whose
            32 B columns are contiguous; 0 for a flat buffer).
    """

    name: str
    purpose: str
    offset: int
    size_bytes: int
    rows: int
    row_bytes: int
    pitch_bytes: int

    def to_dict(self) -> dict[str, Any]:
        """Returns the buffer as JSON-ready values."""
        return {
            "name": self.name,
            "purpose": self.purpose,
            "offset": self.offset,
            "size_bytes": self.size_bytes,
            "rows": self.rows,
            "row_bytes": self.row_bytes,
            "pitch_bytes": self.pitch_bytes,
        }


@dataclass(frozen=True)
class UbConflict:
    """A bank conflict one reorder suffers in every repeat.

    Attributes:
        reorder: ``nd2nz_a``, ``nd2nz_b`` or ``nz2nd_c``.
        kind: ``read_read``, ``write_write`` or ``read_write`` (seed 000).
        operands: The instruction operands involved (``src0``, ``dst``).
        buffers: The UB buffers those operands address.
        bank_groups: The bank groups the blocks crowd into.
        blocks: Blocks of the repeat involved.
        pitch_bytes: The row pitch that causes it.
        cycles_per_repeat: Cycles of the reorder's repeat with its conflicts.
        conflict_free_cycles: Cycles of a conflict-free repeat.
        message: One sentence for people.
    """

    reorder: str
    kind: str
    operands: tuple[str, ...]
    buffers: tuple[str, ...]
    bank_groups: tuple[int, ...]
    blocks: int
    pitch_bytes: int
    cycles_per_repeat: int
    conflict_free_cycles: int
    message: str

    def to_dict(self) -> dict[str, Any]:
        """Returns the conflict as JSON-ready values."""
        return {
            "reorder": self.reorder,
            "kind": self.kind,
            "operands": list(self.operands),
            "buffers": list(self.buffers),
            "bank_groups": list(self.bank_groups),
            "blocks": self.blocks,
            "pitch_bytes": self.pitch_bytes,
            "cycles_per_repeat": self.cycles_per_repeat,
            "conflict_free_cycles": self.conflict_free_cycles,
            "message": self.message,
        }


@dataclass(frozen=True)
class UbReorder:
    """One vector reorder of the path, priced on the plan's layout (first full chunk or block).

    Attributes:
        name: ``nd2nz_a``, ``nd2nz_b`` or ``nz2nd_c``.
        src: The buffer read.
        dst: The buffer written.
        rows: Rows reordered.
        row_bytes: Bytes per row.
        pitch_bytes: Pitch of the ND rows (the strided side).
        cycles_per_repeat: Cycles of one repeat on the plan's layout.
        cycles: Vector cycles of the whole reorder (issue overhead included).
        conflicts: The conflicts of its repeat.
    """

    name: str
    src: str
    dst: str
    rows: int
    row_bytes: int
    pitch_bytes: int
    cycles_per_repeat: int
    cycles: float
    conflicts: tuple[UbConflict, ...]


@dataclass(frozen=True)
class UbPlan:
    """The UB buffers of one tiling, the UB it needs, and the conflicts of its reorders.

    Attributes:
        soc: The chip.
        ub_bytes: The chip's UB.
        share_ub_bytes: shareUbSize as derived from the tiling: UB the kernel always needs.
        trans_length_bytes: The tiling's transLength (each half of the vector reorder workspace).
        vector_need_bytes: ``max(shareUbSize, 2 x transLength)``: the UB the vector reorder
            path needs.
        fits: Whether ``share_ub_bytes`` fits the UB (the legality rule ``UB_CAPACITY``).
        vector_path: Whether the vector reorder path fits, so the kernel takes it.
        buffers: The buffers, by offset.
        reorders: The vector reorders (empty when ``vector_path`` is false).
        pad_bytes: Bytes the destination half was moved past the source half to keep a
            reorder's lanes from reading and writing one bank (seed 000's 32 B pad).
    """

    soc: str
    ub_bytes: int
    share_ub_bytes: int
    trans_length_bytes: int
    vector_need_bytes: int
    fits: bool
    vector_path: bool
    buffers: tuple[UbBuffer, ...]
    reorders: tuple[UbReorder, ...]
    pad_bytes: int = 0

    @property
    def conflicts(self) -> list[UbConflict]:
        """Every reorder's conflicts, in reorder order."""
        return [c for r in self.reorders for c in r.conflicts]

    @property
    def cycles_per_repeat(self) -> dict[str, int]:
        """Cycles of one repeat of each reorder, by reorder name."""
        return {r.name: r.cycles_per_repeat for r in self.reorders}

    def explanation(self) -> list[str]:
        """Sentences for people: whether the vector path fits, then one per conflict."""
        out: list[str] = []
        if not self.fits:
            out.append(
                f"shareUbSize = {self.share_ub_bytes} B exceeds {self.soc}'s "
                f"{self.ub_bytes} B UB: the tiling is illegal (UB_CAPACITY)."
            )
        elif not self.vector_path and self.trans_length_bytes:
            out.append(
                f"max(shareUbSize, 2 x transLength) = {self.vector_need_bytes} B exceeds "
                f"{self.soc}'s {self.ub_bytes} B UB: the kernel cannot reorder in UB with the "
                "vector unit (enVecND2NZ) and moves ND rows and output rows by DMA instead."
            )
        out.extend(c.message for c in self.conflicts)
        return out

    def to_dict(self) -> dict[str, Any]:
        """Returns the plan as the ``ub`` object of an estimate (JSON-ready)."""
        return {
            "buffers": [b.to_dict() for b in self.buffers],
            "conflicts": [c.to_dict() for c in self.conflicts],
            "cycles_per_repeat": self.cycles_per_repeat,
            "reorder_cycles": {r.name: r.cycles for r in self.reorders},
            "ub_bytes": self.ub_bytes,
            "share_ub_bytes": self.share_ub_bytes,
            "trans_length_bytes": self.trans_length_bytes,
            "vector_need_bytes": self.vector_need_bytes,
            "fits": self.fits,
            "vector_path": self.vector_path,
            "pad_bytes": self.pad_bytes,
        }


@dataclass(frozen=True)
class _Tile:
    """A tile staged in UB: rows of ``row_bytes``, landing ``pitch_bytes`` apart."""

    rows: int
    row_bytes: int
    pitch_bytes: int

    @property
    def nd_bytes(self) -> int:
        return self.rows * self.pitch_bytes

    @property
    def nz_bytes(self) -> int:
        # NZ rounds rows up to 16-row fractals, and each row to 32 B columns.
        return int(align_up(self.rows, FRACTAL_ROWS) * align_up(self.row_bytes, BLOCK_BYTES))


def _input_tiles(problem: Problem, t: TCubeTiling, preset: HardwarePreset) -> dict[str, _Tile]:
    """The first full L1 chunk of each ND input that goes through UB, as it lies in GM."""
    tiles: dict[str, _Tile] = {}
    if preset.nd2nz_on_the_fly:
        return tiles
    k = problem.k
    m_ext = min(t.baseM * t.stepM, t.singleCoreM)
    n_ext = min(t.baseN * t.stepN, t.singleCoreN)
    ka_ext = min(t.baseK * t.stepKa, k)
    kb_ext = min(t.baseK * t.stepKb, k)
    dt = problem.dtype
    if problem.format_a is Format.ND:
        rows, cols = (ka_ext, m_ext) if problem.trans_a else (m_ext, ka_ext)
        row_bytes = nbytes(dt, cols)
        tiles["a"] = _Tile(rows, row_bytes, int(staging_pitch_bytes(row_bytes)))
    if problem.format_b is Format.ND:
        rows, cols = (n_ext, kb_ext) if problem.trans_b else (kb_ext, n_ext)
        row_bytes = nbytes(dt, cols)
        tiles["b"] = _Tile(rows, row_bytes, int(staging_pitch_bytes(row_bytes)))
    return tiles


def _c_tile(problem: Problem, t: TCubeTiling) -> _Tile:
    rows = min(t.baseM, t.singleCoreM)
    row_bytes = nbytes(problem.c_dtype, min(t.baseN, t.singleCoreN))
    return _Tile(rows, row_bytes, align_up(row_bytes, BLOCK_BYTES))


def ub_plan(problem: Problem, tiling: TCubeTiling, preset: HardwarePreset) -> UbPlan:
    """Lays out the UB buffers a tiling needs on a UB-path chip and prices its reorders.

    Layout (the kernel's workspace): a source half at 0 and a destination half after it, each
    ``transLength`` long; A, B and C take turns in them (the ND chunk or NZ block at 0, the
    reordered one in the second half), as do the bias and the ND tail pad in the first half.
    The second half starts on a 32 B boundary and is moved by 32 B steps, while the UB has room,
    when that removes a read-write conflict of a reorder repeat (seed 000's pad).

    Each reorder's first repeat is analysed with :func:`simcore.ub.banks.analyze_repeat` on the
    layout's real addresses, so the conflicts name their bank groups. Tail chunks (narrower than
    the first) may have other pitches; :func:`simcore.ub.sizes.ub_path_arrays` prices any row width.

    Args:
        problem: The Matmul problem.
        tiling: A complete tiling (its transLength is the kernel's half size).
        preset: The chip.

    Returns:
        The plan. On chips without a UB path (910B class) it has no buffers, ``fits`` true and
        ``vector_path`` false.
    """
    t = tiling
    ub = preset.ub_bytes
    share_ub = footprints.share_ub_size(problem, t, preset)
    if not footprints.uses_ub_path(problem, preset):
        return UbPlan(preset.soc, ub, share_ub, 0, share_ub, share_ub <= ub, False, (), ())
    tiles = _input_tiles(problem, t, preset)
    c_tile = None if preset.has_fixpipe else _c_tile(problem, t)
    trans_length = footprints.trans_length(problem, t, preset)
    # The kernel turns the vector reorders on when its two transLength halves fit (CANN docs).
    vector_need = max(share_ub, 2 * trans_length)
    vector_path = vector_need <= ub
    # The halves hold whole tiles even if the struct's transLength was given smaller.
    half = _half_bytes(max(trans_length, int(t.transLength)), tiles, c_tile)
    first: list[UbBuffer] = []
    if problem.bias:
        first.append(_buffer("bias", 0, align_up(nbytes(problem.bias_type, t.baseN), BLOCK_BYTES)))
    tail_pad = footprints.nd_tail_pad_bytes(problem, t)
    if tail_pad:
        first.append(_buffer("nd_tail_pad", 0, tail_pad))
    buffers = list(first)
    reorders: list[UbReorder] = []
    pad_bytes = 0
    if not vector_path:
        if c_tile is not None:
            c_bytes = nbytes(problem.c_dtype, t.baseM * t.baseN)
            buffers.append(_buffer("c_staging", 0, c_bytes, c_tile, BLOCK_BYTES))
    else:
        spare = ub - max(vector_need, 2 * half)
        second = _second_half_offset(half, tiles, c_tile, preset, spare)
        pad_bytes = second - half
        for operand, tile in tiles.items():
            nd = _buffer(f"{operand}_nd", 0, tile.nd_bytes, tile, tile.pitch_bytes)
            nz = _buffer(f"{operand}_nz", second, tile.nz_bytes, tile, BLOCK_BYTES)
            buffers += [nd, nz]
            name: ReorderName = "nd2nz_a" if operand == "a" else "nd2nz_b"
            reorders.append(_reorder(name, nd, nz, tile, preset))
        if c_tile is not None:
            nz = _buffer("c_nz", 0, c_tile.nz_bytes, c_tile, BLOCK_BYTES)
            nd = _buffer("c_nd", second, c_tile.nd_bytes, c_tile, c_tile.pitch_bytes)
            buffers += [nz, nd]
            reorders.append(_reorder("nz2nd_c", nz, nd, c_tile, preset))
    buffers.sort(key=lambda b: b.offset)
    return UbPlan(
        soc=preset.soc,
        ub_bytes=ub,
        share_ub_bytes=share_ub,
        trans_length_bytes=trans_length,
        vector_need_bytes=vector_need,
        fits=share_ub <= ub,
        vector_path=vector_path,
        buffers=tuple(buffers),
        reorders=tuple(reorders),
        pad_bytes=pad_bytes,
    )


def _buffer(
    name: str, offset: int, size_bytes: int, tile: _Tile | None = None, pitch_bytes: int = 0
) -> UbBuffer:
    rows = tile.rows if tile is not None else 0
    row_bytes = tile.row_bytes if tile is not None else 0
    return UbBuffer(name, _ROLE_TEXT[name], offset, size_bytes, rows, row_bytes, pitch_bytes)


def _half_bytes(trans_length: int, tiles: Mapping[str, _Tile], c_tile: _Tile | None) -> int:
    """Size of each workspace half: transLength, or more if a staged tile needs it."""
    sizes = [trans_length]
    for tile in tiles.values():
        sizes += [tile.nd_bytes, tile.nz_bytes]
    if c_tile is not None:
        sizes += [c_tile.nd_bytes, c_tile.nz_bytes]
    return int(align_up(max(sizes), BLOCK_BYTES))


def _second_half_offset(
    half: int,
    tiles: Mapping[str, _Tile],
    c_tile: _Tile | None,
    preset: HardwarePreset,
    spare_bytes: int,
) -> int:
    """Start of the destination half: right after the source half, or a few 32 B pads later.

    Tries each shift by 32 B steps (up to one per bank group, as far as ``spare_bytes`` allows)
    and keeps the first with the fewest read-write conflicts over all reorders.
    """
    best, best_count = half, None
    steps = min(preset.ub_bank_groups, spare_bytes // BLOCK_BYTES + 1)
    for step in range(max(steps, 1)):
        offset = half + step * BLOCK_BYTES
        count = 0
        for tile in tiles.values():
            count += _rw_conflicts(0, tile.pitch_bytes // BLOCK_BYTES, offset, 1, preset)
        if c_tile is not None:
            count += _rw_conflicts(0, 1, offset, c_tile.pitch_bytes // BLOCK_BYTES, preset)
        if best_count is None or count < best_count:
            best, best_count = offset, count
        if count == 0:
            break
    return best


def _rw_conflicts(src: int, src_stride: int, dst: int, dst_stride: int, p: HardwarePreset) -> int:
    reach = (BLOCKS_PER_REPEAT - 1) * max(src_stride, dst_stride) * BLOCK_BYTES + BLOCK_BYTES
    if max(src, dst) + reach > p.ub_bytes:
        return 0
    rep = analyze_repeat(
        p, dst=dst, src0=src, dst_blk_stride=dst_stride, src0_blk_stride=src_stride
    )
    return sum(c.kind == "read_write" for c in rep.conflicts)


def _reorder(
    name: ReorderName, src: UbBuffer, dst: UbBuffer, tile: _Tile, preset: HardwarePreset
) -> UbReorder:
    """Prices one reorder on the layout: its first repeat's conflicts and its total cycles."""
    stride = tile.pitch_bytes // BLOCK_BYTES
    nd2nz = name.startswith("nd2nz")
    src_stride, dst_stride = (stride, 1) if nd2nz else (1, stride)
    reach = (BLOCKS_PER_REPEAT - 1) * stride * BLOCK_BYTES + BLOCK_BYTES
    whole = nd2nz_reorder_cycles if nd2nz else nz2nd_reorder_cycles
    cycles = whole(tile.rows, tile.row_bytes, tile.pitch_bytes, preset)
    if max(src.offset, dst.offset) + reach > preset.ub_bytes:
        # A repeat of a tile shorter than 8 rows would address blocks past the UB: price the
        # pitch alone (masked rows do not move the blocks, module vector).
        per = int(strided_repeat_cycles(tile.pitch_bytes, preset))
        return _priced(name, src, dst, tile, per, cycles, ())
    rep = analyze_repeat(
        preset,
        dst=dst.offset,
        src0=src.offset,
        dst_blk_stride=dst_stride,
        src0_blk_stride=src_stride,
    )
    conflicts = _describe(name, rep.conflicts, src, dst, tile, rep.cycles, preset, rep.blocks)
    if rep.cycles != strided_repeat_cycles(tile.pitch_bytes, preset):
        # A read-write conflict the layout could not pad away also costs every repeat.
        per_repeat_extra = rep.cycles - int(strided_repeat_cycles(tile.pitch_bytes, preset))
        repeats = -(-tile.rows // BLOCKS_PER_REPEAT) * -(-tile.row_bytes // BLOCK_BYTES)
        cycles += per_repeat_extra * repeats
    return _priced(name, src, dst, tile, rep.cycles, cycles, conflicts)


def _priced(
    name: ReorderName,
    src: UbBuffer,
    dst: UbBuffer,
    tile: _Tile,
    cycles_per_repeat: int,
    cycles: float,
    conflicts: tuple[UbConflict, ...],
) -> UbReorder:
    return UbReorder(
        name=name,
        src=src.name,
        dst=dst.name,
        rows=tile.rows,
        row_bytes=tile.row_bytes,
        pitch_bytes=tile.pitch_bytes,
        cycles_per_repeat=cycles_per_repeat,
        cycles=cycles,
        conflicts=conflicts,
    )


_OPERAND_WORD = {"a": "A staging", "b": "B staging", "c": "C output"}


def _describe(
    name: ReorderName,
    conflicts: tuple[Conflict, ...],
    src: UbBuffer,
    dst: UbBuffer,
    tile: _Tile,
    cycles: int,
    preset: HardwarePreset,
    blocks: Sequence[BlockAccess],
) -> tuple[UbConflict, ...]:
    """Groups a repeat's conflicts by kind and operand, each with a sentence."""
    base = base_repeat_cycles(preset)
    group_of = {(b.operand, b.index): b.bank_group for b in blocks}
    buffer_of = {"src0": src.name, "dst": dst.name}
    merged: dict[tuple[str, tuple[str, ...]], list[Conflict]] = {}
    for c in conflicts:
        merged.setdefault((c.kind, c.operands), []).append(c)
    what = _OPERAND_WORD[name[-1]]
    verb = "ND->NZ" if name.startswith("nd2nz") else "NZ->ND"
    out: list[UbConflict] = []
    for (kind, operands), items in merged.items():
        groups = sorted({group_of[blk] for c in items for blk in c.blocks})
        n_blocks = len({blk for c in items for blk in c.blocks})
        group_text = _groups_text(groups)
        if kind == "read_write":
            reason = (
                f"a lane of each {name} repeat reads {src.name} and writes {dst.name} in one "
                f"bank ({group_text})"
            )
        else:
            side = "source" if operands == ("src0",) else "destination"
            reason = (
                f"the {BLOCKS_PER_REPEAT} {side} blocks of each {name} ({verb}) repeat hit "
                f"{group_text} ({kind})"
            )
        fix = ""
        if kind != "read_write" and tile.pitch_bytes % (2 * BLOCK_BYTES) == 0:
            fix = f"; a {tile.pitch_bytes + BLOCK_BYTES} B pitch (32 B pad per row) would avoid it"
        message = (
            f"{what} rows are {tile.pitch_bytes} B apart in UB: {reason}, {cycles} cycles per "
            f"repeat instead of {base}{fix}."
        )
        out.append(
            UbConflict(
                reorder=name,
                kind=kind,
                operands=tuple(operands),
                buffers=tuple(buffer_of[o] for o in operands),
                bank_groups=tuple(groups),
                blocks=n_blocks,
                pitch_bytes=tile.pitch_bytes,
                cycles_per_repeat=cycles,
                conflict_free_cycles=base,
                message=message,
            )
        )
    return tuple(out)


def _groups_text(groups: list[int]) -> str:
    if len(groups) == 1:
        return f"bank group {groups[0]}"
    return "bank groups " + ", ".join(str(g) for g in groups[:-1]) + f" and {groups[-1]}"


# --- vectorized, for the estimator and the simulator ---------------------------------------------
