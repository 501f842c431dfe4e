"""Golden values: the simulator's and the estimator's predictions pinned for a dozen cases.

The cases (tests/simcore/golden/cases.json) cover 910B2, 910B4, 310P3, 910A and 310B1; fp16,
bf16, fp32 and int8; ND and NZ inputs; transposes; bias; tail blocks; and the UB path of chips
without FixPipe or on-the-fly ND->NZ. Each pins the kernel time, the bottleneck pipe and the busy
cycles of every pipe. A model change that moves any of them fails here on purpose: bump
MODEL_VERSION (simcore/version.py), regenerate with

    uv run python -m scripts.regen_golden

and review the diff of cases.json.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from simcore.estimate.estimator import PIPE_NAMES, estimate_one
from simcore.hardware.presets import load_preset
from simcore.pipeline.simulator import simulate
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.legality import check_tiling
from simcore.tiling.problem import parse_problem
from simcore.version import MODEL_VERSION

GOLDEN = json.loads((Path(__file__).parent / "golden" / "cases.json").read_text())
CASES: list[dict[str, Any]] = GOLDEN["cases"]
REL = 1e-9


def test_golden_file_matches_the_model_version() -> None:
    assert GOLDEN["model_version"] == MODEL_VERSION, (
        "the golden values were produced by another model version: "
        "run `uv run python -m scripts.regen_golden` and review the diff"
    )


def test_golden_cases_cover_the_chip_families() -> None:
    socs = {c["problem"]["soc"] for c in CASES}
    assert len(CASES) >= 12
    assert {"Ascend910B2", "Ascend310P3", "Ascend910A", "Ascend310B1"} <= socs


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_simulator_matches_golden(case: dict[str, Any]) -> None:
    problem = parse_problem(case["problem"])
    preset = load_preset(problem.soc)
    tiling = complete_tiling(case["tiling"], problem, preset)
    assert check_tiling(problem, tiling, preset).valid
    sim = simulate(problem, tiling, preset)
    want = case["simulator"]
    assert sim.time_us == pytest.approx(want["time_us"], rel=REL)
    assert max(sim.busy_cycles, key=lambda p: sim.busy_cycles[p]) == want["bottleneck"]
    for pipe in PIPE_NAMES:
        assert sim.busy_cycles[pipe] == pytest.approx(want["busy_cycles"][pipe], rel=REL, abs=1e-6)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_estimator_matches_golden(case: dict[str, Any]) -> None:
    problem = parse_problem(case["problem"])
    preset = load_preset(problem.soc)
    est = estimate_one(problem, complete_tiling(case["tiling"], problem, preset), preset)
    want = case["estimator"]
    busy = {p: est[f"busy_{p}"] for p in PIPE_NAMES}
    assert est["time_us"] == pytest.approx(want["time_us"], rel=REL)
    assert max(busy, key=lambda p: busy[p]) == want["bottleneck"]
    for pipe in PIPE_NAMES:
        assert busy[pipe] == pytest.approx(want["busy_cycles"][pipe], rel=REL, abs=1e-6)
