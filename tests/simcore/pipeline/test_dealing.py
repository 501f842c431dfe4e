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
    """Per distinct program: the last tile's shape, the tiles of each shape and the cores."""
    problem = Problem(m=m, n=n, k=512, l2_rounds=l2_rounds)
    fields = {**FIELDS, "singleCoreM": single_m, "singleCoreN": single_n, "usedCoreNum": used}
    tiling = complete_tiling(fields, problem, load_preset("Ascend910B2"))
    want: Counter[tuple[int, ...]] = Counter()
    for p in core_programs(problem, tiling):
        shapes = [_shape_of(problem, single_m, single_n, r, c) for r, c in p.program]
        counts = np.bincount(shapes, minlength=4)
        want[(shapes[-1], *counts.tolist())] += p.cores
    m_tiles, n_tiles = -(-m // single_m), -(-n // single_n)
    got = dealt_programs(
        m_tiles, n_tiles, bool(has_tail(m, single_m)), bool(has_tail(n, single_n)), used,
        l2_rounds,
    )  # fmt: skip
    have = Counter(
        {
            (int(f), *c.tolist()): int(k)
            for f, c, k in zip(got.last, got.counts, got.cores, strict=True)
        }
    )
    assert have == want
    assert int(got.counts.sum(axis=1).max()) == -(-(m_tiles * n_tiles) // used)


def test_closed_form_counts_match_the_walk_on_random_splits() -> None:
    """core_counts (closed form, many splits at once) against the simulator's programs."""
    rng = np.random.default_rng(11)
    preset = load_preset("Ascend910B2")
    for _ in range(40):
        m, n = int(rng.integers(64, 3000)), int(rng.integers(64, 3000))
        single_m, single_n = 16 * int(rng.integers(1, 20)), 16 * int(rng.integers(1, 20))
        used = int(rng.integers(2, 25))
        l2_rounds = int(rng.integers(1, 6))
        if -(-m // single_m) * -(-n // single_n) <= used:
            continue
        problem = Problem(m=m, n=n, k=256, l2_rounds=l2_rounds)
        fields = {**FIELDS, "singleCoreM": single_m, "singleCoreN": single_n, "usedCoreNum": used}
        fields.update(baseM=16, baseN=16, stepKa=1, stepKb=1, depthA1=2, depthB1=2)
        tiling = complete_tiling(fields, problem, preset)
        want: Counter[tuple[int, ...]] = Counter()
        for p in core_programs(problem, tiling):
            shapes = [_shape_of(problem, single_m, single_n, r, c) for r, c in p.program]
            want[(shapes[-1], *np.bincount(shapes, minlength=4).tolist())] += p.cores
        got = dealt_programs(
            -(-m // single_m), -(-n // single_n), bool(has_tail(m, single_m)),
            bool(has_tail(n, single_n)), used, l2_rounds,
        )  # fmt: skip
        have = Counter(
            {
                (int(f), *c.tolist()): int(k)
                for f, c, k in zip(got.last, got.counts, got.cores, strict=True)
            }
        )
        assert have == want, (m, n, single_m, single_n, used, l2_rounds)


def test_program_arrays_keep_the_slowest_programs_per_candidate() -> None:
    """Padded per candidate; only programs no other covers with tiles at least as large.

    With any per-tile figures that grow with the tile (the full tile's above either tail's,
    each above the corner tile's), the slowest of the kept programs is the slowest of all.
    """
    rng = np.random.default_rng(26)
    sm = np.array([128, 112, 224, 96, 256])
    sn = np.array([256, 256, 144, 176, 48])
    used = np.full(5, 24)
    m, n = 1000, 3000
    counts, last = program_arrays(m, n, sm, sn, used, 2)
    assert counts.shape[:2] == last.shape and counts.shape[2] == 4
    for i in range(sm.shape[0]):
        m_tiles, n_tiles = -(-m // int(sm[i])), -(-n // int(sn[i]))
        every = dealt_programs(
            m_tiles, n_tiles, bool(has_tail(m, sm[i])), bool(has_tail(n, sn[i])), 24, 2
        )
        for _ in range(50):
            corner = rng.uniform(0, 1, size=2)
            tails = corner + rng.uniform(0, 1, size=(2, 2))
            full = tails.max(axis=0) + rng.uniform(0, 1, size=2)
            tile = np.stack([full, tails[0], tails[1], corner], axis=1)
            kept = _slowest(counts[i], last[i], tile)
            assert kept == _slowest(every.counts.astype(np.float64), every.last, tile)


def _slowest(counts: np.ndarray, last: np.ndarray, tile: np.ndarray) -> float:
    """The slowest program: its last tile's makespan + each other tile's period (per shape)."""
    mk, period = tile
    others = counts - (last[:, None] == np.arange(4))
    # Term by term, not ``others @ period``: BLAS may order a matrix-vector product's sums by
    # the matrix's row count (1 ulp apart on some hosts), and the two calls compare exactly.
    per_shape = others * period
    return float(
        np.max(mk[last] + per_shape[:, 0] + per_shape[:, 1] + per_shape[:, 2] + per_shape[:, 3])
    )
