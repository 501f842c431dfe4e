"""The refetch term (issue 17): reads of a back-to-back call that HBM serves although the reload
rule counts them as L2 hits, by hand on round numbers (910B1: 192 MiB of L2, 0.75 usable)."""

from __future__ import annotations

import pytest

from scripts.fit_board import ALL_HIT_ND2NZ_SHARE, fit_nd2nz_share
from simcore.estimate.estimator import estimate_one
from simcore.hardware.presets import load_preset
from simcore.pipeline.simulator import simulate
from simcore.pipeline.traffic import CallRefetch, call_refetch, chip_bandwidth_cap, chip_traffic
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import Problem
from tests.support.board import msprof_cases

#: 910B1 with the refetch term on (as shipped) and the
#: ND->NZ share that goes with it (scripts/fit_board.py, fit_nd2nz_share).
B1 = load_preset("Ascend910B1").model_copy(update={"l2_refetch": True, "nd2nz_l2_share": 0.8764})
MIB = 2**20
NONE = CallRefetch(first_touch_bytes=0.0, round_bytes=0.0)


def _square(n: int, **opts: object) -> Problem:
    return Problem(soc="Ascend910B1", m=n, n=n, k=n, trans_b=True, **opts)  # type: ignore[arg-type]


def test_a_call_that_fits_the_usable_l2_refetches_nothing() -> None:
    # 4096^3 fp16: A, B and C 32 MiB each, 96 MiB within the usable 144: the previous call
    # leaves them in L2 (torch.mm 4096).
    assert B1.l2_bytes * B1.l2_usable_fraction == 144 * MIB
    assert call_refetch(_square(4096), B1) == NONE


def test_a_call_too_large_for_l2_reads_a_and_b_from_hbm_and_b_again_per_round() -> None:
    # 8192^3 fp16: 384 MiB > 144, so the first touches of A and B (128 MiB each) miss.
    one = call_refetch(_square(8192), B1)
    assert (one.first_touch_bytes, one.round_bytes) == (256 * MIB, 0.0)
    # Two L2 rounds (cases 6-8): between two reads of a B byte the rest of B and half of A
    # and C, 128 + 128 = 256 MiB > 144, so B comes again in the second round.
    two = call_refetch(_square(8192, l2_rounds=2), B1)
    assert (two.first_touch_bytes, two.round_bytes) == (256 * MIB, 128 * MIB)


def test_b_stays_in_l2_across_rounds_where_one_round_fits() -> None:
    # 32768 x 1024 x 4096 fp16: A 256 MiB, B 8 MiB, C 64 MiB: the call exceeds L2, one of four
    # rounds (B + (A + C) / 4 = 88 MiB) does not, so only the first touches miss.
    p = Problem(soc="Ascend910B1", m=32768, n=1024, k=4096, trans_b=True, l2_rounds=4)
    assert call_refetch(p, B1) == CallRefetch(first_touch_bytes=264 * MIB, round_bytes=0.0)


def test_refetched_reads_move_at_the_miss_rate_and_rounds_count_in_hbm() -> None:
    slow = B1.l2_miss_slowdown
    # 2,000 bytes read, 1,000 of them the unique A + B, 500 written, all reloads L2 hits.
    args = (2000.0, 500.0, 1500.0, 1.0, 24, B1, 1.0)
    rate, write_rate, hbm = chip_bandwidth_cap(*args, refetch=NONE)
    assert rate == write_rate and hbm == 1500.0
    # First touches: 500 of the 2,000 read bytes take 4.5x a hit's time: the reads take
    # (1,500 + 500 x 4.5) / 2,000 of their all-hit time; the writes keep their rate.
    rate_f, write_f, hbm_f = chip_bandwidth_cap(*args, refetch=CallRefetch(500.0, 0.0))
    assert rate_f == pytest.approx(rate * 2000.0 / (1500.0 + 500.0 * slow))
    assert write_f == write_rate
    assert hbm_f == 1500.0  # the first touches are already in the unique bytes
    # 300 bytes of round re-reads as well, and HBM serves them.
    rate_r, _, hbm_r = chip_bandwidth_cap(*args, refetch=CallRefetch(500.0, 300.0))
    assert rate_r == pytest.approx(rate * 2000.0 / (1200.0 + 800.0 * slow))
    assert hbm_r == 1800.0
    # No more than every read can be refetched.
    rate_all, _, _ = chip_bandwidth_cap(*args, refetch=CallRefetch(1500.0, 1500.0))
    assert rate_all == pytest.approx(rate / slow)


