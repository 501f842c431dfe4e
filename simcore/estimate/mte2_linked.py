"""MTE2 behind the UB staging buffer: GM->UB copies linked through the reorder before them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from simcore.estimate.arrays import sub as _sub
from simcore.estimate.binding import Makespan
from simcore.estimate.records import CoreRecords

if TYPE_CHECKING:
    from simcore.estimate.paths import QueuePaths
    from simcore.estimate.queues import UbTails


def linked_pairs(
    r: CoreRecords,
    qp: QueuePaths,
    ub: UbTails,
    mk: Makespan,
) -> None:
    """One operand staged, the other direct: linked GM->UB pairs on MTE2.

    MTE2 runs every copy in program order, and a GM->UB copy right after another one (no direct
    copy or bias slice between) waits for that one's reorder (the staging buffer's source half),
    so MTE2 idles for it (``mte2_linked_pairs``, priced by place in ``mte2_linked_by_place``);
    with both reloaded together MTE2 idles for what a reorder exceeds the direct copy between
    (``mte2_direct_between_staged``); A direct per block with B staged per pass idles once per B
    pass for B's staging legs (``mte2_idle_behind_staged_pass``).
    """
    g, ch, cp, lg, c, cap, floor = r.g, r.ch, r.cp, r.lg, r.c, r.cap, r.floor
    problem = r.problem
    a_full, a_last, b_full, b_last = lg.a_full, lg.a_last, lg.b_full, lg.b_last
    after = ub.after
    blocks, bn, cols, k_iter = g.blocks, g.bn, g.cols, g.k_iter
    gb1, mte2, ua1, ub1, va1, vb1, via_a = cp.gb1, cp.mte2, cp.ua1, cp.ub1, cp.va1, cp.vb1, cp.via_a
    via_b = cp.via_b
    kc_a, kc_b, loads_a, loads_b = ch.kc_a, ch.kc_b, ch.loads_a, ch.loads_b
    passes_a, passes_b, step_ka = ch.passes_a, ch.passes_b, ch.step_ka
    step_kb = ch.step_kb
    if via_a != via_b:
        # One operand through UB, the other direct: MTE2 runs every copy in program order, and
        # a GM->UB copy right after another one (no direct copy or bias slice between) also
        # waits for that one's reorder. The direct operand's copies (and the bias slices not at
        # the start of its passes) break such pairs, each at most one when its K chunks are at
        # least as long as the staged operand's (otherwise assume all are broken).
        loads_u, loads_d = (loads_a, loads_b) if via_a else (loads_b, loads_a)
        step_u, step_d = (step_ka, step_kb) if via_a else (step_kb, step_ka)
        passes_d = passes_b if via_a else passes_a
        v_u1, u_u1 = (va1, ua1) if via_a else (vb1, ub1)
        breaks = loads_d + (blocks - passes_d if problem.bias else 0.0)
        linked = np.where(step_d >= step_u, np.maximum(loads_u - 1 - breaks, 0.0), 0.0)
        # (In K chunks of two lengths a linked pair waits for the full or the K-tail reorder
        # by where it sits, which the average misprices (a pass whose one linked pair is the
        # one after its K-tail chunk: +4.5 %): priced here at the shorter, and below by the
        # pairs' places, outside the floor.)
        kc_u1 = kc_a if via_a else kc_b
        v_link = np.where(
            kc_u1 >= 2,
            np.minimum(v_u1, np.minimum(a_full[1], a_last[1]) if via_a
                       else np.minimum(b_full[1], b_last[1])),
            v_u1,
        )  # fmt: skip
        path_link = mte2 + linked * v_link + v_u1 + u_u1 + after
        # The bias slice of a block (MTE2).
        bias_1 = c.bias_load_cycles(np.minimum(bn, cols), cap) if problem.bias else 0.0
        mk.raise_all(path_link, "mte2_linked_pairs")
        if not floor:
            # The linked pairs priced by the reorder they wait for: the pair after a pass's
            # last chunk waits for the short K-tail reorder, the others for a full one (the
            # average underprices a pass of full chunks whose last pair the bias slice breaks,
            # and overprices where direct copies break only the pairs inside). (Seen: 910A
            # fp16 128 x 4096 x 4096, B staged in five one-step chunks per block after the
            # bias slice and A's copy: four 630-cycle reorders per block, not the 512 average:
            # -7.7 %.)
            # And the K-tail chunk's GM->UB leg starts at the reorder before it, but its
            # reorder also waits for the UB->L1 leg before (the destination half), longer than
            # the short tail copy; the next pass's first GM->UB leg waits for that reorder, so
            # MTE2 idles for the difference too, once per pass, where no direct copy or bias
            # slice sits in either pair. (Seen: 910A fp16 2048^3, A staged in four one-step
            # chunks, the last 170 cycles behind a 488-cycle UB->L1 leg: -7.7 %.)
            # (Priced on the candidates where they may exceed the path so far.)
            full_u, last_u = (a_full, a_last) if via_a else (b_full, b_last)
            kc_u = kc_a if via_a else kc_b
            excess = np.maximum(full_u[2] - last_u[0], 0.0)
            passes_u = passes_a if via_a else passes_b
            # (Bounds: every linked pair at a full reorder; with A staged every pair at its
            # whole reorder.)
            if via_a:
                upper = (
                    mte2 + v_u1 + u_u1 + after
                    + loads_a * np.maximum(full_u[1], last_u[1]) + passes_u * excess
                )  # fmt: skip
            else:
                upper = (
                    path_link + linked * (np.maximum(full_u[1] - v_u1, 0.0) + v_u1 - v_link)
                    + passes_u * excess
                )  # fmt: skip
            idx = np.flatnonzero((kc_u >= 2) & (upper > mk.value))
            if idx.size:
                passes_u = _sub(passes_u, idx)
                s_u, s_d, k_s = _sub(step_u, idx), _sub(step_d, idx), _sub(k_iter, idx)
                x_0 = (_sub(kc_u, idx) - 2) * s_u
                x_l = x_0 + s_u
                # A direct copy between (A's at a step precedes B's): into the tail chunk, and
                # after it up to the next pass's first copy (with B staged, A's copy at the
                # next block's start too); the bias slice breaks the latter.
                if via_a:
                    hit = np.ceil(x_0 / s_d) * s_d < x_l
                    hit2 = np.floor((k_s - 1) / s_d) * s_d >= x_l
                else:
                    hit = np.floor(x_l / s_d) * s_d > x_0
                    hit2 = True
                reload_d = np.minimum(_sub(passes_d, idx) / np.maximum(passes_u, 1), 1.0)
                n_after = (not problem.bias) * passes_u * (1.0 - hit2 * reload_d)
                n_tail = n_after * (1.0 - hit * reload_d)
                v_f, v_l = _sub(full_u[1], idx), _sub(last_u[1], idx)
                link_s = _sub(linked, idx)
                n_in = np.maximum(link_s - n_after, 0.0)
                links = n_in * v_f + (link_s - n_in) * v_l
                if via_a:
                    # A pass in every block, each B copy alone between two A copies: per pass,
                    # the pairs inside it a B copy breaks still idle for what the full reorder
                    # exceeds that copy, the others for the whole reorder; the pair after its
                    # K-tail chunk for what that reorder exceeds the B copy and the bias slice
                    # between (A's copy comes first at a step, so the next block's bias slice
                    # sits between the block's last A copy and the next first one).
                    alone = (passes_u > _sub(blocks, idx) - 0.5) & (
                        _sub(loads_d, idx) <= _sub(loads_u, idx)
                    )
                    g_d = _sub(gb1, idx)
                    kc_s = _sub(kc_u, idx)
                    b_after = hit2 * reload_d
                    b_in = np.clip(
                        _sub(loads_d, idx) / np.maximum(passes_u, 1) - b_after, 0.0, kc_s - 1
                    )
                    after_res = np.maximum(
                        v_l - b_after * g_d - problem.bias * _sub(bias_1, idx), 0.0
                    )
                    per_pass = (
                        (kc_s - 1 - b_in) * v_f + b_in * np.maximum(v_f - g_d, 0.0) + after_res
                    )
                    links = np.where(alone & (s_d >= s_u), passes_u * per_pass, links)
                base_u = _sub(mte2 + v_u1 + u_u1 + after, idx) + links
                mk.raise_at(idx, base_u + n_tail * _sub(excess, idx), "mte2_linked_by_place")


def linked_pair_gaps(
    r: CoreRecords,
    qp: QueuePaths,
    ub: UbTails,
    mk: Makespan,
) -> None:
    """One operand staged, the other direct: MTE2 idling between staged copies (two terms).

    MTE2 runs every copy in program order, and a GM->UB copy right after another one (no direct
    copy or bias slice between) waits for that one's reorder (the staging buffer's source half),
    so MTE2 idles for it (``mte2_linked_pairs``, priced by place in ``mte2_linked_by_place``);
    with both reloaded together MTE2 idles for what a reorder exceeds the direct copy between
    (``mte2_direct_between_staged``); A direct per block with B staged per pass idles once per B
    pass for B's staging legs (``mte2_idle_behind_staged_pass``).
    """
    g, avg, ch, cp, lg, c, cap, floor = r.g, r.avg, r.ch, r.cp, r.lg, r.c, r.cap, r.floor
    problem = r.problem
    a_full, a_last, b_full, b_last = lg.a_full, lg.a_last, lg.b_full, lg.b_last
    after = ub.after
    blocks, bn, cols, k_iter = g.blocks, g.bn, g.cols, g.k_iter
    mte2, via_a = cp.mte2, cp.via_a
    via_b = cp.via_b
    has_b, kc_a, kc_b = ch.has_b, ch.kc_a, ch.kc_b
    passes_a, passes_b, slots_a, step_ka = ch.passes_a, ch.passes_b, ch.slots_a, ch.step_ka
    step_kb = ch.step_kb
    tail_plain = qp.tail_plain
    if via_a == via_b:
        return
    step_u, step_d = (step_ka, step_kb) if via_a else (step_kb, step_ka)
    passes_d = passes_b if via_a else passes_a
    # The bias slice of a block (MTE2).
    bias_1 = c.bias_load_cycles(np.minimum(bn, cols), cap) if problem.bias else 0.0
    if not floor:
        # Both in chunks of the same steps and reloaded together (the same passes):
        # between two GM->UB copies MTE2 runs one direct copy (A first at a step), and
        # the second GM->UB copy waits for the first one's reorder, so MTE2 idles for what
        # that reorder takes beyond the direct copy (full chunk j before the direct chunk
        # j + 1, the K-tail one the last; the last reorder before the next pass's first
        # direct copy and the bias slice).
        u_f, u_l = (a_full, a_last) if via_a else (b_full, b_last)
        d_f, d_l = (b_full, b_last) if via_a else (a_full, a_last)
        kc_u = kc_a if via_a else kc_b
        passes_u = passes_a if via_a else passes_b
        # Direct operand reloaded with every staged pass (its passes are a superset): inside
        # a staged pass one direct copy sits between two GM->UB copies; after the pass's
        # last one, only where both are reloaded together (else more direct copies).
        together = np.abs(passes_d - passes_u) < 0.5
        if via_a:
            # A copy first at a step: B's copy of the same step sits between.
            gaps = (kc_u - 1) * np.maximum(u_f[1] - d_f[0], 0.0) + together * np.maximum(
                u_l[1] - d_l[0] - bias_1, 0.0
            )
        else:
            d_first = np.where(kc_u > 1, d_f[0], d_l[0])
            gaps = (
                np.maximum(kc_u - 2, 0) * np.maximum(u_f[1] - d_f[0], 0.0)
                + (kc_u >= 2) * np.maximum(u_f[1] - d_l[0], 0.0)
                + together * np.maximum(u_l[1] - d_first - bias_1, 0.0)
            )
        same = (step_d == step_u) & (passes_d > passes_u - 0.5) & has_b
        path_gap = mte2 + passes_u * gaps + u_l[1] + u_l[2] + after
        mk.raise_all(same * path_gap, "mte2_direct_between_staged")
    if not floor and via_b:
        # A direct and reloaded every block, B staged and reloaded per pass of several
        # blocks: at a B pass's first block the reads after its step-0 A read wait for B's
        # GM->UB, reorder and UB->L1 legs, and A's copy S (A's slots) copies after the
        # first A chunk read after step 0 waits for that chunk's release (FIFO slots). MTE2 runs B's
        # GM->UB leg and the A copies in between (with their blocks' bias slices), then
        # idles for the rest, once per B pass. (That chunk's release, the MMAD start of its
        # last step, from B's arrival: qb, its steps from step 0 on.)
        j_st = (step_ka == 1) * 1.0
        t_st = j_st * step_ka + step_ka
        n_between = j_st + slots_a - 1
        b_stage = np.where(kc_b > 1, b_full[1] + b_full[2], b_last[1] + b_last[2])
        # The copies in between: A's chunks j* + 1 .. j* + n (K-tail ones every kc_a).
        n_tail = np.floor((j_st + n_between + 1) / kc_a) - np.floor((j_st + 1) / kc_a)
        a_between = n_between * a_full[0] + n_tail * (a_last[0] - a_full[0])
        idle = (
            b_stage
            + avg.qb(np.minimum(t_st, k_iter))
            - a_between
            - np.floor(n_between / kc_a) * bias_1
        )
        ok = (t_st <= k_iter) & (passes_a > blocks - 0.5) & (passes_b < blocks) & has_b
        # (The last copy is an A copy: its steps and the drain follow, no B staging.)
        mk.raise_all(
            mte2 + tail_plain + ok * passes_b * np.maximum(idle, 0.0),
            "mte2_idle_behind_staged_pass",
        )


def mte2_bias_between_staged(
    r: CoreRecords,
    ub: UbTails,
    mk: Makespan,
) -> None:
    """Both staged with a bias slice per block: MTE2 idles between GM->UB legs for the reorder.

    MTE2 runs the GM->UB legs and the bias slices; between two GM->UB legs it idles for the
    reorder the second waits for, less a bias slice between them.
    """
    g, ch, cp, lg, floor, problem = r.g, r.ch, r.cp, r.lg, r.floor, r.problem
    a_last, b_last = lg.a_last, lg.b_last
    a_last_start, b_last_start = ch.a_last_start, ch.b_last_start
    after, last_u = ub.after, ub.last_u
    bias_cyc, mte2, va, vb, via_a, via_b = cp.bias_cyc, cp.mte2, cp.va, cp.vb, cp.via_a, cp.via_b
    blocks = g.blocks
    if via_a and via_b and problem.bias and not floor:
        # Both staged, with a bias slice per block on MTE2 besides the GM->UB legs: MTE2 runs
        # all of them, and between two GM->UB legs it idles for the reorder the second waits
        # for, less a bias slice between them (one per block, after the block's last copy,
        # whose reorder is the K-tail one of the operand that starts its last chunk later).
        # (Seen: 910A fp16 1024^3, B staged in three chunks per block, a 192-cycle bias slice
        # each: -4.9 %.)
        v_end = np.where(b_last_start >= a_last_start, b_last[1], a_last[1])
        mk.raise_all(
            mte2 + va + vb - blocks * np.minimum(bias_cyc, v_end) + last_u + after,
            "mte2_bias_between_staged",
        )
