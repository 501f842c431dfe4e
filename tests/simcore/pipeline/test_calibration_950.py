"""The model against the 950PR board (issue 21): measured_msprof_950pr_8192.csv.

The nine kernels of the 910B1 profiler file on a 950PR (Ascend950PR_9589), loaded by
tests/support/board.py, with the arch-3510 sizes of the calibrated mechanisms
(``scripts/fit_950.py``). Figures: ``uv run --frozen python -m benchmarks.fidelity_950``.
Targets the model does not meet are strict xfails naming what is missing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from benchmarks.fidelity import predict, summarize_sim
from simcore.estimate.estimator import estimate_one
from simcore.hardware.presets import load_preset
from simcore.pipeline.simulator import SimResult
from tests.support.board import BoardCase, msprof_cases
from tests.support.shared_sims import SharedSimulations

_CASES = msprof_cases("measured_msprof_950pr_8192.csv")
_NAMES = [c.name for c in _CASES]


@pytest.fixture(scope="module")
def sim(shared_sims: SharedSimulations) -> Callable[[str], SimResult]:
    """The simulation of a case by name, run once per test run (not once per process)."""

    def run(name: str) -> SimResult:
        case = _CASES[_NAMES.index(name)]
        return shared_sims.simulate(case.problem, case.tiling, case.preset)

    return run


@pytest.fixture(scope="module")
def predicted(sim: Callable[[str], SimResult]) -> Callable[[BoardCase, str], dict[str, Any]]:
    """``benchmarks.fidelity.predict`` of a case, the simulator's from the shared simulation."""

    def figures(case: BoardCase, fidelity: str) -> dict[str, Any]:
        if fidelity == "sim":
            return summarize_sim(sim(case.name), case.preset)
        return predict(case, fidelity)

    return figures


@pytest.fixture(scope="module")
def pipes(
    predicted: Callable[[BoardCase, str], dict[str, Any]],
) -> Callable[[str], dict[str, float]]:
    """The simulator's busy time per pipe, averaged over the cores as the profiler does (us)."""

    def busy(name: str) -> dict[str, float]:
        out: dict[str, float] = predicted(_CASES[_NAMES.index(name)], "sim")["pipes"]
        return out

    return busy


def test_the_file_ran_on_the_32_core_950pr_bin() -> None:
    hw = load_preset("Ascend950PR_9589")
    assert all(c.preset == hw for c in _CASES)
    assert (hw.cube_core_count, hw.clock_mhz, hw.npu_arch) == (32, 1650.0, 3510)
    assert [c.tiling.usedCoreNum for c in _CASES] == [1, 1] + [32] * 7


@pytest.mark.parametrize("fidelity", ["sim", "est"])
@pytest.mark.parametrize("case", _CASES, ids=_NAMES)
def test_task_time_within_10_percent(
    case: BoardCase, fidelity: str, predicted: Callable[[BoardCase, str], dict[str, Any]]
) -> None:
    # The profiler's Task Duration is the slowest core plus the device start-up.
    out = predicted(case, fidelity)
    assert out["device_us"] == pytest.approx(case.time_us, rel=0.10)
    assert out["avg_us"] == pytest.approx(case.core_avg_us, rel=0.10)


@pytest.mark.parametrize("case", _CASES, ids=_NAMES)
def test_mte2_busy_within_15_percent(
    case: BoardCase, pipes: Callable[[str], dict[str, float]]
) -> None:
    assert pipes(case.name)["MTE2"] == pytest.approx(case.pipes_us["MTE2"], rel=0.15)


@pytest.mark.parametrize("case", _CASES, ids=_NAMES)
def test_mac_busy_within_15_percent(
    case: BoardCase, pipes: Callable[[str], dict[str, float]]
) -> None:
    # Case 0 (64 x 64 x 64 blocks) holds the MMAD restart: ~2.4x the cube's work on the board.
    assert pipes(case.name)["M"] == pytest.approx(case.pipes_us["M"], rel=0.15)


def test_same_address_reads_make_the_4_x_8_split_slower_than_2_x_16(
    sim: Callable[[str], SimResult], pipes: Callable[[str], dict[str, float]]
) -> None:
    # Case 3 (A's rows read by 8 cores at once, B's by 4) measures 1.2 % more MTE2 than case 2
    # (16 and 2): on 950 the serialization saturates at 7 sharers, so B's 4 readers cost more
    # than A's 16 save.
    assert pipes("case3")["MTE2"] > pipes("case2")["MTE2"]
    assert sim("case3").device_time_us > sim("case2").device_time_us


def test_pairs_more_than_1_percent_apart_rank_as_measured(
    sim: Callable[[str], SimResult],
) -> None:
    model = {c.name: sim(c.name).device_time_us for c in _CASES}
    for a in _CASES:
        for b in _CASES:
            if a.time_us > 1.01 * b.time_us:
                assert model[a.name] > model[b.name], (a.name, b.name)


def test_all_nine_rank_in_measured_order(sim: Callable[[str], SimResult]) -> None:
    # Cases 5, 6 and 7 are measured within 0.1 % of each other (2591.4 / 2589.9 / 2589.1 us),
    # all MAC-bound; since model 2026.11.28.2 (the refetch term and the serial start-up) the
    # model orders them as measured, by hundredths of a microsecond (2,588.11 / 2,588.06 /
    # 2,586.80 us), a strict xfail before.
    model = {c.name: sim(c.name).device_time_us for c in _CASES}
    measured = {c.name: c.time_us for c in _CASES}
    assert sorted(_NAMES, key=model.__getitem__) == sorted(_NAMES, key=measured.__getitem__)


@pytest.mark.parametrize("case", _CASES[1:], ids=_NAMES[1:])
def test_estimator_follows_the_simulator_on_the_950_kernels(
    case: BoardCase, sim: Callable[[str], SimResult]
) -> None:
    est = estimate_one(case.problem, case.tiling, case.preset)
    assert est["device_time_us"] == pytest.approx(sim(case.name).device_time_us, rel=0.01)
