"""The pipes' precedence rules (precedence.py), each on a case computed by hand.

The simulator calls these rules on floats and the estimator's block replay on arrays; the last
tests check that both paths give the same cycles bit for bit on the same inputs.
"""

from __future__ import annotations

import numpy as np
import pytest

from simcore.pipeline import precedence as rule


def _a(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float64)


def test_an_instruction_starts_when_its_pipe_is_free_and_it_is_ready() -> None:
    assert rule.queue_start(5.0, 3.0) == 5.0  # behind the previous instruction on the pipe
    assert rule.queue_start(5.0, 7.0) == 7.0  # waiting for its flag
    assert rule.queue_start(5.0, 3.0, 9.0) == 9.0  # the later of its flags
    np.testing.assert_array_equal(rule.queue_start(_a(5, 5), _a(3, 7), _a(4, 1)), _a(5, 7))
    np.testing.assert_array_equal(rule.queue_start(_a(5, 5), _a(3, 9), _a(6, 1)), _a(6, 9))


def test_a_copy_waits_for_the_last_read_of_the_chunk_whose_slot_it_takes() -> None:
    # Last reads of the chunks copied before, oldest first: 10 then 20.
    assert rule.l1_slot_free([10.0, 20.0], 2) == 10.0  # two slots: the chunk two copies back
    assert rule.l1_slot_free([10.0, 20.0], 1) == 20.0  # one slot: the chunk just before
    assert rule.l1_slot_free([20.0], 2) == 0.0  # the second slot was never used
    # Arrays: candidates with one and with two slots share the history.
    hist = [_a(10, 10), _a(20, 20)]
    masks = rule.slot_masks(_a(1, 2), 2)
    np.testing.assert_array_equal(rule.l1_slot_free(hist, masks), _a(20, 10))


def test_a_chunks_slot_is_released_when_its_last_steps_mmad_starts() -> None:
    # The step's reads end at 12 (its B load), its MMAD waits for the cube until 20: the slot
    # is free at 20, not at 12 (the kernel frees it after the MMAD in program order).
    steps = rule.k_step(2.0, 20.0, 3.0, 3.0, 0.0, 0.0, (False, False), None, (4.0, 5.0, 7.0))
    _, end_a, _, end_b, start_m, _ = steps
    assert (end_a, end_b, start_m) == (7.0, 12.0, 20.0)
    assert rule.l1_slot_release(end_b, start_m) == 20.0
    # A copy into that slot (one slot) waits for the release.
    assert rule.l1_slot_free([rule.l1_slot_release(end_b, start_m)], 1) == 20.0
    # On arrays, per candidate.
    assert list(rule.l1_slot_release(np.array([12.0, 30.0]), np.array([20.0, 30.0]))) == [
        20.0,
        30.0,
    ]


def test_an_l0_load_waits_for_the_mmad_that_read_its_buffer() -> None:
    # The last MMAD ended at 9, the one before at 4: one L0A buffer, two L0B buffers.
    assert rule.l0_buffer_free(9.0, 4.0, (True, False)) == (9.0, 4.0)
    single = np.array([[True, False], [False, False]])  # (L0A, L0B) x two candidates
    np.testing.assert_array_equal(rule.l0_buffer_free(_a(9, 9), _a(4, 4), single), [[9, 4], [4, 4]])


def test_a_k_step_loads_l0a_then_l0b_then_the_mmad_reads_both() -> None:
    # MTE1 free at 2, M at 5; A's chunk in L1 at 3, B's at 10; MMADs ended at 6 and 1;
    # one L0A buffer (waits for 6), two L0B buffers (for 1); loads of 2 and 3, MMAD of 4.
    steps = rule.k_step(2.0, 5.0, 3.0, 10.0, 6.0, 1.0, (True, False), None, (2.0, 3.0, 4.0))
    assert steps == (6.0, 8.0, 10.0, 13.0, 13.0, 17.0)
    # A block's first step also waits for its L0C buffer (free at 20).
    steps = rule.k_step(2.0, 5.0, 3.0, 10.0, 6.0, 1.0, (True, False), 20.0, (2.0, 3.0, 4.0))
    assert steps[4:] == (20.0, 24.0)


def test_a_blocks_first_mmad_waits_for_the_drain_dbl0c_blocks_back() -> None:
    assert rule.l0c_buffer_free([4.0, 7.0], 1) == 7.0
    assert rule.l0c_buffer_free([4.0, 7.0], 2) == 4.0
    assert rule.l0c_buffer_free([7.0], 2) is None  # the second buffer was never used
    assert rule.l0c_buffer_free([], 1) is None
    np.testing.assert_array_equal(rule.l0c_buffer_free([_a(7, 7)], _a(1, 2)), _a(7, 0))


def test_a_drain_waits_for_the_last_mmad_and_the_c_staging_buffer() -> None:
    assert rule.drain_ready(10.0, 12.0) == 12.0  # UB->GM of the block before still running
    assert rule.drain_ready(10.0, 0.0) == 10.0  # FixPipe: no staging buffer


