"""The dealing rule: the estimator's count vectors of core programs against the simulator's."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from simcore.hardware.presets import load_preset
from simcore.pipeline.dealing import dealt_programs, has_tail, program_arrays
from simcore.pipeline.traffic import core_programs
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import Problem

#: A dealt split's fields (910B2 fp16, 24 cores), tiles of singleCoreM x singleCoreN.
FIELDS = {
    "usedCoreNum": 24, "baseM": 128, "baseN": 128, "baseK": 64, "depthA1": 8, "depthB1": 8,
    "stepM": 1, "stepN": 1, "stepKa": 4, "stepKb": 4, "iterateOrder": 0, "dbL0A": 2, "dbL0B": 2,
    "dbL0C": 1,
}  # fmt: skip


def _shape_of(problem: Problem, single_m: int, single_n: int, rows: int, cols: int) -> int:
    """The shape index (simcore.pipeline.dealing.TILE_SHAPES) of a rows x cols tile."""
    tail_m = bool(has_tail(problem.m, single_m)) and rows < min(single_m, problem.m)
    tail_n = bool(has_tail(problem.n, single_n)) and cols < min(single_n, problem.n)
    return int(tail_m) + 2 * int(tail_n)


@pytest.mark.parametrize("l2_rounds", [1, 2, 3, 4])
@pytest.mark.parametrize(
    ("m", "n", "single_m", "single_n", "used"),
    [
        (1000, 3000, 128, 256, 24),  # tails along M and N
        (1024, 3000, 128, 256, 24),  # along N only
        (1000, 3072, 128, 256, 24),  # along M only
        (2048, 2048, 128, 256, 24),  # none
        (300, 500, 128, 256, 4),  # 3 x 2 tiles, two rounds on cores 0 and 1
        (843, 929, 224, 144, 20),
    ],
)
def test_programs_count_the_simulators_core_programs(
    m: int, n: int, single_m: int, single_n: int, used: int, l2_rounds: int
) -> None:
    """Per distinct program: the first tile's shape, the tiles of each shape and the cores."""
    problem = Problem(m=m, n=n, k=512, l2_rounds=l2_rounds)
    fields = {**FIELDS, "singleCoreM": single_m, "singleCoreN": single_n, "usedCoreNum": used}
    tiling = complete_tiling(fields, problem, load_preset("Ascend910B2"))
    want: Counter[tuple[int, ...]] = Counter()
    for p in core_programs(problem, tiling):
        shapes = [_shape_of(problem, single_m, single_n, r, c) for r, c in p.program]
        counts = np.bincount(shapes, minlength=4)
        want[(shapes[0], *counts.tolist())] += p.cores
    m_tiles, n_tiles = -(-m // single_m), -(-n // single_n)
    got = dealt_programs(
        m_tiles, n_tiles, bool(has_tail(m, single_m)), bool(has_tail(n, single_n)), used,
        l2_rounds,
    )  # fmt: skip
    have = Counter(
        {
            (int(f), *c.tolist()): int(k)
            for f, c, k in zip(got.first, got.counts, got.cores, strict=True)
        }
    )
    assert have == want
    assert int(got.counts.sum(axis=1).max()) == -(-(m_tiles * n_tiles) // used)


def test_program_arrays_keep_the_slowest_programs_per_candidate() -> None:
    """Padded per candidate; each split's undominated programs (same first shape) only."""
    sm, sn, used = np.array([128, 256, 128]), np.array([256, 256, 256]), np.array([24, 24, 24])
    counts, first = program_arrays(1000, 3000, sm, sn, used, 1)
    assert counts.shape[:2] == first.shape and counts.shape[2] == 4
    for i in range(3):
        m_tiles, n_tiles = -(-1000 // int(sm[i])), -(-3000 // int(sn[i]))
        full = dealt_programs(m_tiles, n_tiles, True, True, 24, 1)
        # Every program of the split is covered by one kept (same first, at least its tiles).
        for f, c in zip(full.first, full.counts, strict=True):
            covered = (first[i] == f) & np.all(counts[i] >= c, axis=1)
            assert covered.any()
