"""The queries of measurement feedback: measurements, calibration jobs and active profiles."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from dataclasses import dataclass, field
from typing import Any, cast

from sqlalchemy import Table, delete, func, insert, select, update

from app.db.base import utc_now
from app.db.engine import Database
from app.db.feedback_models import ActiveCalibration, Calibration, Measurement
from app.db.repository import ShapeRange, keyset_page, shape_conditions

_M = cast(Table, Measurement.__table__)
_C = cast(Table, Calibration.__table__)
_A = cast(Table, ActiveCalibration.__table__)


def new_id() -> str:
    """A fresh public id (24 random hex digits)."""
    return uuid.uuid4().hex[:24]


@dataclass(frozen=True)
class MeasurementRow:
    """A measurement as stored (JSON documents parsed).

    Attributes:
        id: Public id.
        problem: The canonical problem.
        tiling: The complete TCubeTiling.
        options: Kernel options the problem does not carry, or None.
        measured: ``device_time_us`` / ``time_us``, ``core_time_avg_us``, ``pipe_busy_us``.
        device: ``soc``, ``cann_version``, ``clock_mhz``.
        note: The caller's note.
        source: Where it came from.
        created_at: When it was stored.
    """

    id: str
    problem: dict[str, Any]
    tiling: dict[str, int]
    options: dict[str, Any] | None
    measured: dict[str, Any]
    device: dict[str, Any]
    note: str | None
    source: str
    created_at: dt.datetime
    seq: int = field(default=0, compare=False)

    @classmethod
    def from_row(cls, row: Any) -> MeasurementRow:
        """The measurement of a ``measurements`` row."""
        return cls(
            id=row.id,
            problem=json.loads(row.problem_json),
            tiling=json.loads(row.tiling_json),
            options=None if row.options_json is None else json.loads(row.options_json),
            measured=json.loads(row.measured_json),
            device={"soc": row.soc, "cann_version": row.cann_version, "clock_mhz": row.clock_mhz},
            note=row.note,
            source=row.source,
            created_at=row.created_at,
            seq=int(row.seq),
        )


def insert_measurements(db: Database, rows: list[dict[str, Any]]) -> None:
    """Stores measurements (the ``measurements`` columns) in one transaction: all or none."""
    if not rows:
        return
    now = utc_now()
    with db.write() as conn:
        conn.execute(insert(_M), [{**row, "created_at": now} for row in rows])


@dataclass(frozen=True, kw_only=True)
class MeasurementFilter(ShapeRange):
    """Filters of ``GET /v1/measurements`` (None means any), with the shape ranges."""

    soc: str | None = None
    problem_key: str | None = None


def list_measurements(
    db: Database, where: MeasurementFilter, *, before_seq: int | None, limit: int
) -> tuple[list[MeasurementRow], int | None]:
    """Up to ``limit`` measurements matching ``where``, newest first, older than a cursor.

    Returns:
        The page and the cursor of the next one (None when nothing follows).
    """
    c = _M.c
    conditions = [
        (where.soc, c.soc.__eq__),
        *shape_conditions(c, where),
        (where.problem_key, c.problem_key.__eq__),
    ]
    rows, next_seq = keyset_page(db, select(_M), c.seq, conditions, before_seq, limit)
    return [MeasurementRow.from_row(r) for r in rows], next_seq


def measurements_of_problem(db: Database, problem_key: str) -> list[MeasurementRow]:
    """Every measurement of one exact problem, fastest first (ties: first stored first)."""
    query = select(_M).where(_M.c.problem_key == problem_key)
    with db.read() as conn:
        rows = conn.execute(query.order_by(_M.c.rank_us, _M.c.seq)).all()
    return [MeasurementRow.from_row(r) for r in rows]


def measurements_of_soc(db: Database, soc: str) -> list[MeasurementRow]:
    """Every measurement of a SoC, oldest first (what a calibration fits)."""
    with db.read() as conn:
        rows = conn.execute(select(_M).where(_M.c.soc == soc).order_by(_M.c.seq)).all()
    return [MeasurementRow.from_row(r) for r in rows]


def count_measurements(db: Database) -> int:
    """How many measurements are stored."""
    with db.read() as conn:
        return int(conn.execute(select(func.count()).select_from(_M)).scalar_one())


# --- calibrations -------------------------------------------------------------------------------


#: The error of a calibration whose process stopped before it finished.
INTERRUPTED = (
    "interrupted: the process running this calibration stopped (its lease expired before it "
    "finished); submit it again"
)
#: The states of a calibration that a process still owes an outcome.
_UNFINISHED = ("queued", "running")


def _lease_end(lease_s: float) -> dt.datetime:
    return utc_now() + dt.timedelta(seconds=lease_s)


def create_calibration(
    db: Database, soc: str, request: dict[str, Any], model_version: str, lease_s: float
) -> str:
    """Stores a queued calibration job and returns its id.

    Args:
        db: The database.
        soc: The SoC whose measurements it fits.
        request: What was asked.
        model_version: The model version it is fitted against.
        lease_s: How long it may stay queued before it is taken as interrupted.
    """
    cal_id = new_id()
    with db.write() as conn:
        conn.execute(
            insert(_C).values(
                id=cal_id,
                soc=soc,
                status="queued",
                request_json=json.dumps(request, sort_keys=True),
                model_version=model_version,
                created_at=utc_now(),
                lease_expires_at=_lease_end(lease_s),
            )
        )
    return cal_id


def start_calibration(db: Database, cal_id: str, lease_s: float) -> bool:
    """Moves a queued calibration to ``running`` under a fresh lease.

    Returns:
        False when it is no longer queued (it was taken as interrupted meanwhile): do not run it.
    """
    with db.write() as conn:
        moved = conn.execute(
            update(_C)
            .where(_C.c.id == cal_id, _C.c.status == "queued")
            .values(status="running", lease_expires_at=_lease_end(lease_s))
        ).rowcount
    return bool(moved)


def renew_calibration_lease(db: Database, cal_id: str, lease_s: float) -> bool:
    """The heartbeat of a running calibration; False when it no longer runs."""
    with db.write() as conn:
        renewed = conn.execute(
            update(_C)
            .where(_C.c.id == cal_id, _C.c.status == "running")
            .values(lease_expires_at=_lease_end(lease_s))
        ).rowcount
    return bool(renewed)


def expire_calibrations(db: Database) -> int:
    """Marks ``failed`` (:data:`INTERRUPTED`) every unfinished calibration whose lease expired.

    Its process died (killed, out of memory, restarted) between the request and the outcome;
    without this the job read ``running`` forever. Rows from before leases existed have none and
    count as expired.

    Returns:
        How many calibrations were marked.
    """
    now = utc_now()
    expired = _C.c.status.in_(_UNFINISHED) & (
        _C.c.lease_expires_at.is_(None) | (_C.c.lease_expires_at < now)
    )
    # Readers call this on every poll: a read first, so that the common case takes no write lock.
    with db.read() as conn:
        if conn.execute(select(_C.c.seq).where(expired).limit(1)).first() is None:
            return 0
    with db.write() as conn:
        return int(
            conn.execute(
                update(_C)
                .where(expired)
                .values(status="failed", error=INTERRUPTED, finished_at=now, lease_expires_at=None)
            ).rowcount
        )


def finish_calibration(
    db: Database,
    cal_id: str,
    *,
    profile: dict[str, Any] | None,
    digest: str | None,
    report: dict[str, Any] | None,
    activatable: bool | None,
    error: str | None = None,
) -> bool:
    """Stores a running calibration job's outcome (``done`` with a profile, or ``failed``).

    Returns:
        False when it was no longer running (taken as interrupted first): nothing is stored, so
        a reader never sees a job change its outcome.
    """
    with db.write() as conn:
        stored = conn.execute(
            update(_C)
            .where(_C.c.id == cal_id, _C.c.status == "running")
            .values(
                status="failed" if error is not None else "done",
                profile_json=None if profile is None else json.dumps(profile, sort_keys=True),
                digest=digest,
                report_json=None if report is None else json.dumps(report, sort_keys=True),
                activatable=activatable,
                error=error,
                finished_at=utc_now(),
                lease_expires_at=None,
            )
        ).rowcount
    return bool(stored)


def calibration_dict(row: Any) -> dict[str, Any]:
    """A ``calibrations`` row as the API shows it."""
    return {
        "id": row.id,
        "soc": row.soc,
        "status": row.status,
        "request": json.loads(row.request_json),
        "profile": None if row.profile_json is None else json.loads(row.profile_json),
        "digest": row.digest,
        "report": None if row.report_json is None else json.loads(row.report_json),
        "activatable": row.activatable,
        "error": row.error,
        "model_version": row.model_version,
        "created_at": row.created_at,
        "finished_at": row.finished_at,
    }


def get_calibration(db: Database, cal_id: str) -> dict[str, Any] | None:
    """A calibration by id, or None."""
    with db.read() as conn:
        row = conn.execute(select(_C).where(_C.c.id == cal_id)).first()
    return None if row is None else calibration_dict(row)


def list_calibrations(db: Database, soc: str | None, limit: int) -> list[dict[str, Any]]:
    """Calibrations, newest first (of one SoC when given)."""
    query = select(_C)
    if soc is not None:
        query = query.where(_C.c.soc == soc)
    with db.read() as conn:
        rows = conn.execute(query.order_by(_C.c.seq.desc()).limit(limit)).all()
    return [calibration_dict(r) for r in rows]


def set_active(db: Database, soc: str, cal_id: str) -> None:
    """Makes a profile the active one of its SoC (replacing the previous one)."""
    with db.write() as conn:
        conn.execute(delete(_A).where(_A.c.soc == soc))
        conn.execute(insert(_A).values(soc=soc, calibration_id=cal_id, set_at=utc_now()))


def active_id(db: Database, soc: str) -> str | None:
    """The id of a SoC's active profile, or None (the default model)."""
    with db.read() as conn:
        found = conn.execute(
            select(_A.c.calibration_id).where(_A.c.soc == soc)
        ).scalar_one_or_none()
    return None if found is None else str(found)


