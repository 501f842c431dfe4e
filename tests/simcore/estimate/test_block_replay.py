"""The block replay term (block_replay.py): where it is priced, and played in batches."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from simcore.estimate import block_replay, replay
from simcore.estimate.binding import TERM
from simcore.estimate.block_replay import block_replay_term
from simcore.estimate.estimator import ESTIMATOR_FIELDS, estimate_arrays
from simcore.hardware.presets import load_preset
from simcore.tiling.problem import Problem
from tests.simcore.estimate.support import bound_by, makespan, records
from tests.support.random_tilings import random_tiling


def test_no_replay_with_fixpipe_and_direct_copies() -> None:
    # With FixPipe the replay prices only tilings with an operand staged through UB.
    r = records("Ascend910B2")
    mk = makespan(0.0)
    block_replay_term(r, mk)
    assert (mk.value[0], bound_by(mk)) == (0.0, "compute")


def test_replay_raises_the_path_where_both_operands_repeat_every_block() -> None:
    # 910A, 1024^3 fp16, both ND (staged), one row and one column of blocks per pass: both
    # operands copied in every block, a short K loop; the replayed blocks take time.
    spec = {
        "usedCoreNum": 32, "singleCoreM": 256, "singleCoreN": 128, "baseM": 64, "baseN": 64,
        "baseK": 64, "depthA1": 2, "depthB1": 2, "stepM": 1, "stepN": 1, "stepKa": 1,
        "stepKb": 1, "iterateOrder": 0, "dbL0A": 2, "dbL0B": 2, "dbL0C": 2,
    }  # fmt: skip
    r = records("Ascend910A", spec)
    assert r.ch.passes_a[0] >= r.g.blocks[0] - 0.5 and r.ch.passes_b[0] >= r.g.blocks[0] - 0.5
    mk = makespan(1.0)  # a short path so far: the copies take more than the replay's share
    block_replay_term(r, mk)
    assert mk.value[0] > 1.0 and bound_by(mk) == "block_replay"


def _random_fields(soc: str, count: int) -> tuple[Problem, Any, dict[str, np.ndarray]]:
    problem = Problem(soc=soc, m=4096, n=4096, k=4096)
    preset = load_preset(soc)
    rng = np.random.default_rng(16)
    pool = [random_tiling(problem, preset, rng) for _ in range(400)]
    idx = rng.integers(0, len(pool), count)
    fields = {
        f: np.array([getattr(t, f) for t in pool], dtype=np.int64)[idx] for f in ESTIMATOR_FIELDS
    }
    return problem, preset, fields


@pytest.mark.parametrize("soc", ["Ascend910A", "Ascend310P3", "Ascend310B1"])
def test_an_estimate_does_not_depend_on_the_tilings_estimated_with_it(
    soc: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The replays of several blocks of candidates are played together (ReplayQueue): each
    # tiling's estimate and binding term are still those it gets alone, bit for bit.
    # (Long inputs are cut into blocks of one UB data path each: 150,000 candidates give at
    # least three blocks on each path.)
    problem, preset, fields = _random_fields(soc, 150_000)
    played: list[int] = []
    paths = replay.replay_paths

    def spy(requests: list[replay.ReplayRows], *args: Any, **kw: Any) -> list[Any]:
        played.append(len(requests))
        return paths(requests, *args, **kw)

    monkeypatch.setattr(block_replay, "replay_paths", spy)
    together = estimate_arrays(problem, preset, fields)
    assert played and max(played) >= 3  # the three blocks' replays in one call
    monkeypatch.setattr(block_replay, "replay_paths", paths)
    for start in (0, 17_000, 39_000):
        part = {f: v[start : start + 1000] for f, v in fields.items()}
        alone = estimate_arrays(problem, preset, part)
        for key in ("cycles", "path_cycles", "binding_term"):
            assert np.array_equal(alone[key], together[key][start : start + 1000]), key


def test_rows_sharing_a_hash_are_still_told_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every row hashed alike: the replay falls back to comparing whole rows, same paths.
    problem, preset, fields = _random_fields("Ascend910A", 3000)
    expected = estimate_arrays(problem, preset, fields)
    monkeypatch.setattr(replay, "_HASH_WEIGHTS", np.zeros(64, dtype=np.uint64))
    got = estimate_arrays(problem, preset, fields)
    assert (got["binding_term"] == TERM["block_replay"]).sum() > 10
    assert np.array_equal(got["path_cycles"], expected["path_cycles"])
