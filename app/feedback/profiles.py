"""Calibration jobs and profiles: fit a SoC's stored measurements, store the profile, pick one.

A profile is chosen by name: ``default`` (the packaged preset), ``active`` (the SoC's active
profile, or the default when none is active) or a calibration id. Its preset
(:func:`tiler.calibrate.profile_preset`) has its own digest, which the cache key and every
estimate carry, so an answer of one profile is never served for another.
"""

from __future__ import annotations

import contextlib
import threading
import traceback
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.db import feedback_repository as frepo
from app.db.engine import Database
from app.settings import Settings
from simcore.errors import UnknownSocError
from simcore.hardware.presets import HardwarePreset, load_preset
from simcore.tiling.problem import Problem
from simcore.tiling.tcube import TCubeTiling
from simcore.version import MODEL_VERSION
from tiler.calibrate import Observation, fit_profile, profile_preset
from tiler.measured import measured_kind

if TYPE_CHECKING:  # the routes' module (FastAPI); pool workers import this one without it
    from app.problem_json import ProblemError


@dataclass(frozen=True)
class ProfileChoice:
    """A resolved calibration profile: its preset and its id."""

    preset: HardwarePreset
    calibration_id: str


class ProfileError(ValueError):
    """A profile that cannot be used: ``field``, ``value`` and why."""

    def __init__(self, field: str, value: Any, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.value = value
        self.message = message


def observations(rows: Sequence[frepo.MeasurementRow]) -> list[Observation]:
    """The fit's view of stored measurements.

    Kernels with options other than the defaults are never stored (the model cannot price them).
    """
    out = []
    for row in rows:
        kind = measured_kind(row.measured)
        out.append(
            Observation(
                Problem.model_validate(row.problem),
                TCubeTiling.model_validate(row.tiling),
                kind,
                float(row.measured[kind]),
                row.device["clock_mhz"],
            )
        )
    return out


def fit_job(
    soc: str, rows: list[frepo.MeasurementRow], names: list[str] | None, folds: int, seed: int
) -> dict[str, Any]:
    """Fits a profile (in a pool worker): :func:`tiler.calibrate.fit_profile`."""
    return fit_profile(soc, observations(rows), names, folds, seed)


@dataclass(frozen=True)
class JobLease:
    """How long a calibration job's lease lasts and how often its process renews it.

    Attributes:
        lease_s: A job whose lease is not renewed for this long is taken as interrupted.
        heartbeat_s: How often the running process renews it (well under ``lease_s``).
    """

    lease_s: float
    heartbeat_s: float

    @classmethod
    def of(cls, settings: Settings) -> JobLease:
        """The job lease of the settings (``TILER_JOB_LEASE_S``, ``TILER_JOB_HEARTBEAT_S``)."""
        return cls(settings.job_lease_s, settings.job_heartbeat_s)


@contextlib.contextmanager
def _heartbeat(db: Database, cal_id: str, lease: JobLease) -> Iterator[None]:
    """Renews the calibration's lease on a thread while the block runs (a fit takes minutes)."""
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(lease.heartbeat_s):
            with contextlib.suppress(Exception):  # a missed beat is retried; the lease has slack
                frepo.renew_calibration_lease(db, cal_id, lease.lease_s)

    beat = threading.Thread(target=renew, name=f"calibration-{cal_id}", daemon=True)
    beat.start()
    try:
        yield
    finally:
        stop.set()
        beat.join()


def run_calibration(
    db: Database, cal_id: str, request: dict[str, Any], runner: Any, lease: JobLease
) -> None:
    """Runs a queued calibration: reads the SoC's measurements, fits, stores the outcome.

    The job holds a lease renewed by a heartbeat while it runs, so a process that dies mid-fit
    leaves a job that readers see as interrupted, not one ``running`` forever.

    Args:
        db: The database.
        cal_id: The calibration's id.
        request: ``soc``, ``constants`` (or None), ``folds``, ``seed``.
        runner: Calls ``fit_job`` (``runner(fit_job, *args)``), e.g. the search pool's ``run``.
        lease: The job's lease and heartbeat.
    """
    if not frepo.start_calibration(db, cal_id, lease.lease_s):
        return  # taken as interrupted before it started
    with _heartbeat(db, cal_id, lease):
        try:
            rows = frepo.measurements_of_soc(db, request["soc"])
            if not rows:
                raise ValueError(f"no measurements of {request['soc']} are stored")
            out = runner(
                fit_job, request["soc"], rows, request.get("constants"), request["folds"],
                request["seed"],
            )  # fmt: skip
        except Exception as exc:
            message = f"{type(exc).__name__}: {exc}"
            if not isinstance(exc, ValueError):
                message += "\n" + traceback.format_exc(limit=3)
            frepo.finish_calibration(
                db, cal_id, profile=None, digest=None, report=None, activatable=None,
                error=message,
            )  # fmt: skip
            return
        profile = out["profile"]
        frepo.finish_calibration(
            db,
            cal_id,
            profile=profile,
            digest=profile["digest"],
            report=out["report"],
            activatable=out["report"]["activatable"],
        )


def resolve_profile(db: Database, soc: str, choice: str) -> tuple[HardwarePreset, dict[str, Any]]:
    """The preset of a profile choice and what the answer says about it.

    Args:
        db: The database.
        soc: The problem's SoC.
        choice: ``default``, ``active`` or a calibration id.

    Returns:
        The preset, and ``{"name", "id", "digest", "preset_digest"}`` (``id`` None for the
        default model).

    Raises:
        ProfileError: No such profile, not finished, of another SoC or another model version.
    """
    cal_id: str | None = choice
    if choice == "default":
        cal_id = None
    elif choice == "active":
        cal_id = frepo.active_id(db, soc)
    if cal_id is None:
        preset = load_preset(soc)
        return preset, {"name": choice, "id": None, "digest": None,
                        "preset_digest": preset.digest}  # fmt: skip
    cal = frepo.get_calibration(db, cal_id)
    if cal is None:
        raise ProfileError("calibration", choice, f"no calibration has id {choice!r}")
    if cal["status"] != "done" or cal["profile"] is None:
        raise ProfileError("calibration", choice, f"calibration {cal_id} is {cal['status']}")
    if cal["soc"] != soc:
        raise ProfileError(
            "calibration", choice, f"calibration {cal_id} is of {cal['soc']}, not {soc}"
        )
    if cal["model_version"] != MODEL_VERSION:
        raise ProfileError(
            "calibration", choice, f"calibration {cal_id} was fitted against model "
            f"{cal['model_version']}, not the current {MODEL_VERSION}: fit it again",
        )  # fmt: skip
    preset = profile_preset(soc, cal["profile"]["constants"])
    info = {"name": choice, "id": cal_id, "digest": cal["digest"], "preset_digest": preset.digest}
    return preset, info


async def chosen_preset(service: Any, problem: Any) -> tuple[HardwarePreset | None, dict[str, Any]]:
    """The preset a tune / evaluate request's ``problem.calibration`` picks, for the service.

    Returns:
        None for the default constants (the service then uses the packaged preset), else the
        profile's preset; and the answer's ``calibration`` object.

    Raises:
        ProblemError: 422 naming ``problem.calibration`` (no such profile, not done, another
            SoC or model version).
    """
    import anyio.to_thread

    choice = getattr(problem, "calibration", "default")
    if choice == "default":
        return None, {"name": "default", "id": None, "digest": None}
    try:
        preset, info = await anyio.to_thread.run_sync(
            resolve_profile, service.db, problem.soc, choice
        )
    except ProfileError as exc:
        raise profile_problem(exc, "problem.calibration") from exc
    return (None if info["id"] is None else preset), info


def profile_problem(exc: ProfileError, field: str) -> ProblemError:
    """The 422 ``ProblemError`` of a profile choice that cannot be used, naming ``field``."""
    from app.problem_json import ProblemError

    return ProblemError(
        422, "validation-error", f"{field}: {exc.message}",
        errors=[{"field": field, "rule": "calibration_profile", "message": exc.message,
                 "value": exc.value, "limit": None}],
    )  # fmt: skip


def job_profiles(db: Database, choice: str, socs: Iterable[str]) -> dict[str, ProfileChoice]:
    """Resolves a batch job's profile choice once per SoC, at submission.

    ``active`` is frozen to each SoC's active profile now, so every shape of the job is priced
    with the same constants even when another profile is activated while it runs.

    Args:
        db: The database.
        choice: ``default``, ``active`` or a calibration id.
        socs: The SoCs of the job's shapes (unknown ones are skipped: each shape reports it).

    Returns:
        Per SoC with a profile, its preset and calibration id (empty for ``default``, and no
        entry for a SoC with no active profile).

    Raises:
        ProfileError: The choice cannot be used for one of the SoCs.
    """
    out: dict[str, ProfileChoice] = {}
    if choice == "default":
        return out
    for soc in sorted(set(socs)):
        try:
            preset, info = resolve_profile(db, soc, choice)
        except UnknownSocError:
            continue
        if info["id"] is not None:
            out[soc] = ProfileChoice(preset, info["id"])
    return out


def suggest_job(
    soc: str,
    rows: list[frepo.MeasurementRow],
    shapes: list[dict[str, Any]],
    n: int,
    undetermined: dict[str, str],
) -> list[dict[str, Any]]:
    """What to measure next (in a pool worker): :func:`tiler.suggest.suggest`."""
    from tiler.suggest import suggest

    problems = [Problem.model_validate(doc) for doc in shapes]
    return suggest(soc, observations(rows), problems, n, undetermined=undetermined)
