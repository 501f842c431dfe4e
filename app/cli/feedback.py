"""Measurement feedback on the command line: ``tiler measurements import``, ``tiler calibrate``.

Also the feedback options of ``tiler tune`` (``--top-k``, ``--database``, ``--source``).

The database is the server's (``TILER_DATABASE_URL``, else the SQLite file in
``TILER_DATA_DIR``) unless ``--url`` / ``--database`` names one; it is migrated first when
``TILER_MIGRATE_ON_START`` is set (the default), as the server does at start.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from tiler.tune import TuneRequest

DatabaseOption = Annotated[
    str | None,
    typer.Option(
        "--database",
        help="Database URL of measurements: the fastest measured kernel of the exact problem "
        'is the answer ("source": "measured").',
    ),
]
SourceOption = Annotated[
    str,
    typer.Option(
        "--source",
        help="measured (the fastest measured kernel when --database has one) or model.",
    ),
]
UrlOption = Annotated[
    str | None, typer.Option("--url", help="Database URL (default: the server's).")
]

measurements_app = typer.Typer(
    name="measurements",
    help="Measured kernels: import a profiler CSV.",
    no_args_is_help=True,
    add_completion=False,
)


def _open(url: str | None) -> Any:
    from app.db import migrate
    from app.db.engine import Database
    from app.settings import get_settings

    settings = get_settings()
    url = url or settings.effective_database_url
    if settings.migrate_on_start:
        migrate.upgrade(url)
    return Database.from_url(url, sqlite_busy_timeout_ms=settings.sqlite_busy_timeout_ms)


def _print(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, separators=(",", ":"), default=str) + "\n")


def request_candidates(request: TuneRequest, answer: dict[str, Any], k: int) -> list[Any]:
    """The k best distinct kernels of a tune answer's problem (``--top-k``)."""
    from simcore.hardware.presets import load_preset
    from simcore.tiling.problem import parse_problem
    from tiler.topk import top_k_kernels

    problem = parse_problem(request.problem)
    return top_k_kernels(problem, load_preset(problem.soc), request.fixed, answer["tiling"], k)


def measured_answer(
    url: str, request: TuneRequest, answer: dict[str, Any], source: str
) -> dict[str, Any]:
    """The tune answer with ``source``: the fastest measured kernel in the database.

    The model's answer with ``--source model`` or when nothing was measured for the problem.
    """
    from app.feedback.answers import fastest_measured, measured_estimate
    from app.feedback.measurements import measurement_doc
    from simcore.tiling.problem import parse_problem
    from tiler.measured import compare

    if source not in ("measured", "model"):
        raise typer.BadParameter(f"{source!r} is not measured or model", param_hint="--source")
    row = None
    if source == "measured":
        db = _open(url)
        try:
            row = fastest_measured(db, parse_problem(request.problem), request.fixed)
        finally:
            db.dispose()
    if row is None:
        return {**answer, "source": "model"}
    estimate = measured_estimate(row)
    return {
        **answer,
        "source": "measured",
        "tiling": row.tiling,
        "estimate": estimate,
        "measurement": measurement_doc(row, compare(estimate, row.measured)),
        "model_answer": {"tiling": answer["tiling"], "estimate": answer["estimate"]},
    }


@measurements_app.command("import")
def import_cmd(
    file: Annotated[Path, typer.Argument(help="CSV in the measured_msprof_*.csv layout.")],
    url: UrlOption = None,
) -> None:
    """Import a profiler CSV: every row checked and predicted, all stored or none."""
    _print(_import(file, url))


def _import(file: Path, url: str | None) -> dict[str, Any]:
    from app.db import feedback_repository as frepo
    from app.feedback.csv_import import CsvError, parse_csv
    from app.feedback.measurements import prepare_batch

    try:
        rows, skipped = parse_csv(file.read_text(encoding="utf-8-sig"), file.name)
    except CsvError as exc:
        _print({"error": exc.to_dict()})
        raise typer.Exit(1) from exc
    kind, data = prepare_batch([(r.measurement, r.source, r.options) for r in rows])
    if kind != "ok":
        index, source, detail = data
        _print({"error": {"kind": kind, "index": index, "source": source, "detail": detail}})
        raise typer.Exit(1)
    stored_rows, predictions = data
    db = _open(url)
    try:
        frepo.insert_measurements(db, stored_rows)
    finally:
        db.dispose()
    items = [{"id": r["id"], "source": r["source"], "prediction": p}
             for r, p in zip(stored_rows, predictions, strict=True)]  # fmt: skip
    warnings = [f"{i['id']}: {i['prediction']['warning']}" for i in items
                if "warning" in i["prediction"]]  # fmt: skip
    return {"items": items, "warnings": warnings, "skipped": skipped}


def calibrate_cmd(
    soc: Annotated[str, typer.Option("--soc", help="Fit the stored measurements of this SoC.")],
    csv_file: Annotated[
        Path | None, typer.Option("--csv", help="Import this profiler CSV first.")
    ] = None,
    constants: Annotated[
        list[str] | None,
        typer.Option("--constant", help="A constant to fit (repeatable; default: the fittable)."),
    ] = None,
    folds: Annotated[int, typer.Option(min=2, max=20, help="Cross-validation folds.")] = 5,
    seed: Annotated[int, typer.Option(help="Seed of the fold assignment.")] = 0,
    activate: Annotated[
        bool, typer.Option(help="Make the profile active when its CV error is below the default's.")
    ] = False,
    url: UrlOption = None,
) -> None:
    """Fit a calibration profile to a SoC's stored measurements; print the profile and report."""
    from app.db import feedback_repository as frepo
    from app.feedback.profiles import JobLease, run_calibration
    from app.settings import get_settings
    from simcore.version import MODEL_VERSION

    imported = _import(csv_file, url) if csv_file is not None else None
    request = {"soc": soc, "constants": constants or None, "folds": folds, "seed": seed}
    db = _open(url)
    try:
        lease = JobLease.of(get_settings())
        cal_id = frepo.create_calibration(db, soc, request, MODEL_VERSION, lease.lease_s)
        run_calibration(db, cal_id, request, lambda fn, *args: fn(*args), lease)
        cal = frepo.get_calibration(db, cal_id)
        assert cal is not None
        if activate and cal["activatable"]:
            frepo.set_active(db, soc, cal_id)
        cal["active"] = frepo.active_id(db, soc) == cal_id
    finally:
        db.dispose()
    if imported is not None:
        cal["imported"] = {"stored": len(imported["items"]), "skipped": imported["skipped"]}
    _print(cal)
    if cal["status"] != "done":
        raise typer.Exit(1)
