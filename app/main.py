"""The HTTP service.

This first version serves the model's read-only views; the tuning routes, the cache and the jobs
come with the app issue.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, HTTPException

from simcore.hardware import list_socs, load_preset
from simcore.version import MODEL_VERSION

app = FastAPI(
    title="Ascend Matmul tiling autotuner",
    version="0.1.0",
    summary="TCubeTiling for Ascend C Matmul kernels, from a calibrated model of the AI Core.",
)


@app.get("/healthz", include_in_schema=False)
def healthz() -> dict[str, str]:
    """Liveness."""
    return {"status": "ok", "model_version": MODEL_VERSION}


@app.get("/v1/hardware", tags=["hardware"], summary="List the hardware presets")
def hardware() -> list[dict[str, Any]]:
    """Every packaged SoC preset with its digest."""
    out = []
    for soc in list_socs():
        p = load_preset(soc)
        out.append({"soc": soc, "digest": p.digest, "cube_core_count": p.cube_core_count})
    return out


@app.get("/v1/hardware/{soc}", tags=["hardware"], summary="One hardware preset with sources")
def hardware_one(soc: str) -> dict[str, Any]:
    """A preset's values, digest and the source of every value."""
    if soc not in list_socs():
        raise HTTPException(status_code=404, detail=f"unknown SoC {soc!r}")
    p = load_preset(soc)
    values = p.model_dump(mode="json")
    return {"soc": soc, "digest": p.digest, "values": values, "sources": p.sources}
