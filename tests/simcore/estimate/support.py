"""The estimator's shared records for one tiling, built as ``_core`` builds them.

A term's unit test starts from these (a legal tiling on a real chip, so every field is a valid
array of one candidate), replaces the few quantities the term reads with round numbers
(``dataclasses.replace`` / ``NamedTuple._replace``) and checks the term against its docstring's
formula computed by hand from those numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simcore.estimate.binding import TERM, Makespan
from simcore.estimate.estimator import ESTIMATOR_FIELDS
from simcore.estimate.records import CoreRecords, core_records
from simcore.hardware.presets import load_preset
from simcore.pipeline.costs import Costs
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import Problem

#: A 910B2 tiling of 1024 x 1024 x 1024 fp16 (FixPipe, direct copies).
SPEC_910B2 = {
    "usedCoreNum": 16, "singleCoreM": 256, "singleCoreN": 256, "baseM": 128, "baseN": 128,
    "baseK": 64, "depthA1": 8, "depthB1": 8, "stepM": 1, "stepN": 1, "stepKa": 4, "stepKb": 4,
}  # fmt: skip


def records(
    soc: str = "Ascend910B2", spec: dict[str, int] | None = None, **problem: Any
) -> CoreRecords:
    """The records of one tiling (``problem`` defaults to 1024^3 fp16)."""
    keys = {"m": 1024, "n": 1024, "k": 1024, **problem}
    p = Problem(soc=soc, **keys)
    preset = load_preset(soc)
    t = complete_tiling(spec or SPEC_910B2, p, preset)
    f = {name: np.array([getattr(t, name)], dtype=np.float64) for name in ESTIMATOR_FIELDS}
    c = Costs(p, preset)
    cap = np.array([preset.l2_bytes_per_cycle_per_core])
    return core_records(c, p, f, f["singleCoreM"], f["singleCoreN"], (cap, None), None, False)


def arr(x: float) -> np.ndarray:
    """One candidate's value."""
    return np.array([float(x)])


def makespan(value: float = 0.0) -> Makespan:
    """A makespan of ``value`` set by the compute term (so a raise shows in the code)."""
    return Makespan(arr(value), "compute")


def bound_by(mk: Makespan) -> str:
    """The name of the term that set the makespan."""
    names = {v: k for k, v in TERM.items()}
    return names[int(mk.code[0])]
