"""The closed-form estimator against the reference simulator on random legal tilings."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.estimator import ESTIMATOR_FIELDS, PIPE_NAMES, estimate_arrays, estimate_one
from simcore.footprints import complete_tiling
from simcore.hardware import load_preset
from simcore.problem import Problem
from simcore.random_tilings import random_tiling
from simcore.simulator import simulate
from simcore.ub_path import ub_plan

_SHAPES = ((128, 1024, 1024), (512, 1024, 3000), (333, 777, 1999), (1024, 1024, 1024))
_SOCS = ("Ascend910B2", "Ascend910B4", "Ascend310P3", "Ascend310B1")
#: 310P3, 1024^3 fp16: 2 x transLength (A chunks of 128 x 512) exceeds the 256 KiB UB.
COLUMN_PATH_SPEC = {
    "usedCoreNum": 8, "singleCoreM": 256, "singleCoreN": 512, "baseM": 128, "baseN": 128,
    "baseK": 64, "depthA1": 16, "depthB1": 8, "stepM": 1, "stepN": 1, "stepKa": 8, "stepKb": 4,
}  # fmt: skip


def _cases(n: int, seed: int) -> list[tuple[Problem, object, object]]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        soc = _SOCS[i % len(_SOCS)]
        preset = load_preset(soc)
        m, nn, k = _SHAPES[int(rng.integers(len(_SHAPES)))]
        dtype = str(rng.choice(["fp16", "int8"]))
        problem = Problem(soc=soc, m=m, n=nn, k=k, dtype=dtype, bias=bool(rng.random() < 0.2))
        out.append((problem, random_tiling(problem, preset, rng), preset))
    return out


@pytest.fixture(scope="module")
def pairs() -> list[tuple[dict[str, float], object]]:
    return [
        (estimate_one(p, t, pre), simulate(p, t, pre))  # type: ignore[arg-type]
        for p, t, pre in _cases(60, seed=11)
    ]


def test_busy_totals_match_the_simulator(pairs: list[tuple[dict[str, float], object]]) -> None:
    for est, sim in pairs:
        for pipe in PIPE_NAMES:
            assert est[f"busy_{pipe}"] == pytest.approx(sim.busy_cycles[pipe], rel=1e-9, abs=1e-6)  # type: ignore[attr-defined]
        assert est["resource_cycles"] == pytest.approx(sim.resource_cycles, rel=1e-9)  # type: ignore[attr-defined]
        assert est["sequential_cycles"] == pytest.approx(sim.sequential_cycles, rel=1e-9)  # type: ignore[attr-defined]


def test_makespan_between_bounds(pairs: list[tuple[dict[str, float], object]]) -> None:
    for est, _ in pairs:
        assert est["resource_cycles"] * (1 - 1e-12) <= est["cycles"]
        assert est["cycles"] <= est["sequential_cycles"] * (1 + 1e-12)


def _errors(pairs: list[tuple[dict[str, float], object]], ub_path: bool) -> list[float]:
    return [
        abs(est["time_us"] / sim.time_us - 1)  # type: ignore[attr-defined]
        for est, sim in pairs
        if (sim.slowest.busy_cycles["V"] > 0) == ub_path  # type: ignore[attr-defined]
    ]


def test_agreement_without_vector_stages(pairs: list[tuple[dict[str, float], object]]) -> None:
    # Regression guard at the level reached (910B class, and 310B1 tilings on the column-DMA path,
    # over these 36 draws: median 0.4 %, p95 7.2 %); benchmarks/agreement.py reports the full
    # figures on 1,000 draws.
    errs = _errors(pairs, ub_path=False)
    assert len(errs) >= 20
    assert np.median(errs) <= 0.01
    assert np.percentile(errs, 95) <= 0.08


def test_agreement_with_vector_stages(pairs: list[tuple[dict[str, float], object]]) -> None:
    # 310P / 310B with V work (reorders, or the L0C->UB moves of the column path): median 1.7 %,
    # p95 9.9 % over these 24 draws.
    errs = _errors(pairs, ub_path=True)
    assert len(errs) >= 20
    assert np.median(errs) <= 0.02
    assert np.percentile(errs, 95) <= 0.11


def test_estimator_never_far_from_the_simulator(
    pairs: list[tuple[dict[str, float], object]],
) -> None:
    # The search trusts the estimate for ranking: no draw may be off by more than a fifth
    # (worst over these draws 19 %).
    worst = max(_errors(pairs, ub_path=False) + _errors(pairs, ub_path=True))
    assert worst <= 0.20


def test_column_path_busy_totals_match_the_simulator() -> None:
    """A 310P3 tiling without room for the vector reorders: both models price the DMA path."""
    preset = load_preset("Ascend310P3")
    problem = Problem(soc="Ascend310P3", m=1024, n=1024, k=1024)
    tiling = complete_tiling(COLUMN_PATH_SPEC, problem, preset)
    assert not ub_plan(problem, tiling, preset).vector_path
    est = estimate_one(problem, tiling, preset)
    sim = simulate(problem, tiling, preset)
    for pipe in PIPE_NAMES:
        assert est[f"busy_{pipe}"] == pytest.approx(sim.busy_cycles[pipe], rel=1e-9)
    assert est["time_us"] == pytest.approx(sim.time_us, rel=0.03)


def test_arrays_mixing_both_ub_paths_match_one_by_one() -> None:
    """One call scoring tilings on the vector path and on the column path prices each right."""
    preset = load_preset("Ascend310P3")
    problem = Problem(soc="Ascend310P3", m=1024, n=1024, k=1024)
    column = complete_tiling(COLUMN_PATH_SPEC, problem, preset)
    vector = complete_tiling(
        {**COLUMN_PATH_SPEC, "stepKa": 2, "stepKb": 2, "depthA1": 4, "depthB1": 4}, problem, preset
    )
    assert ub_plan(problem, vector, preset).vector_path
    tilings = [column, vector, column]
    fields = {name: np.array([getattr(t, name) for t in tilings]) for name in ESTIMATOR_FIELDS}
    arr = estimate_arrays(problem, preset, fields)
    for i, t in enumerate(tilings):
        one = estimate_one(problem, t, preset)
        assert arr["time_us"][i] == pytest.approx(one["time_us"], rel=1e-12)
        assert arr["busy_V"][i] == pytest.approx(one["busy_V"], rel=1e-12)
    # The column path has no vector reorder: far less V work than the vector path.
    assert arr["busy_V"][0] < arr["busy_V"][1] / 10


def test_arrays_match_one_by_one() -> None:
    cases = _cases(8, seed=3)
    problem, _, preset = cases[0]
    rng = np.random.default_rng(5)
    tilings = [random_tiling(problem, preset, rng) for _ in range(16)]  # type: ignore[arg-type]
    fields = {name: np.array([getattr(t, name) for t in tilings]) for name in ESTIMATOR_FIELDS}
    arr = estimate_arrays(problem, preset, fields)  # type: ignore[arg-type]
    for i, t in enumerate(tilings):
        one = estimate_one(problem, t, preset)  # type: ignore[arg-type]
        assert arr["time_us"][i] == pytest.approx(one["time_us"], rel=1e-12)
