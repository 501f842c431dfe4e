"""The UB data path of 310P / 910A: NZ->ND reorder cost, buffer plan, UB_CAPACITY, explanation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simcore.errors import InputError
from simcore.evaluate import evaluate, parse_request
from simcore.hardware.presets import HardwarePreset, load_preset
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.legality import check_tiling
from simcore.tiling.problem import Problem
from simcore.tiling.tcube import TCubeTiling
from simcore.ub.banks import analyze_repeat
from simcore.ub.path import ub_plan
from simcore.ub.reorder import nz2nd_reorder_cycles, strided_repeat_cycles
from simcore.ub.sizes import (
    share_ub_size_array,
    staging_pitch_bytes,
    trans_length_array,
    ub_path_arrays,
)
from simcore.ub.vector import analyze, parse_vector_instruction, split_instruction
from tests.simcore.tiling.test_footprints import cann_rows
from tests.support.random_tilings import random_tiling

B2 = load_preset("Ascend910B2")  # 192 KiB UB, FixPipe and on-the-fly ND->NZ, no issue overhead
P3 = load_preset("Ascend310P3")  # 256 KiB UB, neither, 4 cycles of issue overhead

# A 310P3 fp16 problem and a tiling whose chunks fit the vector reorder path (2 x transLength
# below the 256 KiB UB): A chunks of 64 rows x stepKa * baseK, B chunks of 128 x 128, C 64 x 128.
PROBLEM_310P = {"soc": "Ascend310P3", "m": 2048, "n": 2048, "k": 2048, "dtype": "fp16"}
TILING_310P = {"usedCoreNum": 8, "singleCoreM": 512, "singleCoreN": 1024, "baseM": 64,
               "baseN": 128, "baseK": 32, "depthA1": 32, "depthB1": 8, "stepM": 1,
               "stepN": 1, "stepKa": 16, "stepKb": 4}  # fmt: skip


def request(
    problem: dict[str, Any] | None = None, **tiling: int
) -> tuple[Problem, TCubeTiling, HardwarePreset]:
    return parse_request({"problem": problem or PROBLEM_310P, "tiling": {**TILING_310P, **tiling}})


# --- NZ->ND reorder (vector.nz2nd_reorder_cycles) ------------------------------------------------


@pytest.mark.parametrize(("pitch", "per_repeat"), [(512, 8), (256, 4)])
def test_nz2nd_reproduces_seed_table_2(pitch: int, per_repeat: int) -> None:
    # One 8-row group of one column is one repeat whose 8 writes sit pitch / 32 blocks apart:
    # seed 000 table 2 (dst 0x1FE00, blk_stride 16 -> 8 cycles, blk_stride 8 -> 4 cycles).
    assert nz2nd_reorder_cycles(8, 32, pitch, B2) == per_repeat
    seed = analyze(
        parse_vector_instruction(
            {"op": "copy", "dst": "0x1FE00", "src0": 0, "dst_blk_stride": pitch // 32}
        ),
        B2,
    )
    assert seed["cycles_per_repeat"] == per_repeat


@pytest.mark.parametrize(
    ("pitch", "per_repeat"),
    [(512, 8), (1024, 8), (256, 4), (768, 4), (128, 2), (544, 1), (288, 1), (64, 1)],
)
def test_nz2nd_pitch_conflicts(pitch: int, per_repeat: int) -> None:
    rows, row_bytes = 64, 64
    assert nz2nd_reorder_cycles(rows, row_bytes, pitch, B2) == (rows // 8) * 2 * per_repeat
    # 310P3 adds 4 cycles per instruction: one per 8-row group (2 columns fit one instruction).
    assert nz2nd_reorder_cycles(rows, row_bytes, pitch, P3) == (rows // 8) * (2 * per_repeat + 4)


def test_strided_repeat_cycles_come_from_the_bank_model() -> None:
    for preset in (B2, P3):
        for stride in range(0, 40):
            blocks = analyze_repeat(preset, dst=0x10000, src0=0, src0_blk_stride=stride)
            assert strided_repeat_cycles(stride * 32, preset) == blocks.cycles


def test_nz2nd_vectorised_and_validated() -> None:
    out = nz2nd_reorder_cycles(np.array([64, 16]), np.array([256, 64]), np.array([256, 96]), P3)
    assert isinstance(out, np.ndarray)
    assert out.tolist() == [
        nz2nd_reorder_cycles(64, 256, 256, P3),
        nz2nd_reorder_cycles(16, 64, 96, P3),
    ]
    with pytest.raises(InputError) as exc:
        nz2nd_reorder_cycles(8, 64, 32, P3)
    assert exc.value.field == "pitch_bytes"
    assert exc.value.rule == "nz2nd_pitch"


def _nz2nd_by_instructions(rows: int, row_bytes: int, pitch: int, preset: HardwarePreset) -> float:
    # The kernel nz2nd_reorder_cycles assumes, issued instruction by instruction: one copy per
    # 8-row group reading 8 NZ blocks (contiguous) and writing 8 ND rows (pitch apart); the NZ
    # block at 0, the ND rows at 0x10000 (another bank of every group).
    total = 0.0
    for g in range(-(-rows // 8)):
        template = parse_vector_instruction(
            {"op": "copy", "dst": 0x10000 + g * 8 * pitch, "src0": g * 8 * 32,
             "dst_blk_stride": pitch // 32, "dst_rep_stride": 1,
             "src0_blk_stride": 1, "src0_rep_stride": rows}
        )  # fmt: skip
        for part in split_instruction(template, row_bytes // 32):
            total += analyze(part, preset)["cycles"]
    return total


@given(
    rows=st.integers(1, 40),
    columns=st.integers(1, 8),
    extra=st.integers(0, 40),
    preset=st.sampled_from([B2, P3]),
)
def test_nz2nd_matches_instruction_analysis(
    rows: int, columns: int, extra: int, preset: HardwarePreset
) -> None:
    row_bytes = columns * 32
    pitch = row_bytes + extra * 32
    if 0x10000 + (-(-rows // 8) * 8) * pitch > preset.ub_bytes:
        return
    assert nz2nd_reorder_cycles(rows, row_bytes, pitch, preset) == _nz2nd_by_instructions(
        rows, row_bytes, pitch, preset
    )


# --- staging pitch ------------------------------------------------------------------------------


def test_staging_pitch_is_compact_except_the_kernels_512_byte_pad() -> None:
    # Rows round up to 32 B blocks; a row of 16 blocks (a 500 B row too) gets one pad block.
    rows = np.array([1024, 960, 512, 500, 256, 2048, 32])
    assert staging_pitch_bytes(rows).tolist() == [1024, 960, 544, 544, 256, 2048, 32]


# --- the plan -------------------------------------------------------------------------------------


def test_plan_on_310p3_lays_out_both_halves_and_names_the_conflicts() -> None:
    problem, tiling, preset = request()
    plan = ub_plan(problem, tiling, preset)
    assert plan.vector_path
    assert plan.fits
    # transLength = the A chunk, 64 x 512 fp16 with CANN's bank pad: 64 * (512 + 16) * 2.
    assert plan.trans_length_bytes == tiling.transLength == 67584
    assert plan.vector_need_bytes == 2 * 67584
    by_name = {b.name: b for b in plan.buffers}
    assert set(by_name) == {"a_nd", "a_nz", "b_nd", "b_nz", "c_nz", "c_nd"}
    assert by_name["a_nd"].offset == by_name["b_nd"].offset == by_name["c_nz"].offset == 0
    assert by_name["a_nz"].offset >= plan.trans_length_bytes
    # ND rows land compact: 1024 B per A row, 256 B per B row and per C row.
    assert (by_name["a_nd"].rows, by_name["a_nd"].pitch_bytes) == (64, 1024)
    assert by_name["b_nd"].pitch_bytes == 256
    assert by_name["c_nd"].pitch_bytes == 256
    assert plan.cycles_per_repeat == {"nd2nz_a": 8, "nd2nz_b": 4, "nz2nd_c": 4}
    (a_conflict,) = [c for c in plan.conflicts if c.reorder == "nd2nz_a"]
    assert a_conflict.kind == "read_read"
    assert a_conflict.operands == ("src0",)
    assert a_conflict.buffers == ("a_nd",)
    assert a_conflict.bank_groups == (0,)
    assert a_conflict.pitch_bytes == 1024
    assert "1024 B apart" in a_conflict.message
    assert "bank group 0" in a_conflict.message
    assert "8 cycles per repeat instead of 1" in a_conflict.message
    (c_conflict,) = [c for c in plan.conflicts if c.reorder == "nz2nd_c"]
    assert c_conflict.kind == "write_write"
    assert c_conflict.bank_groups == (0, 8)
    # The whole A reorder: 8 row groups x 32 columns, 8 cycles each, one instruction per group.
    a_reorder = next(r for r in plan.reorders if r.name == "nd2nz_a")
    assert a_reorder.cycles == 8 * 32 * 8 + 8 * 4
    assert plan.explanation() == [c.message for c in plan.conflicts]


def test_plan_pads_the_second_half_when_that_removes_a_read_write_conflict() -> None:
    # stepKa = 15: 960 B A rows; the halves meet at 61440 B, inside the first 64 KiB bank, where
    # some lane of the A reorder would read and write one bank.
    problem, tiling, preset = request(stepKa=15, depthA1=30)
    plan = ub_plan(problem, tiling, preset)
    half = plan.trans_length_bytes
    assert half == 61440
    unpadded = analyze_repeat(preset, dst=half, src0=0, src0_blk_stride=960 // 32)
    assert any(c.kind == "read_write" for c in unpadded.conflicts)
    assert plan.pad_bytes > 0
    assert plan.pad_bytes % 32 == 0
    assert next(b for b in plan.buffers if b.name == "a_nz").offset == half + plan.pad_bytes
    assert all(c.kind != "read_write" for c in plan.conflicts)
    assert plan.cycles_per_repeat["nd2nz_a"] == 1


def test_plan_without_room_for_the_vector_path() -> None:
    # CANN-like base (128, 256, 64) with stepKa = 8: transLength = 128 x 512 fp16 + pad, twice
    # that is more than the UB, so the kernel cannot reorder in UB; only the C staging remains.
    problem, tiling, preset = request(
        usedCoreNum=8, singleCoreM=512, singleCoreN=1024, baseM=128, baseN=256, baseK=64,
        depthA1=16, depthB1=8, stepKa=8, stepKb=4,
    )  # fmt: skip
    plan = ub_plan(problem, tiling, preset)
    assert plan.fits
    assert not plan.vector_path
    assert plan.vector_need_bytes == 2 * tiling.transLength > preset.ub_bytes
    assert plan.reorders == ()
    assert [b.name for b in plan.buffers] == ["c_staging"]
    assert plan.buffers[0].size_bytes == 128 * 256 * 2 == plan.share_ub_bytes
    (sentence,) = plan.explanation()
    assert "enVecND2NZ" in sentence


def test_plan_is_empty_on_910b() -> None:
    problem = Problem(soc="Ascend910B2", m=4096, n=4096, k=4096)
    tiling = complete_tiling(
        {"usedCoreNum": 24, "singleCoreM": 1024, "singleCoreN": 768, "baseM": 128,
         "baseN": 256, "baseK": 64, "depthA1": 16, "depthB1": 8, "stepM": 1, "stepN": 1,
         "stepKa": 8, "stepKb": 4},
        problem, B2,
    )  # fmt: skip
    plan = ub_plan(problem, tiling, B2)
    assert plan.buffers == ()
    assert plan.reorders == ()
    assert not plan.vector_path
    assert plan.to_dict()["conflicts"] == []


def test_vectorised_path_agrees_with_the_plan_on_random_tilings() -> None:
    rng = np.random.default_rng(7)
    problems = [
        Problem(soc="Ascend310P3", m=1000, n=3000, k=777, dtype="fp16"),
        Problem(soc="Ascend310P3", m=512, n=640, k=2048, dtype="int8", trans_b=True),
        Problem(soc="Ascend910A", m=333, n=1024, k=4096, dtype="fp16", trans_a=True, bias=True),
    ]
    for problem in problems:
        preset = load_preset(problem.soc)
        tilings = [random_tiling(problem, preset, rng) for _ in range(40)]
        fields = {name: np.array([getattr(t, name) for t in tilings]) for name in
                  ("baseM", "baseN", "baseK", "stepM", "stepN", "stepKa", "stepKb",
                   "singleCoreM", "singleCoreN")}  # fmt: skip
        arrays = ub_path_arrays(problem, fields, preset)
        for i, t in enumerate(tilings):
            plan = ub_plan(problem, t, preset)
            assert arrays["trans_length_bytes"][i] == plan.trans_length_bytes
            assert arrays["share_ub_bytes"][i] == plan.share_ub_bytes
            assert arrays["vector_path"][i] == plan.vector_path
            assert arrays["fits"][i] == plan.fits
            for reorder in plan.reorders:
                key = reorder.name[-1]
                assert arrays[f"{key}_rows"][i] == reorder.rows
                assert arrays[f"{key}_pitch_bytes"][i] == reorder.pitch_bytes
                if not any(c.kind == "read_write" for c in reorder.conflicts):
                    assert arrays[f"{key}_cycles_per_repeat"][i] == reorder.cycles_per_repeat
                    assert arrays[f"{key}_reorder_cycles"][i] == reorder.cycles


def test_vectorised_sizes_reproduce_cann_rows() -> None:
    rows = [r for r in cann_rows() if r.soc == "Ascend310P3"]
    assert len(rows) == 857
    vector_path = 0
    for row in rows:
        problem, preset = row.problem(), P3
        fields = {k: np.array([v]) for k, v in row.fields.items()}
        assert trans_length_array(problem, fields, preset)[0] == row.fields["transLength"]
        assert share_ub_size_array(problem, fields, preset)[0] == row.fields["shareUbSize"]
        vector_path += bool(ub_path_arrays(problem, fields, preset)["vector_path"][0])
    # Why UB_CAPACITY is shareUbSize <= UB and not the max(shareUbSize, 2 x transLength):
    # most of CANN's own rows leave no room for the two transLength halves.
    assert len(rows) - vector_path == 783


# --- UB_CAPACITY -------------------------------------------------------------------------------


def test_ub_capacity_rejects_an_oversized_c_block() -> None:
    # fp16 in, fp32 out, baseM = baseN = 256: the C block alone is 256 KiB, the whole UB; K = 1000
    # rows are not 32 B aligned (2000 B), so the ND tail pad adds baseM x 32 B.
    problem = {**PROBLEM_310P, "k": 1000, "out_dtype": "fp32"}
    p, t, preset = request(problem, usedCoreNum=8, singleCoreM=512, singleCoreN=1024,
                           baseM=256, baseN=256, baseK=16, depthA1=2, depthB1=2, stepKa=1,
                           stepKb=1)  # fmt: skip
    report = check_tiling(p, t, preset)
    assert report.violation_ids == ["UB_CAPACITY"]
    (v,) = report.violations
    assert v.value == 256 * 256 * 4 + 256 * 32 == t.shareUbSize
    assert v.limit == preset.ub_bytes
    assert "shareUbSize" in v.formula
    assert "8192 for the ND tail pad" in v.message
    # The same block with aligned K rows fills the UB exactly, which is legal ('<=').
    p2, t2, _ = request({**problem, "k": 1024}, usedCoreNum=8, singleCoreM=512,
                        singleCoreN=1024, baseM=256, baseN=256, baseK=16, depthA1=2,
                        depthB1=2, stepKa=1, stepKb=1)  # fmt: skip
    assert t2.shareUbSize == preset.ub_bytes
    assert check_tiling(p2, t2, preset).valid


def test_ub_capacity_holds_for_every_cann_310p3_row() -> None:
    rows = [r for r in cann_rows() if r.soc == "Ascend310P3"]
    full = 0
    for row in rows:
        report = check_tiling(row.problem(), row.tiling(), P3)
        assert "UB_CAPACITY" not in report.violation_ids, row.label
        full += row.fields["shareUbSize"] == P3.ub_bytes
    assert full > 0  # CANN fills the UB exactly in some rows: the limit is '<='


def test_ub_capacity_does_not_apply_to_910b() -> None:
    problem = Problem(soc="Ascend910B2", m=4096, n=4096, k=1000, out_dtype="fp32")
    tiling = complete_tiling(
        {"usedCoreNum": 16, "singleCoreM": 1024, "singleCoreN": 1024, "baseM": 128,
         "baseN": 256, "baseK": 16, "depthA1": 2, "depthB1": 2, "stepM": 1, "stepN": 1,
         "stepKa": 1, "stepKb": 1},
        problem, B2,
    )  # fmt: skip
    assert "UB_CAPACITY" not in check_tiling(problem, tiling, B2).violation_ids


# --- evaluate ------------------------------------------------------------------------------------


def test_evaluate_adds_the_ub_explanation_on_310p3_only() -> None:
    out = evaluate(*request())
    est = out["estimate"]
    assert {"buffers", "conflicts", "cycles_per_repeat"} <= set(est["ub"])
    assert est["ub"]["cycles_per_repeat"]["nd2nz_a"] == 8
    assert any("A staging rows are 1024 B apart" in s for s in est["explanation"])
    for key in ("time_us", "tflops", "bottleneck", "pipe_busy_us"):
        assert key in est
    on_910b = evaluate(
        *parse_request(
            {"problem": {**PROBLEM_310P, "soc": "Ascend910B2"},
             "tiling": {**TILING_310P, "usedCoreNum": 8}}
        )
    )  # fmt: skip
    assert "ub" not in on_910b["estimate"]
    assert "explanation" not in on_910b["estimate"]


def test_conflicting_pitch_is_predicted_slower_and_named() -> None:
    # Two tilings that differ only in stepKa (and depthA1 = 2 x stepKa): 16 x 32 = 512 fp16 per
    # A row (1024 B, all 8 rows of a reorder repeat in bank group 0) against 15 x 32 = 480
    # (960 B, 8 groups). The 1024 B one loads A in fewer, larger chunks, so without the bank
    # model it would be the faster; with it, its 8-cycle repeats make it the slower.
    slow = evaluate(*request(stepKa=16, depthA1=32))
    fast = evaluate(*request(stepKa=15, depthA1=30))
    assert slow["valid"]
    assert fast["valid"]
    assert slow["estimate"]["time_us"] > fast["estimate"]["time_us"]
    assert slow["estimate"]["estimator_time_us"] > fast["estimate"]["estimator_time_us"]
    named = [s for s in slow["estimate"]["explanation"] if s.startswith("A staging")]
    assert named
    assert "bank group 0" in named[0]
    assert not any(s.startswith("A staging") for s in fast["estimate"]["explanation"])
