"""``/v1/tilings:compare-dtypes``: what fp8 or MX fp4 gains over bf16 for one shape.

The body is a ``tilings:tune`` body plus ``dtypes``; the answer has one row per dtype with the
tuned time and, on Ascend 950, CANN's own pick for comparison (:mod:`tiler.compare`). Not cached:
each call runs one tune per dtype, in the search pool (a slot per call, as any search).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Request
from pydantic import Field

from app.api.deps import JSON_BODY
from app.problem_json import problem_responses
from app.schemas import TuneBody
from app.search_jobs import JobOutcome, error_outcome
from app.tuning import TuningService, check_search_options, raise_outcome_error
from simcore.errors import InputError, UnknownSocError
from tiler.compare import MAX_COMPARED_DTYPES, compare_dtypes
from tiler.tune import TuneRequest

router = APIRouter(prefix="/v1", tags=["tilings"])


class CompareDtypesBody(TuneBody):
    """A tune body and the dtypes to compare (the first is the reference of the speedups)."""

    dtypes: list[str] = Field(
        min_length=1,
        max_length=MAX_COMPARED_DTYPES,
        description="Input dtypes to tune the problem with (`mxfp4` and `mxfp8` are the MX "
        "defaults e2m1 / e4m3); the first is the reference.",
        examples=[["bf16", "fp8_e4m3", "mxfp4"]],
    )


_EXAMPLE = {
    "950PR 4096^3": {
        "value": {
            "problem": {"soc": "Ascend950PR", "m": 4096, "n": 4096, "k": 4096},
            "dtypes": ["bf16", "fp8_e4m3", "mxfp4"],
            "budget": 0,
        }
    }
}


@router.post(
    "/tilings:compare-dtypes",
    summary="Compare dtypes for one shape (tuned, and CANN's pick on 950)",
    responses=problem_responses(400, 401, 413, 415, 422),
    dependencies=JSON_BODY,
)
async def compare_tiling_dtypes(
    body: Annotated[CompareDtypesBody, Body(openapi_examples=_EXAMPLE)], request: Request
) -> dict[str, Any]:
    """Tunes the problem once per dtype and answers each dtype's time, TFLOPS and tiling.

    Rows carry `speedup_vs_reference` (the first dtype's time over this one's) and, on arch 3510
    (Ascend 950), `cann950`: CANN's own pick there (base 256 x 256 x 128 bytes of K, one L0C
    buffer) with `gain_vs_cann`. A dtype the chip cannot run is a 422 naming it and the rule
    (`DTYPE_NEEDS_ARCH_3510`, `INT4_REMOVED_ON_3510`).
    """
    settings = request.app.state.settings
    budget = settings.default_budget if body.budget is None else body.budget
    check_search_options(budget, body.sampler, settings.max_budget)
    req = body.tuner_request(budget)
    # In the bounded pool, not a thread of its own: these are searches, and unbounded threads
    # of them would starve the server.
    service: TuningService = request.app.state.service
    outcome = await service.pool.call(compare_job, req, body.dtypes)
    raise_outcome_error(outcome)
    answer: dict[str, Any] = outcome[1]
    return answer


def compare_job(request: TuneRequest, dtypes: list[str]) -> JobOutcome:
    """Runs :func:`tiler.compare.compare_dtypes` in a pool worker (errors as outcomes).

    Returns:
        ("ok", answer), or an error outcome (see :func:`app.tuning.raise_outcome_error`).
    """
    try:
        return ("ok", compare_dtypes(request, dtypes))
    except (InputError, UnknownSocError) as exc:
        return error_outcome(exc)
