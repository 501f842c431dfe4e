"""Per-block cycles of an operand staged through UB, reloaded in every block.

Each block repeats the same staged copies; the cycle runs through the drain (without FixPipe),
the staging chain, the reads and the MMAD chain, and through MTE2's program order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from simcore.estimate.arrays import cdiv as _cdiv
from simcore.estimate.arrays import sub as _sub
from simcore.estimate.binding import Makespan
from simcore.estimate.records import CoreRecords
from simcore.estimate.staging import (
    staging_chain_to,
)

if TYPE_CHECKING:
    from simcore.estimate.slot_b import BChain


def staged_b_block_cycle(
    idx: np.ndarray,
    chunking: tuple[Any, ...],
    legs: tuple[tuple[Any, Any, Any], ...],
    steps: tuple[Any, ...],
) -> Any:
    """The path through the per-block cycle of a direct A copy and B's UB staging chain.

    A direct and B staged through UB, both reloaded in every block, A's K in more chunks than
    its S slots: the next block's first A copy waits for A's last read of chunk kc_a - S (step
    ``s*``), and B's first GM->UB copy of that block queues behind it on MTE2. B's staging
    chain then runs chunk by chunk (a GM->UB leg waits for the reorder before it, a reorder
    for its GM->UB leg and for the UB->L1 leg before it) up to the chunk that step ``s*``
    reads, whose UB->L1 leg and the reads from its arrival lead to A's read at ``s*``. Per
    block: ``A copy + B chain + UB->L1 + reads``, with the legs averaged over the passes.

    Args:
        idx: The candidates it applies to (the caller selects them).
        chunking: ``(k_iter, kc_a, kc_b, stepKa, stepKb, slots_a, blocks)``.
        legs: ``(a_full, a_last, b_full, b_last)``: (MTE2, V, MTE3) legs of a full and of the
            K-tail chunk.
        steps: ``(rab, la, la_kt, per, mm, dr_last, bias)``: A's last read from the arrival of
            a B chunk starting with it (:func:`_restart_reads`), the A read of a full and of
            the K-tail step, the step period, an MMAD, the last drain and a bias slice.

    Returns:
        The path's cycles on the candidates ``idx`` (0 where ``s*`` is the first step of
        its B chunk: A's read there precedes B's, the chain goes through the chunk before).
    """
    k_it, kc_a, kc_b, sk_a, sk_b, sl_a, blocks = (_sub(x, idx) for x in chunking)
    a_full, a_last, b_full, b_last = (tuple(_sub(x, idx) for x in leg) for leg in legs)
    rab, la, la_kt, per, mm, dr_last, bias = steps
    la, la_kt, per, mm, dr_last, bias = (_sub(x, idx) for x in (la, la_kt, per, mm, dr_last, bias))
    s_star = np.minimum((kc_a - sl_a + 1) * sk_a, k_it) - 1
    x_star = np.floor(s_star / sk_b)
    r = s_star - x_star * sk_b + 1
    chain, own_m2, end_m2 = staging_chain_to(x_star, kc_b, b_full, b_last)
    # Or through MTE2: B's GM->UB legs up to that chunk and the A copies issued in between
    # (A's copy at a step precedes B's), then its reorder and UB->L1 leg.
    n_a = np.floor(x_star * sk_b / sk_a)
    chain_m2 = (
        own_m2
        + n_a * a_full[0] + (n_a >= kc_a - 1) * (n_a >= 1) * (a_last[0] - a_full[0])
        + end_m2
    )  # fmt: skip
    chain = np.maximum(chain, chain_m2)
    reads = rab.sub(idx)(np.maximum(r, 2)) + (s_star == k_it - 1) * (la_kt - la)
    cycle = np.where(kc_a > 1, a_full[0], a_last[0]) + chain + reads
    path = bias + blocks * cycle + (k_it - 1 - s_star) * per + mm + dr_last
    out: Any = (r >= 2) * path
    return out


def staged_a_block_cycle(
    idx: np.ndarray,
    chunking: tuple[Any, ...],
    legs: tuple[tuple[Any, Any, Any], ...],
    steps: tuple[Any, ...],
) -> Any:
    """The path through the per-block cycle of A's UB staging chain and a direct B copy.

    A staged through UB and B direct, both reloaded in every block, B's K in more chunks than
    its S slots. B's copy of chunk ``j >= S`` waits for B's read of chunk ``j - S`` (its last
    step ``t``), which follows the arrival of the A chunk under ``t``; the later copies of the
    block queue behind it on MTE2 (B's, the GM->UB legs of A's chunks), and the next block's
    first GM->UB copy waits for the reorder of A's last chunk (the source half). Per block:
    A's staging chain up to the chunk under ``t`` (a GM->UB leg after the reorder before it, a
    reorder after its GM->UB and the previous UB->L1 leg), its UB->L1 leg, the reads from its
    arrival to B's read at ``t``, B's copies from ``j`` on with A's GM->UB legs between, then
    the GM->UB legs and reorders of the A chunks after B's last. Priced for ``j = S`` and for
    B's last chunk; the legs are averaged over the passes.

    Args:
        idx: The candidates it applies to (the caller selects them).
        chunking: ``(k_iter, kc_a, kc_b, stepKa, stepKb, slots_b, blocks)``.
        legs: ``(a_full, a_last, b_full, b_last)``: (MTE2, V, MTE3) legs of a full and of the
            K-tail chunk.
        steps: ``(ra, lb, per, mm, dr_last)``: A's last read of an ``r``-step chunk from its
            arrival (:func:`_restart_reads`), a B read, the step period, an MMAD and the last
            drain.

    Returns:
        The path's cycles on the candidates ``idx``.
    """
    k_it, kc_a, kc_b, sk_a, sk_b, sl_b, blocks = (_sub(x, idx) for x in chunking)
    a_full, a_last, b_full, b_last = (tuple(_sub(x, idx) for x in leg) for leg in legs)
    ra, lb, per, mm, dr_last = steps
    lb, per, mm, dr_last = (_sub(x, idx) for x in (lb, per, mm, dr_last))
    (g_f, v_f, _), (g_l, v_l, _) = a_full, a_last
    b_last_start = (kc_b - 1) * sk_b
    # A chunks that start after B's last one: their GM->UB legs follow B's copy on MTE2.
    n_after = kc_a - 1 - np.floor(b_last_start / sk_a)
    after = np.maximum(n_after - 1, 0) * (g_f + v_f) + (n_after >= 1) * (g_l + v_l)
    out: Any = 0.0
    # Through B's first copy that waits for a read of the block (chunk S) and the copies
    # queued behind it (B's, and the GM->UB legs of A chunks starting between), or through
    # B's last copy alone.
    for j in (sl_b, kc_b - 1):
        t = (j - sl_b + 1) * sk_b - 1
        x_star = np.floor(t / sk_a)
        chain, own_m2, end_m2 = staging_chain_to(x_star, kc_a, a_full, a_last)
        # Or through MTE2: A's GM->UB legs up to that chunk and the B copies issued before
        # its start (B's copy at the same step follows A's), then its reorder and UB->L1 leg.
        n_b = _cdiv(x_star * sk_a, sk_b)
        chain_m2 = (
            own_m2
            + n_b * b_full[0] + (n_b >= kc_b) * (b_last[0] - b_full[0])
            + end_m2
        )  # fmt: skip
        chain = np.maximum(chain, chain_m2)
        reads = ra.sub(idx)(t - x_star * sk_a + 1) + lb
        b_copies = (kc_b - 1 - j) * b_full[0] + b_last[0]
        n_btw = np.floor(b_last_start / sk_a) - np.floor(j * sk_b / sk_a)
        # (The last of them is A's K-tail chunk when no A chunk starts after B's last.)
        a_between = n_btw * g_f + ((n_btw >= 1) & (n_after == 0)) * (g_l - g_f)
        cycle = chain + reads + b_copies + a_between + after
        path = (blocks - 1) * cycle + chain + reads + (k_it - 1 - t) * per + mm + dr_last
        out = np.maximum(out, path)
    return out


def staged_first_chunk_path(
    idx: np.ndarray | None,
    via: tuple[bool, bool],
    per: tuple[Any, Any],
    legs: tuple[Any, Any, Any, Any],
    counts: tuple[Any, Any, Any, Any, Any],
    chain: tuple[Any, Any, Any, Any, Any],
    m3_last: Any,
) -> Any:
    """Without FixPipe, an operand staged in every block: the cycle through its first chunk.

    A block's first staged reorder follows the previous block's L0C->UB leg in the vector
    queue, and its UB->L1 leg the previous block's UB->GM copy in MTE3's queue; the block's
    whole MMAD chain (from step 0) follows that chunk's arrival, and its L0C->UB leg the last
    MMAD. So per block: the longer of the reorder and the UB->GM copy, the UB->L1 leg, the
    block's steps and its L0C->UB leg. Where both operands are copied in the block (both staged
    in every block, or at the other operand's pass starts), B's GM->UB leg waits for A's
    reorder (the staging buffer's source half), then B's reorder and UB->L1 leg precede step
    0. (Seen: 910A int8 1500 x 1500 x 700, A staged in every block, B per column of two blocks:
    a 4000-cycle B staging chain at each column start ahead of the block's 2650-cycle MMAD
    chain: -10.9 %.) (The chains priced elsewhere end at the last chunk's reads.)

    Args:
        idx: The candidates (A or B staged and reloaded in every block, two blocks or more),
            or None where those are all the candidates (the inputs are then not gathered).
        via: A and B staged through UB.
        per: A and B staged in every block.
        legs: (MTE2, V, MTE3) legs of A's full and last chunk, B's full and last chunk.
        counts: kc_a, kc_b, passes_a, passes_b, blocks.
        chain: drain_total (L0C->UB legs), m3_out (UB->GM legs), span (the blocks' step
            chains), the first block's last MMAD end, and (A's read, the first step's B read
            and MMAD beyond its period): the step chain from a B chunk's arrival is the
            latter plus the block's span, from an A chunk's arrival the A read too.
        m3_last: The last block's UB->GM copy.

    Returns:
        Cycles of the path.
    """
    via_a, via_b = via

    def at(x: Any) -> Any:
        return x if idx is None else _sub(x, idx)

    kc_a, kc_b, passes_a, passes_b, blocks = (at(x) for x in counts)
    drain_total, m3_out, span, first_mm, (la, head) = (
        at(x) if i < 4 else tuple(at(y) for y in x) for i, x in enumerate(chain)
    )
    per_a = at(per[0]) if via_a else np.zeros(np.shape(blocks), dtype=bool)
    per_b = at(per[1]) if via_b else np.zeros(np.shape(blocks), dtype=bool)
    # First-chunk legs (the K-tail chunk when it is the only one).
    a0, b0 = (
        [np.where(kc > 1, at(f), at(t)) for f, t in zip(full, last, strict=True)]
        for kc, full, last in ((kc_a, legs[0], legs[1]), (kc_b, legs[2], legs[3]))
    )
    dr = drain_total / blocks
    m3 = m3_out / blocks
    steps = span / blocks + head
    one_a = np.maximum(a0[1], m3) + a0[2] + la
    one_b = np.maximum(b0[1], m3) + b0[2]
    single = np.where(per_a, one_a, one_b)
    if via_a and via_b:
        both = a0[1] + b0[0] + b0[1] + b0[2]
        n_both = np.where(per_a & per_b, blocks, np.where(per_a, passes_b, passes_a))
    else:
        both = single
        n_both = blocks
    n_both = np.maximum(n_both - 1.0, 0.0)
    cycles = (blocks - 1.0 - n_both) * single + n_both * np.maximum(both, single)
    return first_mm + dr + cycles + (blocks - 1.0) * (steps + dr) + at(m3_last)


def staged_b_block(
    r: CoreRecords,
    mk: Makespan,
) -> None:
    """A direct and streamed, B staged, both reloaded every block: the per-block A / B cycle.

    The next block's first A copy waits for A's read of chunk kc_a - S and B's first GM->UB copy
    queues behind it; B's staging chain runs to the chunk under that step
    (:func:`staged_b_block_cycle`).
    """
    g, bt, avg, ch, cp, lg, floor = r.g, r.bt, r.avg, r.ch, r.cp, r.lg, r.floor
    a_full, a_last, b_full, b_last = lg.a_full, lg.a_last, lg.b_full, lg.b_last
    bias_cyc, ga1, gb, ub1, vb, via_a = cp.bias_cyc, cp.ga1, cp.gb, cp.ub1, cp.vb, cp.via_a
    via_b = cp.via_b
    blocks, k_iter = g.blocks, g.k_iter
    dr_last = bt.dr_last
    has_b, kc_a, kc_b, passes_a, passes_b = ch.has_b, ch.kc_a, ch.kc_b, ch.passes_a, ch.passes_b
    slots_a, step_ka, step_kb = ch.slots_a, ch.step_ka, ch.step_kb
    la, la_kt, mm, per, rab = avg.la, avg.la_kt, avg.mm, avg.per, avg.rab
    if not floor and not via_a and via_b:
        # A direct and B staged, both reloaded in every block, A streamed through its S slots:
        # the next block's first A copy waits for A's read of chunk kc_a - S (its last step
        # s*), and B's first GM->UB copy is behind it on MTE2. So each block runs: that A
        # copy, B's staging chain up to the chunk under step s* (each GM->UB leg after the
        # reorder before it, each reorder after the GM->UB and the UB->L1 leg before it), that
        # chunk's UB->L1 leg and the reads from its arrival to A's read at s*. (Seen: 310P3
        # int8 2048^3, base 144 x 224 x 96, five staged B chunks per block: -13.1 %.)
        # (Priced on the candidates where it applies and where it may exceed the path so far:
        # per block at most A's copies, B's GM->UB, reorder and one UB->L1 leg, and the reads
        # of a B chunk's steps and one more.)
        idx = np.flatnonzero(gb + vb + blocks * (ga1 + ub1 + (step_kb + 1) * per) > mk.value)
        if idx.size:
            bl = _sub(blocks, idx)
            idx = idx[
                (_sub(passes_a, idx) > bl - 0.5)
                & (_sub(passes_b, idx) > bl - 0.5)
                & (_sub(kc_a, idx) >= _sub(slots_a, idx))
                & _sub(has_b, idx)
            ]
        if idx.size:
            path = staged_b_block_cycle(
                idx,
                (k_iter, kc_a, kc_b, step_ka, step_kb, slots_a, blocks),
                (a_full, a_last, b_full, b_last),
                (rab, la, la_kt, per, mm, dr_last, bias_cyc),
            )
            mk.raise_at(idx, path, "staged_b_block_cycle")


def staged_a_block(
    r: CoreRecords,
    mk: Makespan,
) -> None:
    """A staged, B direct and streamed, both reloaded every block: the per-block A / B cycle.

    B's last copy waits for B's read of chunk kc_b - 1 - S, A's GM->UB copies queue behind it and
    the next block's first GM->UB copy waits for their last reorder (:func:`staged_a_block_cycle`).
    """
    g, bt, avg, ch, cp, lg, floor = r.g, r.bt, r.avg, r.ch, r.cp, r.lg, r.floor
    a_full, a_last, b_full, b_last = lg.a_full, lg.a_last, lg.b_full, lg.b_last
    blocks, k_iter = g.blocks, g.k_iter
    dr_last = bt.dr_last
    ga, gb, ua1, va, via_a, via_b = cp.ga, cp.gb, cp.ua1, cp.va, cp.via_a, cp.via_b
    has_b, kc_a, kc_b, passes_a, passes_b = ch.has_b, ch.kc_a, ch.kc_b, ch.passes_a, ch.passes_b
    slots_b, step_ka, step_kb = ch.slots_b, ch.step_ka, ch.step_kb
    lb, mm, per, ra = avg.lb, avg.mm, avg.per, avg.ra
    if not floor and via_a and not via_b:
        # A staged and B direct, both reloaded in every block, B streamed through its S slots:
        # B's last copy of a block waits for B's read of chunk kc_b - 1 - S, A's GM->UB copies
        # issued after it queue behind it on MTE2, and the next block's first GM->UB copy
        # waits for the last of their reorders (the staging buffer). (Seen: 310P3 int8
        # 16 x 11008 x 4096, an A staged in three chunks and B in two one-slot chunks per
        # block: -21.9 %.) (Priced on the candidates where it applies and may exceed the path
        # so far: per block at most B's copies, A's GM->UB legs and reorders, one UB->L1 leg
        # and the reads of an A chunk's steps and one more.)
        idx = np.flatnonzero(ga + va + gb + blocks * (ua1 + (step_ka + 1) * per) > mk.value)
        if idx.size:
            bl = _sub(blocks, idx)
            idx = idx[
                (_sub(passes_a, idx) > bl - 0.5)
                & (_sub(passes_b, idx) > bl - 0.5)
                & (_sub(kc_b, idx) > _sub(slots_b, idx))
                & _sub(has_b, idx)
            ]
        if idx.size:
            path = staged_a_block_cycle(
                idx,
                (k_iter, kc_a, kc_b, step_ka, step_kb, slots_b, blocks),
                (a_full, a_last, b_full, b_last),
                (ra, lb, per, mm, dr_last),
            )
            mk.raise_at(idx, path, "staged_a_block_cycle")


def b_chain_behind_a_staging(
    r: CoreRecords,
    bc: BChain,
    mk: Makespan,
) -> None:
    """One B slot reloaded every block, A staged per pass: B's chain behind A's staging chain.

    At an A pass start B's first chunk's last read waits for the A chunks its steps span, staged
    through UB after the bias slice (GM->UB after the reorder before it, reorder after the UB->L1
    leg before it); that replaces B's first copy in B's hop once per A pass.
    """
    g, bt, avg, ch, cp, lg, floor = r.g, r.bt, r.avg, r.ch, r.cp, r.lg, r.floor
    a_full, a_last, b_full, b_last = lg.a_full, lg.a_last, lg.b_full, lg.b_last
    blocks = g.blocks
    chain_b = bc.chain_b
    dr_last = bt.dr_last
    has_b, kc_a, kc_b, passes_a, passes_b = ch.has_b, ch.kc_a, ch.kc_b, ch.passes_a, ch.passes_b
    single_b, step_ka, step_kb = ch.single_b, ch.step_ka, ch.step_kb
    mm = avg.mm
    via_a, via_b = cp.via_a, cp.via_b
    if not floor and via_a and not via_b:
        # One B slot and B reloaded in every block: B's copies chain through its reads
        # (chain_b). At the block that starts an A pass, B's first chunk's last read waits for
        # the A chunks its steps span, staged through UB after the bias slice on MTE2: each
        # GM->UB leg after the reorder before it, each reorder after the UB->L1 leg before it
        # (the staging buffer). That chain replaces B's first copy in B's hop (which runs on
        # MTE2 meanwhile), once per A pass.
        n_need = np.where(kc_b > 1, np.minimum(kc_a, _cdiv(step_kb, step_ka)), kc_a)
        to_tail = n_need == kc_a
        g_end = np.where(to_tail, a_last[0], a_full[0])
        a_stage = (
            np.where(kc_a > 1, a_full[0], a_last[0])
            + (n_need > 1)
            * (
                (n_need - 1) * a_full[1]
                + np.maximum(n_need - 2, 0) * np.maximum(a_full[2], a_full[0])
                + np.maximum(a_full[2], g_end)
            )
            + np.where(to_tail, a_last[1] + a_last[2], a_full[1] + a_full[2])
        )
        a_in = np.maximum(a_stage - np.where(kc_b > 1, b_full[0], b_last[0]), 0.0)
        a_ok = single_b & (passes_b >= blocks) & (passes_a < blocks) & has_b
        mk.raise_all(a_ok * (chain_b + passes_a * a_in + mm + dr_last), "b_chain_behind_a_staging")
