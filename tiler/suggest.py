"""What to measure next: the kernels whose measurement would best pin the model's constants.

Candidates are the top-k kernels (:func:`tiler.topk.top_k_kernels`) of the shapes a team already
tunes or measures, so every suggestion is a kernel worth running anyway. Each candidate's
sensitivities (d log time / d log constant, :func:`tiler.calibrate.sensitivities`) are a row the
fit would gain; the suggestions are chosen greedily for D-optimality: each next one maximizes
log(1 + j^T A^-1 j), where A is the information of the stored measurements and the suggestions
chosen before (regularized, so that a constant nothing constrains yet has a large variance and a
kernel that moves it scores high). Each says which constants it pins and why it was chosen.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from simcore.hardware.presets import load_preset
from simcore.tiling.problem import Problem
from simcore.tiling.tcube import TCubeTiling
from tiler.calibrate import Observation, fittable_constants, sensitivities
from tiler.topk import top_k_kernels

#: Prior information of every constant (a log-scale standard deviation of about 3): a constant
#: no measurement constrains yet is this uncertain.
PRIOR_INFORMATION = 0.1
#: Candidates drawn from each stored shape.
PER_SHAPE = 6
#: A sensitivity below this is "does not move the constant".
_MOVES = 1e-3


def suggest(
    soc: str,
    measured: Sequence[Observation],
    shapes: Sequence[Problem],
    n: int,
    names: Sequence[str] | None = None,
    undetermined: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """The ``n`` kernels whose measurement would best pin the constants, best first.

    Args:
        soc: The SoC.
        measured: Its stored measurements (their information is already had).
        shapes: Problems to draw candidates from (their top-k kernels).
        n: How many suggestions.
        names: The constants (default :func:`tiler.calibrate.fittable_constants`).
        undetermined: Constants a calibration could not determine, with the reason (named in
            the answer when a suggestion pins them).

    Returns:
        Each with ``problem``, ``tiling``, ``predicted_us``, ``pins`` (constant -> sensitivity,
        largest first), ``gain`` (the log-determinant gain) and ``why``.
    """
    preset = load_preset(soc)
    names = list(names) if names is not None else fittable_constants(preset)
    undetermined = undetermined or {}
    candidates: list[Observation] = []
    seen: set[str] = set()
    measured_keys = {_key(o.problem, o.tiling) for o in measured}
    for problem in shapes:
        best = top_k_kernels(problem, preset, {}, None, PER_SHAPE, simulate=False)
        for entry in best:
            tiling = TCubeTiling.model_validate(entry["tiling"])
            key = _key(problem, tiling)
            if key in seen or key in measured_keys:
                continue
            seen.add(key)
            figure = entry["estimate"]["time_us"] - entry["estimate"]["launch_overhead_us"]
            candidates.append(Observation(problem, tiling, "device_time_us", figure))
    if not candidates:
        return []
    info = np.eye(len(names)) * PRIOR_INFORMATION
    if measured:
        jac = sensitivities(soc, measured, names)
        info += jac.T @ jac
    rows = sensitivities(soc, candidates, names)
    chosen: list[dict[str, Any]] = []
    free = list(range(len(candidates)))
    while free and len(chosen) < n:
        inv = np.linalg.inv(info)
        gains = [math.log1p(float(rows[i] @ inv @ rows[i])) for i in free]
        pick = free[int(np.argmax(gains))]
        gain = max(gains)
        if gain < 1e-6:
            break
        variance = np.diag(inv)
        chosen.append(_suggestion(candidates[pick], rows[pick], names, variance, gain,
                                  undetermined))  # fmt: skip
        info += np.outer(rows[pick], rows[pick])
        free.remove(pick)
    return chosen


def _key(problem: Problem, tiling: TCubeTiling) -> str:
    return problem.model_dump_json() + tiling.model_dump_json()


def _suggestion(
    obs: Observation,
    row: Any,
    names: Sequence[str],
    variance: Any,
    gain: float,
    undetermined: dict[str, str],
) -> dict[str, Any]:
    # A constant is pinned in proportion to how much the kernel moves it against how little is
    # known of it already.
    weight = {n: abs(float(row[i])) * math.sqrt(float(variance[i])) for i, n in enumerate(names)}
    pins = {n: float(row[names.index(n)]) for n in sorted(weight, key=lambda n: -weight[n])
            if abs(float(row[names.index(n)])) > _MOVES}  # fmt: skip
    top = list(pins)[:3]
    parts = []
    for name in top:
        factor = math.exp(math.sqrt(float(variance[names.index(name)])))
        state = (
            f"undetermined so far ({undetermined[name]})"
            if name in undetermined
            else f"uncertain by a factor {factor:.2g}"
        )
        parts.append(f"{name} (d log t / d log c = {pins[name]:+.2f}; {state})")
    p = obs.problem
    why = (
        f"a top-{PER_SHAPE} kernel of the stored shape {p.m} x {p.n} x {p.k} {p.dtype.value} "
        f"whose time moves with " + "; ".join(parts)
    ) if parts else "no constant moves its time"  # fmt: skip
    return {
        "problem": p.canonical(),
        "tiling": obs.tiling.to_dict(),
        "predicted_us": obs.measured_us,
        "pins": pins,
        "gain": gain,
        "why": why,
    }
