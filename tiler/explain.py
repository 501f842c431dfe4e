"""Why a tiling is as fast as it is: bottleneck, binding constraints, roofline gap.

:func:`explain_tiling` reads a tiling and its estimate (``simcore.evaluate.estimate_dict``) and
says which pipe is busiest and how busy each is, how full every buffer is, which limit stops
each base-block dimension or L1 depth from growing, and how far the time is from the roofline.
:func:`runner_up` adds the second-best tiling of a search and the margin to it.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from simcore.caveats import model_caveats
from simcore.estimate.binding import MECHANISMS
from simcore.hardware.dtypes import ACCUMULATOR_BYTES, FRACTAL_ROWS, bits, c0_elements
from simcore.hardware.presets import HardwarePreset
from simcore.tiling.footprints import share_l1_size
from simcore.tiling.problem import Problem
from simcore.tiling.tcube import TCubeTiling

#: A buffer at least this full counts as full (binding).
FULL_FRACTION = 0.999


def _buffers(problem: Problem, t: TCubeTiling, preset: HardwarePreset) -> dict[str, Any]:
    in_bits = bits(problem.dtype)
    used = {
        "L0A": t.baseM * t.baseK * in_bits // 8 * t.dbL0A,
        "L0B": t.baseN * t.baseK * in_bits // 8 * t.dbL0B,
        "L0C": t.baseM * t.baseN * ACCUMULATOR_BYTES * t.dbL0C,
        "L1": share_l1_size(problem, t, preset),
    }
    limits = {
        "L0A": preset.l0a_bytes,
        "L0B": preset.l0b_bytes,
        "L0C": preset.l0c_bytes,
        "L1": preset.l1_bytes,
    }
    formulas = {
        "L0A": f"baseM*baseK*{in_bits // 8 or 0.5}*dbL0A = {t.baseM}*{t.baseK}*dbL0A={t.dbL0A}",
        "L0B": f"baseN*baseK*sizeof*dbL0B = {t.baseN}*{t.baseK}*dbL0B={t.dbL0B}",
        "L0C": f"baseM*baseN*4*dbL0C = {t.baseM}*{t.baseN}*4*{t.dbL0C}",
        "L1": f"depthA1*baseM*baseK + depthB1*baseN*baseK (bytes) with depthA1={t.depthA1}, "
        f"depthB1={t.depthB1}",
    }
    if problem.bias and preset.bt_bytes > 0:
        used["BiasTable"] = t.baseN * bits(problem.bias_type) // 8
        limits["BiasTable"] = preset.bt_bytes
        formulas["BiasTable"] = f"baseN*sizeof(bias) = {t.baseN}*{bits(problem.bias_type) // 8}"
    return {
        name: {
            "used_bytes": used[name],
            "limit_bytes": limits[name],
            "fill": used[name] / limits[name],
            "full": used[name] >= FULL_FRACTION * limits[name],
            "formula": formulas[name],
        }
        for name in used
    }


def _growth_limits(problem: Problem, t: TCubeTiling, preset: HardwarePreset) -> dict[str, str]:
    """For each base dimension and L1 depth, what stops the next larger legal value."""
    in_bits = bits(problem.dtype)
    c0 = c0_elements(problem.dtype)
    l1_free = preset.l1_bytes - share_l1_size(problem, t, preset)
    out: dict[str, str] = {}

    def base_reason(name: str, nxt: int, data_limit: int) -> str:
        bm = nxt if name == "baseM" else t.baseM
        bn = nxt if name == "baseN" else t.baseN
        bk = nxt if name == "baseK" else t.baseK
        if nxt > data_limit:
            return f"{name} already covers the data ({data_limit})"
        reasons = []
        if bm * bk * in_bits // 8 * t.dbL0A > preset.l0a_bytes:
            reasons.append(f"L0A full ({bm}*{bk}*sizeof*dbL0A > {preset.l0a_bytes})")
        if bn * bk * in_bits // 8 * t.dbL0B > preset.l0b_bytes:
            reasons.append(f"L0B full ({bn}*{bk}*sizeof*dbL0B > {preset.l0b_bytes})")
        if bm * bn * ACCUMULATOR_BYTES * t.dbL0C > preset.l0c_bytes:
            reasons.append(f"L0C full ({bm}*{bn}*4*dbL0C > {preset.l0c_bytes})")
        if problem.bias and preset.bt_bytes and bn * bits(problem.bias_type) // 8 > preset.bt_bytes:
            reasons.append(f"BiasTable full (> {preset.bt_bytes})")
        grow = t.depthA1 * (bm * bk - t.baseM * t.baseK) + t.depthB1 * (bn * bk - t.baseN * t.baseK)
        if grow * in_bits // 8 > l1_free:
            reasons.append(f"L1 full at these depths ({l1_free} bytes free)")
        return "; ".join(reasons) if reasons else "not limited: a larger value is legal but slower"

    out["baseM"] = base_reason("baseM", t.baseM + FRACTAL_ROWS, _align(t.singleCoreM, FRACTAL_ROWS))
    out["baseN"] = base_reason("baseN", t.baseN + FRACTAL_ROWS, _align(t.singleCoreN, FRACTAL_ROWS))
    out["baseK"] = base_reason("baseK", t.baseK + c0, _align(problem.k, c0))
    a_step = t.depthA1 // max(t.stepM * t.stepKa, 1) * t.stepM * t.baseM * t.baseK * in_bits // 8
    b_step = t.depthB1 // max(t.stepN * t.stepKb, 1) * t.stepN * t.baseN * t.baseK * in_bits // 8
    k_iter = -(-problem.k // t.baseK)
    for name, step_k, grow in (("stepKa", t.stepKa, a_step), ("stepKb", t.stepKb, b_step)):
        if step_k >= k_iter:
            out[name] = f"K fully resident in L1 ({name} covers all {k_iter} K steps)"
        elif grow > l1_free:
            out[name] = (
                f"L1 full: one more K step needs {grow} bytes, {l1_free} free of {preset.l1_bytes}"
            )
        else:
            out[name] = "not limited: a larger value is legal but slower"
    return out


def _align(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def _binding_term(name: str | None) -> dict[str, Any] | None:
    """The estimate's binding term: its name, its mechanism and a sentence naming both."""
    if name is None:
        return None
    mechanism = MECHANISMS.get(name, "")
    if name.startswith("pipe:") or name in ("hbm_floor", "sequential"):
        sentence = f"The time is set by a resource floor, {name}: {mechanism}."
    else:
        sentence = f"The time is set by the model term {name}: {mechanism}."
    return {"name": name, "mechanism": mechanism, "sentence": sentence}


