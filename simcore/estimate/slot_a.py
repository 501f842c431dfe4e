"""A's slot chain: its copies chained through their chunks' reads, and what B's copies add."""

from __future__ import annotations

from typing import Any

import numpy as np

from simcore.estimate.arrays import cdiv as _cdiv
from simcore.estimate.arrays import divides as _divides
from simcore.estimate.arrays import raise_at as _raise_at
from simcore.estimate.arrays import sub as _sub
from simcore.estimate.copies import Chunking, ChunkLegs, Copies, leg_after_a
from simcore.estimate.grid import BlockTypes, Grid
from simcore.estimate.steps import AverageSteps
from simcore.pipeline.costs import Costs, at_least
from simcore.tiling.problem import Problem


def a_hops(
    g: Grid,
    bt: BlockTypes,
    avg: AverageSteps,
    ch: Chunking,
    cp: Copies,
    lg: ChunkLegs,
    c: Costs,
    cap: Any,
    f: dict[str, Any],
    fix: bool,
    floor: bool,
    km1_a: Any,
    problem: Problem,
) -> tuple[Any, ...]:
    """A's slot-chain hops: the copy's slot-waiting leg, the reads from its arrival, the stay.

    A copy waits for the last read of the chunk ``slots`` copies back, so A's copies chain
    through their chunks' reads: per chunk the slot-waiting leg (MTE2, or MTE3 through UB), the
    reads restarting at the arrival (MTE1, M) and, for a chunk several blocks read, their compute
    or drains (``stay``). B chunks that start with an A chunk add their copies (``gain``).
    """
    b_later: Any = None  # (set where the term applies)
    b_wait: Any = None  # (set where the term applies)
    hop_l_a_own: Any = None  # (set where the term applies)
    a_full = lg.a_full
    a_last = lg.a_last
    a_last_start = ch.a_last_start
    b_first = lg.b_first
    b_last = lg.b_last
    b_last_start = ch.b_last_start
    b_leg_f = lg.b_leg_f
    b_leg_lc = lg.b_leg_lc
    b_many = ch.b_many
    b_next = lg.b_next
    b_next_in = lg.b_next_in
    blocks = g.blocks
    bn = g.bn
    co_frac = ch.co_frac
    co_steps = ch.co_steps
    cols = g.cols
    drain_total = bt.drain_total
    has_b = ch.has_b
    k_iter = g.k_iter
    la = avg.la
    la_kt = avg.la_kt
    lb = avg.lb
    m3_out = bt.m3_out
    mm = avg.mm
    ones = g.ones
    passes_a = ch.passes_a
    passes_b = ch.passes_b
    ra = avg.ra
    rab = avg.rab
    single_a = ch.single_a
    single_af = ch.single_af
    single_bf = ch.single_bf
    span = bt.span
    step_ka = ch.step_ka
    step_kb = ch.step_kb
    via_a = cp.via_a
    via_b = cp.via_b
    wa = g.wa
    zero = g.zero

    # A: hops of its full chunks and of its last (K-tail) chunk.
    wait_af = a_full[2] if via_a else a_full[0]
    wait_al = a_last[2] if via_a else a_last[0]
    r_last_a = k_iter - a_last_start
    reads_af = ra(step_ka)
    reads_al = ra(r_last_a) - la + la_kt
    # A chunk that several blocks read before its slot is reused (an operand that stays for
    # a group of blocks) is read last in the last of them: the hop spans their compute too.
    # (Each block takes its step chain; the drain chain holds the MMADs back by at most dbL0C
    # blocks.)
    blocks_n = np.maximum(blocks, ones)
    step_per = span / blocks_n
    drain_per = (drain_total + (0.0 if fix else m3_out)) / blocks_n

    # (Without FixPipe, what the last block adds after the drain chain: see stay.)
    enter_blk = drain_total / blocks_n + step_per if not (fix or floor) else 0.0

    def stay(passes: Any) -> Any:
        others = blocks / np.maximum(passes, ones) - 1
        drains = (others - f["dbL0C"]) * drain_per
        held = np.maximum(others * step_per, drains)
        if fix or floor:
            return held
        # Without FixPipe a block's L0C->UB leg waits for the previous block's UB->GM copy (one
        # C staging buffer), so the drain chain runs from the first block's last MMAD through
        # the drains of the blocks up to the one dbL0C before the last, whose L0C->UB leg the
        # last block's first MMAD waits for; then that block's steps.
        enter = (others >= f["dbL0C"]) * enter_blk
        return np.maximum(held, drains + enter)

    stay_a = stay(passes_a)
    stay_b = stay(passes_b)
    hop_f = wait_af + reads_af + stay_a
    hops_f = km1_a * hop_f  # a pass's full chunks
    hop_l = wait_al + reads_al + stay_a
    rs_a = reads_al + stay_a
    # A block's bias slice on MTE2 (before its chunk copies).
    bias_cyc = c.bias_load_cycles(np.minimum(bn, cols), cap) if problem.bias else 0.0
    # A's chain without what B adds (per-operand floor, see operand_floor_arrays): the last
    # hop of a single direct slot is wait + max(reads + stay, ahead) >= wait + reads.
    # (Only the floors use it.)
    if floor:
        hop_l_a_own = wait_al + reads_al + (0.0 if via_a else np.where(single_a, 0.0, stay_a))
    if not via_a:
        # One slot: the next pass's first copy also queues on MTE2 behind what is issued after
        # this pass's last A copy: B's last copy when it starts later (with one B slot it waits
        # for the B read of the step before), then the bias slice of the next block.
        b_after = np.maximum(b_last_start - a_last_start, zero)
        b_wait = (ra(np.maximum(b_after, ones)) + lb) * single_bf
        b_later = b_after > 0
        ahead = bias_cyc + b_later * has_b * co_frac * (b_wait + b_last[0])
        hop_l = np.where(single_a, wait_al + np.maximum(rs_a, ahead), hop_l)
    # B chunks that start with an A chunk or inside it (up to its second-to-last step: the
    # last A read precedes the B read of its own step on MTE1) queue behind the A copy, and the
    # last A read waits for the last of them; with one slot the next A copy also queues on MTE2
    # behind them.
    n_in1 = np.floor((at_least(step_ka, 2) - 2) / step_kb)  # their count less one
    r_in = step_ka - n_in1 * step_kb
    # (B's reads between its copies count where its chunks tile the A chunk.)
    ka_div = _divides(step_ka, step_kb)
    # B chunks shorter than A's that do not tile them (start at varying offsets inside).
    kb_short = step_kb < step_ka
    kb_off = kb_short & ~ka_div
    b_in = np.where(ka_div, b_next_in, b_next)
    # (The B chunk at the A chunk's start holds all of its reads back too: the larger of the
    # two chains through the first and the last B chunk inside.)
    rab_ka = rab(step_ka)
    in_reads = np.maximum(n_in1 * b_in + rab(r_in), rab_ka) - reads_af
    gain_f = np.maximum(b_leg_f + in_reads, zero)
    # The last A chunk meets B's last chunk when both end their K loop together.
    b_at_last = a_last_start == b_last_start
    b_leg_l = np.where(b_at_last, b_leg_lc, b_leg_f)
    gain_l = np.maximum(b_leg_l + rab(r_last_a) - la + la_kt - reads_al, zero)
    # A full A chunk that starts with B's last (K-tail) chunk: that shorter B copy is the one
    # behind it (B chunks at least as long as A's, so the shared boundaries are exact).
    b_tail_co = b_many & ~kb_short & _divides(b_last_start, step_ka) & ~b_at_last & has_b
    gain_fl = np.maximum(b_leg_lc + in_reads, zero)
    if not via_a:
        g_b_l = np.where(b_at_last, b_last[0], b_first[0])
        gain_f = np.maximum(gain_f, single_af * (b_first[0] - reads_af))
        gain_fl = np.maximum(gain_fl, single_af * (b_last[0] - reads_af))
        # One-step A chunks in one slot: the A read of the step after a B boundary queues on
        # MTE1 behind that step's B read, and A's next copy waits for that A read. So between
        # A's copies s and s + 2 lie the B copy behind copy s, the B read (with one L0A buffer
        # the MMAD too) and the A read: over two hops, instead of two A reads and a copy. With
        # B boundaries at every step the jumps overlap and each counts over its two steps.
        # (Priced on the candidates where it applies only.)
        idx = np.flatnonzero(single_a & (step_ka == 1))
        if idx.size:
            jump = _sub(lb, idx) + _sub(wa, idx) * _sub(mm, idx) - _sub(la, idx)
            jump = jump - _sub(wait_af, idx)
            span_j = 1.0 + (_sub(step_kb, idx) == 1)
            for gain, legs in ((gain_f, b_first), (gain_fl, b_last)):
                b_leg = leg_after_a(False, via_b, tuple(_sub(x, idx) for x in legs))
                gain[idx] = np.maximum(gain[idx], (b_leg + jump) / span_j)
        gain_l = np.maximum(gain_l, single_af * (g_b_l - reads_al))
    # Shared boundaries per pass (one may be the last A chunk's start); shorter B chunks start
    # inside every A chunk, aligned or not.
    # (Without B copies, none: co_frac is 0 there too.)
    last_co = _divides(a_last_start, step_kb) & has_b
    full_co = np.where(kb_short, km1_a, co_steps - last_co) * has_b
    extra = co_frac * (full_co * gain_f + b_tail_co * (gain_fl - gain_f) + last_co * gain_l)
    return (
        b_later,
        b_tail_co,
        b_wait,
        bias_cyc,
        blocks_n,
        extra,
        full_co,
        gain_f,
        gain_fl,
        gain_l,
        hop_f,
        hop_l,
        hop_l_a_own,
        hops_f,
        ka_div,
        kb_off,
        kb_short,
        last_co,
        r_last_a,
        rab_ka,
        reads_af,
        reads_al,
        rs_a,
        stay_a,
        stay_b,
        wait_af,
        wait_al,
    )


