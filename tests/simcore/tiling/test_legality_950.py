"""Ascend 950 (arch 3510): presets against ascend950.md, the new dtypes and every new rule.

Every expected number below is read off ``tests/data/reference/ascend950.md`` (a copy of
``../shared/reference/ascend950.md``) or computed by hand in the comment next to it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simcore.errors import UnsupportedError
from simcore.hardware.dtypes import DType, c0_elements, nbytes
from simcore.hardware.presets import list_socs, load_preset
from simcore.tiling.footprints import MX_TYPE_PARA_DEFAULT, complete_tiling
from simcore.tiling.legality import LegalityReport, check_tiling, problem_violations
from simcore.tiling.problem import Problem, check_supported

REF = Path(__file__).resolve().parents[2] / "data" / "reference" / "ascend950.md"

#: A legal 950 tiling of 8192 x 8192 x 8192 fp16 (the measured file's case 5 shape, norm form).
BASE: dict[str, int] = {
    "usedCoreNum": 32,
    "singleCoreM": 2048,
    "singleCoreN": 1024,
    "baseM": 256,
    "baseN": 256,
    "baseK": 64,
    "depthA1": 1,
    "depthB1": 1,
    "stepM": 1,
    "stepN": 1,
    "stepKa": 1,
    "stepKb": 1,
    "dbL0A": 2,
    "dbL0B": 2,
    "dbL0C": 1,
}


def _sku_table() -> list[dict[str, str]]:
    """The "Per SKU" table of ascend950.md, one dict per row."""
    text = REF.read_text(encoding="utf-8")
    section = text.split("## Per SKU", 1)[1].split("\n\n", 2)[1]
    lines = [ln for ln in section.splitlines() if ln.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    return [
        dict(zip(head, (c.strip() for c in ln.strip("|").split("|")), strict=True))
        for ln in lines[2:]
    ]


def _check(
    mutation: dict[str, int] | None = None, soc: str = "Ascend950PR_9589", **problem_args: Any
) -> LegalityReport:
    problem = Problem(**{"soc": soc, "m": 8192, "n": 8192, "k": 8192, **problem_args})
    preset = load_preset(soc)
    tiling = complete_tiling({**BASE, **(mutation or {})}, problem, preset)
    return check_tiling(problem, tiling, preset)


# --- presets ---------------------------------------------------------------------------------


def test_every_sku_of_the_reference_is_a_preset_field_by_field() -> None:
    rows = _sku_table()
    assert len(rows) == 6
    for row in rows:
        p = load_preset(row["SoC"])
        hbm_gib = int(row["HBM"].split()[0])
        l2_mib = int(row["L2"].split()[0])
        assert (p.cube_core_count, p.vector_core_count, p.clock_mhz) == (
            int(row["cube cores"]),
            int(row["vector cores"]),
            float(row["clock MHz"]),
        ), row["SoC"]
        assert (p.hbm_bytes, p.l2_bytes) == (hbm_gib * 2**30, l2_mib * 2**20), row["SoC"]
        assert all(p.sources[f] for f in type(p).model_fields if f != "sources"), row["SoC"]


def test_per_core_values_of_the_reference() -> None:
    p = load_preset("Ascend950PR_9589")
    # ascend950.md "Per core": L0A/L0B 64 KiB, L0C 256 KiB, L1 512 KiB, UB 248 KiB usable,
    # BiasTable 4 KiB, L1->L0A/L0B 256/256 B per cycle, L0C->UB and UB->L1 128 B per cycle.
    assert (p.l0a_bytes, p.l0b_bytes, p.l0c_bytes, p.l1_bytes) == (65536, 65536, 262144, 524288)
    assert (p.ub_bytes, p.bt_bytes) == (248 * 1024, 4096)
    assert (p.l1_to_l0a_bytes_per_cycle, p.l1_to_l0b_bytes_per_cycle) == (256, 256)
    assert (p.l0c_to_ub_bytes_per_cycle, p.ub_to_l1_bytes_per_cycle) == (128, 128)
    # 8 bank groups x 2 banks x 16 KiB (512 rows of 32 B) = the 256 KiB physical UB.
    banks = p.ub_bank_groups * p.ub_banks_per_group * p.ub_bank_rows * p.ub_block_bytes
    assert (p.ub_bank_groups, p.ub_banks_per_group, banks) == (8, 2, 256 * 1024)
    # Derived peaks of the reference on 32 cores at 1.65 GHz: 432, 865 and 1730 TFLOPS.
    peak = {d: 2 * p.cube_macs_per_cycle[d] * 32 * 1.65e9 / 1e12 for d in ("fp16", "fp8_e4m3")}
    assert round(peak["fp16"]) == 433 and round(peak["fp8_e4m3"]) == 865
    assert round(2 * p.cube_macs_per_cycle[DType.MXFP4_E2M1] * 32 * 1.65e9 / 1e12) == 1730


def test_default_names_resolve_to_documented_skus() -> None:
    assert {"Ascend950PR", "Ascend950DT"} <= set(list_socs())
    pr, top = load_preset("Ascend950PR"), load_preset("Ascend950PR_9599")
    assert pr.model_dump(exclude={"soc"}) == top.model_dump(exclude={"soc"})
    assert "Ascend950PR_9599" in pr.sources["soc"]
    dt = load_preset("Ascend950DT")
    assert dt.model_dump(exclude={"soc"}) == load_preset("Ascend950DT_9591").model_dump(
        exclude={"soc"}
    )


# --- dtypes ----------------------------------------------------------------------------------


def test_fractal_c0_and_sizes_of_the_new_dtypes() -> None:
    # Cube shapes of ascend950.md: fp8 / HiF8 16x32x16, fp4 16x64x16 (C0 = 32 B / sizeof).
    for dtype in (DType.FP8_E4M3, DType.FP8_E5M2, DType.HIF8, DType.MXFP8_E4M3):
        assert (c0_elements(dtype), nbytes(dtype, 32)) == (32, 32)
    for dtype in (DType.MXFP4_E2M1, DType.MXFP4_E1M2):
        assert (c0_elements(dtype), nbytes(dtype, 64)) == (64, 32)


def test_aliases_mixed_pairs_and_default_outputs() -> None:
    p = Problem(m=16, n=16, k=64, dtype="mxfp4", dtype_b="mxfp4_e1m2")  # type: ignore[arg-type]
    assert (p.dtype, p.b_dtype, p.c_dtype, p.bias_type) == (
        DType.MXFP4_E2M1,
        DType.MXFP4_E1M2,
        DType.BF16,
        DType.FP32,
    )
    assert (
        Problem(m=1, n=1, k=32, dtype=DType.FP8_E4M3, dtype_b=DType.FP8_E5M2).canonical()["dtype_b"]
        == "fp8_e5m2"
    )
    with pytest.raises(ValueError, match="dtype_b"):
        Problem(m=1, n=1, k=64, dtype=DType.MXFP4_E2M1, dtype_b=DType.MXFP8_E4M3)
    with pytest.raises(ValueError, match="out_dtype"):
        Problem(m=1, n=1, k=32, dtype=DType.FP8_E4M3, out_dtype=DType.INT32)


@pytest.mark.parametrize(
    ("soc", "args", "rule"),
    [
        ("Ascend910B2", {"dtype": DType.FP8_E4M3}, "DTYPE_NEEDS_ARCH_3510"),
        ("Ascend910B2", {"dtype": DType.MXFP4_E2M1}, "DTYPE_NEEDS_ARCH_3510"),
        ("Ascend310P3", {"dtype": DType.HIF8}, "DTYPE_NEEDS_ARCH_3510"),
        ("Ascend950PR", {"dtype": DType.INT4}, "INT4_REMOVED_ON_3510"),
        ("Ascend950PR", {"sparsity": "4:2"}, "SPARSITY_REMOVED_ON_3510"),
        ("Ascend910B2", {"sparsity": "4:2"}, "sparsity_not_modeled"),
        ("Ascend910B2", {"format_a": "DN"}, "DN_NEEDS_ARCH_3510"),
    ],
)
def test_refusals_name_their_rule(soc: str, args: dict[str, Any], rule: str) -> None:
    problem = Problem(soc=soc, m=128, n=128, k=128, **args)
    with pytest.raises(UnsupportedError) as info:
        check_supported(problem, load_preset(soc))
    assert info.value.rule == rule


def test_new_dtypes_and_dn_are_accepted_on_950() -> None:
    for args in (
        {"dtype": DType.HIF8},
        {"dtype": DType.FP8_E5M2, "dtype_b": DType.FP8_E4M3},
        {"dtype": DType.MXFP8_E5M2},
        {"format_a": "DN", "format_b": "DN"},
    ):
        check_supported(
            Problem(soc="Ascend950DT", m=64, n=64, k=64, **args), load_preset("Ascend950DT")
        )


# --- space on 950 ----------------------------------------------------------------------------


def test_256x256_fp32_accumulation_fills_l0c_in_one_buffer() -> None:
    # 256 x 256 x 4 B = 256 KiB: one buffer fits 950's L0C exactly, two do not, and 910B2's
    # 128 KiB L0C holds neither.
    assert _check().valid
    (v,) = _check({"dbL0C": 2}).violations
    assert (v.id, v.value, v.limit) == ("L0C_CAPACITY", 2 * 262144, 262144)
    on_910 = _check(soc="Ascend910B2", mutation={"usedCoreNum": 24, "singleCoreM": 2048,
                                                  "singleCoreN": 1376})  # fmt: skip
    assert "L0C_CAPACITY" in on_910.violation_ids


def test_bias_table_holds_1024_fp32_values() -> None:
    # 4 KiB / 4 B = 1024: baseN = 1024 fits, 1040 does not (baseM 16 keeps L0C and L0B legal).
    small = {"baseM": 16, "baseK": 16, "singleCoreN": 1040, "usedCoreNum": 32}
    fits = _check({**small, "baseN": 1024}, n=1040, m=16 * 32 * 16, bias=True)
    assert "BIAS_TABLE_CAPACITY" not in fits.violation_ids
    over = _check({**small, "baseN": 1040}, n=1040, m=16 * 32 * 16, bias=True)
    (v,) = [v for v in over.violations if v.id == "BIAS_TABLE_CAPACITY"]
    assert (v.value, v.limit) == (4160, 4096)


def test_no_65535_limits_on_950() -> None:
    long_k = Problem(soc="Ascend950PR", m=64, n=64, k=100_000)
    assert problem_violations(long_k, load_preset("Ascend950PR")) == []
    on_910 = long_k.model_copy(update={"soc": "Ascend910B2"})
    assert [v.id for v in problem_violations(on_910, load_preset("Ascend910B2"))] == [
        "ND_A_KA_RANGE"
    ]


def test_dn_is_the_nd_layout_of_the_transpose() -> None:
    # A in DN with M = 100000: its rows are M long, like an ND A transposed -- no limit on 950.
    dn = Problem(soc="Ascend950PR", m=100_000, n=64, k=64, format_a="DN")
    view = dn.model_view()
    assert (view.format_a.value, view.trans_a) == ("ND", True)
    assert problem_violations(dn, load_preset("Ascend950PR")) == []


# --- MX --------------------------------------------------------------------------------------


def test_mx_operand_alignment() -> None:
    # MX fp8: 1024 B units. baseM 48 x baseK 32 x 1 B = 1536 B breaks it; 64 x 32 = 2048 B is fine.
    bad = _check({"baseM": 48, "baseK": 32}, dtype=DType.MXFP8_E4M3)
    (v,) = [v for v in bad.violations if v.id == "MX_OPERAND_ALIGN"]
    assert (v.value, v.limit, v.fields) == (1536, 1024, ["baseM", "baseK"])
    assert "MX_OPERAND_ALIGN" not in _check({"baseM": 64, "baseK": 32}, dtype="mxfp8").violation_ids
    # MX fp4: 512 B units, which every fractal-aligned block is (16 x 64 x 0.5 B = 512 B).
    assert _check({"baseM": 48, "baseK": 64}, dtype="mxfp4").valid
    # Plain fp8 (Mmad, no scales) has no such rule.
    assert (
        "MX_OPERAND_ALIGN" not in _check({"baseM": 48, "baseK": 32}, dtype="fp8_e4m3").violation_ids
    )


def test_mx_type_para() -> None:
    problem = Problem(soc="Ascend950PR", m=8192, n=8192, k=8192, dtype=DType.MXFP4_E2M1)
    tiling = complete_tiling(dict(BASE), problem, load_preset("Ascend950PR"))
    assert tiling.mxTypePara == MX_TYPE_PARA_DEFAULT == 16843009  # 0x01010101
    zero = _check({"mxTypePara": 0}, dtype="mxfp4")
    (v,) = zero.violations
    assert (v.id, v.fields) == ("MX_TYPE_PARA", ["mxTypePara"])
    # Scale factor A = 2 (two K windows of A's scales per L1 load) is legal.
    assert _check({"mxTypePara": 0x01010102}, dtype="mxfp4").valid
    (v,) = _check({"mxTypePara": 1}, dtype="bf16").violations
    assert (v.id, v.value, v.limit) == ("MX_TYPE_PARA", 1, 0)


def test_mx_scales_take_l1() -> None:
    # MX fp4 256 x 256 x 256 blocks: 32 KiB of data + 256 x 256 / 32 = 2 KiB of e8m0 scales.
    # Eight A and eight B blocks are 512 KiB of data (L1 exactly) but 544 KiB with scales.
    full = {"baseK": 256, "depthA1": 8, "depthB1": 8, "stepKa": 4, "stepKb": 4}
    (v,) = _check(full, dtype="mxfp4").violations
    assert (v.id, v.value, v.limit) == ("L1_CAPACITY", 16 * 34 * 1024, 512 * 1024)
    assert _check({**full, "depthB1": 4}, dtype="mxfp4").valid  # 12 x 34 KiB = 408 KiB
    # Scale factor A = 2 (mxTypePara bits 0-7): A's blocks carry 4 KiB of scales each.
    two = _check({**full, "depthB1": 4, "mxTypePara": 0x01010102}, dtype="mxfp4")
    problem = Problem(soc="Ascend950PR_9589", m=8192, n=8192, k=8192, dtype=DType.MXFP4_E2M1)
    assert two.valid
    t = complete_tiling({**BASE, **full, "depthB1": 4, "mxTypePara": 0x01010102}, problem,
                        load_preset("Ascend950PR_9589"))  # fmt: skip
    assert t.shareL1Size == 8 * (32 + 4) * 1024 + 4 * 34 * 1024
    # Plain fp8 has no scales: 8 + 8 blocks of 256 x 128 x 1 B = 512 KiB fit exactly.
    assert _check({**full, "baseK": 128}, dtype="fp8_e4m3").valid