def recent_problems(db: Database, soc: str, limit: int) -> list[dict[str, Any]]:
    """The newest distinct problems of a SoC that were measured or tuned (canonical dicts)."""
    from app.db.models import TuningResult

    results = cast(Table, TuningResult.__table__)
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    with db.read() as conn:
        measured = conn.execute(
            select(_M.c.problem_json).where(_M.c.soc == soc).order_by(_M.c.seq.desc()).limit(500)
        ).scalars()
        tuned = conn.execute(
            select(results.c.request_json)
            .where(results.c.soc == soc)
            .order_by(results.c.seq.desc())
            .limit(500)
        ).scalars()
        docs = [json.loads(t) for t in measured] + [json.loads(t)["problem"] for t in tuned]
    for doc in docs:
        key = json.dumps(doc, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(doc)
        if len(out) == limit:
            break
    return out


def latest_report(db: Database, soc: str) -> dict[str, Any] | None:
    """The report of a SoC's newest finished calibration, or None."""
    with db.read() as conn:
        row = conn.execute(
            select(_C.c.report_json)
            .where(_C.c.soc == soc, _C.c.status == "done")
            .order_by(_C.c.seq.desc())
            .limit(1)
        ).scalar_one_or_none()
    return None if row is None else dict(json.loads(row))
