"""How soon a dealt core's next tile starts (dealt.py's seam terms), by hand and end to end."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from simcore.estimate.compute import ComputePath
from simcore.estimate.dealt import (
    next_tile_seam,
    program_makespan,
    rounds_makespan,
    slot_release_back,
    tile_period,
    tile_seam,
)
from simcore.estimate.estimator import estimate_one
from simcore.estimate.paths import (
    QueuePaths,
    blocks_after_last_copy,
    first_block_steps,
    steps_after_last_copy,
)
from simcore.hardware.presets import load_preset
from simcore.pipeline.dealing import core_counts
from simcore.pipeline.simulator import simulate
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import Problem
from tests.simcore.estimate.support import arr, records


def test_the_seam_is_the_latest_of_the_makespan_chains_and_the_last_copy() -> None:
    # A tile of 1,000 cycles whose next tile may start 700 before its end, MTE2 done at 450.
    assert tile_seam(arr(1000), arr(700), arr(450))[0] == 450
    # MTE2 done earlier than the makespan chains allow: they set it.
    assert tile_seam(arr(1000), arr(400), arr(450))[0] == 600
    # R = 3 tiles: the first's makespan and two periods, each at least the busiest pipe.
    seam = tile_seam(arr(1000), arr(700), arr(450))
    assert rounds_makespan(arr(1000), arr(500), seam, arr(3))[0] == 1000 + 2 * 500
    assert tile_period(arr(300), seam)[0] == 450


def test_the_slot_of_the_next_tiles_first_chunk_frees_chunks_back() -> None:
    steps = (arr(4), arr(310), arr(165))  # K steps, a full step's period, the K-tail one's
    # One slot: the tile's last chunk, freed at the last MMAD's start.
    assert slot_release_back(arr(1), (arr(4), arr(8), arr(2)), arr(1), arr(1), steps)[0] == 0
    # Two slots of one-step chunks, four a pass: the chunk before the last, one step back
    # (the period into the K-tail step).
    assert slot_release_back(arr(2), (arr(4), arr(8), arr(2)), arr(1), arr(1), steps)[0] == 165
    # Three slots of two-step chunks, the last one step: 1 + 2 = 3 steps back.
    back = slot_release_back(arr(3), (arr(4), arr(8), arr(2)), arr(2), arr(1), steps)[0]
    assert back == 2 * 310 + 165
    # Two slots, one chunk a pass copied again for each of 2 blocks: the block before's chunk,
    # one pass of 4 steps back.
    back = slot_release_back(arr(2), (arr(1), arr(2), arr(2)), arr(4), arr(4), steps)[0]
    assert back == 3 * 310 + 165
    # One chunk kept over both blocks (one copy, two slots): the slot is long free.
    assert np.isinf(slot_release_back(arr(2), (arr(1), arr(1), arr(2)), arr(4), arr(4), steps))


def test_next_tile_seam_takes_the_earliest_overlap_of_its_chains() -> None:
    r = records()  # 910B2 fp16, no bias
    bt = replace(r.bt, dr_last=arr(90))
    typ = replace(r.typ, mm_kt=arr(30))
    avg = replace(r.avg, per=arr(300), per_kt=arr(200))
    cp = replace(r.cp, ga1=arr(1000))
    cm = ComputePath(compute_path=arr(0), start=arr(2500), start_0=arr(0))
    qp = QueuePaths(arr(0), arr(6000), arr(0), arr(0), arr(0), arr(1500))
    g = replace(r.g, k_iter=arr(4), blocks=arr(1))
    # A in one slot of one 4-step chunk; B in two slots of four 1-step chunks.
    ch = replace(
        r.ch, slots_a=arr(1), kc_a=arr(1), loads_a=arr(1), step_ka=arr(4), r_last_a=arr(4),
        slots_b=arr(2), kc_b=arr(4), loads_b=arr(4), step_kb=arr(1), r_last_b=arr(1),
        single_a=np.array([True]), single_b=np.array([False]),
    )  # fmt: skip
    seam = next_tile_seam(replace(r, g=g, bt=bt, typ=typ, avg=avg, cp=cp, ch=ch), cm, qp, arr(0))
    # M chain: last drain and the start-up, 2,590; A's slot: the last MMAD's start (drain and
    # K-tail MMAD, 120); B's: 200 cycles earlier, plus A's first copy before it on MTE2.
    assert seam.overlap[0] == 90 + 30
    # The last copy's end: the copy path less what follows the last copy.
    assert seam.copy_end[0] == 6000 - 1500
    # The floors leave the makespan chains out.
    floor = next_tile_seam(replace(r, floor=True), cm, qp, arr(0))
    assert np.isinf(floor.overlap[0]) and floor.copy_end[0] == 0


def test_steps_after_the_last_copy_end_with_the_k_tail_step() -> None:
    # 910B3 fp16 135 x 260 x 2048, baseK 1760 (one L0A, one L0B buffer): after B's last copy
    # the full step (loads 244 + 464, MMAD 112) and the 288-deep K-tail step (loads 60 + 96,
    # MMAD 20), 996 cycles in the simulator.
    kt = (arr(60), arr(96), arr(112 + 60 + 96), arr(20))
    assert steps_after_last_copy(arr(2), arr(820), (arr(244), arr(464)), kt)[0] == 996
    # The last copy is the K-tail step's own: its loads and MMAD (276 cycles on 910B3 fp16
    # 1234 x 900 x 256 with baseK 224: loads 52 + 96, MMAD 128).
    kt = (arr(52), arr(96), arr(0), arr(128))
    assert steps_after_last_copy(arr(1), arr(1632), (arr(220), arr(528)), kt)[0] == 276


def test_first_block_steps_price_the_k_tail_step_as_its_own() -> None:
    r = records()
    # 910B3 fp16 1234 x 900 x 256, baseK 224: the first MMAD (884) is in the period, the K-tail
    # step's loads after it (52 + 96) and its MMAD (128): 1,160 from the first MMAD's start.
    typ = replace(r.typ, per=arr(1632), per_kt=arr(884 + 52 + 96), mm_kt=arr(128), mm=arr(884))
    assert first_block_steps(arr(1), replace(r, typ=typ))[0] == 884 + 52 + 96 + 128
    # One K step: its MMAD.
    assert first_block_steps(arr(0), replace(r, typ=typ))[0] == 884


#: Dealt points of ``benchmarks.agreement_dealt`` the seam terms price (each was 6.9-14.5 %
#: off the simulator before them): (chip, problem, tiling).
DEALT_CASES = [
    ("Ascend910B2", dict(m=176, n=1568, k=1024, dtype="bf16", format_a="NZ", format_b="NZ",
     trans_a=True), dict(usedCoreNum=24, singleCoreM=32, singleCoreN=96, baseM=16, baseN=96,
     baseK=272, depthA1=8, depthB1=8, stepKa=4, stepKb=4, iterateOrder=1, dbL0A=2, dbL0B=1,
     dbL0C=2)),
    ("Ascend910B4", dict(m=1358, n=1308, k=512, dtype="int8", trans_b=True),
     dict(usedCoreNum=20, singleCoreM=64, singleCoreN=128, baseM=32, baseN=128, baseK=160,
     depthA1=2, depthB1=8, stepKa=1, stepKb=4, iterateOrder=1, dbL0A=1, dbL0B=2, dbL0C=1)),
    ("Ascend910B2", dict(m=1262, n=960, k=256, dtype="bf16", trans_a=True, trans_b=True),
     dict(usedCoreNum=24, singleCoreM=16, singleCoreN=352, baseM=16, baseN=176, baseK=176,
     depthA1=4, depthB1=2, stepKa=2, stepKb=2, iterateOrder=1, dbL0A=1, dbL0B=1, dbL0C=1)),
    ("Ascend910B3", dict(m=615, n=1555, k=256, dtype="bf16", trans_a=True),
     dict(usedCoreNum=20, singleCoreM=224, singleCoreN=48, baseM=224, baseN=48, baseK=144,
     depthA1=4, depthB1=2, stepKa=2, stepKb=2, iterateOrder=1, dbL0A=1, dbL0B=2, dbL0C=2)),
]  # fmt: skip


@pytest.mark.parametrize("soc, problem, fields", DEALT_CASES)
def test_dealt_points_agree_with_the_simulator(
    soc: str, problem: dict[str, object], fields: dict[str, int]
) -> None:
    """A dealt core's tiles priced with their seams: within 2 % of the simulator."""
    p = Problem(soc=soc, **problem)  # type: ignore[arg-type]
    preset = load_preset(soc)
    tiling = complete_tiling({"stepM": 1, "stepN": 1, **fields}, p, preset)
    est = estimate_one(p, tiling, preset)
    assert est["binding_term"] == "dealt_rounds"
    assert est["time_us"] == pytest.approx(simulate(p, tiling, preset).time_us, rel=0.02)