def test_a_staged_copy_passes_through_both_ub_halves() -> None:
    # MTE2 free at 0, V at 5, MTE3 at 1; the source half free at 2 (the last reorder), the
    # destination half at 8 (the last UB->L1); the L1 slot at 12; legs of 3, 4 and 2.
    legs = rule.staged_copy((0.0, 5.0, 1.0), (2.0, 8.0), 12.0, (3.0, 4.0, 2.0))
    assert legs == ((2.0, 5.0), (8.0, 12.0), (12.0, 14.0))


def test_with_the_norm_hand_off_copies_and_reads_wait_for_each_other() -> None:
    # The copy's slot is free at 4, but MTE1 read until 9: the copy waits for 9.
    assert rule.handoff_copy_ready(4.0, 9.0) == 9.0
    # A's chunk arrived at 3, B's at 8: the step's L0A load waits for 8.
    assert rule.handoff_read_ready(3.0, 8.0) == 8.0


def test_a_k_step_reads_the_chunk_of_its_step() -> None:
    assert rule.chunk_of_step(5, 2) == 2
    np.testing.assert_array_equal(rule.chunk_of_step(np.arange(5)[:, None], _a(2, 4)),
                                  [[0, 0], [0, 0], [1, 0], [1, 0], [2, 1]])  # fmt: skip


@pytest.fixture
def draws() -> np.random.Generator:
    return np.random.default_rng(2026)


def _times(rng: np.random.Generator, n: int) -> np.ndarray:
    # Cycle counts with fractions and ties, as the costs give them.
    return np.round(rng.uniform(0, 1000, n), 1) * rng.integers(0, 2, n)


def test_the_simulators_floats_and_the_replays_arrays_agree(draws: np.random.Generator) -> None:
    n = 200
    mte1, m, ra, rb, last, before, c = (_times(draws, n) for _ in range(7))
    la, lb, mm = (_times(draws, n) for _ in range(3))
    single = draws.integers(0, 2, (2, n)).astype(bool)
    out = (np.empty(n), np.empty(n), np.empty(n))
    rule.k_step(mte1, m, ra, rb, last, before, single, c, (la, lb, mm), out=out)
    for i in range(n):
        f = rule.k_step(float(mte1[i]), float(m[i]), float(ra[i]), float(rb[i]),
                        float(last[i]), float(before[i]), (bool(single[0, i]), bool(single[1, i])),
                        float(c[i]), (float(la[i]), float(lb[i]), float(mm[i])))  # fmt: skip
        assert (f[1], f[3], f[5]) == (out[0][i], out[1][i], out[2][i])
    # With a fourth array the replay also gets the MMAD's start (the slots' release), the
    # same ends bit for bit.
    out4 = (np.empty(n), np.empty(n), np.empty(n), np.empty(n))
    rule.k_step(mte1, m, ra, rb, last, before, single, c, (la, lb, mm), out=out4)
    for i in range(n):
        f = rule.k_step(float(mte1[i]), float(m[i]), float(ra[i]), float(rb[i]),
                        float(last[i]), float(before[i]), (bool(single[0, i]), bool(single[1, i])),
                        float(c[i]), (float(la[i]), float(lb[i]), float(mm[i])))  # fmt: skip
        assert (f[1], f[3], f[5], f[4]) == tuple(x[i] for x in out4)

    q = [_times(draws, n) for _ in range(3)]
    halves_a = [_times(draws, n) for _ in range(2)]
    slot = _times(draws, n)
    legs = [_times(draws, n) for _ in range(3)]
    arrays = rule.staged_copy((q[0], q[1], q[2]), (halves_a[0], halves_a[1]), slot,
                              (legs[0], legs[1], legs[2]))  # fmt: skip
    for i in range(n):
        floats = rule.staged_copy(
            (float(q[0][i]), float(q[1][i]), float(q[2][i])),
            (float(halves_a[0][i]), float(halves_a[1][i])),
            float(slot[i]),
            (float(legs[0][i]), float(legs[1][i]), float(legs[2][i])),
        )
        assert floats == tuple((s[i], e[i]) for s, e in arrays)

    slots = draws.integers(1, 3, n).astype(np.float64)
    hist = [_times(draws, n), _times(draws, n)]
    free = rule.l1_slot_free(hist, rule.slot_masks(slots, 2))
    for i in range(n):
        assert rule.l1_slot_free([float(h[i]) for h in hist], int(slots[i])) == free[i]

    db = draws.integers(1, 3, n).astype(np.float64)
    drains = [_times(draws, n), _times(draws, n)]
    ready = rule.l0c_buffer_free(drains, db)
    for i in range(n):
        assert rule.l0c_buffer_free([float(d[i]) for d in drains], int(db[i])) == ready[i]
