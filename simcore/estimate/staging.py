"""The UB staging chains: one source and one destination half link the staged copies.

On the UB path a GM->UB leg (MTE2) waits for the reorder (V) before it, a reorder for the
UB->L1 leg (MTE3) before it. These functions price the links between consecutive staged copies
and the chains through them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from simcore.estimate.arrays import NEVER
from simcore.estimate.arrays import sub as _sub
from simcore.estimate.binding import Makespan
from simcore.estimate.records import CoreRecords

if TYPE_CHECKING:
    from simcore.estimate.slot_a import AHops
    from simcore.estimate.slot_b import BHops


def staged_b_between_a(
    idx: np.ndarray,
    chunking: tuple[Any, Any, Any, Any],
    legs: tuple[tuple[Any, Any, Any], ...],
    run_ends: tuple[Any, Any],
) -> tuple[Any, Any]:
    """Cycles a staged B pass adds to the UB staging chain of a staged A's block.

    One source and one destination buffer link the staged copies in program order: a GM->UB
    leg waits for the reorder before it, a reorder for the UB->L1 leg before it, so from one
    reorder to the next a copy costs ``max(u_prev, g) + v``. A B chunk inserted between A
    chunks ``i`` and ``i + 1`` turns the link ``max(u_i, g_i+1)`` into ``max(u_i, g_B) + v_B +
    max(u_B, g_i+1)``. With B's chunks no shorter than A's (stepKb >= stepKa) and A in several
    chunks, every B chunk but the last has an A chunk after it; the last one either (the A
    chunk after it is then A's last if it starts there) or it ends the block's chain, its
    reads following its arrival instead of A's last chunk's. (Seen: 910A int8 512 x 1024 x
    3000, both staged, A in two chunks per block, B in two per column: 4127 cycles at each
    column start, priced 1806: -9.5 %.)

    Args:
        idx: The selected candidates.
        chunking: K chunks of A and of B, stepKa, stepKb (all candidates).
        legs: (GM->UB, reorder, UB->L1) cycles of A's full and last chunk and of B's full and
            last chunk (all candidates).
        run_ends: From A's last chunk's UB->L1 leg, and from B's, to the block's last MMAD
            (all candidates).

    Returns:
        (cycles per B pass on the selected candidates, >= the pass's reorders; what the first
        block's B pass adds after its first chunk, ``(kc_b - 2) x mid + last`` with two B
        chunks or more, else 0).
    """
    kc_a, kc_b, step_ka, step_kb = (_sub(x, idx) for x in chunking)
    a_f, a_l, b_f, b_l = (tuple(_sub(x, idx) for x in leg) for leg in legs)
    end_a, end_b = (_sub(x, idx) for x in run_ends)
    mid = (
        np.maximum(a_f[2], b_f[0]) + b_f[1] + np.maximum(b_f[2], a_f[0])
        - np.maximum(a_f[2], a_f[0])
    )  # fmt: skip
    # B's last chunk: the A chunk it starts in, and the one after it if any.
    i_l = ((kc_b - 1) * step_kb) // step_ka
    u_prev = np.where(i_l < kc_a - 1, a_f[2], a_l[2])
    g_next = np.where(i_l + 1 < kc_a - 1, a_f[0], a_l[0])
    into = np.maximum(u_prev, b_l[0]) + b_l[1]
    last = np.where(
        i_l + 1 < kc_a,
        into + np.maximum(b_l[2], g_next) - np.maximum(u_prev, g_next),
        np.maximum(into + b_l[2] + end_b - (u_prev + end_a), 0.0),
    )
    # The first block starts a B pass too, but the start-up already holds its first B chunk
    # (the first MMAD waits for it, simcore.estimate.compute.compute_chain); each later B
    # chunk sits between A's chunks as at every other pass start. (Seen: the pinned case
    # staged_b_chunks_between_staged_a_chunks: block 0's second B chunk, 1,243 cycles between
    # A's last reorder and the block's last MMAD, priced nowhere: -4.05 %.)
    first = np.where(kc_b > 1, np.maximum((kc_b - 2) * mid + last, 0.0), 0.0)
    return np.maximum((kc_b - 1) * mid + last, (kc_b - 1) * b_f[1] + b_l[1]), first


def staging_chain_to(
    x_star: Any, kc: Any, full: tuple[Any, Any, Any], last: tuple[Any, Any, Any]
) -> tuple[Any, Any, Any]:
    """An operand's UB staging chain in a block up to the arrival of its chunk ``x_star``.

    A GM->UB leg waits for the reorder before it (the source half), a reorder for its GM->UB
    leg and for the UB->L1 leg before it (the destination half); the K-tail chunk (index
    ``kc - 1``) takes its own legs.

    Args:
        x_star: The chunk whose arrival ends the chain (0-based, per candidate).
        kc: The operand's K chunks per block.
        full: (GM->UB, reorder, UB->L1) cycles of a full chunk.
        last: The same of the K-tail chunk.

    Returns:
        The chain's cycles, and the two parts of the same arrival through MTE2's order that are
        the operand's own: its GM->UB legs up to that chunk, and that chunk's reorder and UB->L1
        leg (the caller adds the other operand's copies MTE2 runs between).
    """
    g_f, v_f, u_f = full
    g_l, v_l, u_l = last
    at_last = x_star == kc - 1
    last_hop = at_last & (x_star >= 1)
    chain = (
        np.where(kc == 1, g_l + v_l, g_f + v_f)
        + (x_star - last_hop) * (np.maximum(g_f, u_f) + v_f)
        + last_hop * (np.maximum(g_l, u_f) + v_l)
        + np.where(at_last, u_l, u_f)
    )
    own_m2 = (x_star + 1 - at_last) * g_f + at_last * g_l
    end_m2 = np.where(at_last, v_l + u_l, v_f + u_f)
    return chain, own_m2, end_m2


def staged_block_links(
    idx: np.ndarray | None, steps: tuple[Any, Any, Any, Any], legs: tuple[Any, Any, Any, Any]
) -> Any:
    """Both operands staged through UB and copied in every block: the block's staging links.

    The copies of a block enter the staging buffers in program order, by their first step (A's
    before B's at a shared step). Between two consecutive reorders sits the longer of the
    earlier copy's UB->L1 leg (the destination half) and the later copy's GM->UB leg (the
    source half); the block's last copy links to the next block's first A copy. Each A chunk
    is followed by the first B chunk that starts inside it, else by the next A chunk; each B
    chunk by the next B chunk inside the same A chunk, else by the next A chunk. Full chunks
    and the last (K-tail) chunk of each operand keep their own legs. (Seen: 910A fp16 512 x
    1024 x 3000, A in chunks of 7 and 1 steps, B of 6 and 2: the order A, B, B, A links A's
    short tail to the next block's first A copy, not between B copies: +8.1 %.)

    Args:
        idx: The candidates, or None for all of them.
        steps: kc_a, kc_b, stepKa, stepKb.
        legs: (MTE2, V, MTE3) legs of A's full and last chunk, B's full and last chunk.

    Returns:
        Sum of the links of one block, and the last one (to the next block's first copy).
    """

    def at(x: Any) -> Any:
        return x if idx is None else _sub(x, idx)

    kc_a, kc_b, sa, sb = (at(x) for x in steps)
    (ga_f, _, ua_f), (ga_l, _, ua_l), (gb_f, _, ub_f), (gb_l, _, ub_l) = (
        tuple(at(x) for x in leg) for leg in legs
    )
    ga_0 = np.where(kc_a > 1, ga_f, ga_l)
    als = (kc_a - 1) * sa
    bls = (kc_b - 1) * sb

    def interval(step: Any) -> Any:
        # The A chunk a step falls in (the last one runs to the end of K).
        return np.minimum(np.floor(step / sa), kc_a - 1)

    j_bl = interval(bls)
    # B's last chunk follows the B chunk before it in the same A chunk (else an A chunk).
    y = (kc_b >= 2) & (interval(np.maximum(bls - sb, 0)) == j_bl)
    first_bl = ~y
    last_has_b = bls >= als
    # Full A chunks with a B chunk starting inside: all of them with B chunks no longer,
    # else one per B start before A's last chunk.
    n1 = np.where(sb <= sa, kc_a - 1, np.minimum(kc_b, np.ceil(als / sb)))
    n_ab = n1 + last_has_b
    # A's second-to-last chunk without a B start inside (it links to A's last chunk).
    z = (kc_a >= 2) & (np.floor(np.maximum(als - 1, 0) / sb) * sb < (kc_a - 2) * sa)
    w = (bls < als) & first_bl
    s_ab = (
        (n1 - w) * np.maximum(ua_f, gb_f)
        + w * np.maximum(ua_f, gb_l)
        + last_has_b * np.maximum(ua_l, np.where(first_bl & (j_bl == kc_a - 1), gb_l, gb_f))
    )
    s_aa = (
        np.maximum(kc_a - 1 - n1 - z, 0) * np.maximum(ua_f, ga_f)
        + z * np.maximum(ua_f, ga_l)
        + ~last_has_b * np.maximum(ua_l, ga_0)
    )
    g_after_bl = np.where(j_bl >= kc_a - 1, ga_0, np.where(j_bl == kc_a - 2, ga_l, ga_f))
    x = ~z & (kc_a >= 2) & (j_bl != kc_a - 2)
    s_ba = (
        np.maximum(ub_l, g_after_bl)
        + x * np.maximum(ub_f, ga_l)
        + np.maximum(n_ab - 1 - x, 0) * np.maximum(ub_f, ga_f)
    )
    s_bb = np.maximum(kc_b - n_ab - y, 0) * np.maximum(ub_f, gb_f) + y * np.maximum(ub_f, gb_l)
    wrap = np.maximum(np.where(last_has_b, ub_l, ua_l), ga_0)
    return s_ab + s_aa + s_ba + s_bb, wrap


def staged_one_slot_chain(
    chunking: tuple[Any, ...],
    legs: tuple[tuple[Any, Any, Any], tuple[Any, Any, Any]],
    reads: tuple[Any, ...],
) -> Any:
    """An operand staged through UB in one L1 slot: its chunks' chain through the staging.

    A chunk's UB->L1 leg waits for the last read of the chunk before (one slot) and the next
    chunk's reorder waits for that UB->L1 leg (the staging buffer's destination half), so from
    one arrival to the next: the longer of the chunk's reads and the next chunk's reorder, then
    the next UB->L1 leg. Per pass of ``kc`` chunks, full ones then the K-tail one, the next
    pass's first chunk after it; the first chunk's GM->UB leg and reorder lead the chain.

    Args:
        chunking: ``(kc, passes)``: K chunks per pass and the operand's passes.
        legs: (GM->UB, reorder, UB->L1) legs of a full and of the K-tail chunk.
        reads: The last read of a full and of the K-tail chunk from its arrival, and the
            compute of the blocks a chunk stays for.

    Returns:
        The chain's cycles up to the last chunk's last read.
    """
    kc, passes = chunking
    (g_f, v_f, u_f), (g_l, v_l, u_l) = legs
    r_f, r_l, stay = reads
    r_f, r_l = r_f + stay, r_l + stay
    many = kc > 1
    per_pass = np.where(
        many,
        (kc - 1) * u_f + u_l + np.maximum(kc - 2, 0) * np.maximum(r_f, v_f)
        + np.maximum(r_f, v_l) + np.maximum(r_l, v_f),
        u_l + np.maximum(r_l, v_l),
    )  # fmt: skip
    lead = np.where(many, g_f + v_f, g_l + v_l)
    out: Any = lead + passes * per_pass
    return out


def staged_one_a_slot_cycle(
    chunking: tuple[Any, Any, Any, Any],
    legs: tuple[tuple[Any, Any, Any], ...],
    steps: tuple[Any, Any, Any, Any, Any],
) -> Any:
    """The per-block cycle of both operands staged through UB, A in one slot, two A chunks.

    Both reloaded in every block (with FixPipe, so the vector queue holds the reorders only):
    A's chunk 0 goes GM->UB (after the reorder before it: the source half), reorder, UB->L1;
    B's chunk 0's reorder waits for that UB->L1 leg (the destination half), then its UB->L1;
    the reads from B's arrival up to A's last read of chunk 0; A's K-tail chunk's UB->L1 leg
    waits for that read (one slot); B's last chunk's reorder waits for that leg; and the next
    block's first GM->UB copy waits for that reorder. B's chunks start with A's (its last at
    or after A's last).

    Args:
        chunking: ``(kc_b, stepKa, k_iter, blocks)`` on the candidates priced.
        legs: ``(a_full, a_last, b_full, b_last)``: (GM->UB, reorder, UB->L1) legs.
        steps: ``(ra, rab, per, mm, dr_last)``: A's last read of a chunk from its arrival and
            from the arrival of a B chunk that starts with it (:func:`_restart_reads`), the step
            period, an MMAD, the last drain.

    Returns:
        The path's cycles.
    """
    kc_b, sk_a, k_it, blocks = chunking
    a_full, a_last, b_full, b_last = legs
    ra, rab, per, mm, dr_last = steps
    b_two = kc_b > 1
    gb0, vb0, ub0 = (np.where(b_two, x, y) for x, y in zip(b_full, b_last, strict=True))
    # A's last read of chunk 0: from B's arrival (a one-step chunk's read precedes B's), or
    # from its own.
    a_arr = a_full[0] + a_full[1] + a_full[2]
    b_arr = a_full[0] + a_full[1] + np.maximum(gb0, a_full[2]) + vb0 + ub0
    head = np.maximum(a_arr + ra(sk_a), np.where(sk_a >= 2, b_arr + rab(sk_a), 0.0))
    tail = a_last[2] + b_two * b_last[1]
    out: Any = blocks * (head + tail) - tail + (k_it - sk_a) * per + mm + dr_last
    return out


class StagingLinks(NamedTuple):
    """What :func:`staging_links` gives the later terms (named as in its formulas).

    ``inner_links`` is None, or (the candidates, their links inside a block): an index array
    and the links there, or a mask over all candidates and the links of all of them.
    """

    inner_links: Any
    own_pairs: Any
    pairs: Any


def staging_links(
    r: CoreRecords,
    mk: Makespan,
) -> StagingLinks:
    """The UB staging links: reorders chained through max(GM->UB, UB->L1) of consecutive copies.

    Between two reorders sits the later of the previous copy's UB->L1 leg (the destination
    half) and the next copy's GM->UB leg (the source half). Per pass of one operand, or
    alternating A, B when both are staged with the same chunks; a sparse operand's copy alone
    between two of the other's; both reloaded every block, the block's own staging order
    (:func:`staged_block_links`). Pipes: MTE2, V, MTE3 (term ``ub_staging_links``).
    """
    g, bt, avg, ch, cp, lg = r.g, r.bt, r.avg, r.ch, r.cp, r.lg
    own_pairs: Any = None  # (set where the term applies)
    pairs: Any = None  # (set where the term applies)
    a_full, a_last, b_full, b_last = lg.a_full, lg.a_last, lg.b_full, lg.b_last
    blocks = g.blocks
    dr_last = bt.dr_last
    has_b, kc_a, kc_b, loads_a, loads_b = ch.has_b, ch.kc_a, ch.kc_b, ch.loads_a, ch.loads_b
    passes_a, passes_b, step_ka, step_kb = ch.passes_a, ch.passes_b, ch.step_ka, ch.step_kb
    la, lb, mm = avg.la, avg.lb, avg.mm
    va, vb, via_a, via_b = cp.va, cp.vb, cp.via_a, cp.via_b
    inner_links: tuple[np.ndarray, Any] | None = None  # (see StagingLinks)
    if via_a or via_b:
        # Between two reorders sits the later of the previous copy's UB->L1 leg (the destination
        # half) and the next copy's GM->UB leg (it waits for the previous reorder: the source
        # half), so the reorders chain through max(GM->UB, UB->L1) of consecutive copies: per
        # pass, chunk j's GM->UB pairs with chunk j-1's UB->L1 (the first with the last one).
        pairs = 0.0
        own_pairs = []
        for via, kc, passes, legs_f, legs_l in (
            (via_a, kc_a, passes_a, a_full, a_last),
            (via_b, kc_b, passes_b, b_full, b_last),
        ):
            own_pairs.append(0.0)
            if via:
                g_f, _, u_f = legs_f
                g_l, _, u_l = legs_l
                per_pass = np.where(
                    kc == 1,
                    np.maximum(g_l, u_l),
                    np.maximum(g_f, u_l)
                    + np.maximum(kc - 2, 0) * np.maximum(g_f, u_f)
                    + np.maximum(g_l, u_f),
                )
                own_pairs[-1] = passes * per_pass
                pairs = pairs + own_pairs[-1]
        if via_a and via_b:
            # Both through UB with the same K chunks: the copies alternate A, B, so each A
            # copy's UB->L1 leg pairs with the B copy's GM->UB leg after it and vice versa.
            ga_f, _, ua_f = a_full
            ga_l, _, ua_l = a_last
            gb_f, _, ub_f = b_full
            gb_l, _, ub_l = b_last
            many = kc_a > 1
            cross = passes_a * (
                (kc_a - 1) * np.maximum(gb_f, ua_f)
                + np.maximum(kc_a - 2, 0) * np.maximum(ga_f, ub_f)
                + many * np.maximum(ga_l, ub_f)
                + np.maximum(gb_l, ua_l)
                + np.maximum(np.where(many, ga_f, ga_l), ub_l)
            )
            # One operand's copies sparser and in longer K chunks than the other's: each sits
            # alone between two of the other's, so it turns one pair of the dense operand into
            # a pair with its GM->UB leg and a pair with its UB->L1 leg. A copy is issued before
            # the other operand's copy of the same step, so a sparse A copy sits between B's
            # copy before it and B's copy of its own step (B's last one when both are the last),
            # and a sparse B copy between A's copy of its step (A's last one when both are the
            # last) and A's next copy (the next pass's first after B's last copy).
            at_last = (kc_a - 1) * step_ka == (kc_b - 1) * step_kb

            def ins(g: Any, u: Any, g_prev_u: Any, g_next: Any) -> Any:
                return (
                    np.maximum(g, g_prev_u) + np.maximum(g_next, u) - np.maximum(g_next, g_prev_u)
                )

            gb_n = np.where(at_last, gb_l, gb_f)
            ins_a = passes_a * (
                (kc_a - 1) * ins(ga_f, ua_f, ub_f, gb_f) + ins(ga_l, ua_l, ub_f, gb_n)
            )
            ua_p = np.where(at_last, ua_l, ua_f)
            ga_n = np.where(many, ga_f, ga_l)
            ins_b = passes_b * (
                (kc_b - 1) * ins(gb_f, ub_f, ua_f, ga_f) + ins(gb_l, ub_l, ua_p, ga_n)
            )
            iso = np.where(
                (loads_a <= loads_b) & (step_ka >= step_kb),
                own_pairs[1] + ins_a,
                np.where((loads_b < loads_a) & (step_kb >= step_ka), own_pairs[0] + ins_b, pairs),
            )
            pairs = np.where(
                (step_ka == step_kb) & (passes_a == passes_b), cross, np.maximum(pairs, iso)
            )
            # Both reloaded in every block: the copies' staging order within a block is known
            # (by step, A's first at a shared step), so price each link between consecutive
            # copies as itself (the sparse / dense pairings above assume an order).
            # (Priced on the candidates where it applies only, or where those are most of
            # them on all and selected.)
            applies = (passes_a > blocks - 0.5) & (passes_b > blocks - 0.5) & has_b
            idx = np.flatnonzero(applies)
            block_steps = (kc_a, kc_b, step_ka, step_kb)
            if 2 * idx.size > np.size(blocks):
                # (The same values as on ``idx``, without a gather of each input; the others
                # are selected out.)
                links_blk, wrap = staged_block_links(
                    None, block_steps, (a_full, a_last, b_full, b_last)
                )
                pairs = np.where(applies, passes_a * links_blk, pairs)
                inner_links = (applies, links_blk - wrap)
            elif idx.size:
                links_blk, wrap = staged_block_links(
                    idx, block_steps, (a_full, a_last, b_full, b_last)
                )
                pairs = np.array(np.broadcast_to(pairs, np.shape(blocks)), dtype=np.float64)
                pairs[idx] = _sub(passes_a, idx) * links_blk
                # (The links inside a block, for the per-block cycles below.)
                inner_links = (idx, links_blk - wrap)
        first = a_full[0] if via_a else b_full[0]
        mk.raise_all(first + va + vb + pairs + la + lb + mm + dr_last, "ub_staging_links")
    return StagingLinks(inner_links=inner_links, own_pairs=own_pairs, pairs=pairs)


def staged_one_slot_chains(
    r: CoreRecords,
    ah: AHops,
    bh: BHops,
    mk: Makespan,
) -> None:
    """An operand staged in one slot: each chunk's UB->L1 leg after the previous chunk's last read.

    The next chunk's reorder waits for that UB->L1 leg (the destination half), so per chunk the
    UB->L1 leg and the longer of the chunk's reads and the next reorder
    (:func:`staged_one_slot_chain`). Pipes: V, MTE3, MTE1.
    """
    bt, avg, ch, cp, lg, floor = r.bt, r.avg, r.ch, r.cp, r.lg, r.floor
    a_full, a_last, b_full, b_last = lg.a_full, lg.a_last, lg.b_full, lg.b_last
    bias_cyc, via_a, via_b = cp.bias_cyc, cp.via_a, cp.via_b
    dr_last = bt.dr_last
    kc_a, kc_b, passes_a, passes_b = ch.kc_a, ch.kc_b, ch.passes_a, ch.passes_b
    single_a, single_b = ch.single_a, ch.single_b
    mm = avg.mm
    # (The chains run to the slots' releases, the MMAD start of a chunk's last step.)
    reads_af, reads_al, stay_a, stay_b = ah.rel_af, ah.rel_al, ah.stay_a, ah.stay_b
    rb_kb, reads_bl = avg.qb_kb, bh.rel_bl
    for via, one, chunks_, legs, reads in (
        (via_a, single_a, (kc_a, passes_a), (a_full, a_last), (reads_af, reads_al, stay_a)),
        (via_b, single_b, (kc_b, passes_b), (b_full, b_last), (rb_kb, reads_bl, stay_b)),
    ):
        if floor or not via:
            continue
        # An operand staged in one slot: a chunk's UB->L1 leg waits for the last read of the
        # chunk before, and the next chunk's reorder for that UB->L1 leg (the destination
        # half), so per chunk its UB->L1 leg, then the longer of its reads and the next
        # reorder (priced on those candidates, or on all where they are most of them).
        idx = np.flatnonzero(one)
        if 2 * idx.size > np.size(one):
            # (Where those are most of the candidates, priced on all and the others' path
            # NEVER, which raises nothing: the same values without a gather of each input.)
            path = staged_one_slot_chain(chunks_, legs, reads)
            tail = bias_cyc + mm + dr_last
            mk.raise_all(np.where(one, path + tail, NEVER), "staged_one_slot_chain")
        elif idx.size:
            (g_f, v_f, u_f), (g_l, v_l, u_l) = ((_sub(x, idx) for x in leg) for leg in legs)
            path = staged_one_slot_chain(
                tuple(_sub(x, idx) for x in chunks_),
                ((g_f, v_f, u_f), (g_l, v_l, u_l)),
                tuple(_sub(x, idx) for x in reads),
            )
            tail = _sub(bias_cyc, idx) + _sub(mm, idx) + _sub(dr_last, idx)
            mk.raise_at(idx, path + tail, "staged_one_slot_chain")


def staged_one_a_slot(
    r: CoreRecords,
    mk: Makespan,
) -> None:
    """Both staged with FixPipe, A in one slot and two chunks, both reloaded every block.

    A per-block cycle through A's first staging legs, B's reorder and UB->L1 leg behind them, the
    reads to A's first chunk's last read, A's K-tail UB->L1 leg, B's K-tail reorder and the next
    block's first GM->UB leg (:func:`staged_one_a_slot_cycle`).
    """
    g, bt, avg, ch, cp, lg, fix, floor = r.g, r.bt, r.avg, r.ch, r.cp, r.lg, r.fix, r.floor
    a_full, a_last, b_full, b_last = lg.a_full, lg.a_last, lg.b_full, lg.b_last
    a_last_start, b_last_start, has_b, kc_a = ch.a_last_start, ch.b_last_start, ch.has_b, ch.kc_a
    kc_b, passes_a, passes_b, single_a = ch.kc_b, ch.passes_a, ch.passes_b, ch.single_a
    step_ka = ch.step_ka
    blocks, k_iter = g.blocks, g.k_iter
    dr_last = bt.dr_last
    mm, per, ra, rab = avg.mm, avg.per, avg.ra, avg.rab
    via_a, via_b = cp.via_a, cp.via_b
    if not floor and fix and via_a and via_b:
        # Both staged with FixPipe (no drain in the vector queue), A in one slot and two
        # chunks per block, both reloaded every block (priced on those candidates).
        idx = np.flatnonzero(
            single_a & (kc_a == 2) & (kc_b <= 2) & (b_last_start >= a_last_start)
            & (passes_a > blocks - 0.5) & (passes_b > blocks - 0.5) & has_b
        )  # fmt: skip
        if idx.size:
            path = staged_one_a_slot_cycle(
                tuple(_sub(x, idx) for x in (kc_b, step_ka, k_iter, blocks)),
                tuple(tuple(_sub(x, idx) for x in leg) for leg in (a_full, a_last, b_full, b_last)),
                (ra.sub(idx), rab.sub(idx), _sub(per, idx), _sub(mm, idx), _sub(dr_last, idx)),
            )
            mk.raise_at(idx, path, "staged_one_a_slot_cycle")
