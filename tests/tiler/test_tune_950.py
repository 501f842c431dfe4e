"""Tuning on Ascend 950: fp8 and MX answers are legal and certified, CANN's pick is a baseline,
and the dtype comparison says what each dtype gains."""

from __future__ import annotations

from typing import Any

import pytest

from simcore.errors import InputError
from simcore.hardware.presets import load_preset
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.legality import check_tiling
from simcore.tiling.problem import Problem
from tiler.baselines import cann950_fields
from tiler.compare import compare_dtypes, parse_dtype_list
from tiler.tune import parse_tune_request, tune

SHAPE = {"soc": "Ascend950PR_9589", "m": 2048, "n": 2048, "k": 2048}


def _tune(**problem: Any) -> dict[str, Any]:
    return tune(parse_tune_request({"problem": {**SHAPE, **problem}, "budget": 0}))


def _legal(answer: dict[str, Any], **problem: Any) -> bool:
    p = Problem(**{**SHAPE, **problem})
    preset = load_preset(p.soc)
    tiling = complete_tiling(answer["tiling"], p, preset)
    return check_tiling(p, tiling, preset).valid


@pytest.mark.parametrize("dtype", ["fp8_e4m3", "mxfp4", "mxfp8_e5m2"])
def test_fp8_and_mx_tunes_are_legal_and_certified(dtype: str) -> None:
    answer = _tune(dtype=dtype)
    assert _legal(answer, dtype=dtype)
    assert answer["certificate"]["exact"] is True
    names = [b["name"] for b in answer["baselines"]]
    assert names[:2] == ["seed002", "cann950"]
    cann = answer["baselines"][1]
    assert cann["valid"] and cann["speedup"] >= 1.0  # never slower than CANN's pick
    t = answer["tiling"]
    if dtype.startswith("mx"):
        assert t["mxTypePara"] == 0x01010101
        align = 512 if dtype == "mxfp4" else 1024
        elem = 0.5 if dtype == "mxfp4" else 1.0
        assert t["baseM"] * t["baseK"] * elem % align == 0
        assert t["baseN"] * t["baseK"] * elem % align == 0
    else:
        assert t["mxTypePara"] == 0


def test_cann950_pick_is_the_measured_best_kernel() -> None:
    # 8192^3 fp16 on 950PR: 256 x 256 x 64 (128 B of fp16 K), one L0C buffer, and L1 steps of 4
    # double-buffered (2 x 4 x (32 + 32) KiB = 512 KiB): case 7 of measured_msprof_950pr_8192.csv.
    p = Problem(soc="Ascend950PR_9589", m=8192, n=8192, k=8192, trans_b=True)
    f = cann950_fields(p, load_preset(p.soc))
    assert {k: f[k] for k in ("baseM", "baseN", "baseK", "dbL0C")} == {
        "baseM": 256, "baseN": 256, "baseK": 64, "dbL0C": 1,
    }  # fmt: skip
    assert (f["depthA1"], f["depthB1"], f["stepKa"], f["stepKb"]) == (8, 8, 4, 4)
    # Every 4 x 8 / 8 x 4 split computes 2048 x 1024 per core, the most per loaded byte of the
    # factor pairs of 32 (2048 * 1024 / 3072 = 683 against 455 for 4096 x 512).
    assert (f["usedCoreNum"], f["singleCoreM"], f["singleCoreN"]) == (32, 2048, 1024)
    # 3000 x 5000: 4 x 8 gives 752 x 640 per core (346 against 264 for 2 x 16, 295 for 8 x 4).
    odd = Problem(soc="Ascend950PR_9589", m=3000, n=5000, k=7000)
    g = cann950_fields(odd, load_preset(odd.soc))
    assert (g["usedCoreNum"], g["singleCoreM"], g["singleCoreN"]) == (32, 752, 640)
    # fp8: 128 bytes of K are 128 elements; MX fp4: 256.
    assert (
        cann950_fields(p.model_copy(update={"dtype": "fp8_e4m3"}), load_preset(p.soc))["baseK"]
        == 128
    )


def test_no_cann950_baseline_off_950() -> None:
    answer = tune(parse_tune_request({"problem": {**SHAPE, "soc": "Ascend910B2"}, "budget": 0}))
    # A 910B shape as large as this one also lists aclnn MatMulV3's dealt kernel; never cann950.
    assert [b["name"] for b in answer["baselines"]] == ["seed002", "aclnn_matmul_v3"]


def test_compare_dtypes_on_a_compute_bound_shape() -> None:
    req = parse_tune_request({"problem": {**SHAPE, "m": 4096, "n": 4096, "k": 4096}, "budget": 0})
    out = compare_dtypes(req, ["bf16", "fp8_e4m3", "mxfp4"])
    rows = {r["dtype"]: r for r in out["rows"]}
    assert list(rows) == ["bf16", "fp8_e4m3", "mxfp4_e2m1"]
    assert rows["bf16"]["speedup_vs_reference"] == 1.0
    # The cube runs fp8 at twice and fp4 at four times the bf16 rate (16x32x16, 16x64x16): a
    # compute-bound shape gains most of that, never more.
    assert 1.5 < rows["fp8_e4m3"]["speedup_vs_reference"] <= 2.0
    assert 2.5 < rows["mxfp4_e2m1"]["speedup_vs_reference"] <= 4.0
    for row in rows.values():
        assert row["gain_vs_cann"] >= 1.0
        assert row["out_dtype"] == "bf16"


def test_compare_dtypes_names_the_dtype_a_chip_cannot_run() -> None:
    req = parse_tune_request({"problem": {**SHAPE, "soc": "Ascend910B2"}, "budget": 0})
    with pytest.raises(InputError) as info:
        compare_dtypes(req, ["fp16", "fp8_e4m3"])
    assert (info.value.field, info.value.rule) == ("compare_dtypes[1]", "DTYPE_NEEDS_ARCH_3510")
    with pytest.raises(InputError) as bad:
        parse_dtype_list("bf16,fp7")
    assert bad.value.field == "compare_dtypes[1]"
