"""tiler.space: the core splits the space records for the study."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from simcore.hardware.presets import load_preset
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.legality import check_tiling
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


def _tiles(p: Any, g: dict[str, Any]) -> Any:
    return -(-p.m // g["singleCoreM"]) * -(-p.n // g["singleCoreN"])


def test_space_holds_matmul_v3s_dealt_split_and_tiles_of_two_blocks() -> None:
    """On 910B the space holds dealt splits: every core, tiles of 1 or 2 base blocks a side."""
    p = parse_problem({"soc": "Ascend910B2", "m": 4096, "n": 4096, "k": 4096})
    preset = load_preset(p.soc)
    space = build_space(p, preset, {})
    g = space.groups
    dealt = _tiles(p, g) > g["usedCoreNum"]
    assert space.dealt and dealt.any() and (~dealt).any()
    # Dealt splits run on every cube core (DEALT_SPLIT; fewer would leave cores idle in rounds).
    assert (g["usedCoreNum"][dealt] == preset.cube_core_count).all()
    # Their tile is whole base blocks, one or two along each side.
    per_m = g["singleCoreM"][dealt] / g["baseM"][dealt]
    per_n = g["singleCoreN"][dealt] / g["baseN"][dealt]
    assert set(np.unique(per_m).tolist()) == {1.0, 2.0}
    assert set(np.unique(per_n).tolist()) == {1.0, 2.0}
    # MatMulV3's kernel: 128 x 256 x 64 base blocks as the tiles (matmul_v3_base_tiling.cpp).
    v3 = {"usedCoreNum": 24, "singleCoreM": 128, "singleCoreN": 256, "baseM": 128,
          "baseN": 256, "baseK": 64}  # fmt: skip
    assert space.holds_group(v3)
    # Pinned, the dealt split is a point of the space; its points check legal with the warning.
    pinned = build_space(p, preset, {"singleCoreM": 128, "singleCoreN": 256, "usedCoreNum": 24})
    assert pinned.size and (_tiles(p, pinned.groups) > 24).all()
    pts = pinned.inner_points(0)
    point = {name: int(arr[0]) for name, arr in pts.items()}
    report = check_tiling(p, complete_tiling(point, p, preset), preset)
    assert report.valid and "DEALT_SPLIT" in report.warning_ids
    # The one-tile-per-core splits are as before: usedCoreNum = the tiles, at most the cores.
    assert (g["usedCoreNum"][~dealt] == _tiles(p, g)[~dealt]).all()


@pytest.mark.parametrize(
    ("soc", "fixed"),
    [
        ("Ascend310P3", {}),  # operands staged through UB: the dealt term's p95 22-35 %
        ("Ascend910A", {}),
        ("Ascend950PR", {}),  # the dealt bound is too loose there for the screening
        ("Ascend910B2", {"usedCoreNum": 20}),  # a pinned usedCoreNum below the cores
    ],
)
def test_no_dealt_split_where_the_space_leaves_them_out(soc: str, fixed: dict[str, int]) -> None:
    p = parse_problem({"soc": soc, "m": 4096, "n": 4096, "k": 4096})
    space = build_space(p, load_preset(soc), fixed)
    g = space.groups
    assert not space.dealt
    assert (_tiles(p, g) <= g["usedCoreNum"]).all()
