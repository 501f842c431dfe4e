"""The ``tiler`` command line: the same core as the HTTP service, for build systems and people.

``--jsonl`` commands read one JSON request per line and print one JSON object per line
(:mod:`app.cli.jsonl`); ``serve`` runs the HTTP service with its job workers.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from app.cli.db import db_app
from app.cli.feedback import calibrate_cmd, measurements_app
from app.cli.jobs import jobs_app, worker_cmd
from app.cli.jsonl import JsonlOption, run_jsonl
from app.cli.tune import tune_cmd
from app.cli.ub import ub_analyze_cmd
from simcore.alloc import tune_allocator
from simcore.version import MODEL_VERSION

cli = typer.Typer(
    name="tiler",
    help="Autotuning of Ascend C Matmul TCubeTiling: validate, evaluate, tune, serve.",
    no_args_is_help=True,
    add_completion=False,
)


@cli.command("validate")
def validate_cmd(jsonl: JsonlOption) -> None:
    """Check tilings: {"problem", "tiling"} per line -> {"valid", "violations", "warnings"}."""
    # The model loads in the commands that run it, not for `tiler --help` or `tiler version`.
    from simcore.evaluate import parse_request, validate

    def handle(data: Any) -> dict[str, Any]:
        problem, tiling, preset = parse_request(data)
        return validate(problem, tiling, preset)

    run_jsonl(jsonl, handle)


@cli.command("evaluate")
def evaluate_cmd(jsonl: JsonlOption) -> None:
    """Predict tilings: like validate, plus an "estimate" (time_us, tflops, bottleneck, bounds)."""
    from simcore.evaluate import evaluate, parse_request

    def handle(data: Any) -> dict[str, Any]:
        problem, tiling, preset = parse_request(data)
        return evaluate(problem, tiling, preset)

    run_jsonl(jsonl, handle)


cli.command("ub-analyze")(ub_analyze_cmd)
cli.command("tune")(tune_cmd)
cli.add_typer(db_app, name="db")
cli.command("worker")(worker_cmd)
cli.add_typer(jobs_app, name="jobs")
cli.add_typer(measurements_app, name="measurements")
cli.command("calibrate")(calibrate_cmd)


@cli.command("presets")
def presets_cmd(
    soc: Annotated[str | None, typer.Argument(help="Show one preset with sources.")] = None,
) -> None:
    """List the hardware presets with their digests, or show one with the source of each value."""
    from simcore.hardware.presets import list_socs, load_preset

    if soc is None:
        for name in list_socs():
            p = load_preset(name)
            typer.echo(f"{name}\t{p.cube_core_count} cores\t{p.clock_mhz:.0f} MHz\t{p.digest[:16]}")
        return
    p = load_preset(soc)
    values = p.model_dump(mode="json")
    out = {"soc": p.soc, "digest": p.digest, "values": values, "sources": p.sources}
    typer.echo(json.dumps(out, indent=2))


@cli.command("version")
def version_cmd() -> None:
    """Print the model version (cached answers are keyed by it)."""
    typer.echo(MODEL_VERSION)


@cli.command("serve")
def serve_cmd(
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
    job_workers: Annotated[
        int | None,
        typer.Option(
            "--job-workers",
            min=0,
            max=64,
            help="Batch-job workers run by this server (TILER_JOB_WORKERS, default 1); 0 when "
            "separate `tiler worker` processes do the work.",
        ),
    ] = None,
    access_log: Annotated[
        bool | None,
        typer.Option(
            "--access-log/--no-access-log",
            help="One log line per request (TILER_ACCESS_LOG, default off: /metrics counts "
            "requests by route and status).",
        ),
    ] = None,
) -> None:
    """Run the HTTP service and its job workers (SQLite in ./data unless TILER_DATABASE_URL)."""
    import uvicorn
    from pydantic import ValidationError
    from sqlalchemy.engine import make_url

    from app.settings import get_settings

    try:
        settings = get_settings()
    except ValidationError as exc:
        # A bad TILER_* variable: say which and why, without a traceback (before app.main,
        # whose import builds the module's app from the same settings).
        for error in exc.errors():
            typer.echo(f"tiler serve: {error['msg'].removeprefix('Value error, ')}", err=True)
        raise typer.Exit(2) from None
    from app.main import create_app

    if job_workers is not None:
        settings = settings.model_copy(update={"job_workers": job_workers})
    if access_log is not None:
        settings = settings.model_copy(update={"access_log": access_log})
    shown = "localhost" if host in ("0.0.0.0", "::") else host
    base = f"http://{shown}:{port}"
    database = make_url(settings.effective_database_url).render_as_string(hide_password=True)
    typer.echo(f"tiler service: Swagger UI at {base}/docs, API at {base}/v1, health {base}/healthz")
    typer.echo(f"database: {database} (migrate on start: {settings.migrate_on_start})")
    workers = settings.job_workers
    typer.echo(
        f"job workers: {workers} in this server"
        if workers
        else "job workers: none in this server (--job-workers 0): run `tiler worker` for jobs"
    )
    uvicorn.run(
        create_app(settings),
        host=host,
        port=port,
        log_level="info",
        access_log=settings.access_log,
        # Open requests get this long to finish on SIGTERM before the process exits.
        timeout_graceful_shutdown=30,
    )


def main() -> None:
    """Entry point of the ``tiler`` console script."""
    # Searches and evaluations run the estimator's block temporaries in this process.
    tune_allocator()
    cli()
