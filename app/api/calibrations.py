"""``/v1/calibrations``: fit calibration profiles to a SoC's measurements, list, show, activate.

``POST /v1/calibrations`` answers 202 at once; the fit runs as a job in the search pool and its
row moves from ``queued`` to ``running`` to ``done`` (or ``failed``). The process running it
renews a lease (``TILER_JOB_LEASE_S``); a job whose process died reads ``failed`` with an
``interrupted`` error once its lease has run out, instead of ``running`` forever. A profile whose
cross-validated error is worse than the default model's is kept but cannot be made active.
"""

from __future__ import annotations

import datetime as dt
import threading
from typing import Annotated, Any

import anyio.to_thread
from fastapi import APIRouter, Body, Path, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from app.api.deps import JSON_BODY, ServiceDep
from app.api.replay import answers_changed
from app.db import feedback_repository as frepo
from app.feedback.profiles import JobLease, run_calibration, suggest_job
from app.problem_json import ProblemError, problem_responses
from simcore.errors import UnknownSocError
from simcore.hardware.presets import load_preset
from simcore.version import MODEL_VERSION
from tiler.calibrate import DEFAULT_FOLDS, fittable_constants

router = APIRouter(prefix="/v1", tags=["calibrations"])

_ID = Annotated[str, Path(description="Calibration id.", pattern=r"^[0-9a-f]{24}$")]


class CalibrationBody(BaseModel):
    """A calibration request."""

    model_config = ConfigDict(extra="forbid")

    soc: str = Field(max_length=64, description="Fit the stored measurements of this SoC.")
    constants: list[str] | None = Field(
        default=None,
        max_length=64,
        description="Names of the model constants to fit (default: the fittable ones).",
    )
    folds: int = Field(default=DEFAULT_FOLDS, ge=2, le=20, description="Cross-validation folds.")
    seed: int = Field(default=0, ge=0, le=2**32 - 1, description="Seed of the fold assignment.")


class CalibrationRecord(BaseModel):
    """A calibration job and, once done, its profile and report."""

    model_config = ConfigDict(extra="allow")

    id: str
    soc: str
    status: str = Field(description="`queued`, `running`, `done` or `failed`.")
    request: dict[str, Any]
    profile: dict[str, Any] | None = Field(
        description="`soc`, `model_version`, `constants` (the fitted values), `digest`."
    )
    digest: str | None
    report: dict[str, Any] | None = Field(
        description="Per constant: default, value, uncertainty (1 sigma), bounds, determined "
        "(and the reason when not); errors on the training data and the held-out folds, "
        "before and after; `activatable`."
    )
    activatable: bool | None
    error: str | None
    model_version: str
    created_at: dt.datetime
    finished_at: dt.datetime | None
    active: bool = False


