"""tiler.space: the core splits the space records for the study."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from simcore.errors import InputError
from simcore.hardware.presets import load_preset
from simcore.tiling.problem import parse_problem
from tiler.space import build_space


@pytest.mark.parametrize(
    ("problem", "fixed"),
    [
        ({"soc": "Ascend910B2", "m": 1000, "n": 333, "k": 256}, {}),
        ({"soc": "Ascend310P3", "m": 77, "n": 4097, "k": 64, "dtype": "int8"}, {}),
        ({"soc": "Ascend910B2", "m": 512, "n": 512, "k": 128}, {"usedCoreNum": 20}),
        ({"soc": "Ascend910B2", "m": 512, "n": 512, "k": 128, "format_a": "NZ"}, {"baseM": 64}),
    ],
)
def test_core_splits_are_the_distinct_group_splits(
    problem: dict[str, Any], fixed: dict[str, int]
) -> None:
    # The study's split parameter indexes space.splits; each group must point at its own split
    # and the list must hold exactly the distinct splits of the groups, sorted.
    p = parse_problem(problem)
    space = build_space(p, load_preset(p.soc), fixed)
    g = space.groups
    trip = np.stack([g["singleCoreM"], g["singleCoreN"], g["usedCoreNum"]], axis=1)
    assert space.splits == [tuple(int(x) for x in row) for row in np.unique(trip, axis=0)]
    table = np.array(space.splits, dtype=np.int64)
    assert (table[space.split_index] == trip).all()


def test_space_holds_no_dealt_split() -> None:
    """The search keeps one tile per core: its bounds do not price a dealt split's rounds."""
    p = parse_problem({"soc": "Ascend910B2", "m": 4096, "n": 4096, "k": 4096})
    preset = load_preset(p.soc)
    g = build_space(p, preset, {}).groups
    tiles = -(-p.m // g["singleCoreM"]) * -(-p.n // g["singleCoreN"])
    assert len(tiles) and (tiles <= g["usedCoreNum"]).all()
    # MatMulV3's dealt split, pinned: legal (DEALT_SPLIT), but no point of the space.
    with pytest.raises(InputError):
        build_space(p, preset, {"singleCoreM": 128, "singleCoreN": 256, "usedCoreNum": 24})
