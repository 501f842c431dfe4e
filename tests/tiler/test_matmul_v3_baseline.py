"""aclnn MatMulV3's dealt kernel as a baseline: built where its sources say aclnn runs it."""

from __future__ import annotations

import pytest

from simcore.hardware.presets import load_preset
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.legality import check_tiling
from simcore.tiling.problem import Problem
from tiler.baselines import matmul_v3_fields


@pytest.mark.parametrize("soc", ["Ascend910B2", "Ascend910B4", "Ascend910B1"])
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_on_the_910b_family_it_is_a_legal_dealt_split_on_every_core(soc: str, dtype: str) -> None:
    preset = load_preset(soc)
    problem = Problem(soc=soc, m=4096, n=4096, k=4096, dtype=dtype)
    fields = matmul_v3_fields(problem, preset)
    assert fields is not None
    assert fields["usedCoreNum"] == preset.cube_core_count
    assert (fields["singleCoreM"], fields["singleCoreN"], fields["baseK"]) == (128, 256, 64)
    report = check_tiling(problem, complete_tiling(fields, problem, preset), preset)
    assert report.valid, report.violation_ids
    assert "DEALT_SPLIT" in report.warning_ids


@pytest.mark.parametrize(
    "problem",
    [
        Problem(soc="Ascend910A", m=4096, n=4096, k=4096),
        Problem(soc="Ascend950PR", m=4096, n=4096, k=4096),
        Problem(m=4096, n=4096, k=4096, dtype="fp32"),
        Problem(m=4096, n=4096, k=4096, dtype="int8", out_dtype="int32"),
        Problem(m=4096, n=4096, k=4096, trans_a=True),
        Problem(m=4096, n=4096, k=4096, bias=True),
        Problem(m=512, n=1024, k=4096),  # 4 x 4 tiles on 24 cores: not dealt
        Problem(m=64, n=65536, k=4096),  # M below one base block
        Problem(m=4096, n=4096, k=256),  # K below one K step of A (8 x 64)
    ],
    ids=["910A", "950PR", "fp32", "int8", "trans_a", "bias", "few_tiles", "thin_m", "short_k"],
)
def test_outside_its_sources_there_is_none(problem: Problem) -> None:
    assert matmul_v3_fields(problem, load_preset(problem.soc)) is None
