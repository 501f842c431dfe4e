"""The measured kernels of the shared reference files, as (problem, tiling, measurement) cases.

* ``measured_msprof_910b1_8192.csv``: nine 8192^3 fp16 kernels on 910B1 with the profiler's task
  duration, average core time and per-pipe busy times (:func:`msprof_cases`).
* ``measured_gemm_910b2_torch_mm.csv``: square torch.mm on 910B2, each with CANN's own tiling for
  the shape from ``cann_default_tilings.csv`` (mode nosingle, the path aclnn takes;
  :func:`torch_mm_cases`).

Both files are copies of ``../shared/reference`` in ``tests/data/reference`` (its README).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simcore.hardware.presets import HardwarePreset, load_preset
from simcore.pipeline.traffic import l2_rounds_to_fit
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import Problem
from simcore.tiling.tcube import TCubeTiling
from tiler.baselines import matmul_v3_fields

REF = Path(__file__).resolve().parents[1] / "data" / "reference"

#: The profiler's columns (microseconds) and the model's pipe each compares with.
PIPE_COLUMNS: dict[str, str] = {
    "mte2_us": "MTE2",
    "mte1_us": "MTE1",
    "mac_us": "M",
    "scalar_us": "SCALAR",
    "fixpipe_us": "FIX",
}

_CANN_FIELDS = ("usedCoreNum", "singleCoreM", "singleCoreN", "baseM", "baseN", "baseK",
                "depthA1", "depthB1", "stepM", "stepN", "stepKa", "stepKb", "iterateOrder",
                "dbL0A", "dbL0B", "dbL0C")  # fmt: skip


@dataclass
class BoardCase:
    """One measured kernel: the problem, its tiling, the chip and what the board measured."""

    name: str
    problem: Problem
    tiling: TCubeTiling
    preset: HardwarePreset
    #: Task duration (the slowest core, the profiler's Task Duration) or, for torch.mm, the
    #: end-to-end time per call.
    time_us: float
    #: True when ``time_us`` is the device's task duration, False when it is end to end.
    device: bool
    #: The profiler's average core time (aicore_time), None where not measured.
    core_avg_us: float | None = None
    #: Busy time per model pipe (MTE2, MTE1, M, SCALAR, FIX), where measured.
    pipes_us: dict[str, float] = field(default_factory=dict)


def _rows(name: str) -> list[dict[str, str]]:
    with (REF / name).open(newline="") as fh:
        return list(csv.DictReader(fh))


def _int(row: dict[str, str], key: str, default: int) -> int:
    return int(row[key]) if row.get(key) else default


def msprof_cases(file: str = "measured_msprof_910b1_8192.csv") -> list[BoardCase]:
    """The nine kernels of a profiler file: ``measured_msprof_910b1_8192.csv`` by default.

    ``measured_msprof_950pr_8192.csv`` holds the same nine kernels (bases and cores scaled to
    the chip) on a 950PR; each row runs on its ``soc`` column's preset.

    Cells the source leaves empty: a depth not stated is the other MDL case's (depthB1 8, as
    case 7 states for the same kernel); a stepK not stated is half the depth (the L1 double
    buffer of a template with ``stepM = stepN = 1``: cases 5 and 7 state depthA1 16 with
    stepKa 8 and depthB1 8 with stepKb 4); stepM / stepN not stated are 1. The file's
    ``singleCoreM`` is one L2 round's rows; a core's share is ``l2_rounds`` of them
    (``Problem.l2_rounds``).
    """
    out = []
    for r in _rows(file):
        preset = load_preset(r["soc"])
        rounds = _int(r, "l2_rounds", 1)
        problem = Problem(
            soc=r["soc"], m=int(r["m"]), n=int(r["n"]), k=int(r["k"]), dtype=r["dtype"],
            out_dtype=r["out_dtype"], trans_a=r["trans_a"] == "1", trans_b=r["trans_b"] == "1",
            template=r["template"], l2_rounds=rounds, constant_tiling=r["constant_tiling"] == "1",
            unit_flag=r["unit_flag"] == "1",
        )  # fmt: skip
        depth_a = _int(r, "depthA1", 2 if r["template"] == "mdl" else 1)
        depth_b = _int(r, "depthB1", 8)
        fields: dict[str, Any] = {
            "usedCoreNum": int(r["usedCoreNum"]),
            # The file's singleCoreM is one round's rows; the core's share is the rounds'.
            "singleCoreM": int(r["singleCoreM"]) * rounds,
            "singleCoreN": int(r["singleCoreN"]),
            "baseM": int(r["baseM"]),
            "baseN": int(r["baseN"]),
            "baseK": int(r["baseK"]),
            "depthA1": depth_a,
            "depthB1": depth_b,
            "stepM": _int(r, "stepM", 1),
            "stepN": _int(r, "stepN", 1),
            "stepKa": _int(r, "stepKa", max(depth_a // 2, 1)),
            "stepKb": _int(r, "stepKb", max(depth_b // 2, 1)),
        }
        pipes = {PIPE_COLUMNS[c]: float(r[c]) for c in PIPE_COLUMNS if r.get(c)}
        out.append(
            BoardCase(
                name=r["case"],
                problem=problem,
                tiling=complete_tiling(fields, problem, preset),
                preset=preset,
                time_us=float(r["task_duration_us"]),
                device=True,
                core_avg_us=float(r["aicore_time_avg_us"]),
                pipes_us=pipes,
            )
        )
    return out


def torch_mm_cases(kernel: str = "aclnn") -> list[BoardCase]:
    """The 910B2 torch.mm rows (fp16, bf16, fp32) that have a CANN tiling, end-to-end times.

    ``kernel`` "aclnn" (the model's cases): the fp16 / bf16 rows on MatMulV3's dealt base
    blocks (:func:`tiler.baselines.matmul_v3_fields`, the ``aclnn_matmul_v3`` baseline of a
    tune; its K streaming is the csv tiling's); "gettiling": every row on GetTiling's split of
    ``cann_default_tilings.csv`` (the cases before model 2026.11.28.4, for the probes).
    """
    preset = load_preset("Ascend910B2")
    tilings = {}
    for r in _rows("cann_default_tilings.csv"):
        if (r["soc"], r["mode"], r["trans_a"], r["trans_b"], r["bias"]) == (
            "Ascend910B2", "nosingle", "0", "0", "0",
        ) and r["M"] == r["N"] == r["K"]:  # fmt: skip
            tilings[(r["dtype"], int(r["M"]))] = r
    out = []
    for r in _rows("measured_gemm_910b2_torch_mm.csv"):
        dtype, n = r["dtype"].lower(), int(r["n"])
        row = tilings.get((dtype, n))
        if row is None:
            continue
        # aclnn's matmul kernel (MatMulV3) copies large packets: the MDL template's loads. Its
        # tiling for these shapes is the one of measured_msprof_910b1_8192.csv case 5 (depthA1
        # 16, stepKa 8, depthB1 8, stepKb 4), which that file runs as MDL.
        problem = Problem(m=n, n=n, k=n, dtype=dtype, out_dtype=row["out_dtype"], template="mdl")
        fields = {f: int(row[f]) for f in _CANN_FIELDS}
        v3 = matmul_v3_fields(problem, preset) if kernel == "aclnn" else None
        if v3 is not None:
            fields = v3
        tiling = complete_tiling(fields, problem, preset)
        # MatMulV3 splits the cores' M (its dealt blocks: its columns) for L2 when the working
        # set exceeds it (DoL2CacheTiling).
        rounds = l2_rounds_to_fit(problem, tiling, preset)
        problem = problem.model_copy(update={"l2_rounds": rounds})
        out.append(
            BoardCase(
                name=f"torch.mm {dtype} {n}",
                problem=problem,
                tiling=tiling,
                preset=preset,
                time_us=problem.flops / float(r["tflops"]) / 1e6,
                device=False,
            )
        )
    return out
