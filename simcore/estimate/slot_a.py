"""A's slot chain: its copies chained through their chunks' reads, and what B's copies add."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from simcore.estimate.arrays import cdiv as _cdiv
from simcore.estimate.arrays import divides as _divides
from simcore.estimate.arrays import sub as _sub
from simcore.estimate.copies import leg_after_a
from simcore.estimate.records import CoreRecords
from simcore.pipeline.costs import at_least

if TYPE_CHECKING:
    pass


class AHops(NamedTuple):
    """What :func:`a_hops` gives the later terms (named as in its formulas)."""

    b_later: Any
    b_tail_co: Any
    b_wait: Any
    extra: Any
    full_co: Any
    gain_f: Any
    gain_fl: Any
    gain_l: Any
    hop_f: Any
    hop_l: Any
    hop_l_a_own: Any
    hops_f: Any
    last_co: Any
    rab_ka: Any
    reads_af: Any
    reads_al: Any
    rel_af: Any
    rel_al: Any
    rel_b_ka: Any
    rs_a: Any
    stay_a: Any
    stay_b: Any
    wait_af: Any
    wait_al: Any


def tail_release(
    r: CoreRecords,
    read_end: Any,
    q: Any,
    steps: Any,
    idx: np.ndarray | None = None,
    before_steps: tuple[Any, Any] | None = None,
) -> Any:
    """When a K-tail chunk of ``steps`` steps is released, from its arrival (a lower bound).

    Its slot is released when the K-tail step's MMAD starts: after that step's B read, which
    follows the chunk's last read on MTE1 (``read_end``, an operand's; the B read of the K-tail
    step takes ``lb_kt``) and, with one L0B buffer, the end of the MMAD before it; and after
    that MMAD (the full steps' release ``q`` one step earlier, plus the full MMAD).

    Args:
        r: The records.
        read_end: The chunk's last A read's end from its arrival (before the step's B read).
        q: The full chunks' release, ``r -> cycles`` (``qa`` or ``qb``).
        steps: The chunk's steps (>= 1).
        idx: Where given, ``read_end``, ``q`` and ``steps`` are of the candidates ``idx`` only
            (``q`` the full chunks' ``.sub(idx)``), and so is the result.
        before_steps: ``(steps >= 2, steps - 1)`` where the caller has them (two chunks of
            the same steps).

    Returns:
        ``max(max(read_end, wb x before) + lb_kt, before)``, ``before`` the MMAD before's end
        (0 for a one-step chunk), ``wb`` whether L0B has one buffer (or L0A).
    """
    avg = r.avg
    mm, wb, lb_kt = avg.mm, r.g.wb, avg.lb_kt
    if idx is not None:
        mm, wb, lb_kt = _sub(mm, idx), _sub(wb, idx), _sub(lb_kt, idx)
    # (``q`` gives its one-step value at r <= 1 as at 1, so ``steps - 1`` needs no clamp.)
    many, steps_1 = before_steps if before_steps is not None else (steps >= 2, steps - 1)
    before = many * (q(steps_1) + mm)
    return np.maximum(np.maximum(read_end, wb * before) + lb_kt, before)


def a_hops(
    r: CoreRecords,
    km1_a: Any,
) -> AHops:
    """A's slot-chain hops: the copy's slot-waiting leg, the reads from its arrival, the stay.

    A copy waits for the release of the chunk ``slots`` copies back, so A's copies chain
    through their chunks' reads: per chunk the slot-waiting leg (MTE2, or MTE3 through UB), the
    steps restarting at the arrival (MTE1, M) up to the MMAD start of the chunk's last step (the
    slot's release, :func:`simcore.pipeline.precedence.l1_slot_release`: ``rel_af``,
    ``rel_al``, the reads' ends ``reads_af``, ``reads_al`` plus at least the step's B read)
    and, for a chunk several blocks read, their compute or drains (``stay``). B chunks that
    start with an A chunk add their copies (``gain``).
    """
    g, bt, avg, ch, cp, lg, f = r.g, r.bt, r.avg, r.ch, r.cp, r.lg, r.f
    fix, floor = r.fix, r.floor
    b_later: Any = None  # (set where the term applies)
    last_co: Any = None  # (set below, or where A is direct and one slot's wait is priced)
    b_wait: Any = None  # (set where the term applies)
    hop_l_a_own: Any = None  # (set where the term applies)
    a_full, a_last, b_first, b_last = lg.a_full, lg.a_last, lg.b_first, lg.b_last
    b_leg_f, b_leg_lc, b_next, b_next_in = lg.b_leg_f, lg.b_leg_lc, lg.b_next, lg.b_next_in
    a_last_start, b_last_start, b_many = ch.a_last_start, ch.b_last_start, ch.b_many
    co_frac, co_steps, has_b, passes_a = ch.co_frac, ch.co_steps, ch.has_b, ch.passes_a
    passes_b, single_a, single_af, single_bf = ch.passes_b, ch.single_a, ch.single_af, ch.single_bf
    step_ka, step_kb = ch.step_ka, ch.step_kb
    blocks, ones, wa = g.blocks, g.ones, g.wa
    zero = g.zero
    drain_total, m3_out, span = bt.drain_total, bt.m3_out, bt.span
    la, la_kt, lb, mm, ra, rab = avg.la, avg.la_kt, avg.lb, avg.mm, avg.ra, avg.rab
    qa, qb = avg.qa, avg.qb
    via_a, via_b = cp.via_a, cp.via_b

    # A: hops of its full chunks and of its last (K-tail) chunk.
    wait_af = a_full[2] if via_a else a_full[0]
    wait_al = a_last[2] if via_a else a_last[0]
    r_last_a = r.ch.r_last_a
    reads_af = ra(step_ka)
    reads_al = ra(r_last_a) - la + la_kt
    # The slots' releases: the MMAD start of the chunk's last step (the floors keep the reads'
    # ends: the lag is not monotone in the L0 flags).
    rel_af = reads_af if floor else qa(step_ka)
    # (The K-tail chunks' steps before the last, shared by A's and B's releases below.)
    tail_a = (r_last_a >= 2, r_last_a - 1)
    rel_al = reads_al if floor else tail_release(r, reads_al, qa, r_last_a, None, tail_a)
    # A chunk that several blocks read before its slot is reused (an operand that stays for
    # a group of blocks) is read last in the last of them: the hop spans their compute too.
    # (Each block takes its step chain; the drain chain holds the MMADs back by at most dbL0C
    # blocks.)
    blocks_n = r.g.blocks_n
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
    hop_f = wait_af + rel_af + stay_a
    hops_f = km1_a * hop_f  # a pass's full chunks
    hop_l = wait_al + rel_al + stay_a
    rs_a = rel_al + stay_a
    # A block's bias slice on MTE2 (before its chunk copies).
    bias_cyc = r.cp.bias_cyc
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
        # (That B read's release, the MMAD start of its step; the floors keep the read's end.)
        after = np.maximum(b_after, ones)
        if floor:
            b_wait = (ra(after) + lb) * single_bf
        else:
            # (From the A copy, with one B slot: where a B chunk starts with the last A chunk,
            # each B chunk up to the last one is copied after the release of the one before,
            # then released: ``b_next_in`` each.)
            # (Whether a B chunk starts with the last A chunk: ``last_co`` below too.)
            last_co = _divides(a_last_start, step_kb) & has_b
            chained = last_co * np.floor(b_after / step_kb) * lg.b_next_in
            b_wait = np.maximum(qa(after), chained) * single_bf
        b_later = b_after > 0
        ahead = bias_cyc + b_later * has_b * co_frac * (b_wait + b_last[0])
    # B chunks that start with an A chunk or inside it queue behind the A copy, and the A
    # chunk's release (its last step's MMAD start, after that step's B read) waits for the last
    # of them, up to one starting at its last step (the floors end at the last A read, which
    # precedes the B read of its own step on MTE1: up to its second-to-last step); with one
    # slot the next A copy also queues on MTE2 behind them.
    n_in1 = np.floor((step_ka - 1 if not floor else at_least(step_ka, 2) - 2) / step_kb)
    r_in = step_ka - n_in1 * step_kb
    # (B's reads between its copies count where its chunks tile the A chunk.)
    ka_div, kb_short = ch.ka_div, ch.kb_short
    b_in = np.where(ka_div, b_next_in, b_next)
    # (The B chunk at the A chunk's start holds all of its reads back too: the larger of the
    # two chains through the first and the last B chunk inside.)
    # (To the A chunk's release: the MMAD start of its last step, which B's read of that step
    # precedes: B's release from the last B chunk's arrival. A one-step A chunk's release waits
    # for the B read of its step too.)
    rab_ka = rab(step_ka)
    # (Where the last B chunk inside is B's K-tail chunk, its shorter copy.)
    b_in_l = np.where(ka_div, lg.b_next_in_l, lg.b_next_l)
    b_chain_in = n_in1 * b_in + ((n_in1 >= 1) & (n_in1 >= ch.kc_b - 1)) * (b_in_l - b_in)
    rel_b_ka = qb(step_ka)  # (also read by the MTE2 gap and the staged cycle)
    in_reads = np.maximum(b_chain_in + qb(r_in), rel_b_ka) - rel_af
    gain_f = np.maximum(b_leg_f + in_reads, zero)
    # The last A chunk meets B's last chunk when both end their K loop together.
    b_at_last = a_last_start == b_last_start
    b_leg_l = np.where(b_at_last, b_leg_lc, b_leg_f)
    # (A's last read from B's arrival is after it: 0 where the chunk's only read precedes B's.)
    rel_bl = tail_release(
        r, np.maximum(rab(r_last_a) - la + la_kt, zero), qb, r_last_a, None, tail_a
    )
    gain_l = np.maximum(b_leg_l + rel_bl - rel_al, zero)
    # A full A chunk that starts with B's last (K-tail) chunk: that shorter B copy is the one
    # behind it (B chunks at least as long as A's, so the shared boundaries are exact).
    b_tail_co = b_many & ~kb_short & _divides(b_last_start, step_ka) & ~b_at_last & has_b
    gain_fl = np.maximum(b_leg_lc + in_reads, zero)
    if not via_a:
        g_b_l = np.where(b_at_last, b_last[0], b_first[0])
        gain_f = np.maximum(gain_f, single_af * (b_first[0] - rel_af))
        gain_fl = np.maximum(gain_fl, single_af * (b_last[0] - rel_af))
        # One-step A chunks in one slot: the A read of the step after a B boundary queues on
        # MTE1 behind that step's B read, and A's next copy waits for the release after that A
        # read (the B read, the MMAD start). So between A's copies s and s + 2 lie the B copy
        # behind copy s, the B read (with one L0A buffer the MMAD too), the A read and the B
        # read: over two hops, instead of two releases and a copy. With B boundaries at every
        # step the jumps overlap and each counts over its two steps.
        # (Priced on the candidates where it applies only.)
        idx = np.flatnonzero(single_a & (step_ka == 1))
        if idx.size:
            lb_i, la_i = _sub(lb, idx), _sub(la, idx)
            tail = lb_i if not floor else 0.0  # (the floors end at the A read)
            jump = lb_i + _sub(wa, idx) * _sub(mm, idx) + la_i + tail - 2.0 * _sub(rel_af, idx)
            jump = jump - _sub(wait_af, idx)
            span_j = 1.0 + (_sub(step_kb, idx) == 1)
            for gain, legs in ((gain_f, b_first), (gain_fl, b_last)):
                b_leg = leg_after_a(False, via_b, tuple(_sub(x, idx) for x in legs))
                gain[idx] = np.maximum(gain[idx], (b_leg + jump) / span_j)
        gain_l = np.maximum(gain_l, single_af * (g_b_l - rel_al))
    # Shared boundaries per pass (one may be the last A chunk's start); shorter B chunks start
    # inside every A chunk, aligned or not.
    # (Without B copies, none: co_frac is 0 there too.)
    if last_co is None:
        last_co = _divides(a_last_start, step_kb) & has_b
    if not via_a:
        # (The hop with the gain ``extra`` adds for the B copy issued with the last A copy is
        # ``wait + max(reads + gain, ahead)``: the slice ahead on MTE2 overlaps that B copy.)
        g_ahead = 0.0 if floor else co_frac * last_co * gain_l
        hop_l = np.where(single_a, wait_al + np.maximum(rs_a, ahead - g_ahead), hop_l)
    full_co = np.where(kb_short, km1_a, co_steps - last_co) * has_b
    extra = co_frac * (full_co * gain_f + b_tail_co * (gain_fl - gain_f) + last_co * gain_l)
    return AHops(
        b_later=b_later,
        b_tail_co=b_tail_co,
        b_wait=b_wait,
        extra=extra,
        full_co=full_co,
        gain_f=gain_f,
        gain_fl=gain_fl,
        gain_l=gain_l,
        hop_f=hop_f,
        hop_l=hop_l,
        hop_l_a_own=hop_l_a_own,
        hops_f=hops_f,
        last_co=last_co,
        rab_ka=rab_ka,
        reads_af=reads_af,
        reads_al=reads_al,
        rel_af=rel_af,
        rel_al=rel_al,
        rel_b_ka=rel_b_ka,
        rs_a=rs_a,
        stay_a=stay_a,
        stay_b=stay_b,
        wait_af=wait_af,
        wait_al=wait_al,
    )


def a_offset_gains(
    r: CoreRecords,
    ah: AHops,
) -> None:
    """B chunks at varying offsets inside A's: what they hold A's last read back by.

    B chunks shorter than A's that do not tile them start at offsets cycling through the
    multiples of gcd(stepKa, stepKb); each delays A's last read only by what its copies exceed
    the A reads before it. The first chunks are priced at their own offsets, the rest at their
    average (or each offset's chunks counted where the offsets cycle). Pipes: MTE2, MTE1.
    """
    avg, ch, cp, lg, floor = r.avg, r.ch, r.cp, r.lg, r.floor
    a_last_start, b_last_start, co_frac = ch.a_last_start, ch.b_last_start, ch.co_frac
    co_lcm, has_b, kb_off, kc_a, r_last_a = ch.co_lcm, ch.has_b, ch.kb_off, ch.kc_a, ch.r_last_a
    single_a, step_ka, step_kb = ch.single_a, ch.step_ka, ch.step_kb
    b_first, b_full, b_last, b_leg_f = lg.b_first, lg.b_full, lg.b_last, lg.b_leg_f
    b_leg_lc, b_next_in, b_next_in_l = lg.b_leg_lc, lg.b_next_in, lg.b_next_in_l
    extra, full_co, gain_f, hop_f, hop_l = ah.extra, ah.full_co, ah.gain_f, ah.hop_f, ah.hop_l
    rel_af = ah.rel_af
    kt_d, rab, qb, lb_kt = avg.kt_d, avg.rab, avg.qb, avg.lb_kt
    via_a, via_b = cp.via_a, cp.via_b
    # B chunks shorter than A's that do not tile them start at varying offsets o inside the A
    # chunks (o cycles through the multiples of gcd(stepKa, stepKb)): the B copies queue behind
    # the A copy, and A's last read waits for them only by what exceeds the A reads before the
    # last B chunk inside. The first chunks are priced at their own offsets (a leading axis),
    # the rest at their average. (Priced on the candidates where it applies only.)
    a_many = r.ch.a_many
    nonal = kb_off & has_b & a_many
    idx = np.flatnonzero(nonal) if not floor else np.empty(0, dtype=np.int64)
    if idx.size:
        sk_a, sk_b, kc_s = _sub(step_ka, idx), _sub(step_kb, idx), _sub(kc_a, idx)
        # (With one B slot each later B copy inside also waits for the reads of the one before.)
        bl_s, bi_s, rf_s = _sub(b_leg_f, idx), _sub(b_next_in, idx), _sub(rel_af, idx)
        pipe_f = _sub(single_a, idx) * (_sub(b_first[0], idx) - rf_s) if not via_a else 0.0
        # (To A's releases: B's from the last B chunk's arrival; the K-tail A chunk's at least
        # its last reads' ends.)
        rab_s, qb_s = rab.sub(idx), qb.sub(idx)
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
        kt_s = _sub(kt_d + lb_kt, idx)
        r_la = _sub(r_last_a, idx)

        # (Per offset o, a B boundary in the A chunk: o < stepKb < stepKa, so the B chunks
        # starting at o, o + stepKb, ... up to the chunk's last step are n_o = m + 1 >= 1, and
        # the last of them has r_o >= 1 steps of the A chunk: no clamps, no n_o >= 1 test.)
        pipe_0 = np.maximum(pipe_f, 0.0)

        def gain_at(o: Any, x0: Any) -> Any:
            so = sk_a - o  # the A chunk's steps from o on
            m = np.floor((so - 1) / sk_b)  # (up to the last step: its B read precedes the release)
            ms = m * sk_b
            r_o = so - ms
            xs = x0 + o + ms  # the last B chunk inside: its first step in the pass
            many = m >= 1
            tail = (xs == bls_s) * np.where(many, tl_in, tl_lg)
            m_bi = m * bi_s
            # (The B copies run back to back; the first B chunk's own reads hold A's last read
            # too: the longer of the two chains.)
            g_o = bl_s + np.maximum(m_bi + tail + qb_s(r_o), many * qb_s(so)) - rf_s
            # The last B chunk inside starts at the A chunk's last step (r_o = 1): its reads
            # also hold the next A chunk's release.
            strad = r_o == 1
            nxt_last = x0 + sk_a >= als_s
            g_2 = (
                bl_s + m_bi + tail
                + np.where(nxt_last, rab_s(r_la + 1) + kt_s, qb_s(sk_a + 1))
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
        # (The later chunks at the average of chunks 1 .. n_j - 1: chunk 0 starts with a B
        # boundary, which none of the later ones may, and holds one B chunk more, the one at
        # its last step.)
        rest = np.maximum(kc_s - 1 - n_j, 0)
        g_sum = g_j.sum(axis=0) + rest * g_j[1:].sum(axis=0) / (n_j - 1)
        # Where the offsets cycle within n_j chunks (every lcm / stepKa chunks), count each
        # offset's full chunks exactly: the first n_j's average leans towards the offsets that
        # come first when the cycle does not divide n_j.
        p_cyc = _sub(co_lcm, idx) / sk_a
        cnt = np.maximum(np.floor((kc_s - 2 - jj) / p_cyc) + 1.0, 0.0) * (jj < p_cyc)
        g_sum = np.where(p_cyc <= n_j, (cnt * g_j).sum(axis=0), g_sum)
        extra[idx] += _sub(co_frac, idx) * (g_sum - _sub(full_co, idx) * _sub(gain_f, idx))


class AOneSlot(NamedTuple):
    """What :func:`a_one_slot_holds` gives the later terms (named as in its formulas)."""

    extra: Any
    gain_f: Any
    hop_l: Any
    rs_bias: Any


def a_one_slot_holds(
    r: CoreRecords,
    ah: AHops,
) -> AOneSlot:
    """One A slot: B copies queued on MTE2 before the next A copy, B chunks inside A's last.

    With one slot every B copy from the last A chunk's start on precedes the next A copy on MTE2;
    a B boundary inside a full A chunk puts that B copy there too (with one B slot it also waits
    for B's read of the step before). B chunks that start inside the last A chunk hold its last
    read back by their copies and the reads from the last one's arrival.
    """
    g, avg, ch, cp, lg, floor, problem = r.g, r.avg, r.ch, r.cp, r.lg, r.floor, r.problem
    rs_bias: Any = None  # (set where the term applies)
    a_last_start, b_last_start, co_frac = ch.a_last_start, ch.b_last_start, ch.co_frac
    co_rest, has_b, kb_short, kc_b = ch.co_rest, ch.has_b, ch.kb_short, ch.kc_b
    single_a, single_bf, slots_b, step_ka = ch.single_a, ch.single_bf, ch.slots_b, ch.step_ka
    step_kb = ch.step_kb
    b_full, b_last, b_leg_lc, b_next = lg.b_full, lg.b_last, lg.b_leg_lc, lg.b_next
    b_later, b_wait, extra, full_co, gain_f = ah.b_later, ah.b_wait, ah.extra, ah.full_co, ah.gain_f
    gain_l, hop_l, last_co, rs_a = ah.gain_l, ah.hop_l, ah.last_co, ah.rs_a
    reads_af = ah.rel_af  # (the hops run to the slots' releases)
    stay_a, wait_al = ah.stay_a, ah.wait_al
    bias_cyc, via_a, via_b = cp.bias_cyc, cp.via_a, cp.via_b
    k_iter, zero = g.k_iter, g.zero
    la, la_kt, rab, rb_kb = avg.la, avg.la_kt, avg.rab, avg.rb_kb
    qa, qb = avg.qa, avg.qb
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
            # (The A chunk's release, its last step's MMAD start, also follows the B read of
            # that step, from that B copy's arrival: at least one B read, ``lb``.)
            lb_in, lbk_in = (0.0, 0.0) if floor else (_sub(avg.lb, idx), _sub(avg.lb_kt, idx))
            pipe_in = np.maximum(n_b_in - _sub(full_co, idx) - b_tail_in, 0) * np.maximum(
                _sub(b_full[0], idx) + lb_in - rf, 0.0
            ) + b_tail_in * np.maximum(_sub(b_last[0], idx) + lbk_in - rf, 0.0)
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
                    qa_s, qb_s = qa.sub(i_1), qb.sub(i_1)
                    bf_s, bl_s = _sub(b_full[0], i_1), _sub(b_last[0], i_1)
                    kcb_s, sa_1, rf_1 = _sub(kc_b, i_1), sk_a[one], rf[one]
                    n_s = 3
                    mm_i = np.arange(1, n_s + 1, dtype=np.float64)[:, None]
                    s_i = mm_i * sk_b[one]
                    o_i = s_i - np.floor(s_i / sa_1) * sa_1
                    b_i = np.where(mm_i == kcb_s - 1, bl_s, bf_s)
                    # (The B copy waits for the release of B's chunk before, the MMAD start of
                    # the step before; the A chunk's release, its last step's MMAD start,
                    # waits for the B read of that step, B's release from its arrival.)
                    # (Less what ``pipe_in`` priced for that B copy: its copy and B read.)
                    lb_i = np.where(mm_i == kcb_s - 1, _sub(avg.lb_kt, i_1), _sub(avg.lb, i_1))
                    # (qa_s and qb_s take r <= 1 as 1; o_i = 0 is masked by ok_i.)
                    d_i = (
                        qa_s(o_i) + b_i + qb_s(sa_1 - o_i)
                        - rf_1 - np.maximum(b_i + lb_i - rf_1, 0.0)
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
        # (To the release, the K-tail step's MMAD start. A B chunk starting at the last step
        # is left out: in a pass that reloads B its copy queues behind the copy of the B
        # chunk at the A chunk's start, which ``gain_l`` prices apart.)
        off = has_b & (fb <= b_last_start) & (b_last_start <= k_iter - 2)
        idx = np.flatnonzero(off)
        if idx.size:
            bls, sk_b = _sub(b_last_start, idx), _sub(step_kb, idx)
            steps_off = np.maximum(_sub(k_iter, idx) - bls, 2)
            rel_off = tail_release(
                r,
                np.maximum(rab.sub(idx)(steps_off) - _sub(la, idx) + _sub(la_kt, idx), 0.0),
                qb.sub(idx),
                steps_off,
                idx,
            )
            n_off = np.floor((bls - _sub(fb, idx)) / sk_b) + 1
            hop_off = (
                _sub(wait_al, idx)
                + np.maximum(n_off - 1, 0) * _sub(b_next, idx)
                + _sub(b_leg_lc, idx)
                + rel_off
                + _sub(stay_a, idx)
            )
            h_l = _sub(hop_l, idx)
            # (Copied where it is still A's hop; the one-slot select above is this function's.)
            if hop_l is ah.hop_l or np.shape(hop_l) != off.shape:
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
    return AOneSlot(extra=extra, gain_f=gain_f, hop_l=hop_l, rs_bias=rs_bias)
