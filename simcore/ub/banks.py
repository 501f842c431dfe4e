"""Unified Buffer (UB) banks and the bank conflicts of one vector repeat.

Source: seed 000 (UB bank structure and the three conflict kinds, with worked examples) and
``../shared/seeds/README.md`` (the decoded address mapping).

Structure (seed 000): the UB is ``bank_groups x banks_per_group`` banks (16 x 3 = 48 on a
192 KiB UB, 16 x 4 = 64 on 256 KiB); a bank is ``bank_rows`` rows of one 32 B block. Consecutive
32 B blocks go to consecutive bank groups, and each 64 KiB (16 groups x 128 rows x 32 B) of
address space is one bank of every group::

    bank_group    = (addr // 32) mod 16
    bank_in_group = (addr // 65536) mod banks_per_group
    bank          = 16 * bank_in_group + bank_group

which reproduces seed 000's 0x10000 -> bank 16, 0x10020 -> bank 17 and 0x20020 -> bank 33.

Every number above comes from the preset (``ub_bank_groups``, ``ub_banks_per_group``,
``ub_block_bytes``, ``bank_stride_bytes``), so the same code serves Ascend 950's 8 groups of 2
banks of 16 KiB (ascend950.md, from the arch-3510 change page)::

    bank_group    = (addr // 32) mod 8
    bank_in_group = (addr // 131072) mod 2          # 8 groups x 16 KiB
    bank          = 8 * bank_in_group + bank_group

There a block stride of 8 already puts all 8 blocks of a repeat in one group (8 cycles, against
4 on 910B), and buffers 8 KiB apart clash as on 910B (tests/simcore/ub/test_banks_950.py). That
consecutive blocks rotate over the groups on 950 as on 910B is our assumption (docs/ascend950.md).

Conflicts of one repeat (seed 000, the three kinds). A repeat moves 8 blocks per operand
(seed 001): the write port writes the 8 ``dst`` blocks, one read port reads the 8 ``src0`` blocks
and, for a two-input instruction, a second read port reads the 8 ``src1`` blocks.

* ``write_write``: more than one ``dst`` block of the repeat in one bank group (table 2).
* ``read_read``: more than one block of one source in one bank group (table 4), or, for a
  two-source instruction, ``src0`` block ``j`` and ``src1`` block ``j`` in the same bank group
  (table 3).
* ``read_write``: a source block ``j`` and ``dst`` block ``j`` in the same bank (table 1).

Cross-port conflicts are checked lane by lane (block ``j`` against block ``j``) because that is
what seed 000 compares: tables 1 and 3 compare the two *start* addresses, and its 32 B pad fix
(``z = x + y`` with ``y`` 32 B after an 8 KiB ``x``) is declared conflict-free although ``src0``
block ``j + 1`` and ``src1`` block ``j`` then share a bank group. A rule comparing every pair of
blocks across the two ports would flag that fix, so the seed cannot mean it.

Cycles of one repeat (the model; seed 000 gives the numbers, not the formula):

* One port needs ``max over bank groups of (its blocks in that group)`` cycles: a group serves one
  block per port per cycle (seed 000: one block per bank group per cycle). This gives table 2/4's
  8 cycles for block stride 16 (all 8 blocks in one group), 4 for block stride 8 (two groups of
  4) and 1 without conflict.
* Ports that do not conflict work in parallel (``max``); two ports that conflict take turns (their
  cycles add): ``reads = src0 + src1`` when a lane's ``src0``/``src1`` share a bank group, else
  ``max(src0, src1)``; ``cycles = reads + writes`` when a lane reads and writes one bank, else
  ``max(reads, writes)``. So table 3's dual-source conflict and table 1's read-write conflict
  each cost a repeat twice the cycles of its conflict-free twin.
* Never fewer than the repeat's 256 B over the preset's ``vector_bytes_per_cycle`` (1 cycle on
  every packaged preset).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from simcore.errors import InputError
from simcore.hardware.presets import HardwarePreset

Operand = Literal["dst", "src0", "src1"]
ConflictKind = Literal["read_write", "write_write", "read_read"]

#: Blocks (datablocks) one vector repeat reads or writes per operand (seed 001).
BLOCKS_PER_REPEAT = 8
#: Bytes of one datablock (seed 001: "每个datablock ... 长度32Byte").
BLOCK_BYTES = 32

_READ_PORTS: tuple[Operand, ...] = ("src0", "src1")


class UbBank(NamedTuple):
    """Where one UB address lives: the bank id and its bank group."""

    bank: int
    bank_group: int


@dataclass(frozen=True)
class BlockAccess:
    """One 32 B block an operand touches in one repeat.

    Attributes:
        operand: ``dst`` (written) or ``src0``/``src1`` (read).
        index: Position of the block in the repeat, 0-7 (the lane group it feeds).
        addr: UB byte address of the block.
        bank: Bank id (``16 * bank_in_group + bank_group``).
        bank_group: Bank group, 0-15.
    """

    operand: Operand
    index: int
    addr: int
    bank: int
    bank_group: int

    def to_dict(self) -> dict[str, Any]:
        """Returns the block as a JSON-ready dict."""
        return {
            "operand": self.operand,
            "index": self.index,
            "addr": self.addr,
            "bank": self.bank,
            "bank_group": self.bank_group,
        }


@dataclass(frozen=True)
class Conflict:
    """Blocks of one repeat that contend for one bank or bank group.

    Attributes:
        kind: ``read_write``, ``write_write`` or ``read_read`` (seed 000's three kinds).
        operands: The operands involved (one for a same-port conflict, two for a cross-port one).
        blocks: ``(operand, index)`` of every block involved.
    """

    kind: ConflictKind
    operands: tuple[Operand, ...]
    blocks: tuple[tuple[Operand, int], ...]

    def to_dict(self) -> dict[str, Any]:
        """Returns the conflict as a JSON-ready dict."""
        return {
            "kind": self.kind,
            "operands": list(self.operands),
            "blocks": [{"operand": op, "index": i} for op, i in self.blocks],
        }


@dataclass(frozen=True)
class RepeatAnalysis:
    """The blocks, conflicts and cycles of one repeat."""

    blocks: tuple[BlockAccess, ...]
    conflicts: tuple[Conflict, ...]
    cycles: int


@dataclass(frozen=True)
class BufferLayout:
    """Offsets chosen by :func:`place_buffers`.

    Attributes:
        offsets: Start offset of each buffer, in the order given.
        total_bytes: Bytes used, from offset 0 to the end of the last buffer.
        fits: Whether ``total_bytes`` fits the preset's UB.
        padded: Indices of the buffers moved (by multiples of 32 B) out of an earlier buffer's
            bank group.
    """

    offsets: list[int]
    total_bytes: int
    fits: bool
    padded: list[int]


def _check_addr(addr: int, preset: HardwarePreset, field: str = "addr") -> None:
    if isinstance(addr, bool) or not isinstance(addr, int):
        raise InputError(field, "ub_address", f"{field} must be an integer byte address", addr)
    if addr < 0 or addr >= preset.ub_bytes:
        raise InputError(
            field,
            "ub_out_of_range",
            f"{field} {addr:#x} is outside {preset.soc}'s {preset.ub_bytes} B UB",
            addr,
            preset.ub_bytes,
        )


def bank_group_of(addr: int, preset: HardwarePreset) -> int:
    """Returns the bank group of a UB address: ``(addr // 32) mod 16`` (seed 000).

    No range check: callers that hold addresses already validated (or a padded layout's offsets)
    use it in inner loops. :func:`ub_bank` checks the range.
    """
    return (addr // preset.ub_block_bytes) % preset.ub_bank_groups


def ub_bank(addr: int, preset: HardwarePreset) -> UbBank:
    """Maps a UB byte address to its bank and bank group.

    Args:
        addr: Byte address inside the UB.
        preset: The chip (bank groups, banks per group, block and bank stride).

    Returns:
        ``UbBank(bank, bank_group)``; for example 0x10000 -> (16, 0), 0x10020 -> (17, 1) and
        0x20020 -> (33, 1) (seed 000).

    Raises:
        InputError: ``addr`` is not an integer or lies outside the preset's UB.
    """
    _check_addr(addr, preset)
    group = bank_group_of(addr, preset)
    in_group = (addr // preset.bank_stride_bytes) % preset.ub_banks_per_group
    return UbBank(in_group * preset.ub_bank_groups + group, group)


def block_addresses(start: int, blk_stride: int, blocks: int = BLOCKS_PER_REPEAT) -> list[int]:
    """Returns the addresses of a repeat's blocks: ``start + j * blk_stride * 32`` (seed 001).

    Args:
        start: Address of block 0.
        blk_stride: Block stride, in 32 B blocks.
        blocks: Blocks per repeat (8).
    """
    return [start + j * blk_stride * BLOCK_BYTES for j in range(blocks)]


def repeat_blocks(
    preset: HardwarePreset,
    dst: int,
    src0: int,
    src1: int | None = None,
    *,
    dst_blk_stride: int = 1,
    src0_blk_stride: int = 1,
    src1_blk_stride: int = 1,
) -> tuple[BlockAccess, ...]:
    """Lists the blocks one repeat writes (``dst``) and reads (``src0``, ``src1``).

    Args:
        preset: The chip.
        dst: Address of the repeat's first ``dst`` block.
        src0: Address of the repeat's first ``src0`` block.
        src1: Address of the first ``src1`` block; None for a one-source instruction.
        dst_blk_stride: Block stride of ``dst`` in blocks.
        src0_blk_stride: Block stride of ``src0`` in blocks.
        src1_blk_stride: Block stride of ``src1`` in blocks.

    Returns:
        The 8 ``dst`` blocks, then the 8 ``src0`` blocks, then the 8 ``src1`` blocks if any.

    Raises:
        InputError: A block lies outside the UB.
    """
    ports: list[tuple[Operand, int, int]] = [
        ("dst", dst, dst_blk_stride),
        ("src0", src0, src0_blk_stride),
    ]
    if src1 is not None:
        ports.append(("src1", src1, src1_blk_stride))
    out: list[BlockAccess] = []
    for operand, start, stride in ports:
        for j, addr in enumerate(block_addresses(start, stride)):
            _check_addr(addr, preset, operand)
            # A block must fit entirely: its last byte is inside the UB too.
            _check_addr(addr + BLOCK_BYTES - 1, preset, operand)
            bank, group = ub_bank(addr, preset)
            out.append(BlockAccess(operand, j, addr, bank, group))
    return tuple(out)


def _by_port(blocks: Sequence[BlockAccess]) -> dict[Operand, list[BlockAccess]]:
    ports: dict[Operand, list[BlockAccess]] = {}
    for b in blocks:
        ports.setdefault(b.operand, []).append(b)
    return ports


def find_conflicts(blocks: Sequence[BlockAccess]) -> tuple[Conflict, ...]:
    """Finds seed 000's three kinds of bank conflict among one repeat's blocks.

    Same-port conflicts (``write_write`` on ``dst``, ``read_read`` within ``src0`` or ``src1``)
    are reported once per crowded bank group, listing every block of the port in that group.
    Cross-port conflicts compare block ``j`` with block ``j`` (see the module docstring for why)
    and are reported once per lane: ``read_read`` between ``src0`` and ``src1`` in one bank group,
    ``read_write`` between a source and ``dst`` in one bank.

    Args:
        blocks: The blocks of one repeat, as :func:`repeat_blocks` returns them.

    Returns:
        The conflicts: same-port ones first (dst, src0, src1), then src0/src1, then read/write.
    """
    ports = _by_port(blocks)
    conflicts: list[Conflict] = []
    for operand in ("dst", "src0", "src1"):
        port = ports.get(operand, [])
        kind: ConflictKind = "write_write" if operand == "dst" else "read_read"
        groups: dict[int, list[BlockAccess]] = {}
        for b in port:
            groups.setdefault(b.bank_group, []).append(b)
        for members in groups.values():
            if len(members) > 1:
                conflicts.append(
                    Conflict(kind, (operand,), tuple((operand, b.index) for b in members))
                )
    src0 = {b.index: b for b in ports.get("src0", [])}
    src1 = {b.index: b for b in ports.get("src1", [])}
    for j in sorted(src0.keys() & src1.keys()):
        if src0[j].bank_group == src1[j].bank_group:
            conflicts.append(Conflict("read_read", ("src0", "src1"), (("src0", j), ("src1", j))))
    dst = {b.index: b for b in ports.get("dst", [])}
    readers: tuple[tuple[Operand, dict[int, BlockAccess]], ...] = (("src0", src0), ("src1", src1))
    for operand, reads in readers:
        for j in sorted(reads.keys() & dst.keys()):
            if reads[j].bank == dst[j].bank:
                conflicts.append(
                    Conflict("read_write", (operand, "dst"), ((operand, j), ("dst", j)))
                )
    return tuple(conflicts)


def _port_cycles(port: Sequence[BlockAccess]) -> int:
    # A bank group serves one block per port per cycle (seed 000), so a port needs as many
    # cycles as it has blocks in its most crowded group.
    if not port:
        return 0
    return max(Counter(b.bank_group for b in port).values())


def base_repeat_cycles(preset: HardwarePreset) -> int:
    """Cycles of a conflict-free repeat: 256 B over ``vector_bytes_per_cycle``, at least 1."""
    repeat_bytes = BLOCKS_PER_REPEAT * BLOCK_BYTES
    return max(1, math.ceil(repeat_bytes / preset.vector_bytes_per_cycle))


def repeat_cycles(
    blocks: Sequence[BlockAccess],
    preset: HardwarePreset,
    conflicts: Sequence[Conflict] | None = None,
) -> int:
    """Cycles one repeat takes given its bank conflicts.

    ``cycles = max(reads, writes)``, or ``reads + writes`` when a read and the write hit one bank
    in one lane; ``reads = max(src0, src1)``, or ``src0 + src1`` when the two sources hit one bank
    group in one lane; each port's own cycles are its most crowded bank group's block count.
    Never below :func:`base_repeat_cycles`. See the module docstring for why.

    Args:
        blocks: The blocks of one repeat (:func:`repeat_blocks`).
        preset: The chip.
        conflicts: The repeat's conflicts if already computed (:func:`find_conflicts`).

    Returns:
        Cycles of the repeat: 1 without conflict, 8 when all 8 blocks of a port share a group.
    """
    if conflicts is None:
        conflicts = find_conflicts(blocks)
    ports = _by_port(blocks)
    writes = _port_cycles(ports.get("dst", []))
    read_ports = [_port_cycles(ports.get(p, [])) for p in _READ_PORTS]
    dual_conflict = any(c.kind == "read_read" and len(c.operands) == 2 for c in conflicts)
    reads = sum(read_ports) if dual_conflict else max(read_ports)
    rw_conflict = any(c.kind == "read_write" for c in conflicts)
    cycles = reads + writes if rw_conflict else max(reads, writes)
    return max(cycles, base_repeat_cycles(preset))


def analyze_repeat(
    preset: HardwarePreset,
    dst: int,
    src0: int,
    src1: int | None = None,
    *,
    dst_blk_stride: int = 1,
    src0_blk_stride: int = 1,
    src1_blk_stride: int = 1,
) -> RepeatAnalysis:
    """Blocks, conflicts and cycles of one repeat (arguments as :func:`repeat_blocks`).

    Raises:
        InputError: A block lies outside the UB.
    """
    blocks = repeat_blocks(
        preset,
        dst,
        src0,
        src1,
        dst_blk_stride=dst_blk_stride,
        src0_blk_stride=src0_blk_stride,
        src1_blk_stride=src1_blk_stride,
    )
    conflicts = find_conflicts(blocks)
    return RepeatAnalysis(blocks, conflicts, repeat_cycles(blocks, preset, conflicts))


def place_buffers(
    sizes_bytes: Sequence[int], preset: HardwarePreset, pad_conflicts: bool = True
) -> BufferLayout:
    """Lays buffers out back to back in the UB, 32 B aligned, padding bank-group clashes.

    Seed 000's fix: two input vectors of one instruction must not start in the same bank group,
    so allocate 32 B more and shift the second one (``z = x + y`` with 8 KiB ``x`` at 0 puts ``y``
    at 8 KiB + 32 B, not 8 KiB). A buffer is shifted by 32 B steps until its start leaves the bank
    group of its predecessor (one step always suffices) and, while the UB has groups to spare
    (at most 16 buffers), of every earlier buffer too: with ``src0, src1, dst`` laid out in that
    order, ``dst`` must also leave ``src0``'s group, or each lane of a contiguous instruction would
    read and write one bank (seed 000 table 1).

    Args:
        sizes_bytes: Size of each buffer in bytes (each at least 1); rounded up to 32 B.
        preset: The chip (UB size, bank groups).
        pad_conflicts: Insert the pads; False lays the buffers out back to back with no pad.

    Returns:
        The offsets, the bytes used, whether they fit the UB, and which buffers were padded.

    Raises:
        InputError: A size is not a positive integer.
    """
    align = preset.ub_block_bytes
    offsets: list[int] = []
    padded: list[int] = []
    end = 0
    for i, size in enumerate(sizes_bytes):
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise InputError(
                f"sizes_bytes[{i}]",
                "buffer_size",
                "a buffer size must be a positive integer number of bytes",
                size,
                1,
            )
        start = -(-end // align) * align
        if pad_conflicts and offsets:
            taken = {bank_group_of(o, preset) for o in offsets}
            if len(taken) >= preset.ub_bank_groups:
                # Every group already starts a buffer: only leave the predecessor's.
                taken = {bank_group_of(offsets[-1], preset)}
            shifted = start
            while bank_group_of(shifted, preset) in taken:
                shifted += align
            if shifted != start:
                padded.append(i)
            start = shifted
        offsets.append(start)
        end = start + -(-size // align) * align
    return BufferLayout(offsets, end, end <= preset.ub_bytes, padded)
