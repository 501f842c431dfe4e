"""The K-step chain (steps.py): period, leads, restart reads, by hand."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.estimate.grid import block_grid, block_types
from simcore.estimate.steps import (
    period,
    restart_reads,
    restart_releases,
    step_chain,
    typical_steps,
)
from tests.simcore.estimate.support import records

LA, LB, MM = 10.0, 20.0, 50.0


@pytest.mark.parametrize(
    ("wa", "wb", "expected"),
    [
        (0.0, 0.0, 50.0),  # both doubled: max(mm, la + lb)
        (1.0, 1.0, 80.0),  # one L0A buffer: la + lb + mm
        (0.0, 1.0, 70.0),  # one L0B buffer: max(mm, la) + lb
    ],
)
def test_period_follows_the_l0_flags(wa: float, wb: float, expected: float) -> None:
    assert period(LA, LB, MM, wa, wb) == expected
    assert step_chain(LA, LB, MM, wa, wb)[0] == expected


def test_leads_of_the_reads_with_both_buffers_doubled() -> None:
    # per = 50: B's read ends per - la = 40 before... A's lead is per - la, B's per - la - lb.
    per, lead_a, lead_b = step_chain(LA, LB, MM, 0.0, 0.0)
    assert (per, lead_a, lead_b) == (50.0, 40.0, 20.0)


def test_leads_with_one_l0a_buffer_are_the_reads_themselves() -> None:
    # Every step runs A read, B read, MMAD in series: A's read ends lb before the MMAD, B's at it.
    _, lead_a, lead_b = step_chain(LA, LB, MM, 1.0, 1.0)
    assert (lead_a, lead_b) == (LB, 0.0)


def test_restart_reads_play_the_first_steps_then_the_period() -> None:
    ra, rb, rab = restart_reads(*(np.array([x]) for x in (LA, LB, MM, 50.0, 0.0, 0.0)))
    r = np.array([1.0, 2.0, 3.0, 4.0])
    # A from its arrival: read 1 ends at la = 10; read 2 after B's read 1 (30) at 40; read 3
    # waits for MMAD 1 (30 + 50 = 80) at 90; then one period (50) per step.
    assert list(ra(r)) == [10.0, 40.0, 90.0, 140.0]
    # B from its arrival (A's read taken as done): 20, then 20 + 10 + 20 = 50 (after A's read 2
    # at 30), then after MMAD 1 (20 + 50 = 70): A's read 3 at 80, B's at 100; then + 50.
    assert list(rb(r)) == [20.0, 50.0, 100.0, 150.0]
    # A's last read from a B chunk's arrival: never for one step (A's read precedes B's).
    assert rab(r)[0] < -1e29
    assert list(rab(r)[1:]) == [30.0, 80.0, 130.0]
    assert ra(2) == 40.0


def test_restart_releases_are_the_mmad_starts_of_the_last_steps() -> None:
    qa, qb = restart_releases(*(np.array([x]) for x in (LA, LB, MM, 50.0, 0.0, 0.0)))
    r = np.array([1.0, 2.0, 3.0, 4.0])
    # From A's arrival: the first MMAD starts when step 1's B read ends (la + lb = 30); the
    # second when MMAD 1 ends (80, its reads end at 60); the third at 130; then + 50.
    assert list(qa(r)) == [30.0, 80.0, 130.0, 180.0]
    # From B's arrival (the step's A read taken as done): 20, 70, 120, then + 50; an A chunk's
    # release from a B chunk starting with it is the same MMAD start.
    assert list(qb(r)) == [20.0, 70.0, 120.0, 170.0]
    # Each release is at least the last read's end plus, for A, the step's B read.
    ra, rb, _ = restart_reads(*(np.array([x]) for x in (LA, LB, MM, 50.0, 0.0, 0.0)))
    assert np.all(qa(r) >= ra(r) + LB) and np.all(qb(r) >= rb(r))


def test_restart_releases_with_one_l0a_buffer() -> None:
    # Every step runs A read, B read, MMAD in series (per 80): A's first release at 30, then
    # MMAD 1 ends at 80, the next reads end at 110.
    qa, qb = restart_releases(*(np.array([x]) for x in (LA, LB, MM, 80.0, 1.0, 1.0)))
    assert list(qa(np.array([1.0, 2.0, 3.0]))) == [30.0, 110.0, 190.0]
    assert list(qb(np.array([1.0, 2.0]))) == [20.0, 100.0]
    assert qa(2) == 110.0


def test_typical_drain_is_that_of_the_first_block_without_fixpipe() -> None:
    # 910A drains through UB: the typical block is min(baseM, rows) x min(baseN, cols), taken
    # from block_types' per-type legs; priced directly it must give the same cycles, whether the
    # core has one tail-only row (column) of blocks or full ones.
    spec = {
        "usedCoreNum": 16, "singleCoreM": 256, "singleCoreN": 256, "baseM": 128, "baseN": 64,
        "baseK": 64, "depthA1": 2, "depthB1": 2, "stepM": 1, "stepN": 1, "stepKa": 1, "stepKb": 1,
    }  # fmt: skip
    r = records("Ascend910A", spec)
    assert not r.c.has_fixpipe
    rows = np.array([300.0, 300.0, 100.0, 100.0, 128.0])
    cols = np.array([200.0, 40.0, 200.0, 40.0, 64.0])
    g = block_grid(r.c, 1024, r.f, rows, cols)
    bt = block_types(r.c, g, r.f, r.cap, False)
    typ = typical_steps(r.c, g, r.cap, bt)
    rows_1, cols_1 = np.minimum(g.bm, rows), np.minimum(g.bn, cols)
    assert list(typ.dr) == list(r.c.c_to_ub_cycles(rows_1, cols_1))
    assert list(typ.m3c) == list(r.c.c_ub_to_gm_cycles(rows_1, cols_1, r.cap))
    # (The four block sizes drain in different times: a swapped type would show.)
    assert len(set(typ.dr[:4])) == 4
