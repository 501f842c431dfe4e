"""The ``tiler`` command line: the same core as the HTTP service, for build systems and people.

Commands that take ``--jsonl FILE`` (``-`` for standard input) read one JSON request per line and
print one JSON object per line, in order. A line that cannot be processed prints an ``error``
object (field, rule, message) and the rest go on; the exit status is 1 when any line failed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from app.cli_db import db_app
from app.cli_jobs import jobs_app, worker_cmd
from app.cli_tune import tune_cmd
from app.cli_ub import ub_analyze_cmd
from app.jsonl import process_lines
from simcore.alloc import tune_allocator
from simcore.evaluate import evaluate, parse_request, validate
from simcore.hardware.presets import list_socs, load_preset
from simcore.version import MODEL_VERSION

cli = typer.Typer(
    name="tiler",
    help="Autotuning of Ascend C Matmul TCubeTiling: validate, evaluate, tune, serve.",
    no_args_is_help=True,
    add_completion=False,
)

JsonlOption = Annotated[
    Path,
    typer.Option("--jsonl", help="File with one JSON request per line ('-' for stdin)."),
]


def _lines(path: Path) -> list[str]:
    if str(path) == "-":
        return sys.stdin.read().splitlines()
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        msg = f"cannot read {path}: {exc.strerror}"
        raise typer.BadParameter(msg, param_hint="--jsonl") from exc


def _run(path: Path, handle: Any) -> None:
    failed = False
    for obj, ok in process_lines(_lines(path), handle):
        failed |= not ok
        sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    raise typer.Exit(1 if failed else 0)


@cli.command("validate")
def validate_cmd(jsonl: JsonlOption) -> None:
    """Check tilings: {"problem", "tiling"} per line -> {"valid", "violations", "warnings"}."""

    def handle(data: Any) -> dict[str, Any]:
        problem, tiling, preset = parse_request(data)
        return validate(problem, tiling, preset)

    _run(jsonl, handle)


@cli.command("evaluate")
def evaluate_cmd(jsonl: JsonlOption) -> None:
    """Predict tilings: like validate, plus an "estimate" (time_us, tflops, bottleneck, bounds)."""

    def handle(data: Any) -> dict[str, Any]:
        problem, tiling, preset = parse_request(data)
        return evaluate(problem, tiling, preset)

    _run(jsonl, handle)


cli.command("ub-analyze")(ub_analyze_cmd)
cli.command("tune")(tune_cmd)
cli.add_typer(db_app, name="db")
cli.command("worker")(worker_cmd)
cli.add_typer(jobs_app, name="jobs")


@cli.command("presets")
def presets_cmd(
    soc: Annotated[str | None, typer.Argument(help="Show one preset with sources.")] = None,
) -> None:
    """List the hardware presets with their digests, or show one with the source of each value."""
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
) -> None:
    """Run the HTTP service (SQLite in the data directory unless TILER_DATABASE_URL is set)."""
    import uvicorn
    from sqlalchemy.engine import make_url

    from app.settings import get_settings

    settings = get_settings()
    shown = "localhost" if host in ("0.0.0.0", "::") else host
    base = f"http://{shown}:{port}"
    database = make_url(settings.effective_database_url).render_as_string(hide_password=True)
    typer.echo(f"tiler service: Swagger UI at {base}/docs, API at {base}/v1, health {base}/healthz")
    typer.echo(f"database: {database} (migrate on start: {settings.migrate_on_start})")
    uvicorn.run(
        "app.main:create_app",
        factory=True,
        host=host,
        port=port,
        log_level="info",
        # Open requests get this long to finish on SIGTERM before the process exits.
        timeout_graceful_shutdown=30,
    )


def main() -> None:
    """Entry point of the ``tiler`` console script."""
    # Searches and evaluations run the estimator's block temporaries in this process.
    tune_allocator()
    cli()


if __name__ == "__main__":
    main()
