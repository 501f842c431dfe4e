"""``GET /v1/tilings/{id}/candidates``: the k best distinct kernels of a stored answer's problem.

The kernels worth compiling and timing on a board (:func:`tiler.topk.top_k_kernels`): each with
its estimate, its margin to the best and why it differs from it.
"""

from __future__ import annotations

from typing import Annotated, Any

import anyio.to_thread
from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, ConfigDict, Field

from app.api.deps import ServiceDep
from app.db import repository as repo
from app.problem_json import ProblemError, problem_responses
from app.schemas import Estimate
from simcore.hardware.presets import load_preset
from simcore.tiling.problem import Problem
from simcore.tiling.tcube import TCubeTiling
from simcore.version import MODEL_VERSION
from tiler.limits import MAX_TOP_K

router = APIRouter(prefix="/v1", tags=["tilings"])

_ID = Annotated[str, Path(description="Id of a stored result.", pattern=r"^[0-9a-f]{24}$")]


class Candidate(BaseModel):
    """One kernel of the top-k."""

    model_config = ConfigDict(extra="allow")

    rank: int = Field(description="0 is the best under the model.")
    answer: bool = Field(description="True for the stored tune answer's kernel.")
    tiling: TCubeTiling
    estimate: Estimate
    margin: float | None = Field(description="(time - best time) / best time.")
    differs: dict[str, Any] | None = Field(
        description="How it differs from the best: `fields` (best -> candidate), "
        "`binding_term`, `bottleneck`, `pipe_busy_delta_us`, `largest_pipe_change`, `summary`; "
        "null for the best.",
    )


class CandidatesResponse(BaseModel):
    """The k best distinct kernels of a stored answer's problem."""

    id: str
    problem: Problem
    k: int
    model_version: str
    candidates: list[Candidate]


def candidates_job(
    problem: Problem, fixed: dict[str, int], tiling: dict[str, int], k: int
) -> list[dict[str, Any]]:
    """Runs the top-k (in a pool worker)."""
    from app.search_jobs import _finite
    from tiler.topk import top_k_kernels

    preset = load_preset(problem.soc)
    out: list[dict[str, Any]] = _finite(top_k_kernels(problem, preset, fixed, tiling, k))
    return out


@router.get(
    "/tilings/{id}/candidates",
    summary="The k best distinct kernels of a stored answer (what to measure)",
    responses=problem_responses(404, 422),
)
async def tiling_candidates(
    id: _ID,
    service: ServiceDep,
    k: Annotated[
        int,
        Query(ge=1, le=MAX_TOP_K, description=f"How many kernels, 1 to {MAX_TOP_K}."),
    ] = 5,
) -> CandidatesResponse:
    """The k best distinct kernels under the model, best first.

    Distinct: they differ in the core split, the base block, the L1 depths and steps or the L0
    double-buffer flags (not in a field without effect such as iterateOrder). Each comes with its
    estimate, its margin to the best and the reason it differs.
    """
    stored = await anyio.to_thread.run_sync(repo.find_by_id, service.db, id)
    if stored is None:
        raise ProblemError(404, "not-found", f"no stored tiling has id {id!r}")
    problem = stored.request.problem
    fields = stored.tiling.to_dict()
    out = await service.pool.call(candidates_job, problem, stored.request.fixed, fields, k)
    return CandidatesResponse.model_validate(
        {"id": id, "problem": problem, "k": k, "model_version": MODEL_VERSION, "candidates": out}
    )