def explain_tiling(
    problem: Problem, tiling: TCubeTiling, preset: HardwarePreset, estimate: dict[str, Any]
) -> dict[str, Any]:
    """Explains a tiling's predicted time.

    Args:
        problem: The problem.
        tiling: The (legal) tiling.
        preset: The chip.
        estimate: Its estimate as :func:`simcore.evaluate.estimate_dict` returns it.

    Returns:
        ``bottleneck`` (busiest pipe), ``pipe_utilization`` (busy / core time per pipe),
        ``buffers`` (used and limit bytes, fill, full, formula per buffer), ``binding`` (the
        full buffers), ``growth_limits`` (what stops baseM/baseN/baseK/stepKa/stepKb from
        growing), ``roofline`` (bound, limit, gap as time / bound) and ``binding_term`` (the
        estimator's term that sets the time: ``name``, ``mechanism`` and a ``sentence``; None
        when the estimate has none) and ``caveats`` (the model's known limits that apply to
        this problem: ``id``, ``message``, ``source``; :func:`simcore.caveats.model_caveats`).
    """
    buffers = _buffers(problem, tiling, preset)
    roof = estimate.get("roofline", {})
    bound = float(roof.get("bound_us", 0.0)) or None
    time_us = float(estimate["time_us"])
    return {
        "bottleneck": estimate.get("bottleneck"),
        "pipe_utilization": dict(estimate.get("pipe_utilization", {})),
        "buffers": buffers,
        "binding": [name for name, b in buffers.items() if b["full"]],
        "growth_limits": _growth_limits(problem, tiling, preset),
        "roofline": {
            "bound_us": bound,
            "limited_by": roof.get("limited_by"),
            "time_over_bound": (time_us / bound) if bound else None,
            "gap_us": (time_us - bound) if bound else None,
        },
        "binding_term": _binding_term(estimate.get("binding_term")),
        "caveats": [
            asdict(c)
            for c in model_caveats(problem, preset, float(estimate.get("device_time_us", time_us)))
        ],
    }


def runner_up(
    best: dict[str, int], best_time_us: float, second: dict[str, int], second_time_us: float
) -> dict[str, Any]:
    """The runner-up of a search: its differing fields and the margin (relative time)."""
    diff = {k: {"best": best[k], "runner_up": v} for k, v in second.items() if best.get(k) != v}
    return {
        "time_us": second_time_us,
        "margin": (second_time_us - best_time_us) / best_time_us if best_time_us else None,
        "differs_in": diff,
    }
