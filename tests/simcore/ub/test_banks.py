"""UB bank mapping and bank conflicts: every worked example of seed 000."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simcore.errors import InputError
from simcore.hardware.presets import HardwarePreset, custom_preset, load_preset
from simcore.ub.banks import (
    BlockAccess,
    Conflict,
    analyze_repeat,
    base_repeat_cycles,
    block_addresses,
    find_conflicts,
    place_buffers,
    repeat_blocks,
    repeat_cycles,
    ub_bank,
)

B2 = load_preset("Ascend910B2")  # 192 KiB UB: 16 groups x 3 banks
P3 = load_preset("Ascend310P3")  # 256 KiB UB: 16 groups x 4 banks


def kinds(conflicts: tuple[Conflict, ...]) -> set[tuple[str, tuple[str, ...]]]:
    return {(c.kind, c.operands) for c in conflicts}


# --- address -> bank ------------------------------------------------------------------------


@pytest.mark.parametrize("preset", [B2, P3], ids=["910B2", "310P3"])
@pytest.mark.parametrize(
    ("addr", "bank", "group"),
    [
        (0x10000, 16, 0),  # seed 000: "0x10000地址在bank16上"
        (0x10020, 17, 1),  # "0x10020在bank17上"
        (0x20020, 33, 1),  # "0x20020在bank33上"
        (0x10E20, 17, 1),  # table 1 example 2: same bank and group as 0x10020
        (0x0, 0, 0),
        (0x1F, 0, 0),  # inside the first block
        (0x1E0, 15, 15),  # block 15: the last group of the first row
        (0x200, 0, 0),  # block 16 wraps to group 0, next row of bank 0
    ],
)
def test_seed_addresses(preset: HardwarePreset, addr: int, bank: int, group: int) -> None:
    assert ub_bank(addr, preset) == (bank, group)
    assert ub_bank(addr, preset).bank == bank
    assert ub_bank(addr, preset).bank_group == group


def test_fourth_bank_only_on_256k_ub() -> None:
    # 310P3 has 4 banks per group: 0x30020 is bank 3 of group 1 = bank 49.
    assert ub_bank(0x30020, P3) == (49, 1)
    assert ub_bank(P3.ub_bytes - 1, P3) == (63, 15)
    # On the 192 KiB UB the same address is past the end.
    with pytest.raises(InputError) as exc:
        ub_bank(0x30020, B2)
    assert exc.value.rule == "ub_out_of_range"
    assert exc.value.limit == B2.ub_bytes
    assert ub_bank(B2.ub_bytes - 1, B2) == (47, 15)


@pytest.mark.parametrize("addr", [-32, 10**9])
def test_address_out_of_ub(addr: int) -> None:
    with pytest.raises(InputError) as exc:
        ub_bank(addr, B2)
    assert exc.value.rule == "ub_out_of_range"


def test_mapping_follows_custom_preset() -> None:
    # A chip with 8 groups of 2 banks: groups repeat every 8 blocks, banks every bank stride.
    chip = custom_preset(
        {"base": "Ascend910B2", "ub_bank_groups": 8, "ub_banks_per_group": 2, "ub_bytes": 65536}
    )
    assert ub_bank(8 * 32, chip) == (0, 0)
    assert ub_bank(9 * 32, chip).bank_group == 1


# --- table 1: read-write ----------------------------------------------------------------------


def test_table1_read_write_no_conflict() -> None:
    # Example 1: src 0x10020 (bank 17) against dst 0x10000 (bank 16): no conflict.
    r = analyze_repeat(B2, dst=0x10000, src0=0x10020)
    assert r.conflicts == ()
    assert r.cycles == 1


def test_table1_read_write_conflict() -> None:
    # Example 2: src 0x10020 against dst 0x10E20: same bank (17) and group (1): conflict.
    r = analyze_repeat(B2, dst=0x10E20, src0=0x10020)
    assert kinds(r.conflicts) == {("read_write", ("src0", "dst"))}
    first = r.conflicts[0]
    assert first.blocks == (("src0", 0), ("dst", 0))
    assert len(r.conflicts) == 8  # every lane of two contiguous operands
    assert r.cycles == 2  # the read and the write take turns


def test_same_group_different_bank_is_no_read_write_conflict() -> None:
    # Read-write conflicts need the same bank, not just the group (seed 000): 0x10020 (bank 17)
    # and 0x20020 (bank 33) share group 1 only.
    r = analyze_repeat(B2, dst=0x20020, src0=0x10020)
    assert r.conflicts == ()
    assert r.cycles == 1


# --- tables 2 and 4: write-write and single-source read-read ----------------------------------


def test_block_addresses_of_tables_2_and_4() -> None:
    assert block_addresses(0x1FE00, 16)[:3] == [0x1FE00, 0x20000, 0x20200]
    assert block_addresses(0x1FE00, 8)[:3] == [0x1FE00, 0x1FF00, 0x20000]


@pytest.mark.parametrize("preset", [B2, P3], ids=["910B2", "310P3"])
def test_table2_write_write_stride16_eight_cycles(preset: HardwarePreset) -> None:
    # dst 0x1FE00, blk_stride 16: the 8 blocks all in group 0: "8拍完成一个repeat".
    r = analyze_repeat(preset, dst=0x1FE00, src0=0x0, dst_blk_stride=16)
    assert {b.bank_group for b in r.blocks if b.operand == "dst"} == {0}
    assert kinds(r.conflicts) == {("write_write", ("dst",))}
    assert r.conflicts[0].blocks == tuple(("dst", j) for j in range(8))
    assert r.cycles == 8


@pytest.mark.parametrize("preset", [B2, P3], ids=["910B2", "310P3"])
def test_table2_write_write_stride8_four_cycles(preset: HardwarePreset) -> None:
    # dst 0x1FE00, blk_stride 8: "datablock0和datablock2冲突,4拍完成一个repeat".
    r = analyze_repeat(preset, dst=0x1FE00, src0=0x0, dst_blk_stride=8)
    groups = {c.blocks for c in r.conflicts}
    assert (("dst", 0), ("dst", 2), ("dst", 4), ("dst", 6)) in groups
    assert (("dst", 1), ("dst", 3), ("dst", 5), ("dst", 7)) in groups
    assert all(c.kind == "write_write" for c in r.conflicts)
    assert r.cycles == 4


@pytest.mark.parametrize("preset", [B2, P3], ids=["910B2", "310P3"])
def test_table4_single_source_read_read(preset: HardwarePreset) -> None:
    r16 = analyze_repeat(preset, dst=0x0, src0=0x1FE00, src0_blk_stride=16)
    assert kinds(r16.conflicts) == {("read_read", ("src0",))}
    assert r16.cycles == 8
    r8 = analyze_repeat(preset, dst=0x0, src0=0x1FE00, src0_blk_stride=8)
    assert kinds(r8.conflicts) == {("read_read", ("src0",))}
    assert (("src0", 0), ("src0", 2), ("src0", 4), ("src0", 6)) in {c.blocks for c in r8.conflicts}
    assert r8.cycles == 4


def test_contiguous_repeat_is_conflict_free() -> None:
    r = analyze_repeat(B2, dst=0x10000, src0=0x0, src1=0x100)
    assert r.conflicts == ()
    assert r.cycles == 1


def test_strides_2_and_4() -> None:
    # Between the seed's cases: stride 4 puts the 8 blocks in 4 groups (2 each), stride 2 in 8.
    assert analyze_repeat(B2, dst=0x10000, src0=0x0, src0_blk_stride=4).cycles == 2
    assert analyze_repeat(B2, dst=0x10000, src0=0x0, src0_blk_stride=2).cycles == 1


# --- table 3: dual-source read-read -----------------------------------------------------------


def test_table3_dual_source_conflict() -> None:
    # Example 1: src0 0x10020 (bank 17), src1 0x20020 (bank 33): different bank, same group.
    r = analyze_repeat(B2, dst=0x0, src0=0x10020, src1=0x20020)
    assert kinds(r.conflicts) == {("read_read", ("src0", "src1"))}
    assert r.conflicts[0].blocks == (("src0", 0), ("src1", 0))
    assert r.cycles == 2  # the two read ports take turns


def test_table3_dual_source_no_conflict() -> None:
    # Example 2: src0 0x10020 (group 1), src1 0x10000 (group 0): no conflict.
    r = analyze_repeat(B2, dst=0x0, src0=0x10020, src1=0x10000)
    assert r.conflicts == ()
    assert r.cycles == 1


def test_both_sources_strided_into_one_group() -> None:
    # Every read of both sources in group 0: 16 reads through one group. dst 0x10020 (banks
    # 17..24) shares no bank with a source lane.
    r = analyze_repeat(
        B2, dst=0x10020, src0=0x1FE00, src1=0x4000, src0_blk_stride=16, src1_blk_stride=16
    )
    assert r.cycles == 16


# --- 32 B pad ---------------------------------------------------------------------------------


def test_pad_example_blocks() -> None:
    # z = x + y, x at 0 and y at 8 KiB: same bank group in every lane; y at 8 KiB + 32 B: none.
    clash = analyze_repeat(B2, dst=0x10000, src0=0, src1=8 * 1024)
    assert {c.kind for c in clash.conflicts} == {"read_read"}
    assert len(clash.conflicts) == 8
    assert clash.cycles == 2
    fixed = analyze_repeat(B2, dst=0x10000, src0=0, src1=8 * 1024 + 32)
    assert fixed.conflicts == ()
    assert fixed.cycles == 1


@pytest.mark.parametrize("preset", [B2, P3], ids=["910B2", "310P3"])
def test_place_buffers_pads_seed_example(preset: HardwarePreset) -> None:
    layout = place_buffers([8 * 1024, 8 * 1024], preset)
    assert layout.offsets == [0, 8 * 1024 + 32]
    assert layout.padded == [1]
    assert layout.total_bytes == 16 * 1024 + 32
    assert layout.fits
    plain = place_buffers([8 * 1024, 8 * 1024], preset, pad_conflicts=False)
    assert plain.offsets == [0, 8 * 1024]
    assert plain.padded == []


def test_place_buffers_aligns_and_avoids_earlier_groups() -> None:
    # 100 B rounds to 128 B; no pad needed between groups 0 and 4.
    assert place_buffers([100, 64], B2).offsets == [0, 128]
    # src0, src1, dst of 256 B each: dst would start in src0's group (and bank) -> shifted 32 B.
    layout = place_buffers([256, 256, 256], B2)
    assert layout.offsets == [0, 256, 544]
    assert layout.padded == [2]
    r = analyze_repeat(B2, dst=layout.offsets[2], src0=layout.offsets[0], src1=layout.offsets[1])
    assert r.conflicts == ()


def test_place_buffers_more_buffers_than_groups() -> None:
    layout = place_buffers([32] * 20, B2)
    assert layout.offsets == [32 * i for i in range(20)]
    assert layout.padded == []


def test_place_buffers_reports_overflow() -> None:
    too_big = place_buffers([B2.ub_bytes // 2, B2.ub_bytes // 2], B2)
    assert too_big.total_bytes == B2.ub_bytes + 32
    assert not too_big.fits
    assert place_buffers([B2.ub_bytes // 2, B2.ub_bytes // 2], B2, pad_conflicts=False).fits
    # The same layout fits the 256 KiB UB.
    assert place_buffers([B2.ub_bytes // 2, B2.ub_bytes // 2], P3).fits


@pytest.mark.parametrize("size", [0, -32, 1.5, True])
def test_place_buffers_rejects_bad_sizes(size: object) -> None:
    with pytest.raises(InputError) as exc:
        place_buffers([32, size], B2)  # type: ignore[list-item]
    assert exc.value.rule == "buffer_size"
    assert exc.value.field == "sizes_bytes[1]"


# --- misc -------------------------------------------------------------------------------------


def test_block_outside_ub_rejected() -> None:
    with pytest.raises(InputError) as exc:
        repeat_blocks(B2, dst=B2.ub_bytes - 32, src0=0)
    assert exc.value.field == "dst"
    assert exc.value.rule == "ub_out_of_range"
    assert len(repeat_blocks(P3, dst=B2.ub_bytes - 32, src0=0)) == 16


def test_base_cycles_follow_vector_width() -> None:
    assert base_repeat_cycles(B2) == 1
    narrow = custom_preset({"base": "Ascend910B2", "vector_bytes_per_cycle": 128})
    assert base_repeat_cycles(narrow) == 2
    assert analyze_repeat(narrow, dst=0x10000, src0=0).cycles == 2
    assert analyze_repeat(narrow, dst=0x1FE00, src0=0, dst_blk_stride=16).cycles == 8


def test_find_conflicts_on_hand_built_blocks() -> None:
    blocks = [
        BlockAccess("dst", 0, 0x0, 0, 0),
        BlockAccess("src0", 0, 0x200, 0, 0),
    ]
    (conflict,) = find_conflicts(blocks)
    assert conflict.to_dict() == {
        "kind": "read_write",
        "operands": ["src0", "dst"],
        "blocks": [{"operand": "src0", "index": 0}, {"operand": "dst", "index": 0}],
    }
    assert repeat_cycles(blocks, B2) == 2


@given(
    dst=st.integers(0, 0x8000 // 32).map(lambda b: b * 32),
    src0=st.integers(0, 0x8000 // 32).map(lambda b: b * 32),
    src1=st.none() | st.integers(0, 0x8000 // 32).map(lambda b: b * 32),
    strides=st.tuples(st.integers(0, 64), st.integers(0, 64), st.integers(0, 64)),
)
def test_cycles_are_one_exactly_when_conflict_free(
    dst: int, src0: int, src1: int | None, strides: tuple[int, int, int]
) -> None:
    r = analyze_repeat(
        B2,
        dst,
        src0,
        src1,
        dst_blk_stride=strides[0],
        src0_blk_stride=strides[1],
        src1_blk_stride=strides[2],
    )
    assert (r.cycles == 1) == (r.conflicts == ())
    assert 1 <= r.cycles <= 24
