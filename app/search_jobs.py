"""What the search pool's workers run: searches, evaluations, timelines.

A worker process of :class:`app.tuning.SearchPool` imports this module when it starts (its
initializer) and whenever a task of it arrives. The module imports the search and the model
(``tiler``, ``simcore``) and nothing of the server: no web framework, no database layer, no
request schemas. A worker's start therefore costs the import of the search only, not of the
whole service (``tests/app/test_search_pool.py``), on every ``tiler serve`` start and every
pool a job worker starts.

Functions named ``*_job`` take and return picklable values (the typed request, ``Problem`` and
``TCubeTiling`` models) and return plain tuples instead of raising simcore errors, because those
exceptions take several constructor arguments and do not survive pickling back from a worker
process.
"""

from __future__ import annotations

import json
import math
import os
import signal
import time
from typing import Any

from simcore.alloc import tune_allocator
from simcore.errors import InputError, UnknownSocError, UnsupportedError
from simcore.hardware.presets import HardwarePreset, load_preset
from simcore.tiling.problem import Problem
from simcore.tiling.tcube import TCubeTiling

# The search itself, imported with this module: a warmed worker (SearchPool.warm) has paid for
# it before the first search arrives.
from tiler.tune import TuneRequest, tune

#: What a pool job returns: ("ok", value) or (error kind, error data).
JobOutcome = tuple[str, Any]


def error_outcome(exc: Exception) -> JobOutcome:
    """A simcore input error as a pool job's outcome (other exceptions are re-raised)."""
    if isinstance(exc, UnknownSocError):
        return ("unknown_soc", {"soc": exc.soc, "known": list(exc.known)})
    if isinstance(exc, InputError):
        kind = "unsupported" if isinstance(exc, UnsupportedError) else "input_error"
        return (kind, exc.to_dict())
    raise exc


def tune_job(request: TuneRequest, **options: Any) -> JobOutcome:
    """Runs one search (in a pool worker) and returns the answer as JSON text.

    Args:
        request: The request.
        options: Passed to :func:`tiler.tune.tune` (``storage``, ``shared``).

    Returns:
        ("ok", (answer_json, seconds)), or an error outcome (see :func:`raise_outcome_error`).
    """
    try:
        start = time.perf_counter()
        answer = tune(request, **options)
        seconds = time.perf_counter() - start
    except (InputError, UnknownSocError) as exc:
        return error_outcome(exc)
    return ("ok", (json.dumps(_finite(answer), separators=(",", ":"), allow_nan=False), seconds))


def _finite(value: Any) -> Any:
    """Replaces non-finite floats by None: JSON has no infinity, and a client must parse it."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def evaluate_job(
    problem: Problem, tiling: TCubeTiling, explain: bool, preset: HardwarePreset | None = None
) -> JobOutcome:
    """Validates and predicts a tiling (in a pool worker), as ``tiler evaluate`` does.

    ``preset`` is a calibration profile's (None: the problem's packaged preset).

    Returns:
        ("ok", answer), or ("illegal", report) for an illegal tiling.
    """
    from simcore.evaluate import estimate_dict, validate

    preset = preset or load_preset(problem.soc)
    report = validate(problem, tiling, preset)
    if not report["valid"]:
        return ("illegal", report)
    estimate = estimate_dict(problem, tiling, preset)
    answer = {**report, "estimate": estimate}
    if explain:
        answer["explanation"] = _explanation(problem, tiling, preset, estimate)
    return ("ok", _finite(answer))


def timeline_job(problem: Problem, tiling: TCubeTiling) -> JobOutcome:
    """Simulates a stored tiling (in a pool worker) and draws its pipeline timeline.

    Returns:
        ("ok", svg text), or ("too_large", message) when the kernel is too long to draw.
    """
    from app.views.svg import MAX_TIMELINE_INSTRUCTIONS, timeline_svg
    from simcore.evaluate import instruction_count
    from simcore.pipeline.simulator import simulate

    preset = load_preset(problem.soc)
    count = instruction_count(problem, tiling)
    if count > MAX_TIMELINE_INSTRUCTIONS:
        return (
            "too_large",
            f"the kernel issues about {count} instructions per core, more than the "
            f"{MAX_TIMELINE_INSTRUCTIONS} the timeline simulates",
        )
    return ("ok", timeline_svg(simulate(problem, tiling, preset), preset))


def _explanation(problem: Any, tiling: Any, preset: Any, estimate: dict[str, Any]) -> Any:
    from tiler.explain import explain_tiling

    return explain_tiling(problem, tiling, preset, estimate)


def ready() -> bool:
    """A task that does nothing: submitted to start a pool's worker processes.

    Its worker has imported this module, hence the search, by the time it answers.
    """
    return True


def worker_init() -> None:
    """The initializer of a pool's worker process (through :func:`app.lifeline.run_in_child`)."""
    # Ctrl-C goes to the whole process group; the server shuts its pool down itself, so the
    # workers must not die mid-task with a KeyboardInterrupt traceback of their own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # One search per worker process: numpy's BLAS threads would only oversubscribe the cores.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    # A fresh (spawned) interpreter: keep the estimator's block temporaries mapped.
    tune_allocator()
