"""Fit the per-transfer and per-instruction constants of the model to the msKPP measurements.

Reads ../shared/reference/mskpp_instruction_curves.json (or the path in $TILER_REFERENCE_DIR) and
prints the fitted constants as JSON. The values in simcore/hardware/data/model_constants.json were produced
by this script; rerun it after a change of the reference data:

    uv run python -m scripts.fit_curves

Conversions follow the file's units_note: size-table bandwidths are GiB/s that msKPP converts at
1850 MHz, so cycles(transfer) = bytes / (gbps * 2**30 / 1.85e9).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

REF = Path(
    os.environ.get(
        "TILER_REFERENCE_DIR", Path(__file__).resolve().parents[2] / "shared" / "reference"
    )
)
MSKPP_HZ = 1.85e9


def curve(data: dict, cid: str) -> tuple[np.ndarray, np.ndarray]:
    for c in data["mov_size_curves"]:
        if c["id"] == cid:
            pts = np.array([[p[1], p[2]] for p in c["points"]], dtype=float)
            size = pts[:, 0]
            cycles = size / (pts[:, 1] * 2**30 / MSKPP_HZ)
            return size, cycles
    raise KeyError(cid)


def fit_linear(size: np.ndarray, cycles: np.ndarray) -> tuple[float, float]:
    """Least squares of cycles = latency + size / bw, weighted by 1/cycles (relative error)."""
    w = 1.0 / cycles
    a = np.stack([np.ones_like(size), size], axis=1) * w[:, None]
    (lat, inv_bw), *_ = np.linalg.lstsq(a, cycles * w, rcond=None)
    return float(lat), float(1.0 / inv_bw)


def fit_max(size: np.ndarray, cycles: np.ndarray) -> tuple[float, float]:
    """cycles = max(floor, size / bw): floor from the small transfers, bw from the plateau."""
    floor = float(np.median(cycles[size <= 8192]))
    bw = float(np.median(size[size >= 16384] / cycles[size >= 16384]))
    return floor, bw


def main() -> int:
    data = json.loads((REF / "mskpp_instruction_curves.json").read_text())
    out: dict[str, object] = {}
    lat, bw = fit_linear(*curve(data, "GM_TO_L1_910b1"))
    out["gm_to_l1"] = {"latency_cycles": round(lat, 1), "peak_bytes_per_cycle": round(bw, 1)}
    size, cyc = curve(data, "GM_TO_L1_TRANS_910b1")
    # The ND->NZ curve is fast only at sizes that are multiples of 32 KiB (whole fractal rows);
    # the sizes in between pay for partial rows that a Matmul chunk (rows of baseM/baseN, aligned
    # to 16) never has, so fit the aligned points only.
    aligned = size % 32768 == 0
    lat_t, bw_t = fit_linear(size[aligned], cyc[aligned])
    out["gm_to_l1_nd2nz"] = {
        "latency_cycles": round(lat_t, 1),
        "peak_bytes_per_cycle": round(bw_t, 1),
    }
    lat, bw = fit_linear(*curve(data, "GM_TO_UB_910b1"))
    out["gm_to_ub"] = {"latency_cycles": round(lat, 1), "peak_bytes_per_cycle": round(bw, 1)}
    lat, bw = fit_linear(*curve(data, "UB_TO_GM_910b1"))
    out["ub_to_gm"] = {"latency_cycles": round(lat, 1), "peak_bytes_per_cycle": round(bw, 1)}
    lat, bw = fit_linear(*curve(data, "L1_TO_L0A_910b1"))
    out["l1_to_l0a"] = {"latency_cycles": round(lat, 1), "peak_bytes_per_cycle": round(bw, 1)}
    lat, bw = fit_linear(*curve(data, "L1_TO_L0B_910b1"))
    out["l1_to_l0b"] = {"latency_cycles": round(lat, 1), "peak_bytes_per_cycle": round(bw, 1)}
    floor, bw = fit_max(*curve(data, "L0C_TO_GM_TRANS_910b1"))
    out["l0c_to_gm_nz2nd"] = {"min_cycles": round(floor, 1), "peak_bytes_per_cycle": round(bw, 1)}
    floor, bw = fit_max(*curve(data, "L0C_TO_GM_910b1"))
    out["l0c_to_gm"] = {"min_cycles": round(floor, 1), "peak_bytes_per_cycle": round(bw, 1)}
    for t in data["mmad_tables"]:
        if t["id"] == "MMAD_FP16_FP16_FP32_1_core_910b1":
            pts = np.array([[p[5], p[5] * 2 / p[4]] for p in t["points"]], dtype=float)
            fractals = pts[:, 0] / 4096.0
            a = np.stack([np.ones_like(fractals), fractals], axis=1)
            (ovh, slope), *_ = np.linalg.lstsq(a, pts[:, 1], rcond=None)
            out["mmad_910b1"] = {
                "overhead_cycles": round(float(ovh), 2),
                "cycles_per_fractal": round(float(slope), 4),
            }
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