def test_a_core_is_its_tiles_periods_but_the_last_and_the_last_tiles_makespan() -> None:
    # A full tile (makespan 3,784, period 2,612) then a tail tile (makespan 1,301): the tail
    # starts one full period after the full tile and runs to its end (910B4 int8 560 x 1008 x
    # 256: the simulator's core takes 4,001 cycles after the start-up).
    assert program_makespan(arr(1301), [arr(1), arr(0)], [arr(2612), arr(891)])[0] == 3913
    # One shape: the first tile's makespan and R - 1 periods, as before.
    assert program_makespan(arr(1000), [arr(2)], [arr(600)])[0] == 2200


def test_dealing_names_each_cores_last_tile_shape() -> None:
    # 3 x 2 tiles (rows 128, 128, 44; columns 256, 244) on 4 cores: cores 0 and 1 end on the
    # last row (the tail along M; core 1's is the corner), cores 2 and 3 on the first full row.
    counts, last, valid = core_counts(np.array([3]), np.array([2]), (True, True), 4, 1)
    assert valid[0].tolist() == [True] * 4
    assert last[0].tolist() == [1, 3, 0, 2]
    assert counts[0].tolist() == [[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 0, 0], [0, 0, 1, 0]]


def test_blocks_after_the_last_copy_run_their_k_loops_after_it() -> None:
    r = records()  # 910B2 fp16 256 x 256 cores of 128 x 128 blocks, stepM = stepN = 1
    typ = replace(r.typ, per=arr(1180), per_kt=arr(780), mm_kt=arr(128), normal=arr(548))
    ch = replace(r.ch, streamed_a=np.array([False]), streamed_b=np.array([False]))
    # 910B2 fp16 843 x 929 x 512 (224 x 144 tiles of two 112-row blocks, stepM 2, K of 4
    # steps): the second block's loads, 2 full periods, the period into the K-tail step and
    # its MMAD follow the last copy, 3,816 cycles in the simulator.
    g = replace(r.g, m_iter=arr(2), n_iter=arr(1), blocks=arr(2), k_iter=arr(4))
    f = {**r.f, "stepM": arr(2), "stepN": arr(1)}
    r2 = replace(r, g=g, typ=typ, ch=ch, f=f)
    assert blocks_after_last_copy(r2)[0] == 548 + 2 * 1180 + 780 + 128
    # With stepM 1 the second block copies its own A rows: nothing after the last copy.
    assert blocks_after_last_copy(replace(r2, f={**f, "stepM": arr(1)}))[0] == 0
