"""B's slot chain: its copies chained through their chunks' reads, and what A's copies add."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from simcore.estimate.arrays import divides as _divides
from simcore.estimate.arrays import raise_at as _raise_at
from simcore.estimate.arrays import sub as _sub
from simcore.estimate.binding import Makespan
from simcore.estimate.copies import Chunking, ChunkLegs
from simcore.estimate.grid import Grid
from simcore.estimate.records import CoreRecords
from simcore.estimate.steps import AverageSteps

if TYPE_CHECKING:
    from simcore.estimate.slot_a import AHops
    from simcore.estimate.slot_a_pass import AChain


class BHops(NamedTuple):
    """What :func:`b_hops` gives the later terms (named as in its formulas)."""

    hop_f: Any
    hop_l: Any
    kc_b1: Any
    own_b: Any
    reads_bl: Any
    rel_bl: Any
    wait_bf: Any
    wait_bl: Any


def _hops_behind_staged_a(
    g: Grid,
    avg: AverageSteps,
    ch: Chunking,
    lg: ChunkLegs,
    waits: tuple[Any, Any],
    hop_f: Any,
    hop_l: Any,
    reads_al: Any,
) -> tuple[Any, Any]:
    """B's one-slot hops where A is staged in chunks that tile B's (full and last B chunk).

    ``reads_al`` is A's last read of its K-tail chunk from its arrival (:class:`AHops`).
    """
    wait_bf, wait_bl = waits
    a_full, a_last = lg.a_full, lg.a_last
    single_b, has_b, step_ka, step_kb = ch.single_b, ch.has_b, ch.step_ka, ch.step_kb
    passes_a, co_frac_ab, r_last_b = ch.passes_a, ch.co_frac_ab, ch.r_last_b
    blocks = g.blocks
    lb_kt = avg.lb_kt
    # A staged in chunks that tile B's: the A chunks starting after a B chunk's first
    # step have their GM->UB legs behind that B copy on MTE2, and B's last read of the
    # chunk follows A's read of its step on MTE1, so the next B copy waits for the A
    # staging chain (each GM->UB leg after the reorder before it) and the last A
    # chunk's reads. (Seen: 910A fp16 1024 x 4096 x 1024, one-step A chunks staged,
    # two-step B chunks in one slot: 1820 cycles per B chunk, priced 980: -3.5 %.)
    # (Priced on the candidates where it applies only.)
    idx = np.flatnonzero(
        single_b & has_b & _divides(step_kb, step_ka) & (step_kb > step_ka)
        & (passes_a > blocks - 0.5)
    )  # fmt: skip
    if idx.size:
        n_in = _sub(step_kb / step_ka, idx) - 1.0
        (g_f, v_f, u_f), (g_l, v_l, u_l) = (
            tuple(_sub(x, idx) for x in leg) for leg in (a_full, a_last)
        )
        link = np.maximum(g_f, u_f)
        sk_a, lbk = _sub(step_ka, idx), _sub(lb_kt, idx)
        # Full B chunks: full A chunks inside; B's last chunk: A's last one ends it (at the
        # release of B's chunk, the MMAD start after its last B read: A's release from the
        # last A chunk's arrival; the K-tail chunk's at least after its reads).
        alt_f = (
            _sub(wait_bf, idx) + g_f + n_in * v_f + (n_in - 1.0) * link + u_f
            + avg.qa.sub(idx)(sk_a)
        )  # fmt: skip
        n_l = np.floor((_sub(r_last_b, idx) - 1) / sk_a)
        alt_l = (
            _sub(wait_bl, idx)
            + np.where(n_l > 1, g_f, g_l)
            + np.maximum(n_l - 1.0, 0.0) * v_f
            + v_l
            + np.maximum(n_l - 2.0, 0.0) * link
            + np.maximum(g_l, u_f) * (n_l > 1)
            + u_l
            + _sub(reads_al, idx)
            + lbk
        )
        # (Only the share co_frac_ab of B's passes copies A.)
        w_ab = _sub(co_frac_ab, idx)
        h_f, h_l = _sub(hop_f, idx), _sub(hop_l, idx)
        alt_l = np.where(n_l >= 1, alt_l, 0.0)
        hop_f = _raise_at(hop_f, idx, h_f + w_ab * np.maximum(alt_f - h_f, 0.0), np.shape(blocks))
        hop_l = _raise_at(hop_l, idx, h_l + w_ab * np.maximum(alt_l - h_l, 0.0), np.shape(blocks))
    return hop_f, hop_l


def b_hops(
    r: CoreRecords,
    ah: AHops,
) -> BHops:
    """B's slot-chain hops, with one B slot the A copies queued between two B copies on MTE2.

    Per chunk the slot-waiting leg, B's reads from its arrival and the stay; with one direct slot
    the next B copy queues behind the A copies issued between (inside the B chunk; after the last
    one up to the next pass's step 0 with the bias slice); an A boundary strictly inside a B
    chunk adds A's copy and reads before B's read; A staged in chunks tiling B's adds A's staging
    chain.
    """
    g, avg, ch, cp, lg, fix, floor = r.g, r.avg, r.ch, r.cp, r.lg, r.fix, r.floor
    problem = r.problem
    a1, b1, k_iter, ones, zero = g.a1, g.b1, g.k_iter, g.ones, g.zero
    a_full, a_last, b_full, b_last = lg.a_full, lg.a_last, lg.b_full, lg.b_last
    a_last_start, b_last_start, co_frac_ab = ch.a_last_start, ch.b_last_start, ch.co_frac_ab
    has_b, kb_off, kc_a, kc_b, passes_a = ch.has_b, ch.kb_off, ch.kc_a, ch.kc_b, ch.passes_a
    passes_b, single_b, slots_b = ch.passes_b, ch.single_b, ch.slots_b
    step_ka, step_kb = ch.step_ka, ch.step_kb
    bias_cyc, via_a, via_b = cp.bias_cyc, cp.via_a, cp.via_b
    la_kt, lb, lb_kt, mm, per_kt = avg.la_kt, avg.lb, avg.lb_kt, avg.mm, avg.per_kt
    ra, rb, rb_kb = avg.ra, avg.rb, avg.rb_kb
    stay_b = ah.stay_b
    # The hops run to the slots' releases (l1_slot_release: the MMAD start of the chunk's last
    # step); the floors keep the reads' ends.
    qa, qb = (ra, rb) if floor else (avg.qa, avg.qb)
    rel_bf = rb_kb if floor else avg.qb_kb

    # B: its hops; with one slot the next pass's first B copy queues on MTE2 behind the bias
    # slice and the A copy that the block start issues before it.
    a_many = r.ch.a_many
    # A's first copy of a pass (one chunk, or a full one first).
    a_first0 = r.lg.a_first0
    wait_bf = b_full[2] if via_b else b_full[0]
    wait_bl = b_last[2] if via_b else b_last[0]
    kc_b1 = kc_b - 1.0
    kc_b1_n = np.maximum(kc_b1, ones)
    r_last_b = r.ch.r_last_b
    hop_f = wait_bf + rel_bf + stay_b
    # (rb(r - 1) at r = 1 is its one-read value, dropped by the select: no clip needed.)
    r_last_b1 = r_last_b - 1  # (shared by the reads and the release below)
    reads_bl = np.where(r_last_b <= 1, lb_kt, rb(r_last_b1) + per_kt)
    if not fix:
        # A block of two steps in one B chunk, both L0 buffers doubled: the K-tail step's reads
        # wait for the MMAD two steps back, the block before's first (the copy, after that
        # block's last read, outlasts it), not for the step period's full MMAD. (With more
        # chunks that MMAD is the chunk before's and may still run: the cube may lag.) (Seen:
        # 910A int8 1024 x 4096 x 1024, B in one slot holding 960 + 64 of K, copied every
        # block: 16 cycles of K-tail reads, not 122: +12.6 %.) (UB-path chips: their
        # single-slot chains are priced from these.)
        reads_bl = np.where(
            (k_iter == 2) & (kc_b == 1) & ~a1 & ~b1 & (wait_bl >= mm),
            rb(1) + la_kt + lb_kt,
            reads_bl,
        )
    # (The K-tail step's MMAD also waits for the MMAD before it.)
    rel_bl = reads_bl
    if not floor:
        # (``qb`` gives its one-step value at r <= 1 as at 1: ``r_last_b - 1`` needs no clamp.)
        rel_bl = np.maximum(reads_bl, (r_last_b >= 2) * (qb(r_last_b1) + mm))
    hop_l = wait_bl + rel_bl + stay_b
    # B's chain without what A adds: the single-slot hops below are >= these (each is the wait
    # plus a max with, or an average of maxes with, reads_bf = rb_kb + stay_b).
    own_b = passes_b * ((kc_b - 1) * hop_f + hop_l) / slots_b + bias_cyc if floor else 0.0
    if not via_b:
        # One slot: the next B copy also queues on MTE2 behind the A copies issued between the
        # two (inside this B chunk; after the last B chunk, those up to the next pass's step 0,
        # with the bias slice there).
        a_f0 = a_full[0] if not via_a else 0.0 * a_full[0]
        a_l0 = a_last[0] if not via_a else 0.0 * a_last[0]
        d_l0 = a_l0 - a_f0
        # A boundaries after step 0 up to B's last boundary (spread over the full B chunks;
        # A's last chunk among them when it starts there) and after it.
        n_a_full = np.floor(b_last_start / step_ka)
        a_tail_in = (a_last_start > b_last_start) & a_many
        # (A float 0/1 mask: it weighs three products, float x float is cheaper than bool x
        # float.)
        a_tail_full = (a_many & ~a_tail_in).astype(np.float64)
        # (Only the share co_frac_ab of B's passes reloads A: those passes and the others are
        # priced apart, an average inside the max would hide the A copies.)
        mte2_f = (n_a_full * a_f0 + a_tail_full * d_l0) / kc_b1_n
        n_a_last = np.floor((k_iter - 1) / step_ka) - n_a_full
        # A copies after B's last boundary in this block (a new A pass starts here) and the next
        # block's step-0 A copy (a new A pass starts there): in different B passes unless A is
        # reloaded in every block.
        a_here = n_a_last * a_f0 + a_tail_in * d_l0
        a_next = a_first0 if not via_a else zero
        # A in as many slots as chunks, copied once per pass of several blocks: the next pass's
        # first A copy takes the slot of A's first chunk, last read at step stepKa - 1 of this
        # block (A's read of that step precedes B's), so it waits for that read, after the
        # arrival of B's last chunk. (Seen: 910B2 bf16 1500^2 x 700, A in two row-bound
        # ND->NZ chunks per row of four blocks: the row's first A copy 269 cycles after B's
        # K-tail copy plus its copy: -4.4 % priced from B's copy.) (The bias slice is issued
        # first, during the wait.)
        # (Only where that step is in B's last chunk: an earlier read is long done.)
        a_fixed = (
            (r.ch.slots_a == kc_a) & (kc_a >= 2) & (passes_a < g.blocks - 0.5)
            & (step_ka > b_last_start)
        )  # fmt: skip
        # (Released at the MMAD start of that step: after B's read of it, in the floors that
        # A read's end.)
        steps_a = step_ka - b_last_start  # (rb and qb take r <= 1 as 1)
        wait_a = a_fixed * np.maximum(rb(steps_a) - lb if floor else qb(steps_a), zero)
        if not via_a:
            a_next = a_next + wait_a
        # With A chunks at least as long as B's, a full B chunk holds at most one A boundary:
        # price the hops with and without one apart (the max does not average).
        reads_bf = rel_bf + stay_b
        n_with = n_a_full * co_frac_ab
        tail_with = a_tail_full * co_frac_ab
        sum_with = (n_with - tail_with) * np.maximum(reads_bf, a_f0) + tail_with * np.maximum(
            reads_bf, a_l0
        )
        # An A boundary strictly inside a full B chunk (offset o > 0): its copy queues behind
        # B's on MTE2, and B's last read of the chunk follows A's read of that step on MTE1,
        # so the next B copy waits for the A copy plus A's reads from its arrival plus B's
        # read, not only the larger of B's reads and the A copy. The first boundaries at their
        # own offsets, the rest at their average. (Priced on the candidates where it applies.)
        ains = kb_off & single_b & (kc_b > 1) & has_b
        idx = np.flatnonzero(ains) if not floor else np.empty(0, dtype=np.int64)
        if idx.size:
            sk_a, sk_b, bls = _sub(step_ka, idx), _sub(step_kb, idx), _sub(b_last_start, idx)
            rbf, af0, al0 = _sub(reads_bf, idx), _sub(a_f0, idx), _sub(a_l0, idx)
            kc_s, naf = _sub(kc_a, idx), _sub(n_a_full, idx)
            qa_s = qa.sub(idx)
            # The first n_s A boundaries exactly (a leading axis), the later ones at their
            # average (the offsets cycle).
            n_s = 3
            ii = np.arange(1, n_s + 1, dtype=np.float64)[:, None]
            s_i = ii * sk_a
            o_i = s_i - np.floor(s_i / sk_b) * sk_b
            a_i = np.where(kc_s - 1 == ii, al0, af0)
            # (To B's release, the MMAD start of the B chunk's last step: A's from its arrival.)
            d_i = np.maximum(rbf, a_i + qa_s(sk_b - o_i))
            d_sum = (((s_i <= bls) & (o_i > 0)) * np.maximum(d_i - np.maximum(rbf, a_i), 0.0)).sum(
                axis=0
            )
            d_sum = d_sum * (1.0 + np.maximum(naf - n_s, 0) / np.clip(naf, 1, n_s))
            # (A fresh array of this function's: raised in place, not copied.)
            sum_with = np.asarray(sum_with, dtype=np.float64)
            sum_with[idx] += _sub(co_frac_ab, idx) * d_sum
        hop_one = wait_bf + (sum_with + (kc_b1 - n_with) * reads_bf) / kc_b1_n
        hop_many = wait_bf + reads_bf + co_frac_ab * np.maximum(mte2_f - reads_bf, zero)
        hop_f = np.where(single_b, np.where(step_ka >= step_kb, hop_one, hop_many), hop_f)
        reads_bl_s = rel_bl + stay_b
        # Shares of B's passes: A's passes start in passes_a of them (the copies here), and
        # the next block starts one in passes_a - 1 (the first A copy precedes every B copy).
        f_next = np.minimum(np.maximum(passes_a - 1.0, zero) / np.maximum(passes_b, ones), ones)
        co_both = np.maximum(co_frac_ab + f_next - 1.0, zero)
        # In the passes with A copies after B's last boundary, A's last chunk starts inside
        # B's last chunk: its copy queues behind B's on MTE2, and B's last read follows A's
        # read of that step on MTE1 (the K-tail step's), so it waits for A's copies and reads.
        reads_here = reads_bl_s
        if not floor:
            # (B's last read follows A's, its release that step's MMAD start: A's release.)
            here = a_here + ah.rel_al + stay_b
            reads_here = np.where(a_tail_in, np.maximum(reads_bl_s, here), reads_bl_s)
        # (Without a bias slice bias_cyc is the scalar 0.0, and x + 0.0 is x.)
        here_bias = bias_cyc + a_here if problem.bias else a_here
        next_bias = (
            np.maximum(bias_cyc, wait_a) + a_next - wait_a if problem.bias and not via_a else
            bias_cyc + a_next if problem.bias else a_next
        )  # fmt: skip
        hop_l_one = (
            wait_bl
            + co_both * np.maximum(reads_here, here_bias + a_next)
            + (co_frac_ab - co_both) * np.maximum(reads_here, here_bias)
            + (f_next - co_both) * np.maximum(reads_bl_s, next_bias)
            + (1.0 - co_frac_ab - f_next + co_both)
            * np.maximum(reads_bl_s, bias_cyc if problem.bias else zero)
        )
        hop_l = np.where(single_b, hop_l_one, hop_l)
        if via_a and not floor:
            hop_f, hop_l = _hops_behind_staged_a(
                g, avg, ch, lg, (wait_bf, wait_bl), hop_f, hop_l, ah.reads_al
            )
    return BHops(
        hop_f=hop_f,
        hop_l=hop_l,
        kc_b1=kc_b1,
        own_b=own_b,
        reads_bl=reads_bl,
        rel_bl=rel_bl,
        wait_bf=wait_bf,
        wait_bl=wait_bl,
    )


class BChain(NamedTuple):
    """What :func:`b_chain` gives the later terms (named as in its formulas)."""

    chain_b: Any
    pass_b_cyc: Any
    per_pass_b: Any


def b_chain(
    r: CoreRecords,
    ah: AHops,
    ac: AChain,
    bh: BHops,
    mk: Makespan,
) -> BChain:
    """B's slot chain per pass (fixed slots, streamed passes) and the slot-chain terms.

    ``chain_b`` = passes x per-pass cycle + bias slice + A's first copy (issued before B's); the
    makespan takes the longer of A's and B's chains plus an MMAD and the last drain
    (``slot_chain_a`` / ``slot_chain_b``). Pipes: MTE2 (MTE3 through UB), MTE1, M.
    """
    g, bt, avg, ch, cp, lg, problem = r.g, r.bt, r.avg, r.ch, r.cp, r.lg, r.problem
    a_first0 = lg.a_first0
    bias_cyc = cp.bias_cyc
    chain_a = ac.chain_a
    dr_last = bt.dr_last
    hop_f, hop_l, kc_b1, wait_bf, wait_bl = bh.hop_f, bh.hop_l, bh.kc_b1, bh.wait_bf, bh.wait_bl
    k_iter = g.k_iter
    kc_b, passes_b, slots_b, step_kb = ch.kc_b, ch.passes_b, ch.slots_b, ch.step_kb
    streamed_b = ch.streamed_b
    mm, rb = avg.mm, avg.rb
    stay_b = ah.stay_b
    rounds = np.floor(kc_b / slots_b)
    fixed_b = (slots_b > 1) & (rounds * slots_b == kc_b)
    burst_b = kc_b1 * wait_bf + wait_bl + stay_b + rb(1)
    per_pass_b = np.where(
        fixed_b,
        np.maximum(
            np.maximum(rounds * hop_f, (rounds - 1) * hop_f + hop_l),
            ((rounds == 1) & (stay_b > 0)) * burst_b,
        ),
        (kc_b1 * hop_f + hop_l) / slots_b,
    )
    thru_b = np.minimum((kc_b - slots_b + 1) * step_kb, k_iter - 1)
    per_pass_b = np.maximum(per_pass_b, streamed_b * (wait_bf + rb(thru_b)))
    pass_b_cyc = passes_b * per_pass_b
    # (Without a bias slice bias_cyc is the scalar 0.0, and x + 0.0 is x.)
    chain_b = (pass_b_cyc + bias_cyc if problem.bias else pass_b_cyc) + a_first0
    mk.raise_all(
        np.maximum(chain_a, chain_b) + mm + dr_last,
        ("slot_chain_b", chain_b, "slot_chain_a", chain_a),
    )
    return BChain(chain_b=chain_b, pass_b_cyc=pass_b_cyc, per_pass_b=per_pass_b)


def b_chain_at_a_pass_start(
    r: CoreRecords,
    bc: BChain,
    mk: Makespan,
) -> None:
    """B copied every block in several slots, A per pass: B's chain takes A's pass-start copy.

    Without FixPipe, at an A pass start MTE2 issues A's first copy before B's, and A's copy waits
    for A's last read of that chunk in the pass before, no later than B's slot-freeing read by the
    steps B's first chunk has more. Pipes: MTE2, MTE1.
    """
    g, bt, avg, ch, cp, lg, fix, floor = r.g, r.bt, r.avg, r.ch, r.cp, r.lg, r.fix, r.floor
    a_full, a_last = lg.a_full, lg.a_last
    blocks = g.blocks
    chain_b = bc.chain_b
    dr_last = bt.dr_last
    has_b, kc_a, kc_b, passes_a, passes_b = ch.has_b, ch.kc_a, ch.kc_b, ch.passes_a, ch.passes_b
    slots_b, step_ka, step_kb = ch.slots_b, ch.step_ka, ch.step_kb
    mm, per = avg.mm, avg.per
    via_a, via_b = cp.via_a, cp.via_b
    if not fix and not floor and not (via_a or via_b):
        # B in several slots copied in every block, A once per pass of several blocks: at an A
        # pass start MTE2 issues A's first copy before B's, and A's copy waits for A's last
        # read of that chunk in the pass before, no later than B's slot-freeing read by what
        # B's first chunk has more steps: B's chain takes the A copy at every later pass
        # start. (Seen: 310P3 int8 128 x 4096 x 4096 by column DMA, A per row of 52 blocks,
        # an 18850-cycle A copy at the row change: -5.2 %.) (Priced where it applies.)
        idx = np.flatnonzero(
            (slots_b >= 2) & (kc_b == slots_b) & (passes_b > blocks - 0.5) & has_b
            & (passes_a < blocks - 0.5) & (passes_a >= 2)
        )  # fmt: skip
        if idx.size:
            a_0 = _sub(np.where(kc_a > 1, a_full[0], a_last[0]), idx)
            ahead = np.maximum(_sub(step_kb - step_ka, idx), 0.0) * _sub(per, idx)
            extra_b = (_sub(passes_a, idx) - 1) * np.maximum(a_0 - ahead, 0.0)
            mk.raise_at(idx, _sub(chain_b + mm + dr_last, idx) + extra_b, "b_chain_at_a_pass_start")