def a_offset_gains(
    avg: AverageSteps,
    ch: Chunking,
    cp: Copies,
    lg: ChunkLegs,
    extra: Any,
    floor: bool,
    full_co: Any,
    gain_f: Any,
    hop_f: Any,
    hop_l: Any,
    reads_af: Any,
) -> Any:
    """B chunks at varying offsets inside A's: what they hold A's last read back by.

    B chunks shorter than A's that do not tile them start at offsets cycling through the
    multiples of gcd(stepKa, stepKb); each delays A's last read only by what its copies exceed
    the A reads before it. The first chunks are priced at their own offsets, the rest at their
    average (or each offset's chunks counted where the offsets cycle). Pipes: MTE2, MTE1.
    """
    a_last_start = ch.a_last_start
    b_first = lg.b_first
    b_full = lg.b_full
    b_last = lg.b_last
    b_last_start = ch.b_last_start
    b_leg_f = lg.b_leg_f
    b_leg_lc = lg.b_leg_lc
    b_next_in = lg.b_next_in
    b_next_in_l = lg.b_next_in_l
    co_frac = ch.co_frac
    co_lcm = ch.co_lcm
    has_b = ch.has_b
    kb_off = ch.kb_off
    kc_a = ch.kc_a
    kt_d = avg.kt_d
    r_last_a = ch.r_last_a
    rab = avg.rab
    single_a = ch.single_a
    step_ka = ch.step_ka
    step_kb = ch.step_kb
    via_a = cp.via_a
    via_b = cp.via_b
    # B chunks shorter than A's that do not tile them start at varying offsets o inside the A
    # chunks (o cycles through the multiples of gcd(stepKa, stepKb)): the B copies queue behind
    # the A copy, and A's last read waits for them only by what exceeds the A reads before the
    # last B chunk inside. The first chunks are priced at their own offsets (a leading axis),
    # the rest at their average. (Priced on the candidates where it applies only.)
    a_many = kc_a > 1
    nonal = kb_off & has_b & a_many
    idx = np.flatnonzero(nonal) if not floor else np.empty(0, dtype=np.int64)
    if idx.size:
        sk_a, sk_b, kc_s = _sub(step_ka, idx), _sub(step_kb, idx), _sub(kc_a, idx)
        # (With one B slot each later B copy inside also waits for the reads of the one before.)
        bl_s, bi_s, rf_s = _sub(b_leg_f, idx), _sub(b_next_in, idx), _sub(reads_af, idx)
        pipe_f = _sub(single_a, idx) * (_sub(b_first[0], idx) - rf_s) if not via_a else 0.0
        rab_s = rab.sub(idx)
        # B's last (K-tail) chunk among those inside: its shorter copy is the one queued last.
        bls_s = _sub(b_last_start, idx)
        # (Through UB the chain ends with that chunk's own UB->L1 leg.)
        u_tl = _sub(b_last[2] - b_full[2], idx) if via_b else 0.0
        tl_in = _sub(b_next_in_l, idx) - bi_s + u_tl
        tl_lg = _sub(b_leg_lc, idx) - bl_s
        # A B chunk that starts at an A chunk's last step holds the next A chunk's reads back
        # (its copy precedes that A copy, its reads the next step's A read): the chain from
        # this A chunk's copy through every B copy up to it and the reads from its arrival to
        # the next A chunk's last read, less that chunk's own hop (priced in the sum).
        als_s = _sub(a_last_start, idx)
        own_f = _sub(hop_f, idx)
        own_l = _sub(hop_l, idx)
        kt_s = _sub(kt_d, idx)
        r_la = _sub(r_last_a, idx)

        # (Per offset o, a B boundary in the A chunk: o < stepKb < stepKa, so the B chunks
        # starting at o, o + stepKb, ... before the chunk's last step are n_o = m + 1 >= 1, and
        # the last of them has r_o >= 2 steps of the A chunk: no clamps, no n_o >= 1 test.)
        skb_1 = sk_b + 1
        bls_m = bls_s - sk_b
        tl_in_b = tl_in + bi_s
        pipe_0 = np.maximum(pipe_f, 0.0)

        def gain_at(o: Any, x0: Any) -> Any:
            so = sk_a - o  # the A chunk's steps from o on
            m = np.floor((so - 2) / sk_b)
            ms = m * sk_b
            r_o = so - ms
            xs = x0 + o + ms  # the last B chunk inside: its first step in the pass
            many = m >= 1
            tail = (xs == bls_s) * np.where(many, tl_in, tl_lg)
            m_bi = m * bi_s
            # (The B copies run back to back; the first B chunk's own reads hold A's last read
            # too: the longer of the two chains.)
            g_o = bl_s + np.maximum(m_bi + tail + rab_s(r_o), many * rab_s(so)) - rf_s
            # The next B chunk starts at the A chunk's last step (r_o = stepKb + 1) and at or
            # before B's last one.
            strad = (r_o == skb_1) & (xs <= bls_m)
            nxt_last = x0 + sk_a >= als_s
            g_2 = (
                bl_s + m_bi + tail
                + np.where(xs == bls_m, tl_in_b, bi_s)
                + rab_s(np.where(nxt_last, r_la + 1, sk_a + 1)) + nxt_last * kt_s
                - rf_s - np.where(nxt_last, own_l, own_f)
            )  # fmt: skip
            g_o = np.where(strad, np.maximum(g_o, g_2), g_o)
            return np.maximum(g_o, pipe_0)

        # The first n_j full chunks exactly (all at once, a leading axis of chunk indices),
        # the later ones at their average (the offsets cycle). The offset of chunk j: from its
        # start x to the next B boundary (zero where one starts with it).
        n_j = 3
        jj = np.arange(n_j, dtype=np.float64)[:, None]
        x = jj * sk_a
        g_j = (jj <= kc_s - 2) * gain_at(np.ceil(x / sk_b) * sk_b - x, x)
        g_sum = g_j.sum(axis=0) * (1.0 + np.maximum(kc_s - 1 - n_j, 0) / np.clip(kc_s - 1, 1, n_j))
        # Where the offsets cycle within n_j chunks (every lcm / stepKa chunks), count each
        # offset's full chunks exactly: the first n_j's average leans towards the offsets that
        # come first when the cycle does not divide n_j.
        p_cyc = _sub(co_lcm, idx) / sk_a
        cnt = np.maximum(np.floor((kc_s - 2 - jj) / p_cyc) + 1.0, 0.0) * (jj < p_cyc)
        g_sum = np.where(p_cyc <= n_j, (cnt * g_j).sum(axis=0), g_sum)
        extra[idx] += _sub(co_frac, idx) * (g_sum - _sub(full_co, idx) * _sub(gain_f, idx))
    return a_many


