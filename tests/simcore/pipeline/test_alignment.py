"""The GM row alignment of on-the-fly ND->NZ copies (simcore.pipeline.alignment), by hand."""

from __future__ import annotations

import pytest

from simcore.estimate.estimator import estimate_one
from simcore.hardware.presets import custom_preset, load_preset
from simcore.pipeline.alignment import stride_row_factor
from simcore.pipeline.costs import Costs
from simcore.pipeline.simulator import simulate
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import Problem

B1 = load_preset("Ascend910B1")


def test_row_factor_of_each_alignment_class() -> None:
    # catlass' A2 multipliers (ascend-notes.md §3.3) relative to a 512 B-aligned stride.
    assert stride_row_factor(B1, 16384) == 1.0  # K = 8192 fp16, the measured kernels
    assert stride_row_factor(B1, 8448) == 1.25  # 256 B aligned (16.5 x 512)
    assert stride_row_factor(B1, 8320) == 2.0  # 128 B aligned
    assert stride_row_factor(B1, 8224) == 2.5  # 32 B aligned
    assert stride_row_factor(B1, 8200) == pytest.approx(10 / 3, abs=1e-3)  # 8 B: unaligned
    assert stride_row_factor(B1, 0.5) == pytest.approx(10 / 3, abs=1e-3)  # half-byte rows
    # Chips without on-the-fly ND->NZ have no table; a preset without it keeps every pitch at 1.
    assert stride_row_factor(load_preset("Ascend310P3"), 8200) == 1.0
    neutral = custom_preset({"base": "Ascend910B1", "nd2nz_stride_row_factors": {}})
    assert stride_row_factor(neutral, 8200) == 1.0


def test_unaligned_rows_stretch_the_row_requests_not_the_stream() -> None:
    # A is 2048 x 4104 fp16: rows of 8208 B, 16 B past a 32 B multiple.
    c = Costs(Problem(soc="Ascend910B1", m=2048, n=2048, k=4104, trans_b=True), B1)
    lat, row = B1.nd2nz_latency_cycles, B1.nd2nz_row_cycles
    factor = B1.nd2nz_stride_row_factors[1]
    assert (c.a_row_factor, c.b_row_factor) == (factor, factor)
    # 128 rows of 64 elements (a Norm block): 128 requests of 3.385 x 3.333 cycles.
    assert c.direct_load_cycles(True, 128, 64, 1e9) == pytest.approx(lat + 128 * row * factor)
    # 128 rows of 512 at an 80 B/cycle share: 1,444 cycles of requests under 1,638 of bytes.
    assert c.direct_load_cycles(True, 128, 512, 80.0) == pytest.approx(lat + 128 * 1024 / 80)
    # B (N x K, transposed) has the same pitch; not transposed its rows are N = 2048 long.
    plain_b = Costs(Problem(soc="Ascend910B1", m=2048, n=2048, k=4104), B1)
    assert (plain_b.a_row_factor, plain_b.b_row_factor) == (factor, 1.0)


def test_ub_path_chips_have_no_row_factor() -> None:
    c = Costs(Problem(soc="Ascend310P3", m=1024, n=1024, k=1000), load_preset("Ascend310P3"))
    assert (c.a_row_factor, c.b_row_factor) == (1.0, 1.0)


def _kernel(k: int, template: str) -> tuple[Problem, object]:
    p = Problem(soc="Ascend910B1", m=1024, n=1024, k=k, trans_b=True, template=template)
    spec = {
        "usedCoreNum": 16, "singleCoreM": 256, "singleCoreN": 256, "baseM": 128, "baseN": 256,
        "baseK": 64, "depthA1": 8, "depthB1": 8, "stepM": 1, "stepN": 1, "stepKa": 4,
        "stepKb": 4,
    }  # fmt: skip
    return p, complete_tiling(spec, p, B1)


def test_an_unaligned_stride_slows_norm_more_than_mdl_in_both_fidelities() -> None:
    per_flop = {}
    for template in ("norm", "mdl"):
        for k in (4096, 4104):
            p, t = _kernel(k, template)
            sim = simulate(p, t, B1).device_time_us
            assert estimate_one(p, t, B1)["device_time_us"] == pytest.approx(sim, rel=0.03)
            per_flop[(template, k)] = sim / p.flops
    norm = per_flop[("norm", 4104)] / per_flop[("norm", 4096)]
    mdl = per_flop[("mdl", 4104)] / per_flop[("mdl", 4096)]
    # Norm's 128 B rows are row-bound (the factor lands in full); MDL's 512 B rows are
    # bandwidth-bound at the aligned stride and only partly row-bound unaligned.
    assert norm > 2.0
    assert 1.0 < mdl < norm


def test_a_copy_of_whole_rows_pays_no_alignment() -> None:
    # A transposed (K x M) with M = 16: rows of 32 B, one after the other in GM. A chunk of all
    # 16 columns is one contiguous span (catlass' dValue == srcDValue case): factor 1.
    lat, row = B1.nd2nz_latency_cycles, B1.nd2nz_row_cycles
    whole = Costs(Problem(soc="Ascend910B1", m=16, n=4096, k=4096, trans_a=True), B1)
    assert whole.a_row_factor == 2.5
    assert whole.direct_load_cycles(True, 16, 64, 1e9) == pytest.approx(lat + 64 * row)
    # M = 32 read 16 columns at a time: 64 rows of 32 B at a 64 B pitch, each request aligned
    # to 32 B only.
    part = Costs(Problem(soc="Ascend910B1", m=32, n=4096, k=4096, trans_a=True), B1)
    assert part.direct_load_cycles(True, 16, 64, 1e9) == pytest.approx(lat + 64 * row * 2.5)
    # Under Norm a chunk split into base blocks along the contiguous dimension is not whole.
    assert part.direct_load_cycles(True, 32, 64, 1e9, (2, 1)) == pytest.approx(
        2 * lat + 2 * 64 * row * 2.5
    )
