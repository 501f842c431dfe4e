"""Transfer and MMAD costs (pipeline/transfer.py, pipeline/mmad.py) by hand."""

from __future__ import annotations

import numpy as np

from simcore.hardware.presets import load_preset
from simcore.pipeline.costs import Costs
from simcore.pipeline.mmad import mmad_cycles, mmad_k_cycles
from simcore.pipeline.transfer import copy_totals, l1_to_l0_cycles, with_bias_slices
from simcore.tiling.problem import Problem


def test_direct_copy_totals_are_latency_per_copy_plus_bytes_at_the_capped_rate() -> None:
    problem = Problem(soc="Ascend910B2", m=1024, n=1024, k=1024, format_a="NZ")
    c = Costs(problem, load_preset("Ascend910B2"))
    p = c.preset
    mte2, vec, mte3 = copy_totals(c, np.array([4.0]), np.array([65536.0]), True, np.array([8.0]))
    rate = min(8.0, p.gm_to_l1_peak_bytes_per_cycle)
    assert mte2[0] == 4 * p.gm_to_l1_latency_cycles + 65536 / rate
    assert (vec, mte3) == (0.0, 0.0)


def test_l1_to_l0_is_the_simulators_load() -> None:
    c = Costs(Problem(soc="Ascend910B2", m=256, n=256, k=256), load_preset("Ascend910B2"))
    p = c.preset
    # 48 rows (3 fractal rows of 16) over a K of 64 fp16 values: 48 x 128 bytes.
    assert l1_to_l0_cycles(p, True, 48, 128.0) == p.mte1_latency_cycles + 48 * 128 / (
        p.l1_to_l0a_bytes_per_cycle
    )
    assert l1_to_l0_cycles(p, True, 48, 128.0) == c.la_cycles(40, 64)
    assert l1_to_l0_cycles(p, False, 48, 128.0) == c.lb_cycles(33, 60)


def test_bias_slices_add_a_latency_per_block_and_the_values_of_each_row_block() -> None:
    problem = Problem(soc="Ascend910B2", m=256, n=256, k=256, bias=True)
    c = Costs(problem, load_preset("Ascend910B2"))
    p = c.preset
    out = with_bias_slices(c, 1000.0, 6, 2, 300, 1e9)
    assert out == 1000.0 + 6 * p.gm_to_l1_latency_cycles + 2 * 300 * (
        c.bias_bytes / p.gm_to_l1_peak_bytes_per_cycle
    )


def test_mmad_is_overhead_plus_a_fractal_time_per_fractal() -> None:
    assert mmad_cycles(10.0, 2.0, 3, 4, 5) == 10 + 3 * 4 * 5 * 2
    assert mmad_k_cycles(10.0, 3 * 4 * 2.0, 5) == mmad_cycles(10.0, 2.0, 3, 4, 5)
    c = Costs(Problem(soc="Ascend910B2", m=256, n=256, k=256), load_preset("Ascend910B2"))
    assert c.mmad_cycles(40, 17, 64) == mmad_cycles(
        c.preset.mmad_overhead_cycles, c.fractal_cycles, 3, 2, 4
    )


def test_drains_by_hand() -> None:
    from simcore.pipeline.drain import fixpipe_cycles, ub_to_gm_cycles

    p = load_preset("Ascend910B2")
    # A 64 KiB block at the capped rate, at least FixPipe's minimum.
    rate = min(64.0, p.fixpipe_bytes_per_cycle)
    assert fixpipe_cycles(p, 65536.0, 64.0) == max(65536 / rate, p.fixpipe_min_cycles)
    assert fixpipe_cycles(p, 1.0, 64.0) == p.fixpipe_min_cycles
    q = load_preset("Ascend910A")
    # Off the vector path one UB->GM copy per ND row, each a latency, the bytes at the peak.
    assert ub_to_gm_cycles(q, 16, 4096.0, 8.0, False) == (
        16 * q.ub_to_gm_latency_cycles + 4096 / q.ub_to_gm_peak_bytes_per_cycle
    )
