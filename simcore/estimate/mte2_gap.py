"""MTE2 idling behind slot-waiting copies: the gap of a one-slot operand, copies queued behind.

With one L1 slot a copy waits for the last read of the chunk before; MTE2 runs the copies in
program order, so it idles until that read and every later copy follows it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from simcore.estimate.arrays import sub as _sub
from simcore.estimate.binding import Makespan
from simcore.estimate.records import CoreRecords

if TYPE_CHECKING:
    from simcore.estimate.paths import QueuePaths
    from simcore.estimate.slot_a import AHops


def mte2_gap_path(
    base: Any,
    via_a: bool,
    via_b: bool,
    firsts: tuple[Any, Any],
    a_full: tuple[Any, Any, Any],
    a_last: tuple[Any, Any, Any],
    b_full: tuple[Any, Any, Any],
    b_last: tuple[Any, Any, Any],
    chunking: tuple[Any, ...],
    reads: tuple[Any, Any, Any, Any],
) -> Any:
    """The MTE2 path with the gap a one-slot operand leaves after each pass's first copies.

    With one L1 slot, the copy of an operand's second chunk waits for the last read of its
    first chunk. MTE2 runs the pass's first copies (A, then B) and idles until that read: the
    reads restart when the chunks arrive, and an A chunk staged through UB (GM->UB, reorder,
    UB->L1) arrives long after MTE2 is done with it. Every copy after the gap is in MTE2 order
    again, so per pass the gap adds to the MTE2 total (``base``: all copies plus what follows
    the last one). Only direct copies wait on MTE2 for their slot (through UB it is the MTE3
    leg that waits). Where both operands reload at a block start the larger gap counts; where
    only one does, its own chunk's restart.

    Args:
        base: MTE2 total plus the steps and drain after the last copy.
        via_a: A goes through UB.
        via_b: B goes through UB.
        firsts: MTE2 legs of A's and of B's first copy of a pass (a full chunk's where there
            are several).
        a_full: (MTE2, V, MTE3) legs of a full A chunk; ``a_last`` of the K-tail chunk.
        a_last: See ``a_full``.
        b_full: As ``a_full`` for B.
        b_last: See ``b_full``.
        chunking: (kc_a, kc_b, stepKa, stepKb, single_a, single_b, passes_a, passes_b,
            has_b, a_many), single_x: the operand has one L1 slot, a_many: kc_a > 1.
        reads: From a chunk's arrival, to its slot's release (the MMAD start of its last
            step; the floors: its last read's end): a stepKa A chunk's, a stepKb B chunk's, a
            stepKa A chunk's from the arrival of the B chunk that starts with it, and a stepKb
            B chunk's from A's arrival (None with ``via_b``: unused).

    Returns:
        The path's cycles (``base`` where no gap applies).
    """
    kc_a, kc_b, step_ka, step_kb, single_a, single_b, passes_a, passes_b, has_b, a_many = chunking
    ra_ka, rb_kb, rab_ka, ra_kb_lb = reads
    ga0, gb0 = firsts
    mte2_free = ga0 + gb0
    a_arr = ga0
    b_arr = mte2_free
    if via_a:
        a_arr = ga0 + np.where(a_many, a_full[1] + a_full[2], a_last[1] + a_last[2])
    if via_b:
        vu_b0 = np.where(kc_b > 1, b_full[1] + b_full[2], b_last[1] + b_last[2])
        b_arr = (np.maximum(a_arr, ga0 + a_full[1] + gb0) if via_a else mte2_free) + vu_b0
    co = np.minimum(passes_a, passes_b) * has_b
    # MTE2 after the step-0 copies: the copy at the first later chunk boundary comes next (A's
    # first where both operands start a chunk there); a direct one-slot copy waits for the read.
    first_a = (step_ka <= step_kb) | ~has_b
    t_a = mte2_free
    if via_a:
        gap = 0.0 * base
        idle = gap
    else:
        on_a = single_a & a_many & first_a
        rd_a = np.maximum(a_arr + ra_ka, b_arr + rab_ka)
        t_a = np.where(on_a, np.maximum(mte2_free, rd_a), mte2_free)
        gap = on_a * (passes_a - co) * ra_ka
        # (0 off on_a, a subset of first_a & a_many: t_a is mte2_free there.)
        idle = t_a - mte2_free
    if not via_b:
        on_b = single_b & (kc_b > 1) & (step_ka >= step_kb) & has_b
        rd_b = np.maximum(a_arr + ra_kb_lb, b_arr + rb_kb)
        # Where both start a chunk at the same step, B's copy follows A's on MTE2.
        ga1 = ((step_ka == step_kb) & a_many) * np.where(kc_a > 2, a_full[0], a_last[0])
        t_b = np.maximum(np.where(ga1 > 0, t_a + ga1, mte2_free), rd_b)
        idle = np.where(on_b, t_b - mte2_free - ga1, idle)
        gap = gap + on_b * (passes_b - co) * rb_kb
    # (Against an array: np.maximum with a scalar misses numpy's SIMD loop.)
    gap = gap + co * np.maximum(idle, np.zeros(np.shape(idle)))
    return base + gap


def b_slot_gap_behind_a(
    chunking: tuple[Any, Any, Any], legs: tuple[Any, Any], reads: tuple[Any, Any]
) -> Any:
    """MTE2's idle time per pass before B's second copy, one direct B slot, A chunks shorter.

    B's copy of chunk 1 (issued at step stepKb) waits for the release of B's chunk 0, the MMAD
    start of step stepKb - 1, which follows the arrival of the A chunk under that step. MTE2
    runs A's and B's step-0 copies,
    then the A copies of the chunks starting up to step stepKb (A's copy first at a step), and
    idles until that read: the reads of the steps from the A chunk's start on, after its copy
    (or B's chunk 0's reads from its arrival, if later). :func:`mte2_gap_path` prices the gap
    only where A's first boundary is at step 0 (A chunks at least as long as B's). The caller
    passes candidates with ``stepKa < stepKb`` and more than one B chunk, so K holds more than
    stepKb steps: A has at least two chunks and the A chunk under step stepKb - 1 (and the
    last one copied before B's) is a later one, at most the K-tail chunk.

    Args:
        chunking: ``(kc_a, stepKa, stepKb)`` on the candidates priced.
        legs: The MTE2 legs (direct copies) of a full and of the K-tail A chunk.
        reads: ``(qa, qb_kb)``: the release of an ``r``-step chunk from A's arrival
            (:func:`simcore.estimate.steps.restart_releases`), a full B chunk's from its own.

    Returns:
        The idle cycles per pass where both operands reload (>= 0).
    """
    kc_a, sk_a, sk_b = chunking
    ga_f, ga_l = legs
    qa, qb_kb = reads
    # The A chunk under step stepKb - 1 and the last A chunk copied before B's.
    x = np.floor((sk_b - 1) / sk_a)
    x_m = np.floor(sk_b / sk_a)
    d_l = ga_l - ga_f
    # A's copies of chunks 1 .. x (the K-tail one when x reaches it), and up to x_m.
    c_x = x * ga_f + (x >= kc_a - 1) * d_l
    c_m = x_m * ga_f + (x_m >= kc_a - 1) * d_l
    read = np.maximum(c_x + qa(sk_b - x * sk_a), qb_kb)
    out: Any = np.maximum(read - c_m, 0.0)
    return out


def mte2_gap_terms(
    r: CoreRecords,
    qp: QueuePaths,
    ah: AHops,
    mk: Makespan,
) -> Any:
    """The MTE2 gap of a one-slot operand, and one B slot behind A chunks inside B's first.

    With one L1 slot the operand's second copy of a pass waits for the last read of its first
    chunk, so MTE2 idles after the pass's first copies (:func:`mte2_gap_path`); with one direct B
    slot and shorter A chunks, B's second copy waits for B's read behind the A chunk under it
    (:func:`b_slot_gap_behind_a`). Returns the MTE2 path with those gaps, which the dealt
    seam's copy end reads (:func:`simcore.estimate.dealt.next_tile_seam`).
    """
    avg, ch, cp, lg, floor = r.avg, r.ch, r.cp, r.lg, r.floor
    a_first0, a_full, a_last, b_full = lg.a_first0, lg.a_full, lg.a_last, lg.b_full
    b_last = lg.b_last
    copy_path = qp.copy_path
    has_b, kc_a, kc_b, passes_a, passes_b = ch.has_b, ch.kc_a, ch.kc_b, ch.passes_a, ch.passes_b
    single_a, single_b, step_ka, step_kb = ch.single_a, ch.single_b, ch.step_ka, ch.step_kb
    streamed_b = ch.streamed_b
    lb, ra, rb_kb = avg.lb, avg.ra, avg.rb_kb
    rab_ka, reads_af = ah.rab_ka, ah.reads_af
    via_a, via_b = cp.via_a, cp.via_b
    # The copies wait for their slots' releases (the MMAD start of a chunk's last step); the
    # floors keep the reads' ends.
    if floor:
        reads = (reads_af, rb_kb, rab_ka, None if via_b else ra(step_kb) + lb)
    else:
        reads = (ah.rel_af, avg.qb_kb, ah.rel_b_ka, None if via_b else avg.qa(step_kb))
    gap_path = mte2_gap_path(
        copy_path, via_a, via_b, (a_first0, lg.b_first[0]), a_full, a_last, b_full, b_last,
        (kc_a, kc_b, step_ka, step_kb, single_a, single_b, passes_a, passes_b, has_b,
         ch.a_many),
        reads,
    )  # fmt: skip
    mk.raise_all(gap_path, "mte2_gap")
    if not floor and not via_a and not via_b:
        # One B slot behind A chunks that start inside B's first chunk (priced on the
        # candidates where it applies only).
        idx = np.flatnonzero(single_b & (step_ka < step_kb))
        if idx.size:
            idx = idx[_sub(streamed_b, idx) & ~_sub(single_a, idx) & _sub(has_b, idx)]
        if idx.size:
            idle_b = b_slot_gap_behind_a(
                (_sub(kc_a, idx), _sub(step_ka, idx), _sub(step_kb, idx)),
                (_sub(a_full[0], idx), _sub(a_last[0], idx)),
                (avg.qa.sub(idx), _sub(avg.qb_kb, idx)),
            )
            co_s = np.minimum(_sub(passes_a, idx), _sub(passes_b, idx))
            path_s = _sub(copy_path, idx) + co_s * idle_b
            mk.raise_at(idx, path_s, "b_slot_gap_behind_a")
            gap_path = np.array(np.broadcast_to(gap_path, np.shape(copy_path)), dtype=np.float64)
            gap_path[idx] = np.maximum(gap_path[idx], path_s)
    return gap_path


def mte2_behind_slot_waiting_b(
    r: CoreRecords,
    mk: Makespan,
) -> None:
    """A chunks longer than B's slots hold: per A chunk its copy, its reads to a step, a B copy.

    B streams its chunks through its slots, so the B copy issued at an A chunk's last step waits
    for a B read of this A chunk's steps, and the next A copy queues behind it on MTE2.
    """
    bt, avg, ch, cp, lg, floor = r.bt, r.avg, r.ch, r.cp, r.lg, r.floor
    a_full, a_last, b_full, b_last = lg.a_full, lg.a_last, lg.b_full, lg.b_last
    a_many, has_b, ka_div, kc_a, passes_a = ch.a_many, ch.has_b, ch.ka_div, ch.kc_a, ch.passes_a
    r_last_a, slots_b, step_ka, step_kb = ch.r_last_a, ch.slots_b, ch.step_ka, ch.step_kb
    streamed_b = ch.streamed_b
    bias_cyc, via_a, via_b = cp.bias_cyc, cp.via_a, cp.via_b
    dr_last = bt.dr_last
    mm = avg.mm
    if not floor and not via_b:
        # A chunks longer than B's slots hold: B streams its chunks through its slots, so the
        # B copy issued at the A chunk's last step waits for the B read slots_b chunks back, a
        # read of this A chunk's steps; the next A copy queues behind that B copy on MTE2.
        # Per A chunk: its copy, its reads up to that step, the B copy (then the next A copy;
        # at a block start the bias slice between).
        # (Priced on the candidates where it applies only.)
        j_f = step_ka - slots_b * step_kb - 1
        q_ok = streamed_b & (j_f >= 0) & ka_div & a_many & has_b
        idx = np.flatnonzero(q_ok)
        if idx.size:
            af, al = (tuple(_sub(x, idx) for x in legs) for legs in (a_full, a_last))
            # (The B copy waits for the release of its slot: the MMAD start of that step.)
            qa_s = avg.qa.sub(idx)
            sl_b, sk_b = _sub(slots_b, idx), _sub(step_kb, idx)
            j_l = _sub(r_last_a, idx) - sl_b * sk_b - 1
            a_arr_f = af[0] + (af[1] + af[2] if via_a else 0.0)
            a_arr_l = al[0] + (al[1] + al[2] if via_a else 0.0)
            a_next_l = al[0] + (al[1] if via_a else 0.0)
            q_f = a_arr_f + qa_s(np.maximum(_sub(j_f, idx) + 1, 1)) + _sub(b_full[0], idx)
            q_l = np.where(
                j_l >= 0,
                a_arr_l + qa_s(np.maximum(j_l + 1, 1)) + _sub(b_last[0], idx),
                a_next_l,
            )
            q_path = (
                _sub(passes_a, idx) * ((_sub(kc_a, idx) - 1) * q_f + q_l + _sub(bias_cyc, idx))
                + _sub(mm, idx)
                + _sub(dr_last, idx)
            )
            mk.raise_at(idx, q_path, "mte2_behind_slot_waiting_b")
