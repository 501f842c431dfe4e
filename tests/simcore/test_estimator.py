"""The closed-form estimator against the reference simulator on random legal tilings."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.estimator import ESTIMATOR_FIELDS, PIPE_NAMES, estimate_arrays, estimate_one
from simcore.hardware import load_preset
from simcore.problem import Problem
from simcore.random_tilings import random_tiling
from simcore.simulator import simulate

_SHAPES = ((128, 1024, 1024), (512, 1024, 3000), (333, 777, 1999), (1024, 1024, 1024))
_SOCS = ("Ascend910B2", "Ascend910B4", "Ascend310P3", "Ascend310B1")


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


def test_agreement_on_fixpipe_chips(pairs: list[tuple[dict[str, float], object]]) -> None:
    # Regression guard at the level reached (910B-class over these 30 draws: median 0.6 %, p95
    # 11 %); benchmarks/agreement.py reports the full figures on 1,000 draws.
    errs = _errors(pairs, ub_path=False)
    assert len(errs) >= 20
    assert np.median(errs) <= 0.01
    assert np.percentile(errs, 95) <= 0.13


def test_agreement_on_ub_path_chips(pairs: list[tuple[dict[str, float], object]]) -> None:
    # 310P / 310B with the UB staging (median 4 %, p95 16 % over these draws).
    errs = _errors(pairs, ub_path=True)
    assert len(errs) >= 20
    assert np.median(errs) <= 0.05
    assert np.percentile(errs, 95) <= 0.18


def test_estimator_never_far_from_the_simulator(
    pairs: list[tuple[dict[str, float], object]],
) -> None:
    # The search trusts the estimate for ranking: no draw may be off by more than a quarter.
    worst = max(_errors(pairs, ub_path=False) + _errors(pairs, ub_path=True))
    assert worst <= 0.25


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