class ActivateBody(BaseModel):
    """Which profile to make active."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[0-9a-f]{24}$", description="A done, activatable calibration.")


def _validate(body: CalibrationBody) -> None:
    try:
        preset = load_preset(body.soc)
    except UnknownSocError as exc:
        from app.problem_json import unknown_soc_problem

        raise unknown_soc_problem(exc) from exc
    if body.constants is not None:
        known = fittable_constants(preset)
        for name in body.constants:
            if name not in known:
                raise ProblemError(
                    422, "validation-error", f"constants: {name!r} is not a fittable constant",
                    errors=[{"field": "constants", "rule": "fittable", "value": name,
                             "limit": known, "message": f"{name!r} is not fittable"}],
                )  # fmt: skip


@router.post(
    "/calibrations",
    summary="Fit a calibration profile to a SoC's measurements (a job)",
    status_code=202,
    responses=problem_responses(400, 401, 413, 415, 422),
    dependencies=JSON_BODY,
)
async def post_calibration(
    body: Annotated[CalibrationBody, Body()],
    service: ServiceDep,
    response: Response,
) -> CalibrationRecord:
    """Queues a fit of the model's named constants to the stored measurements of a SoC.

    Answers 202 with the job; `GET /v1/calibrations/{id}` follows it. The fit is bounded least
    squares (scipy) validated by k-fold cross-validation.
    """
    _validate(body)
    request = body.model_dump()
    lease = JobLease.of(service.settings)
    cal_id = await anyio.to_thread.run_sync(
        frepo.create_calibration, service.db, body.soc, request, MODEL_VERSION, lease.lease_s
    )

    # A thread of its own, started now: a background task could wait behind busy worker
    # threads for longer than the queued job's lease, and then be taken as interrupted.
    threading.Thread(
        target=run_calibration,
        args=(service.db, cal_id, request, service.pool.run, lease),
        name=f"calibration-{cal_id}",
        daemon=True,
    ).start()
    response.headers["location"] = f"/v1/calibrations/{cal_id}"
    return await _record(service, cal_id)


async def _record(service: Any, cal_id: str) -> CalibrationRecord:
    await anyio.to_thread.run_sync(frepo.expire_calibrations, service.db)
    cal = await anyio.to_thread.run_sync(frepo.get_calibration, service.db, cal_id)
    if cal is None:
        raise ProblemError(404, "not-found", f"no calibration has id {cal_id!r}")
    active = await anyio.to_thread.run_sync(frepo.active_id, service.db, cal["soc"])
    return CalibrationRecord.model_validate({**cal, "active": active == cal_id})


@router.get("/calibrations", summary="List calibration profiles", responses=problem_responses(422))
async def list_calibrations(
    service: ServiceDep,
    soc: Annotated[str | None, Query(max_length=64)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> list[CalibrationRecord]:
    """Calibrations, newest first (of one SoC when given), each marked `active` or not."""
    await anyio.to_thread.run_sync(frepo.expire_calibrations, service.db)
    cals = await anyio.to_thread.run_sync(frepo.list_calibrations, service.db, soc, limit)
    out = []
    for cal in cals:
        active = await anyio.to_thread.run_sync(frepo.active_id, service.db, cal["soc"])
        out.append(CalibrationRecord.model_validate({**cal, "active": active == cal["id"]}))
    return out


#: Stored shapes whose top-k kernels are scored for suggestions (each costs a screening).
SUGGESTION_SHAPES = 4


@router.get(
    "/calibrations/suggestions",
    summary="What to measure next: kernels that would pin the undetermined constants",
    responses=problem_responses(404, 422),
)
async def suggestions(
    service: ServiceDep,
    soc: Annotated[str, Query(max_length=64)],
    n: Annotated[int, Query(ge=1, le=20, description="How many kernels.")] = 5,
) -> dict[str, Any]:
    """The n kernels whose measurement would best pin the model's constants on this SoC.

    They are taken from the top-k kernels of the newest shapes measured or tuned on it (at most
    four shapes), chosen greedily for the most information on the constants the stored
    measurements leave uncertain (the newest calibration's undetermined ones are named). Each
    says why it was chosen.
    """
    try:
        load_preset(soc)
    except UnknownSocError as exc:
        from app.problem_json import unknown_soc_problem

        raise unknown_soc_problem(exc) from exc
    shapes = await anyio.to_thread.run_sync(
        frepo.recent_problems, service.db, soc, SUGGESTION_SHAPES
    )
    if not shapes:
        raise ProblemError(
            404, "not-found", f"no shape of {soc} was tuned or measured yet: tune one first"
        )
    rows = await anyio.to_thread.run_sync(frepo.measurements_of_soc, service.db, soc)
    report = await anyio.to_thread.run_sync(frepo.latest_report, service.db, soc)
    undetermined = {
        name: entry.get("reason", "")
        for name, entry in ((report or {}).get("constants") or {}).items()
        if not entry.get("determined")
    }
    items = await service.pool.call(suggest_job, soc, rows, shapes, n, undetermined)
    return {"soc": soc, "shapes": shapes, "undetermined": undetermined, "items": items}


@router.get(
    "/calibrations/{id}",
    summary="A calibration profile and its report",
    responses=problem_responses(404, 422),
)
async def get_calibration(id: _ID, service: ServiceDep) -> CalibrationRecord:
    """The job's status and, once done, the profile and its report."""
    return await _record(service, id)


@router.put(
    "/calibrations/active/{soc}",
    summary="Make a profile the SoC's active one",
    responses=problem_responses(400, 401, 404, 415, 422),
    dependencies=JSON_BODY,
)
async def put_active(
    soc: Annotated[str, Path(max_length=64)],
    body: ActivateBody,
    service: ServiceDep,
    request: Request,
) -> CalibrationRecord:
    """Makes a done profile of this SoC active (`"calibration": "active"` then picks it).

    A profile whose cross-validated error is worse than the default model's is refused (422).
    """
    cal = await anyio.to_thread.run_sync(frepo.get_calibration, service.db, body.id)
    if cal is None:
        raise ProblemError(404, "not-found", f"no calibration has id {body.id!r}")

    def refuse(rule: str, message: str, value: Any, limit: Any) -> ProblemError:
        return ProblemError(
            422, "validation-error", message,
            errors=[{"field": "id", "rule": rule, "message": message, "value": value,
                     "limit": limit}],
        )  # fmt: skip

    if cal["soc"] != soc:
        raise refuse("same_soc", f"calibration {body.id} is of {cal['soc']}, not {soc}",
                     cal["soc"], soc)  # fmt: skip
    if cal["status"] != "done":
        raise refuse("done", f"calibration {body.id} is {cal['status']}", cal["status"], "done")
    if not cal["activatable"]:
        cv = (cal["report"] or {}).get("errors", {}).get("cross_validation") or {}
        raise refuse(
            "activatable",
            f"calibration {body.id}'s cross-validated error is not below the default model's "
            f"(after {cv.get('after')}, before {cv.get('before')}): it is kept, never active",
            cv.get("after"), cv.get("before"),
        )  # fmt: skip
    await anyio.to_thread.run_sync(frepo.set_active, service.db, soc, body.id)
    answers_changed(request)
    return await _record(service, body.id)
