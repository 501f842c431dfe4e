"""The explanation names the estimator's binding term and its mechanism."""

from __future__ import annotations

from simcore.estimate.binding import BINDING_NAMES, MECHANISMS
from simcore.evaluate import estimate_dict
from simcore.hardware.presets import load_preset
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import Problem
from tiler.explain import explain_tiling

SPEC = {
    "usedCoreNum": 24, "singleCoreM": 512, "singleCoreN": 1200, "baseM": 128, "baseN": 128,
    "baseK": 64, "depthA1": 8, "depthB1": 8, "stepM": 1, "stepN": 1, "stepKa": 4, "stepKb": 4,
}  # fmt: skip


def test_explanation_names_the_binding_term() -> None:
    problem = Problem(soc="Ascend910B2", m=4096, n=3584, k=4096)
    preset = load_preset(problem.soc)
    tiling = complete_tiling(SPEC, problem, preset)
    estimate = estimate_dict(problem, tiling, preset, simulate_if_cheap=False)
    name = estimate["binding_term"]
    assert name in BINDING_NAMES
    binding = explain_tiling(problem, tiling, preset, estimate)["binding_term"]
    assert binding["name"] == name
    assert binding["mechanism"] == MECHANISMS[name]
    assert name in binding["sentence"] and MECHANISMS[name] in binding["sentence"]


def test_explanation_without_a_binding_term() -> None:
    problem = Problem(soc="Ascend910B2", m=4096, n=3584, k=4096)
    preset = load_preset(problem.soc)
    tiling = complete_tiling(SPEC, problem, preset)
    estimate = {"time_us": 1.0}
    assert explain_tiling(problem, tiling, preset, estimate)["binding_term"] is None


def test_explanation_carries_the_problems_caveats() -> None:
    problem = Problem(soc="Ascend910B2", m=4096, n=16384, k=16384)
    preset = load_preset(problem.soc)
    tiling = complete_tiling({**SPEC, "singleCoreM": 1024, "singleCoreN": 2736}, problem, preset)
    estimate = estimate_dict(problem, tiling, preset, simulate_if_cheap=False)
    caveats = explain_tiling(problem, tiling, preset, estimate)["caveats"]
    assert caveats[0]["id"] == "meta_conflict_stride"
    assert "16384" in caveats[0]["message"] and "select_kernel_b16.h" in caveats[0]["source"]
    plain = Problem(soc="Ascend910B2", m=4096, n=3584, k=4096)
    tiling = complete_tiling(SPEC, plain, preset)
    estimate = estimate_dict(plain, tiling, preset, simulate_if_cheap=False)
    ids = [c["id"] for c in explain_tiling(plain, tiling, preset, estimate)["caveats"]]
    assert "meta_conflict_stride" not in ids and "serial_startup" not in ids
