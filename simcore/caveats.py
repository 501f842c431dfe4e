"""Where the model is known to be unsure for a problem: named caveats with their sources.

The model prices what the sources size. Some effects are documented but unsized, and some
constants of a chip are assumptions, not measurements (docs/calibration.md, "Open items" and
"What is assumed"). A user who takes a tiling from the service should know when their problem
sits on one of those, so :func:`model_caveats` names each that applies. It changes no estimate.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

from simcore.hardware.dtypes import DType
from simcore.hardware.presets import HardwarePreset
from simcore.tiling.problem import Format, Problem

#: catlass' A2 / A3 b16 selector (hicann/catlass examples/102_dynamic_optimized_matmul/include/
#: select_kernel_b16.h, GetPaddingTag): an ND operand whose inner axis is larger than, and a
#: multiple of, this many elements "meets meta conflicts" and is padded ...
META_CONFLICT_INNER_ELEMENTS = 8192
#: ... when its outer axis is at least this long (the same rule).
META_CONFLICT_MIN_OUTER = 2048
#: The rule's chips (A2 = 910B, A3 = 910_93: npu_arch 2201) and dtypes (the b16 selector).
META_CONFLICT_ARCHS = (2201,)
META_CONFLICT_DTYPES = (DType.FP16, DType.BF16)
#: A fixed time the model may lack is worth naming when it is at least this share of the
#: kernel's predicted device time (below it, it is within the fit residuals of
#: docs/calibration.md, 0.0-5.6 % on MTE2).
STARTUP_SHARE_WORTH_NAMING = 0.05

_CALIBRATION_DOC = "docs/calibration.md"


@dataclass(frozen=True)
class Caveat:
    """One known limit of the model that applies to a problem.

    Attributes:
        id: A stable name (``meta_conflict_stride``, ``serial_startup``, ``assumed_constants``).
        message: What it means for this problem's prediction, in a sentence or two.
        source: Where the condition comes from.
    """

    id: str
    message: str
    source: str


def _nd_operands(problem: Problem) -> list[tuple[str, int, int]]:
    """The ND operands as (name, inner axis, outer axis) in elements, following the transposes."""
    out: list[tuple[str, int, int]] = []
    if problem.format_a is Format.ND:
        inner, outer = (problem.m, problem.k) if problem.trans_a else (problem.k, problem.m)
        out.append(("A", inner, outer))
    if problem.format_b is Format.ND:
        inner, outer = (problem.k, problem.n) if problem.trans_b else (problem.n, problem.k)
        out.append(("B", inner, outer))
    return out


def meta_conflict(problem: Problem, preset: HardwarePreset) -> Caveat | None:
    """The large power-of-two row pitch rule of catlass, which the model does not price.

    Returns:
        The caveat when an ND operand's inner axis is a multiple of 8192 elements above 8192 and
        its outer axis at least 2048, on A2 / A3 with a 16-bit dtype; else None.
    """
    if preset.npu_arch not in META_CONFLICT_ARCHS or problem.dtype not in META_CONFLICT_DTYPES:
        return None
    hits = [
        f"{name} (inner axis {inner}, outer {outer})"
        for name, inner, outer in _nd_operands(problem)
        if inner > META_CONFLICT_INNER_ELEMENTS
        and inner % META_CONFLICT_INNER_ELEMENTS == 0
        and outer >= META_CONFLICT_MIN_OUTER
    ]
    if not hits:
        return None
    return Caveat(
        id="meta_conflict_stride",
        message=(
            f"{', '.join(hits)}: a row pitch that is a multiple of "
            f"{META_CONFLICT_INNER_ELEMENTS} elements above it. catlass pads such operands "
            "because of 'meta conflicts'; no source sizes the slowdown, so the model does not "
            "price it and this prediction may be optimistic. Measure against a copy whose "
            "pitch is padded by 256 elements."
        ),
        source=(
            "hicann/catlass examples/102_dynamic_optimized_matmul/include/select_kernel_b16.h "
            f"(GetPaddingTag); {_CALIBRATION_DOC}, 'Large power-of-two row strides'"
        ),
    )


def serial_startup(preset: HardwarePreset, device_time_us: float) -> Caveat | None:
    """The scalar start-up the model overlaps with the first copies, where it is a large share.

    Returns:
        The caveat when the preset's scalar start-up is at least 5 % of the predicted device
        time and overlapped (``scalar_startup_serial`` off); else None.
    """
    if preset.scalar_startup_serial:
        return None  # the model runs it before the first copy already
    startup_us = preset.cycles_to_us(preset.scalar_startup_cycles)
    if device_time_us <= 0.0 or startup_us < STARTUP_SHARE_WORTH_NAMING * device_time_us:
        return None
    share = startup_us / device_time_us
    return Caveat(
        id="serial_startup",
        message=(
            f"The scalar start-up ({preset.scalar_startup_cycles:,.0f} cycles, "
            f"{startup_us:.2f} us) overlaps the first copies in the model; if the board runs it "
            f"before them, this kernel takes up to {share:.0%} longer than predicted."
        ),
        source=f"{_CALIBRATION_DOC}, 'Small kernels: fixed costs'",
    )


@cache
def _model_constant_names() -> frozenset[str]:
    """The names model_constants.json gives a value for, on any architecture.

    A preset takes the rest of its section from another architecture's value, and says so in
    its source ("assumption: arch 2201's value"), so the names are the union of the sections.
    """
    text = files("simcore.hardware.data").joinpath("model_constants.json").read_text()
    sections = [v for k, v in json.loads(text).items() if not k.startswith("_")]
    return frozenset(name for section in sections for name in section)


def assumed_constants(preset: HardwarePreset) -> Caveat | None:
    """The preset's model constants that are assumptions, not fits to a measurement.

    The scalar start-up (its size and whether it runs serial) is left to
    :func:`serial_startup`, which says when it matters.

    Returns:
        The caveat naming them when any of their sources says ``assumption``; else None.
    """
    names = sorted(
        k
        for k in _model_constant_names() - {"scalar_startup_cycles", "scalar_startup_serial"}
        if preset.sources.get(k, "").startswith("assumption")
    )
    if not names:
        return None
    return Caveat(
        id="assumed_constants",
        message=(
            f"No board measurement backs these model constants on {preset.soc}: "
            f"{', '.join(names)}. Rankings of tilings are more trustworthy than the absolute "
            "time."
        ),
        source=f"simcore/hardware/data/model_constants.json; {_CALIBRATION_DOC}",
    )


def model_caveats(problem: Problem, preset: HardwarePreset, device_time_us: float) -> list[Caveat]:
    """Every caveat that applies to a problem on a chip, given its predicted device time.

    Args:
        problem: The problem as the user gave it.
        preset: The chip.
        device_time_us: The predicted device time of the tiling being explained.

    Returns:
        The caveats, in a fixed order; empty when none applies.
    """
    found = (
        meta_conflict(problem, preset),
        serial_startup(preset, device_time_us),
        assumed_constants(preset),
    )
    return [c for c in found if c is not None]