def a_one_slot_holds(
    g: Grid,
    avg: AverageSteps,
    ch: Chunking,
    cp: Copies,
    lg: ChunkLegs,
    b_later: Any,
    b_wait: Any,
    extra: Any,
    floor: bool,
    full_co: Any,
    gain_f: Any,
    gain_l: Any,
    hop_l: Any,
    last_co: Any,
    problem: Problem,
    reads_af: Any,
    rs_a: Any,
    stay_a: Any,
    wait_al: Any,
) -> tuple[Any, ...]:
    """One A slot: B copies queued on MTE2 before the next A copy, B chunks inside A's last.

    With one slot every B copy from the last A chunk's start on precedes the next A copy on MTE2;
    a B boundary inside a full A chunk puts that B copy there too (with one B slot it also waits
    for B's read of the step before). B chunks that start inside the last A chunk hold its last
    read back by their copies and the reads from the last one's arrival.
    """
    rs_bias: Any = None  # (set where the term applies)
    a_last_start = ch.a_last_start
    b_full = lg.b_full
    b_last = lg.b_last
    b_last_start = ch.b_last_start
    b_leg_lc = lg.b_leg_lc
    b_next = lg.b_next
    bias_cyc = cp.bias_cyc
    co_frac = ch.co_frac
    co_rest = ch.co_rest
    has_b = ch.has_b
    k_iter = g.k_iter
    kb_short = ch.kb_short
    kc_b = ch.kc_b
    la = avg.la
    la_kt = avg.la_kt
    lb = avg.lb
    ra = avg.ra
    rab = avg.rab
    rb_kb = avg.rb_kb
    single_a = ch.single_a
    single_bf = ch.single_bf
    slots_b = ch.slots_b
    step_ka = ch.step_ka
    step_kb = ch.step_kb
    via_a = cp.via_a
    via_b = cp.via_b
    zero = g.zero
    if not via_a:
        # One slot, B chunks at least as long as A's: a B boundary inside a full A chunk that is
        # not its start still puts that B copy on MTE2 before the next A copy.
        # (Priced on the candidates where it applies only.)
        idx = np.flatnonzero(single_a & ~kb_short & has_b)
        if idx.size:
            als, bls = _sub(a_last_start, idx), _sub(b_last_start, idx)
            sk_a, sk_b, rf = _sub(step_ka, idx), _sub(step_kb, idx), _sub(reads_af, idx)
            n_b_in = _cdiv(als, sk_b)
            b_tail_in = (
                (_sub(kc_b, idx) > 1) & (bls < als) & (bls - np.floor(bls / sk_a) * sk_a != 0)
            )
            pipe_in = np.maximum(n_b_in - _sub(full_co, idx) - b_tail_in, 0) * np.maximum(
                _sub(b_full[0], idx) - rf, 0.0
            ) + b_tail_in * np.maximum(_sub(b_last[0], idx) - rf, 0.0)
            if not via_b and not floor:
                # With one B slot too, such a B copy waits for B's read of the step before,
                # inside this A chunk: the hop runs the A copy, the A reads up to that step, the
                # B read, the B copy and the reads from its arrival to the chunk's last A read
                # (not just the B copy ahead of the next A copy on MTE2). The first boundaries at
                # their own offsets, the rest at their average. (Seen: 910A fp16 512 x 1024 x
                # 3000, 9-step A and 14-step B chunks in one slot each by column DMA: -7.8 %.)
                one = np.flatnonzero(_sub(slots_b, idx) == 1)
                if one.size:
                    i_1 = idx[one]
                    ra_s, rab_s = ra.sub(i_1), rab.sub(i_1)
                    lb_s, bf_s, bl_s = _sub(lb, i_1), _sub(b_full[0], i_1), _sub(b_last[0], i_1)
                    kcb_s, sa_1, rf_1 = _sub(kc_b, i_1), sk_a[one], rf[one]
                    n_s = 3
                    mm_i = np.arange(1, n_s + 1, dtype=np.float64)[:, None]
                    s_i = mm_i * sk_b[one]
                    o_i = s_i - np.floor(s_i / sa_1) * sa_1
                    b_i = np.where(mm_i == kcb_s - 1, bl_s, bf_s)
                    # (At the A chunk's last step the A read precedes B's: only the next A
                    # copy, queued behind the B copy on MTE2, waits.)
                    d_i = (
                        ra_s(np.maximum(o_i, 1)) + lb_s + b_i
                        + (o_i < sa_1 - 1) * rab_s(np.maximum(sa_1 - o_i, 2))
                        - rf_1 - np.maximum(b_i - rf_1, 0.0)
                    )  # fmt: skip
                    ok_i = (s_i < als[one]) & (o_i > 0) & (mm_i < kcb_s)
                    d_sum = (ok_i * np.maximum(d_i, 0.0)).sum(axis=0)
                    n_strict = np.maximum(n_b_in[one] - _sub(full_co, i_1) - 1, 0)
                    d_sum = d_sum * (
                        1.0 + np.maximum(n_strict - n_s, 0) / np.clip(n_strict, 1, n_s)
                    )
                    pipe_in = np.array(pipe_in, dtype=np.float64)
                    pipe_in[one] += d_sum
            extra[idx] += _sub(co_frac, idx) * pipe_in
        # Every B copy from the last A chunk's start on (the one issued with that A copy too)
        # precedes the next A copy on MTE2. The B copy issued with it is the one whose delay of
        # the last A read ``gain_l`` prices (in ``extra``): the hop with ``extra`` is then
        # ``wait + max(reads + gain, ahead)``.
        # With one direct B slot the last B copy also waits for the reads of the chunk before
        # (from its arrival when it is among these copies, else B's read of the step before).
        n_ahead = kc_b - _cdiv(a_last_start, step_kb)
        b_hold = np.where(n_ahead >= 2, zero if via_b else single_bf * rb_kb, b_later * b_wait)
        # Only the share co_frac of the passes reloads B: price the two kinds of pass apart
        # (an average inside the max would hide the B copies).
        ahead_all = bias_cyc + has_b * (
            (n_ahead >= 1) * ((n_ahead - 1) * b_full[0] + b_last[0]) + b_hold
        )
        g_l = 0.0 if floor else last_co * gain_l
        rs_bias = np.maximum(rs_a, bias_cyc if problem.bias else zero)
        hop_l_co = wait_al + co_frac * np.maximum(rs_a, ahead_all - g_l) + co_rest * rs_bias
        hop_l = np.where(single_a, np.maximum(hop_l, hop_l_co), hop_l)
    if not floor:
        # B chunks that start inside the last A chunk, after its first step and before its last
        # one (B's last chunk among them): their copies follow the A copy (MTE2 order, or the
        # UB staging), and the last A read waits for the reads from the last one's arrival.
        # (The chains above only hold B chunks that start with an A chunk.)
        # (Priced on the candidates where it applies only.)
        fb = (np.floor(a_last_start / step_kb) + 1) * step_kb
        off = has_b & (fb <= b_last_start) & (b_last_start <= k_iter - 2)
        idx = np.flatnonzero(off)
        if idx.size:
            bls, sk_b = _sub(b_last_start, idx), _sub(step_kb, idx)
            n_off = np.floor((bls - _sub(fb, idx)) / sk_b) + 1
            hop_off = (
                _sub(wait_al, idx)
                + np.maximum(n_off - 1, 0) * _sub(b_next, idx)
                + _sub(b_leg_lc, idx)
                + rab.sub(idx)(np.maximum(_sub(k_iter, idx) - bls, 2))
                - _sub(la, idx)
                + _sub(la_kt, idx)
                + _sub(stay_a, idx)
            )
            h_l = _sub(hop_l, idx)
            hop_l = np.array(np.broadcast_to(hop_l, off.shape), dtype=np.float64)
            hop_l[idx] = h_l + _sub(co_frac, idx) * np.maximum(hop_off - h_l, 0.0)
    if floor:
        # The gains are differences of read times (not monotone in the L0 flags) and >= 0.
        gain_f = 0.0 * gain_f
        extra = 0.0 * extra
    # FIFO slots: with kc a multiple of the slots each slot always holds the same K positions,
    # so the slowest slot's own chain sets the pace, and the slot that holds chunk 0 meets
    # every B chunk that starts with one of its chunks; otherwise the chunks rotate through the
    # slots and the chain averages over them.
    return (
        extra,
        gain_f,
        hop_l,
        rs_bias,
    )


