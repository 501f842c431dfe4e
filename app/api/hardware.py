"""``/v1/hardware`` (the presets) and ``/v1/ub:analyze`` (UB bank conflicts of a vector op)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Path

from app.api.deps import JSON_BODY
from app.api.examples import UB_EXAMPLES
from app.hardware_schemas import HardwareDetail, HardwareSummary, UbAnalyzeBody, UbAnalyzeResponse
from app.problem_json import problem_responses, unknown_soc_problem
from app.tuning import preset_digest
from simcore.errors import UnknownSocError
from simcore.hardware.presets import list_socs, load_preset
from simcore.ub.vector import analyze, parse_vector_instruction

router = APIRouter(prefix="/v1", tags=["hardware"])


@router.get("/hardware", summary="List the hardware presets")
def list_hardware() -> list[HardwareSummary]:
    """Every packaged SoC preset with its content digest (part of every cache key)."""
    out = []
    for soc in list_socs():
        preset = load_preset(soc)
        out.append(
            HardwareSummary(
                soc=soc,
                digest=preset_digest(soc),
                cube_core_count=preset.cube_core_count,
                clock_mhz=preset.clock_mhz,
                dtypes=[d.value for d in preset.supported_dtypes],
            )
        )
    return out


@router.get(
    "/hardware/{soc}",
    summary="One hardware preset with the source of every value",
    responses=problem_responses(404, 422),
)
def get_hardware(
    soc: Annotated[str, Path(description="SoC name, e.g. Ascend910B2.", max_length=64)],
) -> HardwareDetail:
    """A preset's values, digest and the source of each value; 404 `unknown-soc` if none."""
    try:
        preset = load_preset(soc)
    except UnknownSocError as exc:
        raise unknown_soc_problem(exc, status=404) from exc
    return HardwareDetail(
        soc=soc,
        digest=preset_digest(soc),
        values=preset,
        sources=dict(preset.sources),
    )


@router.post(
    "/ub:analyze",
    tags=["ub"],
    summary="UB bank conflicts and cycles of a vector instruction",
    responses=problem_responses(400, 401, 413, 415, 422),
    dependencies=JSON_BODY,
)
def ub_analyze(
    body: Annotated[UbAnalyzeBody, Body(openapi_examples=UB_EXAMPLES)],
) -> UbAnalyzeResponse:
    """Bank conflicts of a vector instruction, as `tiler ub-analyze` reports them.

    Which UB banks each block of the first repeat reads or writes, the conflicts between them,
    and the cycles of the whole instruction.
    """
    instruction = parse_vector_instruction(body.to_request())
    try:
        result = analyze(instruction)
    except UnknownSocError as exc:
        raise unknown_soc_problem(exc, field="soc") from exc
    return UbAnalyzeResponse.model_validate({"instruction": instruction.canonical(), **result})
