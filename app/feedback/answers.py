"""Measured answers win: the fastest measured kernel of an exact problem as the tune answer.

Once a board measured kernels of an exact problem (same canonical problem, so the same chip and
every problem option), ``tilings:tune`` and ``GET /v1/tilings/{id}`` answer with the fastest of
them that meets the request's pins, marked ``"source": "measured"``, with the measurement and the
model's own answer beside it. ``"source": "model"`` in the request gives the model's answer.
The model's answer stays what is cached: the measured one is looked up on every request, so a new
measurement changes the next answer and never a stored one.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

import anyio.to_thread

from app.db import feedback_repository as frepo
from app.db.engine import Database
from app.feedback.measurements import measurement_doc
from app.schemas import AnswerMeasurement, ModelAnswer, TuneResponse
from simcore.hardware.presets import HardwarePreset, load_preset
from simcore.tiling.problem import Problem
from simcore.tiling.tcube import TCubeTiling
from tiler.measured import at_clock, compare, kernel_estimate, problem_key

#: What a request may ask for: the measured answer when there is one (the default), or the
#: model's.
SourceChoice = Literal["measured", "model"]

R = TypeVar("R", bound=TuneResponse)


def fastest_measured(
    db: Database, problem: Problem, fixed: dict[str, int]
) -> frepo.MeasurementRow | None:
    """The fastest measured kernel of the exact problem that meets the pins, or None."""
    for row in frepo.measurements_of_problem(db, problem_key(problem)):
        if all(row.tiling.get(f) == v for f, v in fixed.items()):
            return row
    return None


def measured_estimate(
    row: frepo.MeasurementRow, preset: HardwarePreset | None = None
) -> dict[str, Any]:
    """The model's estimate of a measured kernel at its clock (in a pool worker).

    ``preset`` is the request's calibration profile (None: the packaged preset).
    """
    problem = Problem.model_validate(row.problem)
    chip = at_clock(preset or load_preset(problem.soc), row.device["clock_mhz"])
    return kernel_estimate(problem, TCubeTiling.model_validate(row.tiling), chip)


def as_measured(answer: R, row: frepo.MeasurementRow, estimate: dict[str, Any]) -> R:
    """The model's answer turned into the measured one (the model's tiling kept beside it)."""
    return answer.model_copy(
        update={
            "source": "measured",
            "tiling": TCubeTiling.model_validate(row.tiling),
            "estimate": answer.estimate.model_validate(estimate),
            "measurement": AnswerMeasurement.model_validate(
                measurement_doc(row, compare(estimate, row.measured))
            ),
            "model_answer": ModelAnswer(tiling=answer.tiling, estimate=answer.estimate),
        }
    )


async def resolve(
    service: Any,
    answer: R,
    problem: Problem,
    fixed: dict[str, int],
    source: SourceChoice | None,
    preset: HardwarePreset | None = None,
) -> R:
    """The answer to send: the measured one, or the model's (``source`` says which).

    Measured when a kernel of the exact problem was measured and the caller did not ask for the
    model's answer.

    Args:
        service: The tuning service (its database and pool).
        answer: The model's answer.
        problem: The exact problem.
        fixed: The request's pins (a measured kernel must meet them).
        source: The caller's choice (None: measured when there is one).
        preset: The request's calibration profile (the measured kernel's estimate uses it).
    """
    if source != "model":
        row = await anyio.to_thread.run_sync(fastest_measured, service.db, problem, fixed)
        if row is not None:
            estimate = await service.pool.call(measured_estimate, row, preset)
            return as_measured(answer, row, estimate)
    return answer.model_copy(update={"source": "model"})
