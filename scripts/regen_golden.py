"""Regenerates the golden values of tests/simcore/test_golden.py.

    uv run python -m scripts.regen_golden            # keep each case's tiling, recompute values
    uv run python -m scripts.regen_golden --redraw   # also redraw the tilings of seeded cases

Each case is a problem and a legal TCubeTiling; the file records, for the simulator and the
estimator, the kernel time, the bottleneck pipe and the busy cycles of every pipe, plus the
MODEL_VERSION that produced them. Run it only after a deliberate model change (and bump
``simcore/version.py``), then review the diff of ``tests/simcore/golden/cases.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from simcore.estimate.estimator import ESTIMATOR_FIELDS, PIPE_NAMES, estimate_one
from simcore.hardware.presets import load_preset
from simcore.pipeline.simulator import simulate
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.legality import check_tiling
from simcore.tiling.problem import parse_problem
from simcore.version import MODEL_VERSION
from tests.support.random_tilings import random_tiling

GOLDEN = Path(__file__).resolve().parents[1] / "tests" / "simcore" / "golden" / "cases.json"

#: CANN's own tiling of 4096^3 fp16 on 910B2 (cann_default_tilings.csv, mode nosingle).
CANN_4096 = {
    "usedCoreNum": 24, "singleCoreM": 1024, "singleCoreN": 768, "baseM": 128, "baseN": 256,
    "baseK": 64, "depthA1": 16, "depthB1": 8, "stepM": 1, "stepN": 1, "stepKa": 8, "stepKb": 4,
}  # fmt: skip

#: A 310P3 tiling whose 2 x transLength exceeds the UB (simcore.ub.path: no vector reorders).
COLUMN_PATH_310P3 = {
    "usedCoreNum": 8, "singleCoreM": 256, "singleCoreN": 512, "baseM": 128, "baseN": 128,
    "baseK": 64, "depthA1": 16, "depthB1": 8, "stepM": 1, "stepN": 1, "stepKa": 8, "stepKb": 4,
}  # fmt: skip

#: name -> (problem, tiling spec or a seed for random_tiling). Chips, dtypes, ND/NZ, transposes,
#: bias, tail blocks and the UB path of 310P / 910A / 310B are all represented.
CASES: dict[str, tuple[dict[str, Any], dict[str, int] | int]] = {
    "910b2_fp16_4096_cann": ({"soc": "Ascend910B2", "m": 4096, "n": 4096, "k": 4096}, CANN_4096),
    "910b2_bf16_transa_2048": (
        {"soc": "Ascend910B2", "m": 2048, "n": 2048, "k": 2048, "dtype": "bf16", "trans_a": True},
        11,
    ),
    "910b2_int8_bias_llm": (
        {"soc": "Ascend910B2", "m": 1024, "n": 4096, "k": 1024, "dtype": "int8", "bias": True},
        12,
    ),
    "910b2_fp32_nz_a": (
        {"soc": "Ascend910B2", "m": 512, "n": 1024, "k": 768, "dtype": "fp32", "format_a": "NZ"},
        13,
    ),
    "910b4_fp16_odd_tails": ({"soc": "Ascend910B4", "m": 333, "n": 777, "k": 1999}, 14),
    "910b2_fp16_nz_nz_transb": (
        {
            "soc": "Ascend910B2",
            "m": 1024,
            "n": 1024,
            "k": 1024,
            "format_a": "NZ",
            "format_b": "NZ",
            "trans_b": True,
        },
        15,
    ),
    "910b2_fp16_decode_m16": ({"soc": "Ascend910B2", "m": 16, "n": 11008, "k": 4096}, 16),
    "310p3_fp16_ub_path": ({"soc": "Ascend310P3", "m": 1024, "n": 1024, "k": 1024}, 17),
    "310p3_int8_bias_trans_ub": (
        {
            "soc": "Ascend310P3",
            "m": 512,
            "n": 1024,
            "k": 3000,
            "dtype": "int8",
            "bias": True,
            "trans_a": True,
            "trans_b": True,
        },
        18,
    ),
    "310p3_fp16_nz_a_nd_b": (
        {"soc": "Ascend310P3", "m": 2048, "n": 512, "k": 1024, "format_a": "NZ"},
        19,
    ),
    "910a_fp16_ub_path": ({"soc": "Ascend910A", "m": 2048, "n": 1024, "k": 512}, 20),
    "310b1_fp16_ub_in_fixpipe_out": ({"soc": "Ascend310B1", "m": 512, "n": 768, "k": 1024}, 21),
    # 2 x transLength exceeds the UB: ND inputs by 32 B column DMA, C out row by row.
    "310p3_fp16_column_dma_path": (
        {"soc": "Ascend310P3", "m": 1024, "n": 1024, "k": 1024},
        COLUMN_PATH_310P3,
    ),
}


def predict(problem_data: dict[str, Any], tiling_data: dict[str, int]) -> dict[str, Any]:
    """The pinned figures of one case: simulator and estimator."""
    problem = parse_problem(problem_data)
    preset = load_preset(problem.soc)
    tiling = complete_tiling(tiling_data, problem, preset)
    sim = simulate(problem, tiling, preset)
    est = estimate_one(problem, tiling, preset)
    est_busy = {p: est[f"busy_{p}"] for p in PIPE_NAMES}
    return {
        "simulator": {
            "time_us": sim.time_us,
            "bottleneck": max(sim.busy_cycles, key=lambda p: sim.busy_cycles[p]),
            "busy_cycles": dict(sim.busy_cycles),
        },
        "estimator": {
            "time_us": est["time_us"],
            "bottleneck": max(est_busy, key=lambda p: est_busy[p]),
            "busy_cycles": est_busy,
        },
    }


def draw(problem_data: dict[str, Any], seed: int) -> dict[str, int]:
    """A random legal tiling for a seeded case, as the struct's fields."""
    problem = parse_problem(problem_data)
    preset = load_preset(problem.soc)
    tiling = random_tiling(problem, preset, np.random.default_rng(seed))
    return {name: int(getattr(tiling, name)) for name in ("usedCoreNum", *ESTIMATOR_FIELDS)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--redraw", action="store_true", help="redraw seeded tilings")
    args = parser.parse_args()
    old: dict[str, Any] = {}
    if GOLDEN.exists():
        old = {c["name"]: c for c in json.loads(GOLDEN.read_text())["cases"]}
    cases = []
    for name, (problem_data, how) in CASES.items():
        if isinstance(how, dict):
            tiling_data = dict(how)
        elif name in old and not args.redraw:
            tiling_data = old[name]["tiling"]
        else:
            tiling_data = draw(problem_data, how)
        problem = parse_problem(problem_data)
        preset = load_preset(problem.soc)
        report = check_tiling(problem, complete_tiling(tiling_data, problem, preset), preset)
        if not report.valid:
            raise SystemExit(f"{name}: tiling is illegal: {report.violation_ids}")
        cases.append(
            {"name": name, "problem": problem_data, "tiling": tiling_data}
            | predict(problem_data, tiling_data)
        )
    GOLDEN.write_text(json.dumps({"model_version": MODEL_VERSION, "cases": cases}, indent=1) + "\n")
    print(f"wrote {len(cases)} cases to {GOLDEN} (model {MODEL_VERSION})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
