"""UB banks on Ascend 950: 8 bank groups of 2 banks of 16 KiB, driven by the preset.

The layout is ascend950.md's (from the arch-3510 change page): 8 groups x 2 banks x 16 KiB =
256 KiB physical, 248 KiB usable. Seed 000's mapping generalizes to it as

    bank_group    = (addr // 32) mod 8
    bank_in_group = (addr // (8 x 16 KiB)) mod 2
    bank          = 8 * bank_in_group + bank_group

Every expected value below is computed by hand from those three lines and seed 000's rules (a
port needs as many cycles as its most crowded group holds blocks; reads and a write take turns
only in one bank). The 910B2 twins of each case stay in tests/simcore/ub/test_banks.py.
"""

from __future__ import annotations

import pytest

from simcore.errors import InputError
from simcore.hardware.presets import load_preset
from simcore.ub.banks import analyze_repeat, bank_group_of, place_buffers, ub_bank

A950 = load_preset("Ascend950PR")
B2 = load_preset("Ascend910B2")


@pytest.mark.parametrize(
    ("addr", "bank", "group"),
    [
        (0x0, 0, 0),
        (0x20, 1, 1),  # the next 32 B block: the next group
        (0xE0, 7, 7),  # block 7: the last of the 8 groups
        (0x100, 0, 0),  # block 8 wraps to group 0 (on 910B2 it is group 8)
        (0x10000, 0, 0),  # seed 000's 0x10000 is bank 16 on 910B2; 64 KiB < 128 KiB here
        (0x20000, 8, 0),  # 128 KiB: the second bank of group 0
        (0x20020, 9, 1),
        (0x3DFE0, 15, 7),  # the last block of the 248 KiB UB: block 7935, 7935 mod 8 = 7
    ],
)
def test_950_addresses(addr: int, bank: int, group: int) -> None:
    assert ub_bank(addr, A950) == (bank, group)


def test_950_usable_end() -> None:
    with pytest.raises(InputError):
        ub_bank(248 * 1024, A950)


@pytest.mark.parametrize(
    ("stride", "cycles_950", "cycles_910b2"),
    [
        (1, 1, 1),  # 8 contiguous blocks: 8 groups on both
        (2, 2, 1),  # groups 0,2,4,6,0,2,4,6: two blocks each on 950; 8 groups of 16 on 910B2
        (4, 4, 2),  # groups 0,4,0,4,...: four each on 950
        (8, 8, 4),  # every block in group 0 on 950; seed 000 table 2's 4 cycles on 910B2
        (16, 8, 8),  # seed 000 table 2's 8 cycles on both
    ],
)
def test_strided_write_cycles(stride: int, cycles_950: int, cycles_910b2: int) -> None:
    # src0 in another bank than every dst block (bank_in_group 1 on 950, 2 on 910B2), so only
    # the write port's own conflicts count.
    r950 = analyze_repeat(A950, dst=0x1000, src0=0x20020, dst_blk_stride=stride)
    r910 = analyze_repeat(B2, dst=0x1000, src0=0x20020, dst_blk_stride=stride)
    assert (r950.cycles, r910.cycles) == (cycles_950, cycles_910b2)
    if cycles_950 > 1:
        assert {c.kind for c in r950.conflicts} == {"write_write"}


def test_read_write_needs_the_same_bank() -> None:
    # src0 0x20 is bank 1; dst 0x120 (block 9) is bank 1 too: every lane reads and writes one bank.
    clash = analyze_repeat(A950, dst=0x120, src0=0x20)
    assert {(c.kind, c.operands) for c in clash.conflicts} == {("read_write", ("src0", "dst"))}
    assert clash.cycles == 2
    # dst 0x20020 is bank 9: the same group (1) in the other bank, so no conflict.
    apart = analyze_repeat(A950, dst=0x20020, src0=0x20)
    assert apart.conflicts == ()
    assert apart.cycles == 1


def test_dual_source_and_the_32_byte_pad() -> None:
    # z = x + y with y 8 KiB after x: 8 KiB = 256 blocks, a multiple of 8, so lane j of both
    # sources share a group (2 cycles); 32 B of pad moves y one group on (1 cycle).
    clash = analyze_repeat(A950, dst=0x30000, src0=0x0, src1=8 * 1024)
    assert {c.kind for c in clash.conflicts} == {"read_read"}
    assert clash.cycles == 2
    assert analyze_repeat(A950, dst=0x30000, src0=0x0, src1=8 * 1024 + 32).cycles == 1
    # A 4 KiB gap (128 blocks) also clashes on 950; on 910B2 (16 groups) it does too.
    assert analyze_repeat(A950, dst=0x30000, src0=0x0, src1=4096).cycles == 2


def test_place_buffers_uses_the_eight_groups() -> None:
    layout = place_buffers([8 * 1024] * 8, A950)
    groups = [bank_group_of(o, A950) for o in layout.offsets]
    assert groups == list(range(8))
    assert layout.offsets[:2] == [0, 8 * 1024 + 32]
    # A ninth buffer has no free group left: it only leaves its predecessor's (group 7).
    nine = place_buffers([8 * 1024] * 9, A950)
    assert bank_group_of(nine.offsets[8], A950) != 7
