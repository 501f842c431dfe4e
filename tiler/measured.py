"""Measured kernels against the model: identities, the predicted figure, the error.

A measurement states the kernel's ``device_time_us`` (the profiler's Task Duration: the slowest
core, without the host's launch) or its end-to-end ``time_us``. The model's figure for the first
is ``estimate.device_time_us`` where the model has it, else ``time_us`` less the launch overhead
(the model's end-to-end time is the device time plus that overhead); for the second it is
``estimate.time_us``.

:func:`kernel_estimate` keeps each kernel's estimate for the life of the process: once a
server's pool worker has priced a kernel (an import), listing, charting or answering from its
stored measurements, or importing it again, does not simulate it again.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from simcore.evaluate import estimate_dict, validate
from simcore.hardware.presets import HardwarePreset
from simcore.tiling.problem import Problem
from simcore.tiling.tcube import TCubeTiling
from simcore.version import MODEL_VERSION
from tiler.lru import Lru

#: A measurement this many times away from the prediction (either way) is stored with a warning.
WARN_RATIO = 5.0

#: The pipes a measurement may state busy times for (the profiler's MAC is ``M``).
MEASURED_PIPES: tuple[str, ...] = ("MTE2", "MTE1", "M", "FIX", "SCALAR")

#: How many kernels' estimates :func:`kernel_estimate` keeps per process (least recently used
#: first out). An estimate is a few kilobytes; a page of measurements holds at most 200 kernels.
ESTIMATE_MEMO_ENTRIES = 1024

_memo: Lru[str, dict[str, Any]] = Lru(ESTIMATE_MEMO_ENTRIES)


def at_clock(preset: HardwarePreset, clock_mhz: float | None) -> HardwarePreset:
    """The chip at the clock a measurement states (the preset's own when it states none).

    A board run at another AI Core clock than the preset's (a power cap, a different SKU
    setting) takes proportionally more or fewer microseconds per cycle; predicting it at the
    preset's clock would blame the model for the clock.
    """
    if clock_mhz is None or clock_mhz == preset.clock_mhz:
        return preset
    return preset.model_copy(update={"clock_mhz": float(clock_mhz)})


def canonical_json(obj: Any) -> str:
    """Sorted, compact JSON text (the input of every key here)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def problem_key(problem: Problem) -> str:
    """SHA-256 of the canonical problem: the same for every spelling of one exact problem."""
    return hashlib.sha256(canonical_json(problem.canonical()).encode()).hexdigest()


def kernel_key(problem: Problem, tiling: TCubeTiling, options: Mapping[str, Any] | None) -> str:
    """SHA-256 of the problem, the complete tiling and the kernel options: one kernel."""
    doc = {"problem": problem.canonical(), "tiling": tiling.to_dict(), "options": options or {}}
    return hashlib.sha256(canonical_json(doc).encode()).hexdigest()


def measured_kind(measured: Mapping[str, Any]) -> str:
    """``device_time_us`` when the measurement states it, else ``time_us``."""
    return "device_time_us" if measured.get("device_time_us") is not None else "time_us"


def rank_us(measured: Mapping[str, Any]) -> float:
    """The figure the fastest measured kernel is chosen by."""
    return float(measured[measured_kind(measured)])


def predicted_us(estimate: Mapping[str, Any], kind: str) -> float:
    """The model's figure for a measured ``kind`` (see the module docstring)."""
    if kind == "time_us":
        return float(estimate["time_us"])
    if estimate.get("device_time_us") is not None:
        return float(estimate["device_time_us"])
    return float(estimate["time_us"]) - float(estimate["launch_overhead_us"])


def kernel_estimate(
    problem: Problem, tiling: TCubeTiling, preset: HardwarePreset
) -> dict[str, Any]:
    """:func:`simcore.evaluate.estimate_dict` of a kernel, computed once per process.

    The key is the model version, the canonical problem, the complete tiling and the preset's
    content digest (its clock included, so a measurement at another clock or a calibration
    profile is priced anew). The model's answer for a key never changes within a process.

    Returns:
        A copy of the estimate: callers may change it.
    """
    doc = {"model": MODEL_VERSION, "problem": problem.canonical(), "tiling": tiling.to_dict(),
           "preset": preset.digest}  # fmt: skip
    key = hashlib.sha256(canonical_json(doc).encode()).hexdigest()
    estimate = _memo.get(key)
    if estimate is None:
        # Priced outside the map's lock: another thread prices other kernels meanwhile (two
        # threads that price the same kernel at once both store the same answer).
        estimate = estimate_dict(problem, tiling, preset)
        _memo.put(key, estimate)
    return copy.deepcopy(estimate)


def prediction(
    problem: Problem, tiling: TCubeTiling, preset: HardwarePreset, measured: Mapping[str, Any]
) -> dict[str, Any]:
    """The model's prediction beside a measurement, or the tiling's violations when illegal.

    Returns:
        ``{"valid": False, "violations": [...]}`` for an illegal tiling; otherwise ``valid``,
        ``kind`` (which figure is compared), ``predicted_us``, ``measured_us``, ``error``
        ((predicted - measured) / measured), ``model_version``, ``preset_digest`` and, when
        the two are more than :data:`WARN_RATIO` apart, ``warning``.
    """
    report = validate(problem, tiling, preset)
    if not report["valid"]:
        return {"valid": False, "violations": report["violations"]}
    return compare(kernel_estimate(problem, tiling, preset), measured)


def compare(estimate: Mapping[str, Any], measured: Mapping[str, Any]) -> dict[str, Any]:
    """A prediction (an estimate) beside a measurement: see :func:`prediction`."""
    kind = measured_kind(measured)
    predicted = predicted_us(estimate, kind)
    measured_us = float(measured[kind])
    out: dict[str, Any] = {
        "valid": True,
        "kind": kind,
        "predicted_us": predicted,
        "measured_us": measured_us,
        "error": (predicted - measured_us) / measured_us,
        "model_version": estimate["model_version"],
        "preset_digest": estimate["preset_digest"],
    }
    ratio = max(predicted, 1e-12) / measured_us
    if ratio > WARN_RATIO or ratio < 1.0 / WARN_RATIO:
        out["warning"] = (
            f"the measured {kind} {measured_us:.4g} us is {max(ratio, 1 / ratio):.1f}x away "
            f"from the model's {predicted:.4g} us (more than {WARN_RATIO:g}x): check the units "
            "and the tiling"
        )
    return out
