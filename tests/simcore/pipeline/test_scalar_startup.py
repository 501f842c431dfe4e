"""The scalar start-up runs before the first instruction issues (seed 004), in both fidelities."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.estimate.estimator import estimate_one
from simcore.hardware.presets import load_preset
from simcore.pipeline.scalar import scalar_cycles, startup_cycles
from simcore.pipeline.simulator import simulate
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import Problem

B1 = load_preset("Ascend910B1")
#: 910B1 with the start-up run serial at the asc-devkit best practice's size (3.536 us to the
#: first MTE2 instruction, 6,542 cycles at 1,850 MHz; docs/calibration.md).
SERIAL = B1.model_copy(update={"scalar_startup_serial": True, "scalar_startup_cycles": 6542.0})
#: The same chip without a start-up: the schedule every pipe would run from cycle 0.
NO_STARTUP = SERIAL.model_copy(update={"scalar_startup_cycles": 0.0})
#: One core, one 128 x 256 block, 16 K steps: long enough that the copies, not the scalar
#: pipe's busy total, set the core's time.
PROBLEM = Problem(soc="Ascend910B1", m=128, n=256, k=1024)
SPEC = {
    "usedCoreNum": 1, "singleCoreM": 128, "singleCoreN": 256, "baseM": 128, "baseN": 256,
    "baseK": 64, "depthA1": 2, "depthB1": 2, "stepM": 1, "stepN": 1, "stepKa": 1, "stepKb": 1,
}  # fmt: skip


def test_the_startup_is_the_scalar_work_before_any_step_or_copy() -> None:
    # 6,542 cycles; 0.68 of it when the tiling is a compile-time constant.
    assert startup_cycles(SERIAL, PROBLEM) == 6542
    constant = PROBLEM.model_copy(update={"constant_tiling": True})
    assert startup_cycles(SERIAL, constant) == pytest.approx(6542 * 0.68)
    # The scalar pipe's busy total still holds it: with no step and no copy it is all there is.
    for p in (PROBLEM, constant):
        assert float(np.asarray(scalar_cycles(SERIAL, p, 0, 0))) == pytest.approx(
            startup_cycles(SERIAL, p)
        )
    # Shipped serial on 910B since model 2026.11.28.2 and on arch 2002 (910A) since
    # 2026.11.28.3; a preset that overlaps it makes no pipe wait for it.
    assert B1.scalar_startup_serial and startup_cycles(B1, PROBLEM) == 6542
    on_910a = load_preset("Ascend910A")
    assert on_910a.scalar_startup_serial
    assert startup_cycles(on_910a, PROBLEM.model_copy(update={"soc": "Ascend910A"})) == 6542
    overlapped = B1.model_copy(update={"scalar_startup_serial": False})
    assert startup_cycles(overlapped, PROBLEM) == 0.0


def test_no_pipe_starts_before_the_startup_and_the_schedule_moves_by_it() -> None:
    t = complete_tiling(SPEC, PROBLEM, B1)
    late, early = simulate(PROBLEM, t, SERIAL), simulate(PROBLEM, t, NO_STARTUP)
    # The first copy issues at the start-up's end, not at cycle 0 ...
    assert float(early.slowest.start.min()) == 0.0
    assert float(late.slowest.start.min()) == pytest.approx(6542)
    # ... and every instruction runs 6,542 cycles later than without it: the core's time grows
    # by the start-up (3.54 us), its pipes' busy totals do not, the scalar pipe's holds it.
    assert np.allclose(late.slowest.start, early.slowest.start + 6542)
    assert late.slowest.makespan_cycles == pytest.approx(early.slowest.makespan_cycles + 6542)
    assert late.device_time_us - early.device_time_us == pytest.approx(6542 / 1850)
    for pipe in ("MTE2", "MTE1", "M", "FIX"):
        assert late.slowest.busy_cycles[pipe] == early.slowest.busy_cycles[pipe]
    scalar = late.slowest.busy_cycles["SCALAR"]
    assert scalar - early.slowest.busy_cycles["SCALAR"] == pytest.approx(6542)
    assert scalar < late.slowest.makespan_cycles  # the copies bind, not the scalar pipe


def test_the_estimator_adds_the_startup_to_its_path() -> None:
    t = complete_tiling(SPEC, PROBLEM, B1)
    late, early = estimate_one(PROBLEM, t, SERIAL), estimate_one(PROBLEM, t, NO_STARTUP)
    assert late["path_cycles"] == pytest.approx(early["path_cycles"] + 6542)
    assert late["core_cycles"] == pytest.approx(early["core_cycles"] + 6542)
    assert late["binding_term"] == early["binding_term"]
    # The two fidelities agree on the kernel with the start-up in it.
    sim = simulate(PROBLEM, t, SERIAL)
    assert late["device_time_us"] == pytest.approx(sim.device_time_us, rel=0.02)


def test_a_kernel_the_scalar_pipe_binds_keeps_its_time() -> None:
    # 16^3 on one core: the scalar pipe's busy total (start-up, one step, two copies) is longer
    # than the start-up plus the copy, load, MMAD and drain, so the serial start-up changes
    # nothing there: the core already waited for the scalar pipe.
    tiny = Problem(soc="Ascend910B1", m=16, n=16, k=16)
    spec = {**SPEC, "singleCoreM": 16, "singleCoreN": 16, "baseM": 16, "baseN": 16, "baseK": 16}
    t = complete_tiling(spec, tiny, B1)
    sim = simulate(tiny, t, SERIAL)
    assert sim.slowest.makespan_cycles == sim.slowest.busy_cycles["SCALAR"]
    assert float(sim.slowest.end.max()) < sim.slowest.busy_cycles["SCALAR"]
