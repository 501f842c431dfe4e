"""Vector instructions: seed 001's semantics and seed 000's conflicts through analyze()."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from simcore.errors import InputError, UnknownSocError
from simcore.hardware.presets import HardwarePreset, load_preset
from simcore.ub.reorder import nd2nz_reorder_cycles
from simcore.ub.vector import (
    VectorInstruction,
    analyze,
    instruction_cycles,
    parse_vector_instruction,
    split_instruction,
    split_repeat_counts,
)

B2 = load_preset("Ascend910B2")  # 192 KiB UB, no issue overhead
P3 = load_preset("Ascend310P3")  # 256 KiB UB, 4 cycles of issue overhead
ALTERNATE = 6148914691236517205  # 0b0101...01 (seed 001)


def instr(**kw: Any) -> VectorInstruction:
    return parse_vector_instruction(kw)


def rejected(**kw: Any) -> InputError:
    with pytest.raises(InputError) as exc:
        parse_vector_instruction(kw)
    return exc.value


def conflict_kinds(result: dict[str, Any]) -> set[str]:
    return {c["kind"] for c in result["conflicts"]}


# --- seed 001: repeat ------------------------------------------------------------------------


def test_repeat_two_fp16_processes_512_bytes() -> None:
    # "Repeat times设置为2 ... 2 * 8 * 32Byte = 512Byte的结果 ... half ... 256个元素".
    i = instr(op="exp", dst=0x10000, src0=0x0, repeat=2)
    assert i.elements == 256
    assert i.result_bytes == 512
    result = analyze(i, B2)
    assert result["cycles"] == 2
    # The second repeat starts 8 blocks (256 B) later: repeat stride 8.
    assert i.operand_starts(1) == (0x10000 + 256, 256, None)


@pytest.mark.parametrize("repeat", [0, 256, -1])
def test_repeat_out_of_range(repeat: int) -> None:
    err = rejected(op="add", dst=0, src0=256, src1=512, repeat=repeat)
    assert err.field == "repeat"
    assert err.rule == "repeat_times"
    if repeat != -1:
        assert err.limit == [1, 255]


def test_repeat_limits_accepted() -> None:
    assert instr(op="copy", dst=0x10000, src0=0, repeat=255).repeat == 255
    assert instr(op="copy", dst=0x10000, src0=0, repeat=1).repeat == 1


def test_split_repeat_counts() -> None:
    assert split_repeat_counts(600) == [255, 255, 90]
    assert split_repeat_counts(255) == [255]
    assert split_repeat_counts(510) == [255, 255]
    assert split_repeat_counts(0) == []
    assert split_repeat_counts(10, max_repeat=4) == [4, 4, 2]
    with pytest.raises(InputError):
        split_repeat_counts(-1)
    with pytest.raises(InputError):
        split_repeat_counts(10, max_repeat=256)


def test_split_instruction_advances_addresses() -> None:
    template = instr(op="add", dtype="fp32", dst=0x20000, src0=0, src1=0x10000, src1_rep_stride=4)
    parts = split_instruction(template, 300)
    assert [p.repeat for p in parts] == [255, 45]
    assert parts[1].dst == 0x20000 + 255 * 8 * 32
    assert parts[1].src0 == 255 * 8 * 32
    assert parts[1].src1 == 0x10000 + 255 * 4 * 32
    # The split covers the same blocks as one 300-repeat loop would.
    assert sum(p.elements for p in parts) == 300 * 64


# --- seed 001: mask --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["fp16", "int16", "uint16"])
@pytest.mark.parametrize("mask", [1, 64, 128])
def test_continuous_mask_16_bit_valid(dtype: str, mask: int) -> None:
    # "数据类型占比特位16位时(如half,uint16_t),mask∈[1, 128]"; the int16 example uses mask 64.
    i = instr(op="add", dtype=dtype, dst=0, src0=256, src1=512, mask=mask)
    assert i.mask == mask
    assert i.active_lanes == mask


@pytest.mark.parametrize("dtype", ["fp32", "int32", "uint32"])
@pytest.mark.parametrize("mask", [1, 64])
def test_continuous_mask_32_bit_valid(dtype: str, mask: int) -> None:
    # "当操作数为32位时(如float, int32_t),mask∈[1, 64]"; the int32 example uses mask 64.
    assert instr(op="add", dtype=dtype, dst=0, src0=256, src1=512, mask=mask).mask == mask


@pytest.mark.parametrize(
    ("dtype", "mask"), [("fp16", 129), ("fp16", 0), ("int32", 65), ("fp32", 0)]
)
def test_continuous_mask_out_of_range(dtype: str, mask: int) -> None:
    err = rejected(op="add", dtype=dtype, dst=0, src0=256, src1=512, mask=mask)
    assert err.field == "mask"
    assert err.rule == "mask_continuous_range"
    assert err.limit == [1, 128 if dtype == "fp16" else 64]


def test_default_mask_is_every_lane() -> None:
    assert instr(op="exp", dst=0, src0=256).mask == 128
    assert instr(op="exp", dtype="fp32", dst=0, src0=256).mask == 64


def test_bit_mask_16_bit_example() -> None:
    # int16 with {6148914691236517205, 6148914691236517205}: every other lane of 128.
    i = instr(op="add", dtype="int16", dst=0, src0=256, src1=512, mask=[ALTERNATE, ALTERNATE])
    assert i.mask == (ALTERNATE, ALTERNATE)
    assert i.active_lanes == 64


def test_bit_mask_32_bit_example() -> None:
    # int32 with {6148914691236517205, 0}: every other lane of 64.
    i = instr(op="add", dtype="int32", dst=0, src0=256, src1=512, mask=[ALTERNATE, 0])
    assert i.active_lanes == 32


def test_bit_mask_16_bit_one_word_zero_is_valid() -> None:
    assert instr(op="abs", dst=0, src0=256, mask=[0, 1]).active_lanes == 1
    assert instr(op="abs", dst=0, src0=256, mask=["0xFFFFFFFFFFFFFFFF", 0]).active_lanes == 64


@pytest.mark.parametrize("dtype", ["fp16", "int16", "fp32", "int32"])
def test_bit_mask_both_zero_rejected(dtype: str) -> None:
    err = rejected(op="add", dtype=dtype, dst=0, src0=256, src1=512, mask=[0, 0])
    assert err.rule == "mask_bits_all_zero"
    assert err.field == "mask"


def test_bit_mask_32_bit_high_word_must_be_zero() -> None:
    err = rejected(op="add", dtype="int32", dst=0, src0=256, src1=512, mask=[ALTERNATE, 1])
    assert err.rule == "mask_bits_high_word"
    assert rejected(op="add", dtype="fp32", dst=0, src0=256, src1=512, mask=[0, 1]).rule == (
        "mask_bits_high_word"
    )


def test_bit_mask_word_range_and_shape() -> None:
    assert instr(op="abs", dst=0, src0=256, mask=[2**64 - 1, 2**64 - 1]).active_lanes == 128
    assert rejected(op="abs", dst=0, src0=256, mask=[2**64, 0]).rule == "mask_bits_range"
    assert rejected(op="abs", dst=0, src0=256, mask=[-1, 0]).rule == "mask_bits_range"
    assert rejected(op="abs", dst=0, src0=256, mask=[1, 2, 3]).rule == "mask_bits_length"


def test_mask_does_not_change_blocks_or_cycles() -> None:
    full = analyze(instr(op="copy", dst=0x1FE00, src0=0, dst_blk_stride=16), B2)
    short = analyze(instr(op="copy", dst=0x1FE00, src0=0, dst_blk_stride=16, mask=16), B2)
    assert short == full


# --- operands and fields ----------------------------------------------------------------------


def test_hex_string_addresses() -> None:
    i = instr(op="add", dst="0x1FE00", src0="0x10020", src1="0x20020")
    assert (i.dst, i.src0, i.src1) == (0x1FE00, 0x10020, 0x20020)


@pytest.mark.parametrize(
    ("value", "rule"),
    [("0x10", "ub_alignment"), (16, "ub_alignment"), ("zz", "ub_address"), (-32, "ub_address"),
     (True, "ub_address"), (1.5, "ub_address")],
)  # fmt: skip
def test_bad_addresses(value: object, rule: str) -> None:
    err = rejected(op="exp", dst=0, src0=value)
    assert err.rule == rule
    assert err.field == "src0"


def test_binary_op_requires_src1() -> None:
    err = rejected(op="add", dst=0, src0=256)
    assert (err.field, err.rule) == ("src1", "required")


@pytest.mark.parametrize("extra", [{"src1": 512}, {"src1_blk_stride": 2}, {"src1_rep_stride": 16}])
def test_unary_op_rejects_src1(extra: dict[str, int]) -> None:
    err = rejected(op="adds", dst=0, src0=256, **extra)
    assert err.rule == "src1_unary"
    assert err.field == next(iter(extra))


def test_unknown_and_missing_keys() -> None:
    err = rejected(op="exp", dst=0, src0=256, scalar=1.0)
    assert (err.field, err.rule) == ("scalar", "unknown_field")
    err = rejected(op="exp", dst=0)
    assert (err.field, err.rule) == ("src0", "required")
    assert rejected(op="fma", dst=0, src0=256).field == "op"
    assert rejected(op="exp", dtype="int8", dst=0, src0=256).field == "dtype"
    with pytest.raises(InputError):
        parse_vector_instruction([1, 2])


def test_op_dtype_rules() -> None:
    assert rejected(op="exp", dtype="int32", dst=0, src0=256).rule == "op_dtype"
    assert rejected(op="and", dtype="fp16", dst=0, src0=256, src1=512).rule == "op_dtype"
    assert instr(op="and", dtype="int16", dst=0, src0=256, src1=512).is_binary


def test_stride_ranges() -> None:
    # BinaryRepeatParams strides are uint8; UnaryRepeatParams block strides are uint16.
    assert rejected(op="add", dst=0, src0=256, src1=512, src0_blk_stride=256).rule == (
        "blk_stride_range"
    )
    assert instr(op="copy", dst=0, src0=256, src0_blk_stride=256).src0_blk_stride == 256
    assert rejected(op="copy", dst=0, src0=256, src0_blk_stride=65536).rule == "blk_stride_range"
    assert rejected(op="copy", dst=0, src0=256, dst_rep_stride=256).rule == "rep_stride_range"
    assert rejected(op="copy", dst=0, src0=256, dst_rep_stride=-1).rule == "rep_stride_range"
    # Repeat stride 0 (recompute the same blocks, seed 001) is allowed.
    assert instr(op="copy", dst=0, src0=256, src0_rep_stride=0, repeat=4).src0_rep_stride == 0


def test_direct_construction_raises_validation_error() -> None:
    with pytest.raises(ValidationError):
        VectorInstruction(op="add", dst=0, src0=256, src1=512, repeat=256)


def test_canonical_round_trip() -> None:
    for i in (
        instr(op="add", dst=0, src0="0x100", src1=0x200, mask=[ALTERNATE, ALTERNATE]),
        instr(op="exp", dtype="fp32", dst=0, src0=256, repeat=3),
    ):
        assert parse_vector_instruction(i.canonical()) == i


# --- UB range ---------------------------------------------------------------------------------


def test_every_block_must_lie_in_ub() -> None:
    # The last block of the last repeat of dst ends at 0x30000 + 32 on the 192 KiB UB.
    i = instr(op="copy", dst=0x2FF00 - 256, src0=0, repeat=2, dst_blk_stride=1)
    assert analyze(i, B2)["cycles"] == 2  # ends exactly at 0x30000
    j = instr(op="copy", dst=0x2FF00 - 224, src0=0, repeat=2)
    with pytest.raises(InputError) as exc:
        analyze(j, B2)
    assert (exc.value.field, exc.value.rule, exc.value.limit) == ("dst", "ub_out_of_range", 196608)
    assert analyze(j, P3)["cycles"] == 2 + 4  # the 256 KiB UB holds it


def test_strided_source_out_of_ub() -> None:
    i = instr(op="copy", dst=0, src0=0x2F200, src0_blk_stride=16)
    with pytest.raises(InputError) as exc:
        instruction_cycles(i, B2)
    assert exc.value.field == "src0"


def test_soc_selects_preset() -> None:
    i = instr(soc="Ascend310P3", op="copy", dst=0x30000, src0=0)
    assert analyze(i)["cycles"] == 1 + 4
    with pytest.raises(UnknownSocError):
        analyze(instr(soc="Ascend999", op="copy", dst=0, src0=256))


# --- seed 000 through analyze() ---------------------------------------------------------------


def test_analyze_shape_and_seed_banks() -> None:
    result = analyze(instr(op="add", dst=0x10000, src0=0x10020, src1=0x20020), B2)
    assert set(result) == {"blocks", "conflicts", "cycles_per_repeat", "cycles"}
    assert len(result["blocks"]) == 24
    first = {(b["operand"], b["index"]): b for b in result["blocks"]}
    assert first["dst", 0] == {
        "operand": "dst", "index": 0, "addr": 0x10000, "bank": 16, "bank_group": 0
    }  # fmt: skip
    assert (first["src0", 0]["bank"], first["src0", 0]["bank_group"]) == (17, 1)
    assert (first["src1", 0]["bank"], first["src1", 0]["bank_group"]) == (33, 1)
    conflict = result["conflicts"][0]
    assert set(conflict) == {"kind", "operands", "blocks"}
    assert conflict["blocks"][0] == {"operand": "src0", "index": 0}


def test_table1_through_analyze() -> None:
    ok = analyze(instr(op="adds", dst=0x10000, src0=0x10020), B2)
    assert ok["conflicts"] == []
    assert ok["cycles_per_repeat"] == 1
    clash = analyze(instr(op="adds", dst=0x10E20, src0=0x10020), B2)
    assert conflict_kinds(clash) == {"read_write"}
    assert clash["cycles_per_repeat"] == 2


@pytest.mark.parametrize(("preset", "overhead"), [(B2, 0), (P3, 4)], ids=["910B2", "310P3"])
@pytest.mark.parametrize(("stride", "per_repeat"), [(16, 8), (8, 4), (1, 1)])
def test_tables_2_and_4_through_analyze(
    preset: HardwarePreset, overhead: int, stride: int, per_repeat: int
) -> None:
    write = analyze(instr(op="copy", dst=0x1FE00, src0=0, dst_blk_stride=stride, repeat=3), preset)
    assert write["cycles_per_repeat"] == per_repeat
    assert write["cycles"] == 3 * per_repeat + overhead
    assert conflict_kinds(write) == (set() if stride == 1 else {"write_write"})
    read = analyze(instr(op="copy", dst=0, src0=0x1FE00, src0_blk_stride=stride, repeat=3), preset)
    assert read["cycles_per_repeat"] == per_repeat
    assert read["cycles"] == 3 * per_repeat + overhead
    assert conflict_kinds(read) == (set() if stride == 1 else {"read_read"})


def test_table3_through_analyze() -> None:
    clash = analyze(instr(op="add", dst=0, src0=0x10020, src1=0x20020), B2)
    assert {tuple(c["operands"]) for c in clash["conflicts"]} == {("src0", "src1")}
    assert clash["cycles_per_repeat"] == 2
    ok = analyze(instr(op="add", dst=0, src0=0x10020, src1=0x10000), B2)
    assert ok["conflicts"] == []
    assert ok["cycles_per_repeat"] == 1


def _transpose_counter_example(preset: HardwarePreset) -> list[dict[str, Any]]:
    # Seed 000's counter-example: (8, 16, 16) fp16 -> (16, 8, 16) by "strided read, contiguous
    # write": for i in 0..15: Adds(dst[i * 128], src[i * 16], 0, mask 128, repeat 1,
    # dstBlkStride 1, srcBlkStride 16). src at 0, dst at 0x10000 (another bank of each group, so
    # that no lane reads and writes one bank and only the seed's read-read conflict remains).
    return [
        analyze(
            instr(op="adds", dst=0x10000 + i * 128 * 2, src0=i * 16 * 2, mask=128,
                  repeat=1, dst_blk_stride=1, src0_blk_stride=16),
            preset,
        )
        for i in range(16)
    ]  # fmt: skip


def _transpose_fix(preset: HardwarePreset) -> list[dict[str, Any]]:
    # The seed's fix, "contiguous read, strided write": for i in 0..7: Adds(dst[i * 16],
    # src[i * 256], 0, mask 128, repeat 2, dstBlkStride 8, srcBlkStride 1), default repeat
    # strides (the seed's UnaryRepeatParams).
    return [
        analyze(
            instr(op="adds", dst=0x10000 + i * 16 * 2, src0=i * 256 * 2, mask=128,
                  repeat=2, dst_blk_stride=8, src0_blk_stride=1),
            preset,
        )
        for i in range(8)
    ]  # fmt: skip


@pytest.mark.parametrize(("preset", "overhead"), [(B2, 0), (P3, 4)], ids=["910B2", "310P3"])
def test_transpose_counter_example(preset: HardwarePreset, overhead: int) -> None:
    results = _transpose_counter_example(preset)
    for r in results:
        # "同一repeat内输入的8个datablock都在同一个bank_group而发生读读冲突".
        assert conflict_kinds(r) == {"read_read"}
        (conflict,) = r["conflicts"]
        assert conflict["operands"] == ["src0"]
        assert len(conflict["blocks"]) == 8
        assert r["cycles_per_repeat"] == 8
    assert sum(r["cycles"] for r in results) == 16 * 8 + 16 * overhead


@pytest.mark.parametrize(("preset", "overhead"), [(B2, 0), (P3, 4)], ids=["910B2", "310P3"])
def test_transpose_fix(preset: HardwarePreset, overhead: int) -> None:
    results = _transpose_fix(preset)
    for r in results:
        # The fix removes the read-read conflict ...
        assert all(c["kind"] != "read_read" for c in r["conflicts"])
        # ... but by seed 000's own table 2 a dst block stride of 8 still puts blocks 0/2/4/6 and
        # 1/3/5/7 in two bank groups: 4 cycles per repeat, not 1.
        assert conflict_kinds(r) == {"write_write"}
        assert r["cycles_per_repeat"] == 4
    fixed = sum(r["cycles"] for r in results)
    assert fixed == 8 * 2 * 4 + 8 * overhead
    assert fixed < sum(r["cycles"] for r in _transpose_counter_example(preset))


@pytest.mark.parametrize(("preset", "overhead"), [(B2, 0), (P3, 4)], ids=["910B2", "310P3"])
def test_pad_32_bytes(preset: HardwarePreset, overhead: int) -> None:
    # z = x + y, float, 8 KiB each: Add(dst, src[0], src[(8 * 1024 + 32) / 4], mask, 8K / 256).
    repeat = 8 * 1024 // 256
    clash = analyze(
        instr(op="add", dtype="fp32", dst=0x10000, src0=0, src1=8 * 1024, repeat=repeat), preset
    )
    assert conflict_kinds(clash) == {"read_read"}
    assert clash["cycles_per_repeat"] == 2
    assert clash["cycles"] == 2 * repeat + overhead
    padded = analyze(
        instr(op="add", dtype="fp32", dst=0x10000, src0=0, src1=8 * 1024 + 32, repeat=repeat),
        preset,
    )
    assert padded["conflicts"] == []
    assert padded["cycles"] == repeat + overhead


def test_seed_001_add_examples_are_conflict_free_when_placed() -> None:
    # The int16 and int32 Add examples, {1, 1, 1, 8, 8, 8}, on buffers laid out by place_buffers.
    from simcore.ub.banks import place_buffers

    src0, src1, dst = place_buffers([256, 256, 256], B2).offsets
    for dtype in ("int16", "int32"):
        r = analyze(instr(op="add", dtype=dtype, dst=dst, src0=src0, src1=src1, mask=64), B2)
        assert r["conflicts"] == []
        assert r["cycles"] == 1


def test_in_place_op_is_a_read_write_conflict() -> None:
    # dst == src: every lane reads and writes one bank (seed 000's rule taken literally).
    r = analyze(instr(op="adds", dst=0x1000, src0=0x1000, repeat=4), B2)
    assert conflict_kinds(r) == {"read_write"}
    assert r["cycles"] == 8


def test_conflicts_can_change_between_repeats() -> None:
    # src1 advances 9 blocks per repeat, src0 8: repeat 0 collides lane by lane (both in group
    # 0 + j), repeat 1 does not (src1 one group ahead). Only the first repeat's are listed.
    r = analyze(instr(op="add", dst=0x10000, src0=0, src1=0x2000, src1_rep_stride=9, repeat=2), B2)
    assert r["cycles_per_repeat"] == 2
    assert r["cycles"] == 2 + 1


# --- ND -> NZ reorder -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pitch", "per_repeat"),
    [(512, 8), (1024, 8), (256, 4), (768, 4), (128, 2), (544, 1), (96, 1), (64, 1)],
)
def test_nd2nz_pitch_conflicts(pitch: int, per_repeat: int) -> None:
    rows, row_bytes = 64, 64
    cycles = nd2nz_reorder_cycles(rows, row_bytes, pitch, B2)
    assert cycles == (rows // 8) * (row_bytes // 32) * per_repeat


def test_nd2nz_k_pitch_multiple_of_512_is_8x_and_pad_fixes_it() -> None:
    # A 128 x 256 fp16 tile (K * sizeof = 512 B): the ND row pitch puts a repeat's 8 rows in one
    # bank group; padding each row by 32 B removes it.
    slow = nd2nz_reorder_cycles(128, 512, 512, B2)
    fast = nd2nz_reorder_cycles(128, 512, 512 + 32, B2)
    assert slow == 8 * fast
    assert fast == (128 // 8) * (512 // 32)
    # The issue overhead of 310P3 (4 cycles per instruction) dilutes the ratio.
    slow_p3 = nd2nz_reorder_cycles(128, 512, 512, P3)
    fast_p3 = nd2nz_reorder_cycles(128, 512, 544, P3)
    assert slow_p3 == 2048 + 16 * 4
    assert fast_p3 == 256 + 16 * 4
    assert 6 < slow_p3 / fast_p3 < 8


def test_nd2nz_vectorised() -> None:
    rows = np.array([128, 128, 16])
    out = nd2nz_reorder_cycles(rows, np.array([512, 512, 96]), np.array([512, 544, 1024]), B2)
    assert isinstance(out, np.ndarray)
    cases = zip(rows, [512, 512, 96], [512, 544, 1024], strict=True)
    expected = [nd2nz_reorder_cycles(int(r), b, p, B2) for r, b, p in cases]
    assert out.tolist() == expected
    assert isinstance(nd2nz_reorder_cycles(16, 32, 32, B2), float)


def test_nd2nz_issue_count() -> None:
    # 600 columns need 3 instructions per 8-row group (255 + 255 + 90 repeats).
    assert nd2nz_reorder_cycles(8, 600 * 32, 600 * 32 + 32, P3) == 600 + 3 * 4
    # More than 255 rows: dst_rep_stride = rows no longer fits, one instruction per repeat.
    assert nd2nz_reorder_cycles(256, 64, 96, P3) == 32 * 2 * (1 + 4)


@pytest.mark.parametrize(
    ("args", "field"),
    [((0, 32, 32), "rows"), ((8, 0, 32), "row_bytes"), ((8, 32, 48), "pitch_bytes"),
     ((8, 64, 32), "pitch_bytes"), ((8, 32, 0), "pitch_bytes")],
)  # fmt: skip
def test_nd2nz_rejects_bad_arguments(args: tuple[int, int, int], field: str) -> None:
    with pytest.raises(InputError) as exc:
        nd2nz_reorder_cycles(*args, B2)
    assert exc.value.field == field


def _nd2nz_by_instructions(rows: int, row_bytes: int, pitch: int, preset: HardwarePreset) -> float:
    # The kernel nd2nz_reorder_cycles assumes, issued instruction by instruction: one copy per
    # 8-row group, repeats over the 32 B columns; ND source at 0, NZ destination at 0x10000.
    columns = row_bytes // 32
    total = 0.0
    for g in range(-(-rows // 8)):
        template = instr(op="copy", dst=0x10000 + g * 8 * 32, src0=g * 8 * pitch,
                         src0_blk_stride=pitch // 32, src0_rep_stride=1,
                         dst_blk_stride=1, dst_rep_stride=rows)  # fmt: skip
        for part in split_instruction(template, columns):
            total += analyze(part, preset)["cycles"]
    return total


@given(
    rows=st.integers(1, 40),
    columns=st.integers(1, 8),
    extra=st.integers(0, 40),
    preset=st.sampled_from([B2, P3]),
)
def test_nd2nz_matches_instruction_analysis(
    rows: int, columns: int, extra: int, preset: HardwarePreset
) -> None:
    row_bytes = columns * 32
    pitch = row_bytes + extra * 32
    # Keep the ND tile (plus the 8-block reach of a last partial group) below 0x10000.
    if (-(-rows // 8) * 8) * pitch > 0x10000:
        return
    closed = nd2nz_reorder_cycles(rows, row_bytes, pitch, preset)
    assert closed == _nd2nz_by_instructions(rows, row_bytes, pitch, preset)