def test_reads_that_hit_never_make_the_reads_slower() -> None:
    # The same 1,000 refetched bytes among more reads that hit: the reads' time per refetched
    # byte stays, each added hit adds its own time (the time of all reads grows).
    refetch = CallRefetch(1000.0, 0.0)
    times = []
    for reads in (1000.0, 1500.0, 3000.0, 12000.0):
        rate, _, _ = chip_bandwidth_cap(reads, 0.0, 1000.0, 1.0, 24, B1, 1.0, refetch=refetch)
        times.append(reads / rate)
    assert times == sorted(times)


def test_round_re_reads_the_capacity_rule_misses_are_not_counted_twice() -> None:
    # Working set 288 MiB against 144 usable: half of every reload already misses, so half of
    # the round re-reads is new.
    args = (4000.0, 0.0, 1000.0, 288.0 * MIB, 24, B1, 1.0)
    _, _, hbm = chip_bandwidth_cap(*args, refetch=CallRefetch(0.0, 1000.0))
    assert hbm == pytest.approx(1000.0 + 3000.0 * 0.5 + 1000.0 * 0.5)


def test_a_preset_without_the_term_refetches_nothing() -> None:
    # The term switched off (every shipped preset has it on since model 2026.11.28.6): every
    # first touch is a hit again.
    p310 = load_preset("Ascend310P3").model_copy(update={"l2_refetch": False})
    assert call_refetch(Problem(soc="Ascend310P3", m=8192, n=8192, k=8192), p310) == NONE


def test_simulator_and_estimator_price_the_refetch_alike() -> None:
    # Case 6 of the 910B1 profiler file: 384 MiB of HBM reads in 12.9 GB slow its copies.
    case = next(c for c in msprof_cases() if c.name == "case6")
    tr = chip_traffic(case.problem, case.tiling, B1)
    assert tr.hbm_bytes == pytest.approx(tr.unique_bytes + 128 * MIB)
    assert tr.cap_bytes_per_cycle < tr.write_cap_bytes_per_cycle
    est = estimate_one(case.problem, case.tiling, B1)
    assert est["hbm_bytes"] == pytest.approx(tr.hbm_bytes)
    assert est["cap_bytes_per_cycle"] == pytest.approx(tr.cap_bytes_per_cycle)
    # A small kernel in L2 keeps the all-hit rate and its HBM bytes are its unique bytes.
    p = _square(1024)
    t = complete_tiling(
        {"usedCoreNum": 16, "singleCoreM": 256, "singleCoreN": 256, "baseM": 128,
         "baseN": 128, "baseK": 64, "depthA1": 2, "depthB1": 2, "stepM": 1, "stepN": 1,
         "stepKa": 1, "stepKb": 1, "iterateOrder": 0},
        p, B1,
    )  # fmt: skip
    sim = simulate(p, t, B1)
    assert sim.hbm_bytes == chip_traffic(p, t, B1).unique_bytes


def test_the_term_is_on_for_every_chip_with_an_l2() -> None:
    # On since model 2026.11.28.2 on 910B and the 950 (A + B + C of 8192^3 fp16 are 384 MiB,
    # over either's usable L2), with the share refitted; on arch 2002 (310P, 910A, 310B) since
    # model 2026.11.28.6, once the search's bounds price it there (no share refitted: their ND
    # inputs go through UB). A cold 8192^3 call reads its A and B from HBM on each of them.
    for soc in ("Ascend910B1", "Ascend910B2", "Ascend950PR", "Ascend310P3", "Ascend910A"):
        hw = load_preset(soc)
        assert hw.l2_refetch
        problem = _square(8192).model_copy(update={"soc": soc})
        assert call_refetch(problem, hw).first_touch_bytes == pytest.approx(2 * 128 * MIB)
    assert load_preset("Ascend310B1").l2_refetch
    assert load_preset("Ascend910B1").nd2nz_l2_share != ALL_HIT_ND2NZ_SHARE


def test_the_nd2nz_share_with_the_term_is_the_scripts_fit() -> None:
    # scripts/fit_board.py keeps cases 6-8's fitted read rate with their refetch priced.
    share, mixes = fit_nd2nz_share({c.name: c for c in msprof_cases()})
    assert B1.nd2nz_l2_share == pytest.approx(share, abs=5e-5)
    # 384 MiB of their 12.3 GB of reads take 4.5x a hit's time: their read cap x 0.901.
    assert mixes == pytest.approx([0.901] * 3, abs=5e-4)
