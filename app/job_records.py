"""A job's records as the service answers them: its summary, progress, results and pages.

Each is built once from a database row (``from_row``) and returned by the routes as it is (the
request, :class:`app.schemas.JobBody`, is with the other requests in :mod:`app.schemas`).
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from app.problem_json import ProblemDetail
from app.schemas import Baseline, Certificate, Estimate, Explanation, Search
from simcore.tiling.problem import Problem
from simcore.tiling.tcube import TCubeTiling

JobStatus = Literal["queued", "running", "succeeded", "failed", "cancelled"]

#: Final job statuses.
FINAL_JOB_STATUSES = frozenset({"succeeded", "failed", "cancelled"})


class JobProgress(BaseModel):
    """Counts of a job's shapes."""

    total: int
    done: int = Field(description="Shapes answered (from the cache or by a search).")
    failed: int = Field(description="Shapes finished with an error.")
    cancelled: int = Field(description="Shapes not run because the job was cancelled.")
    remaining: int = Field(description="Shapes queued or running.")


class JobSummary(BaseModel):
    """A tuning job without its results (a row of ``jobs``)."""

    id: str
    status: JobStatus = Field(
        description="`queued`, `running`, `succeeded` (every shape answered), `failed` (every "
        "shape finished, at least one with an error) or `cancelled`."
    )
    progress: JobProgress
    budget: int | None = Field(description="Trials per shape; null: the tuner's default.")
    sampler: str
    seed: int
    calibration: str = Field(
        default="default",
        description="The calibration profile choice of every shape, as submitted: `default`, "
        "`active` (each SoC's active profile at submission) or a calibration id.",
    )
    created_at: dt.datetime
    started_at: dt.datetime | None
    finished_at: dt.datetime | None
    notice: str | None = Field(
        default=None,
        description="Why the job is not moving, when it is not: e.g. no worker has claimed any "
        "of its shapes for TILER_JOB_UNCLAIMED_NOTICE_S.",
    )
    seq: int = Field(exclude=True)
    event_count: int = Field(exclude=True)

    @classmethod
    def from_row(cls, row: Any) -> JobSummary:
        """The job of a ``jobs`` row."""
        return cls(
            id=row.id,
            status=row.status,
            progress=JobProgress(
                total=row.total,
                done=row.done,
                failed=row.failed,
                cancelled=row.cancelled,
                remaining=row.total - row.done - row.failed - row.cancelled,
            ),
            budget=row.budget,
            sampler=row.sampler,
            seed=row.seed,
            calibration=row.calibration,
            created_at=row.created_at,
            started_at=row.started_at,
            finished_at=row.finished_at,
            seq=row.seq,
            event_count=row.event_count,
        )

    @property
    def is_final(self) -> bool:
        """True when the job will not change any more."""
        return self.status in FINAL_JOB_STATUSES


class JobResult(BaseModel):
    """One finished shape: the tuned result (as `tilings:tune` answers it), or an error."""

    position: int = Field(description="Index of the shape in the submitted `problems`.")
    problem: Problem = Field(description="The problem with every default filled in.")
    status: Literal["done", "failed"]
    id: str | None = Field(default=None, description="Id of the result (`/v1/tilings/{id}`).")
    cached: bool | None = Field(
        default=None, description="True when the answer was in the cache (it cost nothing)."
    )
    calibration_id: str | None = Field(
        default=None,
        description="The calibration profile the shape was priced with (null: the packaged "
        "model constants).",
    )
    model_version: str | None = None
    tiling: TCubeTiling | None = None
    estimate: Estimate | None = None
    baselines: list[Baseline] | None = None
    certificate: Certificate | None = None
    explanation: Explanation | None = None
    search: Search | None = None
    error: ProblemDetail | None = Field(
        default=None, description="A problem document (type, title, detail, ...) when failed."
    )

    @classmethod
    def from_row(cls, row: Any) -> JobResult:
        """The entry of a finished ``job_items`` row joined with its ``tuning_results`` row."""
        values: dict[str, Any] = {
            "position": row.position,
            "problem": json.loads(row.request_json)["problem"],
            "status": row.status,
            "calibration_id": row.calibration_id,
        }
        if row.status == "done":
            values.update(id=row.result_id, cached=bool(row.cached))
        if row.status == "done" and row.answer_json is not None:
            values.update(json.loads(row.answer_json), model_version=row.model_version)
        else:
            values["error"] = (
                json.loads(row.error_json)
                if row.error_json
                else {"type": "/problems/internal-error", "title": "Internal error",
                      "status": 500, "detail": "no answer stored"}
            )  # fmt: skip
        return cls.model_validate(values)


class JobResource(JobSummary):
    """A tuning job with the shapes finished so far, by position."""

    results: list[JobResult] | None = Field(
        default=None, description="Finished shapes by position (left out with results=false)."
    )


class JobPage(BaseModel):
    """A page of tuning jobs, newest first."""

    items: list[JobSummary]
    next_cursor: str | None = Field(
        description="Pass as `cursor` to get the next page; null on the last page."
    )


class JobResultsPage(BaseModel):
    """A page of a job's finished shapes, by position."""

    items: list[JobResult]
    next_cursor: str | None = Field(
        description="Pass as `cursor` to get the next page; null when no more shapes have "
        "finished yet."
    )