def a_pass_cycles(
    g: Grid,
    avg: AverageSteps,
    ch: Chunking,
    cp: Copies,
    lg: ChunkLegs,
    b_tail_co: Any,
    extra: Any,
    fix: bool,
    floor: bool,
    gain_f: Any,
    gain_fl: Any,
    hop_f: Any,
    hop_l: Any,
    hops_f: Any,
    km1_a: Any,
    km1_b: Any,
    rs_a: Any,
    rs_bias: Any,
    stay_a: Any,
    wait_af: Any,
    wait_al: Any,
) -> tuple[Any, ...]:
    """A's cycle per pass: fixed slots, the whole-pass chain with one slot, one-step chunks.

    With ``kc`` a multiple of the slots each slot keeps its K positions and the slowest sets the
    pace (a group change reloads a resident panel back to back); otherwise the hops average over
    the slots. With one slot the next pass's first A copy waits for the pass's last A read, which
    queues on MTE1 behind B's read of the step before (every B copy of the pass before it).
    """
    a_full = lg.a_full
    a_last = lg.a_last
    a_last_start = ch.a_last_start
    a_many = ch.a_many
    b_last_start = ch.b_last_start
    b_leg_f = lg.b_leg_f
    b_next = lg.b_next
    b_next_in = lg.b_next_in
    b_next_in_l = lg.b_next_in_l
    b_next_l = lg.b_next_l
    co_frac = ch.co_frac
    co_lcm = ch.co_lcm
    co_rest = ch.co_rest
    has_b = ch.has_b
    k_iter = g.k_iter
    kc_a = ch.kc_a
    la = avg.la
    la_kt = avg.la_kt
    lb = avg.lb
    mm = avg.mm
    ra = avg.ra
    rab = avg.rab
    single_a = ch.single_a
    slots_a = ch.slots_a
    step_ka = ch.step_ka
    step_kb = ch.step_kb
    via_a = cp.via_a
    via_b = cp.via_b
    wa = g.wa
    zero = g.zero
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
        if not fix and not floor:
            # One of slot 0's meetings may be with B's short K-tail chunk (the A chunk starting
            # with it is in slot 0): that copy, not a full one. (Seen: 910A fp16 512 x 1024 x
            # 3000, A in ten two-step chunks over two slots, B's 16 + 3 steps copied every
            # block: the 1663-cycle tail copy priced as the 4979-cycle full one: +12.6 %.)
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
    n_star1 = np.floor(np.maximum(k_iter - 2, zero) / step_kb)  # B boundaries <= k - 2, less one
    sigma = n_star1 * step_kb
    # B copies with no A copy between them (all in one A chunk) chain through B's reads too.
    no_a_between = sigma < step_ka
    b_nx = np.where(no_a_between, b_next_in, b_next)
    b_nx_l = np.where(no_a_between, b_next_in_l, b_next_l)
    w_pass = (
        np.where(a_many, wait_af, wait_al)
        + b_leg_f
        + n_star1 * b_nx
        + ((n_star1 == km1_b) & (n_star1 > 0)) * (b_nx_l - b_nx)
        + rab(k_iter - sigma)
        - la
        + la_kt
    )
    # (The K-tail A copy's MTE2 leg less a full one's.)
    d_a0 = a_last[0] - a_full[0] if not (via_a and via_b) else 0.0
    if not via_b:
        # Direct B copies share MTE2 with the A copies issued between them.
        w_pass = (
            w_pass
            + np.floor(sigma / step_ka) * a_full[0]
            + ((a_last_start <= sigma) & a_many) * d_a0
        )
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
        w_next = (
            _sub(wait_af, idx)
            + _sub(b_leg_f, idx)
            + _sub(lb, idx)
            + _sub(wa * mm, idx)
            + np.where(k_s == 2, _sub(la_kt, idx), _sub(la, idx))
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
    return (
        d_a0,
        gain_pass_a,
        per_pass_a,
    )


def a_streamed_chain(
    g: Grid,
    avg: AverageSteps,
    ch: Chunking,
    cp: Copies,
    lg: ChunkLegs,
    d_a0: Any,
    floor: bool,
    hop_l: Any,
    hop_l_a_own: Any,
    hops_f: Any,
    own_pairs: Any,
    per_pass_a: Any,
    reads_al: Any,
    stay_a: Any,
    wait_af: Any,
    wait_al: Any,
) -> tuple[Any, ...]:
    """A streamed pass's chain through chunk ``kc - slots``, and A's whole slot chain.

    The next pass's first copy waits for the last read of chunk ``kc - slots``, and the reads of
    chunks 0 .. kc - slots run in order from chunk 0's arrival (in a pass that reloads B, through
    MTE2 in program order). One A slot holding a block's K with B staged: A's chain over two
    blocks runs through B's staging chain. ``chain_a`` = passes x per-pass cycle + bias slice.
    """
    a_full = lg.a_full
    b_first = lg.b_first
    b_full = lg.b_full
    b_last = lg.b_last
    bias_cyc = cp.bias_cyc
    blocks = g.blocks
    co_frac = ch.co_frac
    co_rest = ch.co_rest
    has_b = ch.has_b
    k_iter = g.k_iter
    kc_a = ch.kc_a
    kc_b = ch.kc_b
    kt_d = avg.kt_d
    la_kt = avg.la_kt
    lb_kt = avg.lb_kt
    mm = avg.mm
    passes_a = ch.passes_a
    passes_b = ch.passes_b
    ra = avg.ra
    rab = avg.rab
    rb = avg.rb
    single_a = ch.single_a
    slots_a = ch.slots_a
    step_ka = ch.step_ka
    step_kb = ch.step_kb
    streamed_a = ch.streamed_a
    vb = cp.vb
    via_a = cp.via_a
    via_b = cp.via_b
    wa = g.wa
    thru_x = (kc_a - slots_a + 1) * step_ka
    thru_k = np.minimum(thru_x, k_iter)
    end_kt = (thru_k >= k_iter) * kt_d  # (the chain ends at the K-tail step)
    if floor:
        own_thru = wait_af + ra(np.minimum(thru_x, k_iter - 1))
    else:
        own_thru = wait_af + ra(thru_k) + end_kt
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
        thru_q = (r_q >= 2) * (g_q + rab(at_least(r_q, 2)) + end_kt)
        if not floor:
            # Or through B's first chunk: A's first copy, B's behind it (its staging legs when
            # staged), then every read of the pass from that arrival up to chunk kc - slots's
            # last step; longer than the chain through the later B chunk where the reads take
            # longer than the B copies issued between (those run ahead on MTE2). (end_a >= 1 on
            # the streamed passes this counts on; elsewhere rab's _NEVER drops out.)
            thru_0 = a_full[0] + b_first[0] + rab(thru_k) + end_kt
            if via_b:
                thru_0 = thru_0 + b_first[1] + b_first[2]
            thru_q = np.maximum(thru_q, thru_0)
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
        jump2 = wait_al + stage_b + lb_kt + reads_al + stay_a
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
            hop_st = (
                _sub(wait_al, idx) + np.where(kb_s > 1, g_f, g_l) + (n_pb - 1.0) * stage_blk
                + part + rb.sub(idx)(np.maximum(ki - 1 - c_st * sk_b, 1))
                + _sub(wa * mm + la_kt, idx)
            )  # fmt: skip
            per_pass_a = _raise_at(per_pass_a, idx, hop_st, step_ka.shape)
    # The chains start behind the bias slice, B's behind the first A copy too (MTE2 order).
    chain_a = passes_a * per_pass_a + bias_cyc
    # per_pass_a >= ((kc_a - 1) * hop_f + hop_l) / slots_a: equal without fixed slots; with
    # them (kc_a = rounds x slots_a) rounds x hop_f >= it when hop_l <= hop_f, and
    # (rounds - 1) x hop_f + hop_l >= it otherwise (hop_l - hop_f >= (hop_l - hop_f) / slots).
    own_a = passes_a * (hops_f + hop_l_a_own) / slots_a + bias_cyc if floor else 0.0
    return (
        chain_a,
        own_a,
        per_pass_a,
    )
