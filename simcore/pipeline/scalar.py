"""The scalar pipe: the kernel's own instruction issue, address arithmetic and flag waits.

The scalar unit runs the kernel's control code: a start-up (reading the tiling, setting up
addresses), then per K step the loop's bookkeeping and per GM->L1 copy its address and
descriptor set-up. The profiler reports it as a pipe (measured_msprof_910b1_8192.csv
``scalar_us``): about 449 cycles per K step under the Norm template with two copies per step
(cases 0-3), 351 and 248 under MDL with 0.75 and 0.375 copies per step (cases 4 and 5), and
0.68 of that with a compile-time constant tiling (case 7). The copy's share differs between the
templates: a Norm copy moves one base block, an MDL copy a large packet of stepK blocks with a
longer descriptor. The per-step and per-copy work overlaps the other pipes (the kernel is never
scalar-bound in the file), so it enters the core's time only as a busy pipe (the core cannot end
before it).

The start-up need not overlap: the scalar unit decodes every instruction in program order and
issues it to its pipe's queue (seed 004), so no pipe can start before the scalar has read the
tiling, set up the addresses and initialised the Matmul object. With ``scalar_startup_serial``
the model runs it so (:func:`startup_cycles`: the simulator frees its pipes at its end, the
estimator adds it to its path); the busy total holds it either way. The asc-devkit best-practice
case "Matmul高阶API开启Tiling全量常量化" (24 AIC cores, runtime TCubeTiling copied from GM) shows
its first MTE2 instruction at about 3.536 us in the simulated pipeline, 2.185 us with a
compile-time constant tiling (docs/calibration.md, "Small kernels: fixed costs").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simcore.hardware.presets import HardwarePreset
from simcore.tiling.problem import Problem, Template


def startup_cycles(preset: HardwarePreset, problem: Problem) -> float:
    """Cycles from the core's start to its first instruction issue: the serial start-up.

    With ``scalar_startup_serial``, ``scalar_startup_cycles`` times
    ``constant_tiling_scalar_factor`` with a constant tiling (else 1), the start-up's share of
    :func:`scalar_cycles`; else 0 (the start-up overlaps the other pipes). Every pipe of the
    core is idle until then: the simulator frees its pipes at this time, the estimator adds it
    to its path.
    """
    if not preset.scalar_startup_serial:
        return 0.0
    factor = preset.constant_tiling_scalar_factor if problem.constant_tiling else 1.0
    return float(preset.scalar_startup_cycles * factor)


def after_startup(makespan: Any, busiest: Any, total: Any, startup: float) -> Any:
    """``min(max(start-up + makespan, busiest), total)``: the core's time after the start-up.

    The estimator's combination of its paths (``_finish_block`` of
    :mod:`simcore.estimate.estimator`): the pipeline path starts after the serial start-up
    (:func:`startup_cycles`), then is clipped to [busiest pipe, sum of work]. Non-decreasing in
    each argument, so lower bounds of the makespan, the busiest pipe and the sum of work give a
    lower bound of the estimate; with ``startup`` 0 it is the combination without it. The sum of
    work holds the scalar pipe's busy total, which holds the start-up
    (:func:`scalar_cycles`): a bound that leaves the scalar pipe out of its sum has no start-up
    to add to its path. Scalars or arrays.
    """
    return np.minimum(np.maximum(makespan + startup, busiest), total)


def least_scalar_cycles(preset: HardwarePreset, problem: Problem, steps: Any) -> Any:
    """The scalar pipe's busy cycles with ``steps`` K steps and no DMA copy, at least.

    :func:`scalar_cycles` is non-decreasing in the copies (``copies >= 0``), so this is at most
    the scalar pipe's busy total of every tiling with those steps, and at least the start-up
    (:func:`startup_cycles`, with the same factor) where the start-up runs serial.
    """
    return scalar_cycles(preset, problem, steps, 0.0)


def scalar_cycles(preset: HardwarePreset, problem: Problem, steps: Any, copies: Any) -> Any:
    """Busy cycles of one core's scalar pipe.

    ``(start-up + steps x step cycles + copies x copy cycles) x factor``: ``steps`` the core's K
    steps (one MMAD each), ``copies`` its GM->L1 (or GM->UB) DMA copies (Norm: one per base
    block), the copy cycles of the problem's template, the factor
    ``constant_tiling_scalar_factor`` with a constant tiling (else 1). Scalars or arrays.
    """
    per_copy = (
        preset.scalar_norm_copy_cycles
        if problem.template is Template.NORM
        else preset.scalar_mdl_copy_cycles
    )
    factor = preset.constant_tiling_scalar_factor if problem.constant_tiling else 1.0
    work = preset.scalar_startup_cycles + steps * preset.scalar_step_cycles + copies * per_copy
    return work * factor
