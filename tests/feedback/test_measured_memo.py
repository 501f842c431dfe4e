"""A measured kernel is priced once per process: by its import, its listing and its chart.

The model's figure for a kernel depends on the model version, the problem, the complete tiling
and the chip's values only; :func:`tiler.measured.kernel_estimate` keeps it for the process, so
importing the shared 910B1 file simulates each of its short kernels once, and importing or
listing them again in that process simulates nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import simcore.evaluate
from app.db import feedback_repository as frepo
from app.feedback.csv_import import parse_csv
from app.feedback.measurements import predict_rows, prepare_batch
from simcore.evaluate import MAX_SIMULATED_INSTRUCTIONS, estimate_dict, instruction_count
from simcore.hardware.presets import load_preset
from simcore.tiling.problem import Problem
from simcore.tiling.tcube import TCubeTiling
from tests.app._server import migrated_database
from tiler import measured
from tiler.measured import at_clock, compare, kernel_estimate

SHARED_CSV = (
    Path(__file__).resolve().parents[1] / "data" / "reference" / "measured_msprof_910b1_8192.csv"
)


@pytest.fixture
def simulated(monkeypatch: pytest.MonkeyPatch) -> list[TCubeTiling]:
    """The tilings the simulator runs from now on (the real simulator still runs them)."""
    # An earlier test in this process may have priced the same kernels.
    measured._memo.clear()
    calls: list[TCubeTiling] = []
    real = simcore.evaluate.simulate

    def spy(problem: Problem, tiling: TCubeTiling, preset: Any) -> Any:
        calls.append(tiling)
        return real(problem, tiling, preset)

    monkeypatch.setattr(simcore.evaluate, "simulate", spy)
    return calls


def test_an_import_simulates_each_kernel_once_and_again_never(
    simulated: list[TCubeTiling], tmp_path: Path
) -> None:
    rows, _skipped = parse_csv(SHARED_CSV.read_text(encoding="utf-8-sig"), SHARED_CSV.name)
    items = [(r.measurement, r.source, r.options) for r in rows]
    kind, (stored, first) = prepare_batch(items)
    assert kind == "ok"
    kernels = [(Problem.model_validate_json(row["problem_json"]),
                TCubeTiling.model_validate_json(row["tiling_json"])) for row in stored]  # fmt: skip
    short = [t for p, t in kernels if instruction_count(p, t) <= MAX_SIMULATED_INSTRUCTIONS]
    assert 0 < len(short) < len(kernels), "the file has short kernels and a long one"
    # Each short kernel simulated once (the long one is estimated).
    assert simulated == short
    # The figures are the model's own (a fresh estimate of each row)...
    for (problem, tiling), row, predicted in zip(kernels, stored, first, strict=True):
        fresh = estimate_dict(problem, tiling, load_preset(problem.soc))
        assert predicted == compare(fresh, json.loads(row["measured_json"]))
    simulated.clear()
    # ... the rows stored in a real database are listed with the same figures, none simulated
    # again...
    with migrated_database("sqlite", tmp_path) as db:
        frepo.insert_measurements(db, stored)
        page, _cursor = frepo.list_measurements(
            db, frepo.MeasurementFilter(), before_seq=None, limit=50
        )
    by_id = {row["id"]: predicted for row, predicted in zip(stored, first, strict=True)}
    assert {row.id: p for row, p in zip(page, predict_rows(page), strict=True)} == by_id
    assert simulated == []
    # ... and a second import of the file simulates nothing, with the same predictions.
    simulated.clear()
    again = prepare_batch(items)
    assert again[0] == "ok"
    assert again[1][1] == first
    assert simulated == []


def test_another_clock_is_priced_anew(simulated: list[TCubeTiling]) -> None:
    problem = Problem.model_validate(
        {"soc": "Ascend910B2", "m": 256, "n": 256, "k": 256, "dtype": "fp16"}
    )
    preset = load_preset(problem.soc)
    tiling = TCubeTiling.model_validate(
        {"usedCoreNum": 1, "M": 256, "N": 256, "Ka": 256, "Kb": 256, "singleCoreM": 256,
         "singleCoreN": 256, "singleCoreK": 256, "baseM": 128, "baseN": 128, "baseK": 64,
         "depthA1": 2, "depthB1": 2, "stepM": 1, "stepN": 1, "stepKa": 1, "stepKb": 1}
    )  # fmt: skip
    at_preset = kernel_estimate(problem, tiling, preset)
    at_half = kernel_estimate(problem, tiling, at_clock(preset, preset.clock_mhz / 2))
    assert len(simulated) == 2
    assert at_half["time_us"] > at_preset["time_us"]
    # A caller that changes its copy does not change the next answer.
    at_preset["time_us"] = -1.0
    assert kernel_estimate(problem, tiling, preset)["time_us"] > 0
    assert len(simulated) == 2
