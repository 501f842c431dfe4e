"""The tables of measurement feedback: measured kernels and calibration profiles.

``measurements`` holds what a board measured for one kernel (a problem and its complete
TCubeTiling), with its provenance (chip, CANN version, clock, where it came from).
``problem_key`` (SHA-256 of the canonical problem) finds every kernel measured for an exact
problem: the fastest of them is the measured answer of a tune request. ``calibrations`` holds the
calibration jobs and the profiles they fitted; ``active_calibrations`` names the active profile
of a SoC (at most one).

Documents are JSON text, as in :mod:`app.db.models` (byte-stable on both backends).
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import BigInteger, Boolean, Float, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, UtcDateTime

_SeqType = BigInteger().with_variant(Integer(), "sqlite")


class Measurement(Base):
    """One measured kernel.

    Attributes:
        seq: Insertion order (the cursor of ``GET /v1/measurements``).
        id: Public id, 24 hex digits.
        problem_key: SHA-256 of the canonical problem JSON (the exact problem).
        kernel_key: SHA-256 of the canonical problem and complete tiling (the kernel).
        problem_json: The canonical problem.
        tiling_json: The complete TCubeTiling.
        options_json: Kernel options the problem does not carry (CSV ``l2_rounds``,
            ``constant_tiling``, ``unit_flag``), or null.
        measured_json: ``device_time_us`` / ``time_us``, ``core_time_avg_us``, ``pipe_busy_us``.
        rank_us: The time the fastest measured kernel is chosen by (device time, else end to
            end).
        cann_version: The CANN version it was measured with, when stated.
        clock_mhz: The AI Core clock it ran at, when stated.
        source: Where it came from (``api``, or ``csv:<file>:<row>``).
    """

    __tablename__ = "measurements"

    seq: Mapped[int] = mapped_column(_SeqType, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(24), unique=True)
    soc: Mapped[str] = mapped_column(String(64))
    dtype: Mapped[str] = mapped_column(String(16))
    m: Mapped[int] = mapped_column(BigInteger)
    n: Mapped[int] = mapped_column(BigInteger)
    k: Mapped[int] = mapped_column(BigInteger)
    problem_key: Mapped[str] = mapped_column(String(64), index=True)
    kernel_key: Mapped[str] = mapped_column(String(64))
    problem_json: Mapped[str] = mapped_column(Text)
    tiling_json: Mapped[str] = mapped_column(Text)
    options_json: Mapped[str | None] = mapped_column(Text, nullable=True)
    measured_json: Mapped[str] = mapped_column(Text)
    rank_us: Mapped[float] = mapped_column(Float)
    cann_version: Mapped[str | None] = mapped_column(String(64), nullable=True)
    clock_mhz: Mapped[float | None] = mapped_column(Float, nullable=True)
    note: Mapped[str | None] = mapped_column(Text, nullable=True)
    source: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime)

    __table_args__ = (Index("ix_measurements_soc_dtype", "soc", "dtype"),)


class Calibration(Base):
    """A calibration job and, once it finished, its profile.

    Attributes:
        id: Public id, 24 hex digits.
        status: ``queued``, ``running``, ``done`` or ``failed``.
        request_json: What was asked (SoC, constants, folds).
        profile_json: The profile (constants and values), null until done.
        digest: SHA-256 of the profile's canonical JSON (part of every cache key using it).
        report_json: The fit's report (per constant, errors before and after), null until done.
        activatable: False when its cross-validated error is worse than the default model's.
        model_version: The model version it was fitted against.
        lease_expires_at: While queued or running, when the job is taken as interrupted unless
            the process running it renews the lease first (its heartbeat).
    """

    __tablename__ = "calibrations"

    seq: Mapped[int] = mapped_column(_SeqType, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(24), unique=True)
    soc: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))
    request_json: Mapped[str] = mapped_column(Text)
    profile_json: Mapped[str | None] = mapped_column(Text, nullable=True)
    digest: Mapped[str | None] = mapped_column(String(64), nullable=True)
    report_json: Mapped[str | None] = mapped_column(Text, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    activatable: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    model_version: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime)
    finished_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)
    lease_expires_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime, nullable=True)


class ActiveCalibration(Base):
    """The active profile of a SoC.

    Attributes:
        soc: The SoC (primary key: one active profile each).
        calibration_id: The profile's id.
        set_at: When it was made active.
    """

    __tablename__ = "active_calibrations"

    soc: Mapped[str] = mapped_column(String(64), primary_key=True)
    calibration_id: Mapped[str] = mapped_column(String(24))
    set_at: Mapped[dt.datetime] = mapped_column(UtcDateTime)
