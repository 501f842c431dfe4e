"""C left in UB on arch 3510: FixPipe drains L0C -> UB (issue 21, the 950's L0C->UB path).

The Matmul API writes a C whose position is VECIN / VECCALC / VECOUT (a fused vector epilogue)
L0C -> UB directly when the chip has that path (ascend950.md: L0C to UB 128 B per cycle). The
model prices the drain with the named cost ``fixpipe_to_ub_cycles``; a block must fit UB
(``C_UB_CAPACITY``); other chips refuse the option by name.
"""

from __future__ import annotations

from typing import Any

import pytest

from simcore.errors import UnsupportedError
from simcore.hardware.presets import load_preset
from simcore.pipeline.costs import Costs
from simcore.pipeline.simulator import simulate
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.legality import check_tiling
from simcore.tiling.problem import Problem, check_supported
from tiler.tune import parse_tune_request, tune

SOC = "Ascend950PR_9589"
HW = load_preset(SOC)


def _problem(**over: Any) -> Problem:
    return Problem(**{"soc": SOC, "m": 4096, "n": 4096, "k": 64, "dtype": "bf16", **over})


def _fields(**over: int) -> dict[str, int]:
    """256 x 256 x 64 base blocks, L1 double-buffered, one L0C buffer."""
    return {"usedCoreNum": 1, "singleCoreM": 4096, "singleCoreN": 4096, "baseM": 256,
            "baseN": 256, "baseK": 64, "depthA1": 2, "depthB1": 2, "stepM": 1, "stepN": 1,
            "stepKa": 1, "stepKb": 1, "dbL0C": 1, **over}  # fmt: skip


def test_a_256_x_256_bf16_block_drains_to_ub_at_128_bytes_per_cycle() -> None:
    ub = Costs(_problem(c_position="UB"), HW)
    gm = Costs(_problem(), HW)
    # 256 x 256 bf16 = 131,072 B: 1,024 cycles at the spec's 128 B per cycle, not bounded by
    # the GM share; to GM at the fitted FixPipe rate (74.7 B per cycle).
    assert ub.fix_cycles(256, 256, 1.0) == pytest.approx(131072 / 128)
    assert gm.fix_cycles(256, 256, 1e9) == pytest.approx(131072 / 74.7)
    # A tiny block still pays FixPipe's start-up.
    assert ub.fix_cycles(16, 16, 1e9) == pytest.approx(HW.fixpipe_min_cycles)


def test_a_drain_bound_kernel_is_faster_with_c_in_ub() -> None:
    # K = 64: one MMAD per output block, so the drains set the pace.
    times = {}
    for position in ("GM", "UB"):
        p = _problem(c_position=position)
        t = complete_tiling(_fields(usedCoreNum=32, singleCoreM=512, singleCoreN=1024), p, HW)
        sim = simulate(p, t, HW)
        times[position] = (sim.device_time_us, sim.busy_cycles["FIX"])
    assert times["UB"][0] < 0.9 * times["GM"][0]
    assert times["UB"][1] == pytest.approx(times["GM"][1] * 74.7 / 128, rel=1e-6)


def test_c_in_ub_is_refused_by_name_off_arch_3510() -> None:
    with pytest.raises(UnsupportedError) as info:
        check_supported(_problem(soc="Ascend910B2", c_position="UB"), load_preset("Ascend910B2"))
    assert info.value.rule == "UB_OUTPUT_NEEDS_ARCH_3510"
    assert info.value.field == "problem.c_position"


@pytest.mark.parametrize(("out_dtype", "legal"), [("bf16", True), ("fp32", False)])
def test_one_output_block_must_fit_ub(out_dtype: str, legal: bool) -> None:
    # 256 x 256 x 4 B = 256 KiB is more than the 248 KiB of UB; in bf16 it is 128 KiB.
    p = _problem(c_position="UB", out_dtype=out_dtype)
    t = complete_tiling(_fields(), p, HW)
    report = check_tiling(p, t, HW)
    assert ("C_UB_CAPACITY" not in report.violation_ids) is legal


def test_a_tune_with_c_in_ub_fits_the_block_in_ub() -> None:
    problem = {"soc": SOC, "m": 4096, "n": 4096, "k": 1024, "dtype": "bf16",
               "out_dtype": "fp32", "c_position": "UB"}  # fmt: skip
    answer = tune(parse_tune_request({"problem": problem, "budget": 0}))
    t = answer["tiling"]
    assert t["baseM"] * t["baseN"] * 4 <= HW.ub_bytes
    p = Problem(**problem)
    assert check_tiling(p, complete_tiling(t, p, HW), HW).valid
    assert answer["certificate"]["exact"] is True
