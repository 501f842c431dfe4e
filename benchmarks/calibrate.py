"""Calibration report: predicted vs measured 910B2 torch.mm throughput.

For each square shape in measured_gemm_910b2_torch_mm.csv, take CANN's own tiling for it
(cann_default_tilings.csv, mode nosingle: the path aclnn's matmul takes on 910B), simulate it and
compare with the measurement. Prints one row per (dtype, N) and the error.

    uv run python -m benchmarks.calibrate
"""

from __future__ import annotations

import csv
from pathlib import Path

from simcore.hardware.presets import load_preset
from simcore.pipeline.simulator import simulate
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import Problem
from simcore.version import MODEL_VERSION

REF = Path(__file__).resolve().parents[1] / "tests" / "data" / "reference"
FIELDS = ("usedCoreNum", "singleCoreM", "singleCoreN", "baseM", "baseN", "baseK", "depthA1",
          "depthB1", "stepM", "stepN", "stepKa", "stepKb", "iterateOrder", "dbL0A", "dbL0B",
          "dbL0C")  # fmt: skip


def main() -> int:
    preset = load_preset("Ascend910B2")
    measured = {
        (r["dtype"].lower(), int(r["n"])): float(r["tflops"])
        for r in csv.DictReader((REF / "measured_gemm_910b2_torch_mm.csv").open())
    }
    tilings = {}
    for r in csv.DictReader((REF / "cann_default_tilings.csv").open()):
        if (r["soc"], r["mode"], r["trans_a"], r["trans_b"], r["bias"]) != (
            "Ascend910B2",
            "nosingle",
            "0",
            "0",
            "0",
        ) or not (r["M"] == r["N"] == r["K"]):
            continue
        tilings[(r["dtype"], int(r["M"]))] = r
    print(f"model {MODEL_VERSION}, preset Ascend910B2 {preset.digest[:16]}")
    head = ("dtype", "N", "pred us", "meas us", "pred TF", "meas TF", "err")
    print("{:6} {:>6} {:>10} {:>10} {:>8} {:>8} {:>7}".format(*head))
    worst = 0.0
    for (dtype, n), tf_meas in sorted(measured.items()):
        row = tilings.get((dtype, n))
        if row is None:
            print(f"{dtype:6} {n:>6} (no CANN tiling in the reference)")
            continue
        problem = Problem(m=n, n=n, k=n, dtype=dtype, out_dtype=row["out_dtype"])
        tiling = complete_tiling({f: int(row[f]) for f in FIELDS}, problem, preset)
        sim = simulate(problem, tiling, preset)
        tf_pred = problem.flops / sim.time_us / 1e6
        err = tf_pred / tf_meas - 1
        if n >= 2048 and dtype in ("fp16", "bf16"):
            worst = max(worst, abs(err))
        print(
            f"{dtype:6} {n:>6} {sim.time_us:>10.1f} {problem.flops / tf_meas / 1e6:>10.1f} "
            f"{tf_pred:>8.1f} {tf_meas:>8.1f} {err * 100:>+6.1f}%"
        )
    print(f"worst |error| for fp16/bf16 with N >= 2048: {worst * 100:.1f}% (target 15%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
