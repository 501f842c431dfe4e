"""Chunking and copy legs (copies.py), by hand."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.estimate.copies import chunking, leg_after_a
from simcore.estimate.estimator import ESTIMATOR_FIELDS
from simcore.hardware.presets import load_preset
from simcore.pipeline.costs import Costs, ceil_div
from simcore.pipeline.traffic import (
    k_chunking,
    largest_core_extent,
    operand_chip_traffic,
    operand_passes,
    slots,
)
from simcore.tiling.problem import Problem
from tests.simcore.estimate.support import records
from tests.support.random_tilings import random_tiling


def test_chunks_of_k_through_the_slots() -> None:
    r = records()  # 1024 of K in 64: 16 steps
    f = dict(r.f, stepKa=np.array([3.0]), stepKb=np.array([16.0]))
    ch = chunking(r.c, r.g, f, None)
    # A: 16 steps in chunks of 3 -> 6 chunks, the last (the K tail) from step 15, one step long.
    assert (ch.kc_a[0], ch.a_last_start[0], ch.r_last_a[0]) == (6, 15, 1)
    # B: one chunk of all 16 steps.
    assert (ch.kc_b[0], ch.b_last_start[0], ch.b_many[0]) == (1, 0, False)
    assert ch.passes_a[0] == ch.loads_a[0] / 6


def test_what_a_b_copy_adds_after_an_a_copy() -> None:
    legs = (10.0, 20.0, 30.0)  # B's GM->UB (or GM->L1), reorder, UB->L1
    assert leg_after_a(False, False, legs) == 10.0  # behind A's copy on MTE2
    assert leg_after_a(False, True, legs) == 60.0  # B's whole staging after A's direct copy
    assert leg_after_a(True, True, legs) == 50.0  # B's GM->UB ran meanwhile
    assert leg_after_a(True, False, legs) == 0.0  # a direct B copy is not behind a staged A


@pytest.mark.parametrize(
    ("soc", "shape"),
    [("Ascend910A", (1000, 777, 1999)), ("Ascend310P3", (4096, 4096, 4096)),
     ("Ascend910B2", (333, 2048, 700))],
)  # fmt: skip
def test_chip_traffic_gives_the_passes_of_the_chunk_shapes(
    soc: str, shape: tuple[int, int, int]
) -> None:
    """The full core's groups and passes the chunk shapes take from the chip traffic (the
    estimator's ``operand_chip_traffic``) are ``operand_passes``' own, bit for bit, for each
    operand of random tilings (tail cores, streamed and kept operands)."""
    m, n, k = shape
    problem = Problem(soc=soc, m=m, n=n, k=k)
    preset = load_preset(soc)
    rng = np.random.default_rng(3)
    tilings = [random_tiling(problem, preset, rng) for _ in range(300)]
    f = {
        name: np.array([getattr(t, name) for t in tilings], dtype=np.float64)
        for name in ESTIMATOR_FIELDS
    }
    c0 = Costs(problem, preset).c0
    order0 = f["iterateOrder"] == 0
    dims = {}
    for op, ext, single, base in (
        ("a", m, "singleCoreM", "baseM"),
        ("b", n, "singleCoreN", "baseN"),
    ):
        cores = ceil_div(ext, f[single])
        extent = largest_core_extent(ext, f[single])
        tail = ext - (cores - 1) * f[single]
        dims[op] = (cores, extent, tail, ceil_div(extent, f[base]), ceil_div(tail, f[base]))
    for op, other, step, base, step_k, depth, inner in (
        ("a", "b", "stepM", "baseM", "stepKa", "depthA1", order0),
        ("b", "a", "stepN", "baseN", "stepKb", "depthB1", ~order0),
    ):
        cores, extent, tail, it_f, it_t = dims[op]
        o_cores, _, _, o_it_f, o_it_t = dims[other]
        n_slots = slots(f[depth], f[step], f[step_k])
        chunks = k_chunking(k, f["baseK"], f[step_k], c0)
        *_, (groups, full, tail_passes) = operand_chip_traffic(
            (extent, tail), (it_f, it_t), f[base] * f[step], f[step], n_slots, inner, chunks,
            cores - 1, o_cores, o_it_f, (o_cores - 1) * o_it_f + o_it_t,
        )  # fmt: skip
        want_groups = ceil_div(it_f, f[step])
        want = operand_passes(
            extent, f[base], f[step], n_slots, chunks[0], o_it_f, inner, (it_f, want_groups)
        )
        np.testing.assert_array_equal(groups, want_groups)
        np.testing.assert_array_equal(full, want[0])
        np.testing.assert_array_equal(tail_passes, want[1])
