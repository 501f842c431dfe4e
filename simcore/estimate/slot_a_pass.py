"""A's slot chain per pass: fixed slots, whole passes with one slot, streamed passes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from simcore.estimate.arrays import cdiv as _cdiv
from simcore.estimate.arrays import divides as _divides
from simcore.estimate.arrays import raise_at as _raise_at
from simcore.estimate.arrays import sub as _sub
from simcore.estimate.records import CoreRecords
from simcore.estimate.slot_a import tail_release
from simcore.pipeline.costs import at_least

if TYPE_CHECKING:
    from simcore.estimate.slot_a import AHops, AOneSlot
    from simcore.estimate.staging import StagingLinks


class APassCycles(NamedTuple):
    """What :func:`a_pass_cycles` gives the later terms (named as in its formulas)."""

    d_a0: Any
    gain_pass_a: Any
    per_pass_a: Any


def a_pass_cycles(
    r: CoreRecords,
    ah: AHops,
    ao: AOneSlot,
    km1_a: Any,
    km1_b: Any,
) -> APassCycles:
    """A's cycle per pass: fixed slots, the whole-pass chain with one slot, one-step chunks.

    With ``kc`` a multiple of the slots each slot keeps its K positions and the slowest sets the
    pace (a group change reloads a resident panel back to back); otherwise the hops average over
    the slots. With one slot the next pass's first A copy waits for the pass's last A read, which
    queues on MTE1 behind B's read of the step before (every B copy of the pass before it).
    """
    g, avg, ch, cp, lg = r.g, r.avg, r.ch, r.cp, r.lg
    a_full, a_last, b_leg_f, b_next = lg.a_full, lg.a_last, lg.b_leg_f, lg.b_next
    b_next_in, b_next_in_l, b_next_l = lg.b_next_in, lg.b_next_in_l, lg.b_next_l
    a_last_start, a_many, b_last_start = ch.a_last_start, ch.a_many, ch.b_last_start
    co_frac, co_lcm, co_rest, has_b, kc_a = ch.co_frac, ch.co_lcm, ch.co_rest, ch.has_b, ch.kc_a
    single_a, slots_a, step_ka, step_kb = ch.single_a, ch.slots_a, ch.step_ka, ch.step_kb
    b_tail_co, gain_fl, hop_f, hops_f, rs_a = ah.b_tail_co, ah.gain_fl, ah.hop_f, ah.hops_f, ah.rs_a
    stay_a, wait_af, wait_al = ah.stay_a, ah.wait_af, ah.wait_al
    extra, gain_f, hop_l, rs_bias = ao.extra, ao.gain_f, ao.hop_l, ao.rs_bias
    k_iter, wa, zero = g.k_iter, g.wa, g.zero
    la, la_kt, lb, mm, ra, rab = avg.la, avg.la_kt, avg.lb, avg.mm, avg.ra, avg.rab
    via_a, via_b = cp.via_a, cp.via_b
    rounds = np.floor(kc_a / slots_a)
    fixed_a = (slots_a > 1) & (rounds * slots_a == kc_a)
    per_pass_a = (hops_f + hop_l + extra) / slots_a
    # (What B's copies add to a pass of A, for line_stay_path.)
    gain_pass_a = extra / slots_a
    # (Fixed slots priced on the candidates that have them only.)
    idx = np.flatnonzero(fixed_a)
    if idx.size:
        sk_a, n_sl, r_s, hf_s = (_sub(x, idx) for x in (step_ka, slots_a, rounds, hop_f))
        # B boundaries meet the chunks of slot 0 every lcm(slots, q) chunks, q = lcm / stepKa.
        q = _sub(co_lcm, idx) / sk_a
        n_co0 = _sub(has_b, idx) * _cdiv(_sub(kc_a, idx), np.where(_divides(q, n_sl), q, q * n_sl))
        gf_s = _sub(gain_f, idx)
        gain_co0 = n_co0 * gf_s
        # One of slot 0's meetings may be with B's short K-tail chunk (the A chunk starting
        # with it is in slot 0): that copy, not a full one. (Seen: 910A fp16 512 x 1024 x
        # 3000, A in ten two-step chunks over two slots, B's 16 + 3 steps copied every
        # block: the 1663-cycle tail copy priced as the 4979-cycle full one: +12.6 %; on
        # 910B too since model 2026.11.19's row-bound ND copies: 910B2 fp16 333 x 777 x 1999,
        # B's 12-step chunk of 48 columns 8577 cycles, its K-tail one 2601: +36.6 %.)
        j_tail = np.floor(_sub(b_last_start, idx) / sk_a)
        tail0 = _sub(b_tail_co, idx) & _divides(j_tail, n_sl) & (n_co0 >= 1)
        gain_co0 = gain_co0 + tail0 * (_sub(gain_fl, idx) - gf_s)
        co_gain0 = _sub(co_frac, idx) * gain_co0
        # With the whole K panel resident (one slot per chunk) and read by several blocks, a
        # group change reloads every chunk back to back on MTE2 (each waits for the old chunk's
        # read in the group's last block) before the first block of the new group can run
        # through.
        st_s = _sub(stay_a, idx)
        burst_a = (
            _sub(km1_a, idx) * _sub(wait_af, idx) + _sub(wait_al, idx) + st_s + _sub(ra(1), idx)
        )
        per_pass_a[idx] = np.maximum(
            np.maximum(r_s * hf_s, (r_s - 1) * hf_s + _sub(hop_l, idx)) + co_gain0,
            ((r_s == 1) & (st_s > 0)) * burst_a,
        )
        gain_pass_a[idx] = co_gain0
    # One slot, a whole pass: the next pass's first A copy waits for this pass's last A read,
    # which queues on MTE1 behind the B read of the step before, whose chunk came through every
    # B copy of the pass up to that step (in MTE2 / UB staging order; the copy at the last B
    # boundary, and an A copy at the last A boundary, move the short K-tail chunks).
    d_a0 = a_last[0] - a_full[0] if not (via_a and via_b) else 0.0
    # (The pass's first A copy and B's leg after it: the same to the read and to the release.)
    w_first = np.where(a_many, wait_af, wait_al) + b_leg_f

    def w_pass_of(to_release: bool) -> Any:
        # To the last A read: B boundaries <= k - 2, less one; to the pass's release (the
        # K-tail step's MMAD start, after that step's B read): <= k - 1, less one.
        n_star1 = np.floor(np.maximum(k_iter - (1 if to_release else 2), zero) / step_kb)
        sigma = n_star1 * step_kb
        # B copies with no A copy between them (all in one A chunk) chain through B's reads.
        no_a_between = sigma < step_ka
        b_nx = np.where(no_a_between, b_next_in, b_next)
        b_nx_l = np.where(no_a_between, b_next_in_l, b_next_l)
        steps_w = k_iter - sigma
        if to_release:
            last_w = tail_release(r, np.maximum(rab(steps_w) - la + la_kt, zero), avg.qb, steps_w)
        else:
            last_w = rab(steps_w) - la + la_kt
        w = (
            w_first
            + n_star1 * b_nx
            + ((n_star1 == km1_b) & (n_star1 > 0)) * (b_nx_l - b_nx)
            + last_w
        )
        if not via_b:
            # Direct B copies share MTE2 with the A copies issued between them.
            # (The K-tail A copy's MTE2 leg less a full one's: d_a0.)
            w = (
                w
                + np.floor(sigma / step_ka) * a_full[0]
                + ((a_last_start <= sigma) & a_many) * d_a0
            )
        return w

    w_pass = w_pass_of(False)
    if not r.floor:
        w_pass = np.maximum(w_pass, w_pass_of(True))
    # One-step A chunks, one pass of slots + 1 chunks: the next step's A read (the last read of
    # the next chunk, which frees a slot) queues on MTE1 behind this step's B read, and with one
    # L0A buffer behind its MMAD too: the A copy, the B copy behind it, the B read, (the
    # MMAD,) the next A read.
    # Only the share co_frac of the passes reloads B: the other passes run A's own chain (its
    # hops, the last one behind the bias slice on MTE2), so price the two kinds apart.
    own_pass = hops_f + wait_al + (rs_bias if not via_a else np.maximum(rs_a, 0.0))
    w_mix = co_frac * w_pass + co_rest * own_pass
    per_pass_a = np.maximum(per_pass_a, single_a * (k_iter >= 2) * has_b * w_mix)
    # (Priced on the candidates where it applies only.)
    idx = np.flatnonzero((step_ka == 1) & (kc_a == slots_a + 1) & has_b)
    if idx.size:
        k_s = _sub(k_iter, idx)
        # (Then that step's B read, before the MMAD start that releases the slot.)
        kt_2 = k_s == 2
        w_next = (
            _sub(wait_af, idx)
            + _sub(b_leg_f, idx)
            + _sub(lb, idx)
            + _sub(wa * mm, idx)
            + np.where(kt_2, _sub(la_kt, idx), _sub(la, idx))
            + (0.0 if r.floor else np.where(kt_2, _sub(avg.lb_kt, idx), _sub(lb, idx)))
        )
        one_step = _divides(_sub(kc_a, idx), _sub(step_kb, idx))
        per_pass_a = _raise_at(
            per_pass_a, idx, _sub(co_frac, idx) * one_step * w_next, step_ka.shape
        )
    # A streamed pass (more chunks than slots): the next pass's first copy waits for the last
    # read of chunk kc - slots, and the reads of chunks 0 .. kc - slots run in order from the
    # arrival of chunk 0 (the hops above restart at every chunk's arrival; with unequal chunks
    # rotating through the slots this longer chain can be the binding one).
    # (Where chunk kc - slots is the K-tail chunk its last read is the K-tail step's, which
    # queues on MTE1 behind every read of the pass from chunk 0's arrival on, and the MMADs a
    # single L0 buffer puts between: the chain runs all k_iter reads, the last one short. The
    # floors keep the chain to k_iter - 1 reads.)
    return APassCycles(d_a0=d_a0, gain_pass_a=gain_pass_a, per_pass_a=per_pass_a)


def _thru_own_copy(r: CoreRecords, thru_k: Any, released: Any, d_a0: Any) -> Any:
    """A streamed pass's chain to chunk ``kc - slots``'s release through its own copy on MTE2.

    Direct copies issue in program order on MTE2: the pass's A copies up to that chunk's
    (``kc - slots + 1``, the K-tail one's shorter leg where it is among them) and the B copies
    of the boundaries before the chunk's first step (a B copy at that step follows the A copy),
    then the chunk's steps from its arrival to its last step's MMAD start (``released``: the
    full chunks' ``qa``, the K-tail chunk's :func:`tail_release`).
    """
    ch, lg = r.ch, r.lg
    kc_a, kc_b, slots_a, step_ka = ch.kc_a, ch.kc_b, ch.slots_a, ch.step_ka
    n_a = kc_a - slots_a + 1
    a_start = (kc_a - slots_a) * step_ka
    n_b = np.minimum(np.ceil(a_start / ch.step_kb), kc_b)
    copies = (
        n_a * lg.a_full[0]
        + (n_a >= kc_a) * d_a0
        + n_b * lg.b_full[0]
        + (n_b >= kc_b) * (lg.b_last[0] - lg.b_full[0])
    )
    # (The functions take r <= 1 as 1, and so does tail_release.)
    steps = thru_k - a_start
    return copies + released(r.avg.ra(steps), r.avg.qa, steps)


class AChain(NamedTuple):
    """What :func:`a_streamed_chain` gives the later terms (named as in its formulas)."""

    chain_a: Any
    own_a: Any
    per_pass_a: Any


def a_streamed_chain(
    r: CoreRecords,
    sl: StagingLinks,
    ah: AHops,
    ao: AOneSlot,
    apc: APassCycles,
    rel_bl: Any,
) -> AChain:
    """A streamed pass's chain through chunk ``kc - slots``, and A's whole slot chain.

    The next pass's first copy waits for the last read of chunk ``kc - slots``, and the reads of
    chunks 0 .. kc - slots run in order from chunk 0's arrival (in a pass that reloads B, through
    MTE2 in program order). One A slot holding a block's K with B staged: A's chain over two
    blocks runs through B's staging chain. ``chain_a`` = passes x per-pass cycle + bias slice.
    ``rel_bl`` is B's K-tail chunk's release from its arrival (``BHops.rel_bl``).
    """
    g, avg, ch, cp, lg, floor = r.g, r.avg, r.ch, r.cp, r.lg, r.floor
    a_full, b_first, b_full, b_last = lg.a_full, lg.b_first, lg.b_full, lg.b_last
    bias_cyc, vb, via_a, via_b = cp.bias_cyc, cp.vb, cp.via_a, cp.via_b
    blocks, k_iter, wa = g.blocks, g.k_iter, g.wa
    co_frac, co_rest, has_b, kc_a, kc_b = ch.co_frac, ch.co_rest, ch.has_b, ch.kc_a, ch.kc_b
    passes_a, passes_b, single_a, slots_a = ch.passes_a, ch.passes_b, ch.single_a, ch.slots_a
    step_ka, step_kb, streamed_a = ch.step_ka, ch.step_kb, ch.streamed_a
    d_a0, per_pass_a = apc.d_a0, apc.per_pass_a
    hop_l = ao.hop_l
    hop_l_a_own, hops_f, stay_a = ah.hop_l_a_own, ah.hops_f, ah.stay_a
    wait_af, wait_al = ah.wait_af, ah.wait_al
    kt_d, la_kt, lb_kt, mm, ra, rab = avg.kt_d, avg.la_kt, avg.lb_kt, avg.mm, avg.ra, avg.rab
    rb = avg.rb
    own_pairs = sl.own_pairs
    thru_x = (kc_a - slots_a + 1) * step_ka
    thru_k = np.minimum(thru_x, k_iter)
    end_kt = (thru_k >= k_iter) * kt_d  # (the chain ends at the K-tail step)
    # (To the chunk's release: its last step's MMAD start, the K-tail step's at least after
    # that step's reads.)
    qa, qb = avg.qa, avg.qb

    def released(read_end: Any, q: Any, steps: Any) -> Any:
        return np.where(thru_k >= k_iter, tail_release(r, read_end + end_kt, q, steps), q(steps))

    if floor:
        own_thru = wait_af + ra(np.minimum(thru_x, k_iter - 1))
    else:
        own_thru = wait_af + released(ra(thru_k), qa, thru_k)
    per_pass_a = np.maximum(per_pass_a, streamed_a * own_thru)
    if not via_a:
        # In a pass that reloads B the same chain runs through MTE2 in program order: every A
        # and B copy issued up to the B chunk under chunk kc - slots's last step (B's staging
        # legs when it comes through UB), then the reads from that B chunk's arrival to the
        # last read of A's chunk (where the A read of that step precedes B's, B is not on it).
        end_a = thru_k - 1
        f_bq = np.floor(end_a / step_kb)
        n_bq = f_bq + 1
        s_bq = f_bq * step_kb
        n_aq = np.floor(s_bq / step_ka) + 1
        g_q = (
            n_aq * a_full[0]
            + (n_aq >= kc_a) * d_a0
            + n_bq * b_full[0]
            + (n_bq >= kc_b) * (b_last[0] - b_full[0])
        )
        if via_b:
            g_q = g_q + np.where(n_bq >= kc_b, b_last[1] + b_last[2], b_full[1] + b_full[2])
        r_q = thru_k - s_bq
        r_q2 = at_least(r_q, 2)
        reads_q = rab(r_q2) + end_kt if floor else released(rab(r_q2), qb, r_q2)
        thru_q = (r_q >= 2) * (g_q + reads_q)
        if not floor:
            # Or through B's first chunk: A's first copy, B's behind it (its staging legs when
            # staged), then every read of the pass from that arrival up to chunk kc - slots's
            # last step; longer than the chain through the later B chunk where the reads take
            # longer than the B copies issued between (those run ahead on MTE2). (end_a >= 1 on
            # the streamed passes this counts on; elsewhere rab's _NEVER drops out.)
            thru_0 = a_full[0] + b_first[0] + released(rab(thru_k), qb, thru_k)
            if via_b:
                thru_0 = thru_0 + b_first[1] + b_first[2]
            thru_q = np.maximum(thru_q, thru_0)
            if not via_b:
                # Or through chunk kc - slots's own copy: every copy issued before it on MTE2
                # (the A copies of the pass up to it, the B copies of the boundaries before its
                # first step), then its steps from its arrival to its release (the reads of
                # its last step: the B chunk is in L1 by then).
                thru_q = np.maximum(thru_q, _thru_own_copy(r, thru_k, released, d_a0))
        per_pass_a = np.maximum(
            per_pass_a,
            (streamed_a & has_b) * (co_frac * thru_q + co_rest * own_thru),
        )
    if not floor and not via_a and via_b:
        # One A slot holding a block's whole K (one chunk per block), B staged through UB: in a
        # block that reloads B the next block's A reads follow B's last read of this block on
        # MTE1, which waits for B's whole staging chain (each GM->UB leg after the reorder
        # before it, each reorder after the UB->L1 leg before it). So A's chain over the two
        # blocks runs: A's copy, B's staging, B's last read, the next block's A reads, the
        # next A copy -- instead of two hops of A's own.
        g_f, v_f, u_f = b_full
        g_l, v_l, u_l = b_last
        stage_b = np.where(
            kc_b > 1,
            g_f
            + v_f
            + np.maximum(kc_b - 2, 0) * (np.maximum(g_f, u_f) + v_f)
            + np.maximum(g_l, u_f)
            + v_l
            + u_l,
            g_l + v_l + u_l,
        )
        jump2 = wait_al + stage_b + lb_kt + ah.rel_al + stay_a
        one_blk = single_a & (kc_a == 1) & (k_iter >= 2) & has_b
        per_pass_a = np.maximum(
            per_pass_a, one_blk * (hop_l + co_frac * np.maximum(jump2 - 2.0 * hop_l, 0.0))
        )
        # The same A staying for several blocks, B staged in every block: from A's copy the
        # staging chain runs through B's copies of the pass's blocks (B's first GM->UB leg
        # behind A's copy on MTE2, each reorder after the link before it), in the last block
        # up to the chunk under step k - 2, then that chunk's reads, (with one L0A buffer the
        # MMAD,) and A's last read, which the next A copy waits for. (Seen: 910A fp16 4096 x
        # 512 x 768, A's whole K read by a row of three blocks, B staged in two chunks per
        # block: 5147 cycles per row, priced 4464: -13.1 %; the rest is the drain on MTE3
        # before the last block's UB->L1 leg.) (Priced on the candidates where it applies.)
        idx = np.flatnonzero(
            single_a & (kc_a == 1) & (k_iter >= 2) & has_b & (passes_b > blocks - 0.5)
            & (passes_a < blocks - 0.5)
        )  # fmt: skip
        if idx.size:
            n_pb = _sub(blocks, idx) / np.maximum(_sub(passes_a, idx), 1)
            kb_s, sk_b, ki = _sub(kc_b, idx), _sub(step_kb, idx), _sub(k_iter, idx)
            (g_f, v_f, u_f), (g_l, v_l, u_l) = (
                tuple(_sub(x, idx) for x in leg) for leg in (b_full, b_last)
            )
            stage_blk = _sub((vb + own_pairs[1]) / np.maximum(passes_b, 1), idx)
            c_st = np.floor((ki - 2) / sk_b)
            at_l = c_st >= kb_s - 1
            part = (
                np.where(kb_s > 1, v_f, v_l)
                + np.maximum(c_st - 1, 0) * (np.maximum(g_f, u_f) + v_f)
                + (c_st >= 1) * (np.maximum(np.where(at_l, g_l, g_f), u_f))
                + (c_st >= 1) * np.where(at_l, v_l, v_f)
                + np.where(at_l, u_l, u_f)
            )
            # To A's release, the K-tail step's MMAD start: after A's last read and that
            # step's B read, which waits for B's K-tail chunk when it is not chunk c_st.
            to_rel = np.maximum(
                rb.sub(idx)(np.maximum(ki - 1 - c_st * sk_b, 1))
                + _sub(wa * mm + la_kt + lb_kt, idx),
                later_b_chunks_to_release(
                    kb_s - 1.0 - c_st, ((g_f, v_f, u_f), (g_l, v_l, u_l)), _sub(rel_bl, idx)
                ),
            )
            hop_st = (
                _sub(wait_al, idx) + np.where(kb_s > 1, g_f, g_l) + (n_pb - 1.0) * stage_blk
                + part + to_rel
            )  # fmt: skip
            per_pass_a = _raise_at(per_pass_a, idx, hop_st, step_ka.shape)
    # The chains start behind the bias slice, B's behind the first A copy too (MTE2 order).
    chain_a = passes_a * per_pass_a + bias_cyc
    # per_pass_a >= ((kc_a - 1) * hop_f + hop_l) / slots_a: equal without fixed slots; with
    # them (kc_a = rounds x slots_a) rounds x hop_f >= it when hop_l <= hop_f, and
    # (rounds - 1) x hop_f + hop_l >= it otherwise (hop_l - hop_f >= (hop_l - hop_f) / slots).
    own_a = passes_a * (hops_f + hop_l_a_own) / slots_a + bias_cyc if floor else 0.0
    return AChain(chain_a=chain_a, own_a=own_a, per_pass_a=per_pass_a)


def later_b_chunks_to_release(
    n_after: Any, legs: tuple[tuple[Any, Any, Any], tuple[Any, Any, Any]], rel_bl: Any
) -> Any:
    """From a staged full B chunk's arrival, B's ``n_after`` later chunks to the block's release.

    One staging buffer links B's copies in a block: a chunk's GM->UB leg waits for the reorder
    before it (the source half), its reorder for the UB->L1 leg before it (the destination
    half), so each later chunk arrives ``max(u_prev, g) + v + u - u_prev`` after the one before
    (full chunks, then the K-tail one). The K-tail chunk is released (the K-tail step's MMAD
    start, which releases A's chunk under that step too) ``rel_bl`` after its arrival:
    ``(n - 1) x (max(u_f, g_f) + v_f) + max(u_f, g_l) + v_l + u_l - u_f + rel_bl``, 0 with no
    later chunk (``n = 0``). (Seen: the pinned case staged_b_chain_through_a_rows_blocks, 910A:
    A's copy at a row start waits for the release behind the row's last B chunk, 254 cycles
    after the chunk before's arrival, priced at that chunk's reads, 152: -4.0 %.)

    Args:
        n_after: B's chunks after the one the path has reached (per candidate, >= 0).
        legs: (GM->UB, reorder, UB->L1) cycles of B's full and of its K-tail chunk.
        rel_bl: B's K-tail chunk's release from its arrival.

    Returns:
        The cycles from the full chunk's arrival to the release.
    """
    (g_f, v_f, u_f), (g_l, v_l, u_l) = legs
    mid = np.maximum(n_after - 1.0, 0.0) * (np.maximum(u_f, g_f) + v_f)
    last = np.maximum(u_f, g_l) + v_l + u_l - u_f + rel_bl
    return (n_after >= 1) * (mid + last)
