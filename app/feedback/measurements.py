"""A measurement as a request gives it, its checks against the model, and its stored row.

:func:`prepare_batch` runs in the search pool: it completes each tiling, checks it (an illegal
one stops the whole batch, so that nothing of it is stored), predicts it with the current model
and builds the rows. The route then stores every row in one transaction.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.db.feedback_repository import MeasurementRow, new_id
from app.schemas import ProblemIn, TilingIn
from simcore.errors import InputError
from simcore.hardware.presets import load_preset
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import Problem, check_supported
from tiler.measured import (
    at_clock,
    compare,
    kernel_estimate,
    kernel_key,
    prediction,
    problem_key,
    rank_us,
)

_US = Field(default=None, gt=0, le=1e12, description="Microseconds.")


class PipeBusyIn(BaseModel):
    """Busy time of each pipe in microseconds, as the profiler reports them (MAC is ``M``)."""

    model_config = ConfigDict(extra="forbid")

    MTE2: float | None = Field(default=None, ge=0, le=1e12)
    MTE1: float | None = Field(default=None, ge=0, le=1e12)
    M: float | None = Field(default=None, ge=0, le=1e12)
    FIX: float | None = Field(default=None, ge=0, le=1e12)
    SCALAR: float | None = Field(default=None, ge=0, le=1e12)


class MeasuredIn(BaseModel):
    """What the board measured: the device time or the end-to-end time (at least one)."""

    model_config = ConfigDict(extra="forbid")

    device_time_us: float | None = Field(
        default=None, gt=0, le=1e12, description="Profiler Task Duration (slowest core)."
    )
    time_us: float | None = Field(
        default=None, gt=0, le=1e12, description="End to end, with the host's launch."
    )
    core_time_avg_us: float | None = Field(
        default=None, gt=0, le=1e12, description="Profiler aicore_time (average over cores)."
    )
    pipe_busy_us: PipeBusyIn | None = None

    @model_validator(mode="after")
    def _one_time(self) -> MeasuredIn:
        if self.device_time_us is None and self.time_us is None:
            raise ValueError("give device_time_us or time_us")
        return self


class DeviceIn(BaseModel):
    """Where it was measured."""

    model_config = ConfigDict(extra="forbid")

    soc: str | None = Field(default=None, max_length=64, description="Must be the problem's.")
    cann_version: str | None = Field(default=None, max_length=64, examples=["8.0.RC3"])
    clock_mhz: float | None = Field(default=None, gt=0, le=10_000)


class MeasurementIn(BaseModel):
    """One measured kernel."""

    model_config = ConfigDict(extra="forbid")

    problem: ProblemIn
    tiling: TilingIn
    measured: MeasuredIn
    device: DeviceIn | None = None
    note: str | None = Field(default=None, max_length=2000)


def _measured_doc(measured: MeasuredIn) -> dict[str, Any]:
    return measured.model_dump(exclude_none=True)


def _row(
    item: MeasurementIn, problem: Problem, tiling_doc: dict[str, int], source: str, options: Any
) -> dict[str, Any]:
    device = item.device or DeviceIn()
    measured = _measured_doc(item.measured)
    return {
        "id": new_id(),
        "soc": problem.soc,
        "dtype": problem.dtype.value,
        "m": problem.m,
        "n": problem.n,
        "k": problem.k,
        "problem_json": json.dumps(problem.canonical(), sort_keys=True),
        "tiling_json": json.dumps(tiling_doc),
        "options_json": None if not options else json.dumps(options, sort_keys=True),
        "measured_json": json.dumps(measured, sort_keys=True),
        "rank_us": rank_us(measured),
        "cann_version": device.cann_version,
        "clock_mhz": device.clock_mhz,
        "note": item.note,
        "source": source[:255],
    }


def prepare_batch(
    items: list[tuple[MeasurementIn, str, dict[str, Any] | None]],
) -> tuple[str, Any]:
    """Checks and predicts a batch of measurements (in a pool worker).

    Args:
        items: Each measurement with its source (``api`` or ``csv:<file>:<row>``) and kernel
            options (or None).

    Returns:
        ``("ok", (rows, predictions))``, ``("illegal", (index, source, violations))`` for the
        first illegal tiling, or ``("input", (index, source, InputError fields))``.
    """
    rows: list[dict[str, Any]] = []
    predictions: list[dict[str, Any]] = []
    for index, (item, source, options) in enumerate(items):
        problem = Problem.model_validate(item.problem.canonical())
        try:
            if item.device is not None and item.device.soc not in (None, problem.soc):
                raise InputError(
                    "device.soc", "same_soc", f"device.soc {item.device.soc!r} is not the "
                    f"problem's soc {problem.soc!r}", item.device.soc, problem.soc,
                )  # fmt: skip
            clock = None if item.device is None else item.device.clock_mhz
            preset = at_clock(load_preset(problem.soc), clock)
            check_supported(problem, preset)
            tiling = complete_tiling(item.tiling.fields(), problem, preset)
        except InputError as exc:
            return ("input", (index, source, exc.to_dict()))
        predicted = prediction(problem, tiling, preset, _measured_doc(item.measured))
        if not predicted["valid"]:
            return ("illegal", (index, source, predicted["violations"]))
        row = _row(item, problem, tiling.to_dict(), source, options)
        row["problem_key"] = problem_key(problem)
        row["kernel_key"] = kernel_key(problem, tiling, options)
        rows.append(row)
        predictions.append(predicted)
    return ("ok", (rows, predictions))


def predict_rows(rows: list[MeasurementRow]) -> list[dict[str, Any] | None]:
    """The current model's prediction beside each stored measurement (in a pool worker)."""
    from simcore.tiling.tcube import TCubeTiling

    out: list[dict[str, Any] | None] = []
    for row in rows:
        try:
            problem = Problem.model_validate(row.problem)
            preset = at_clock(load_preset(problem.soc), row.device["clock_mhz"])
            tiling = TCubeTiling.model_validate(row.tiling)
            out.append(compare(kernel_estimate(problem, tiling, preset), row.measured))
        except (InputError, ValueError):
            # A measurement the current model can no longer price (a SoC preset removed).
            out.append(None)
    return out


def measurement_doc(row: MeasurementRow, predicted: dict[str, Any] | None) -> dict[str, Any]:
    """A stored measurement as the API shows it, with the model's prediction beside it."""
    return {
        "id": row.id,
        "problem": row.problem,
        "tiling": row.tiling,
        "options": row.options,
        "measured": row.measured,
        "device": row.device,
        "note": row.note,
        "source": row.source,
        "created_at": row.created_at.isoformat(),
        "prediction": predicted,
    }
