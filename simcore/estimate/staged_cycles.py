"""Per-block cycles of an operand staged through UB and reloaded every block (no FixPipe)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from simcore.estimate.arrays import raise_at as _raise_at
from simcore.estimate.arrays import sub as _sub
from simcore.estimate.binding import Makespan
from simcore.estimate.records import CoreRecords
from simcore.estimate.staged_blocks import (
    staged_first_chunk_path,
)
from simcore.estimate.staging import (
    staged_b_between_a,
)

if TYPE_CHECKING:
    from simcore.estimate.compute import ComputePath
    from simcore.estimate.slot_a import AHops
    from simcore.estimate.slot_b import BHops
    from simcore.estimate.staging import StagingLinks
    from simcore.estimate.stalls import Stalls


def staged_block_cycle(
    r: CoreRecords,
    st: Stalls,
    cm: ComputePath,
    sl: StagingLinks,
    ah: AHops,
    bh: BHops,
    mk: Makespan,
) -> None:
    """An operand staged and reloaded in every block, without FixPipe: the per-block cycle.

    The drain's L0C->UB leg and the reorders share the vector queue, and the drain's UB->GM copy
    precedes the next UB->L1 legs in MTE3's: per block the drain, the staging chain, the last
    UB->L1 leg, its reads and the MMAD (``staged_block_cycle``, with the other operand's staging
    at its pass starts).
    """
    m3c, mm_kt = r.typ.m3c, r.typ.mm_kt
    g, bt, avg, ch, cp, lg, fix = r.g, r.bt, r.avg, r.ch, r.cp, r.lg, r.fix
    floor = r.floor
    a_full, a_last, b_full, b_last = lg.a_full, lg.a_last, lg.b_full, lg.b_last
    a_last_start, b_last_start, kc_a, kc_b = ch.a_last_start, ch.b_last_start, ch.kc_a, ch.kc_b
    loads_a, loads_b, passes_a, passes_b = ch.loads_a, ch.loads_b, ch.passes_a, ch.passes_b
    step_ka, step_kb = ch.step_ka, ch.step_kb
    bias_cyc, ga, gb, ua, ub, va, vb = cp.bias_cyc, cp.ga, cp.gb, cp.ua, cp.ub, cp.va, cp.vb
    via_a, via_b = cp.via_a, cp.via_b
    blocks, blocks_n, _cn_t, k_iter, _rm_t = g.blocks, g.blocks_n, g.cn_t, g.k_iter, g.rm_t
    bound_ex, inner = st.bound_ex, st.inner
    dr_last, drain_total, _m3_out, span = bt.dr_last, bt.drain_total, bt.m3_out, bt.span
    inner_links, pairs = sl.inner_links, sl.pairs
    _la, _lb, lb_kt, mm, per = avg.la, avg.lb, avg.lb_kt, avg.mm, avg.per
    reads_al = ah.reads_al
    reads_bl = bh.reads_bl
    start = cm.start
    if not fix and (via_a or via_b):
        # Without FixPipe the drain's L0C->UB leg and the reorders share the vector queue: an
        # operand staged through UB and reloaded in every block puts a cycle through each block
        # (the drain, then the next block's staging chain -- reorders linked by the GM->UB and
        # UB->L1 legs between them -- the last chunk's UB->L1 leg, its reads and the MMAD).
        per_a = (passes_a >= blocks) if via_a else False
        per_b = (passes_b >= blocks) if via_b else False
        n_via = (loads_a if via_a else 0.0) + (loads_b if via_b else 0.0)
        n_blk = (per_a * loads_a + per_b * loads_b) / blocks_n
        links = pairs / np.maximum(n_via, 1.0) * np.maximum(n_blk - 1.0, 0.0)
        if inner_links is not None and inner_links[0].dtype == np.bool_:
            # (A mask and the links of all candidates: see StagingLinks.)
            links = np.where(inner_links[0], inner_links[1], links)
        elif inner_links is not None:
            links = np.array(np.broadcast_to(links, np.shape(blocks)), dtype=np.float64)
            links[inner_links[0]] = inner_links[1]
        b_end = per_b & ((b_last_start >= a_last_start) | np.logical_not(per_a))
        cyc = (
            drain_total / blocks_n
            + (per_a * va + per_b * vb) / blocks_n
            + links
            + np.where(b_end, b_last[2] + reads_bl, a_last[2] + reads_al + lb_kt)
            + mm_kt
        )
        # The same cycle through MTE3: the drain's UB->GM copy precedes the next block's
        # UB->L1 legs there, and each reorder after the first waits for the UB->L1 leg before
        # it (the staging buffer); then the last chunk's reads, the MMAD and the drain.
        v_blk = (per_a * va + per_b * vb) / blocks_n
        cyc_m3 = (
            drain_total / blocks_n
            + m3c
            + (per_a * ua + per_b * ub) / blocks_n
            + v_blk * np.maximum(n_blk - 1.0, 0.0) / np.maximum(n_blk, 1.0)
            + np.where(b_end, reads_bl, reads_al + lb_kt)
            + mm_kt
        )
        cyc = np.maximum(cyc, cyc_m3)
        if via_a and via_b:
            # Both staged in every block, B's K in one chunk: after the drain, A's first
            # reorder, B's GM->UB leg (it waits for that reorder: the source half), B's reorder
            # and UB->L1 leg, then all the block's B reads and its last MMAD, whatever A's
            # later chunks do. (Seen: 310P3 int8 1024 x 4096 x 1024, one 3072-cycle B reorder
            # per block behind A's first: -8.5 %.)
            # (Priced on the candidates where it applies only.)
            idx = np.flatnonzero(per_a & per_b & (kc_b == 1))
            if idx.size:
                many = _sub(kc_a, idx) > 1
                a_0 = [
                    np.where(many, _sub(x, idx), _sub(y, idx))
                    for x, y in zip(a_full, a_last, strict=True)
                ]
                b_l = [_sub(x, idx) for x in b_last]
                cyc_b0 = (
                    _sub(drain_total / blocks_n + reads_bl + mm_kt, idx)
                    + a_0[1] + np.maximum(b_l[0], a_0[2]) + b_l[1] + b_l[2]
                )  # fmt: skip
                cyc = _raise_at(cyc, idx, cyc_b0, blocks.shape)
        if not floor:
            cyc = np.maximum(cyc, _one_slot_mte3_cycle(r, ah, bh, (per_a, per_b)))
        v_cycle = start + (n_blk >= 1.0) * (blocks - 1) * cyc + (k_iter - 1) * per + mm + dr_last
        if not floor:
            # The other operand staged and reloaded per pass of several blocks: at a pass's
            # first block its reorders join the vector queue of the cycle and its first UB->L1
            # leg precedes the reads (once per pass after the first).
            other: Any = 0.0
            if via_b:
                b_u0 = np.where(kc_b > 1, b_full[2], b_last[2])
                b_pass = vb / np.maximum(passes_b, 1) + b_u0
                # The first block's B pass after its first chunk (the start-up holds that one).
                first_b: Any = 0.0
                if via_a:
                    # A staged in one chunk per block: B's whole pass sits between two A
                    # copies in the staging chain, B's first reorder after A's UB->L1 leg (the
                    # destination half), each later GM->UB leg after the reorder before it, and
                    # A's next GM->UB leg after B's last reorder. (Seen: 310P3 int8 1024 x
                    # 4096 x 1024, B's two chunks at each column start: 873 cycles, not 400:
                    # -6.1 %.)
                    g_b0 = np.where(kc_b > 1, b_full[0], b_last[0])
                    b_ins = (
                        np.maximum(g_b0, a_last[2])
                        + vb / np.maximum(passes_b, 1)
                        + np.maximum(kc_b - 2, 0) * np.maximum(b_full[0], b_full[2])
                        + (kc_b > 1) * np.maximum(b_last[0], b_full[2])
                        + np.maximum(a_last[0], b_last[2])
                        # (less the link it replaces: A's next GM->UB leg, or A's UB->L1 leg,
                        # the block's reads and MMAD and the drain, which it overlaps)
                        - np.maximum(
                            a_last[0],
                            a_last[2] + reads_al + lb_kt + mm_kt + drain_total / blocks_n,
                        )
                    )
                    b_pass = np.where(kc_a == 1, np.maximum(b_pass, b_ins), b_pass)
                    # A in one slot: the pass's B chunk holds A's first release (its MMAD).
                    b_pass = np.maximum(b_pass, _one_slot_a_pass_start(r, ah, cyc))
                    # A staged in several chunks per block, B's chunks no shorter: each B
                    # chunk sits between two A chunks in the staging chain (A's copy first at
                    # a shared step), B's last one between A's chunk under it and the next A
                    # chunk, or last in the block (then its reads follow its arrival, not
                    # A's last). (Priced on the candidates where it applies only.)
                    # The cycle above prices every block's links at the average pair of all
                    # staged copies (B's, and A's pair across the block boundary, too); a block
                    # links A's own chunks only (the pass start's links are the ones replaced
                    # below): less that excess, per B pass, so it is not priced twice.
                    idx = np.flatnonzero(
                        per_a & (passes_b < blocks) & (kc_a > 1) & (step_kb >= step_ka)
                    )
                    if idx.size:
                        a_f, a_l = (tuple(_sub(x, idx) for x in leg) for leg in (a_full, a_last))
                        links_own = np.maximum(_sub(kc_a, idx) - 2, 0) * np.maximum(
                            a_f[0], a_f[2]
                        ) + np.maximum(a_l[0], a_f[2])
                        staged_spread = np.maximum(
                            np.maximum(_sub(blocks, idx) - 1.0, 0.0)
                            * (
                                np.maximum(_sub(n_blk, idx) - 1.0, 0.0)
                                * _sub(pairs, idx)
                                / np.maximum(_sub(n_via, idx), 1.0)
                                - links_own
                            )
                            / np.maximum(_sub(passes_b, idx) - 1.0, 1.0),
                            0.0,
                        )
                        between, after_first = staged_b_between_a(
                            idx, (kc_a, kc_b, step_ka, step_kb),
                            (a_full, a_last, b_full, b_last), (reads_al + lb_kt, reads_bl),
                        )  # fmt: skip
                        b_pass = _raise_at(b_pass, idx, between - staged_spread, blocks.shape)
                        first_b = _raise_at(
                            np.zeros(np.shape(blocks)), idx, after_first, blocks.shape
                        )
                other = other + per_a * (passes_b < blocks) * ((passes_b - 1) * b_pass + first_b)
            if via_a:
                a_u0: Any = np.where(kc_a > 1, a_full[2], a_last[2])
                if via_b:
                    # B's first GM->UB leg, issued after A's copy, waits for A's reorder (the
                    # source half) instead of running ahead: the longer of it and A's UB->L1
                    # leg follows A's reorder. (Seen: 310P3 int8 4096 x 512 x 768, A staged
                    # per row of 4 blocks, B's 583-cycle GM->UB leg at each row start: -7.2 %.)
                    a_u0 = np.maximum(a_u0, np.where(kc_b > 1, b_full[0], b_last[0]))
                other = other + per_b * (passes_a < blocks) * (passes_a - 1) * (
                    va / np.maximum(passes_a, 1) + a_u0
                )
            # The other operand direct and reloaded per pass of several blocks: at a pass's
            # first block MTE2 copies its pass besides the staged operand's GM->UB legs and
            # the bias slice, and the staged copies cannot run further ahead than one chunk
            # (each GM->UB leg waits for the reorder before it, each reorder for the UB->L1
            # leg before it), so where that exceeds the cycle MTE3 idles once per pass.
            # (Seen: 910A fp16, A staged in two chunks per block, B's 490-cycle copy at each
            # column start: -9.4 %.)
            m2_blk = (per_a * ga + per_b * gb) / blocks_n + bias_cyc
            # (Against the longer of the cycle and the block's MMAD chain with its stalls.)
            cyc_ref = np.maximum(cyc, (span + bound_ex + inner) / blocks_n)
            if not via_b:
                other = other + per_a * (passes_b < blocks) * np.maximum(passes_b - 1, 0) * (
                    np.maximum(m2_blk + gb / np.maximum(passes_b, 1) - cyc_ref, 0.0)
                )
            if not via_a:
                other = other + per_b * (passes_a < blocks) * np.maximum(passes_a - 1, 0) * (
                    np.maximum(m2_blk + ga / np.maximum(passes_a, 1) - cyc_ref, 0.0)
                )
            v_cycle = v_cycle + (n_blk >= 1.0) * np.maximum(other, 0.0)
        mk.raise_all(v_cycle, "staged_block_cycle")


def staged_first_chunk(
    r: CoreRecords,
    cm: ComputePath,
    mk: Makespan,
) -> None:
    """The staged per-block cycle through the first chunk: the block's MMADs after its arrival.

    Without FixPipe, an operand staged and reloaded in every block: a block's first reorder
    follows the previous block's L0C->UB leg (V), its UB->L1 leg the previous UB->GM copy
    (MTE3), and the block's whole MMAD chain follows that chunk's arrival
    (:func:`staged_first_chunk_path`; term ``staged_first_chunk``).
    """
    g, bt, avg, ch, cp, lg, c, fix = r.g, r.bt, r.avg, r.ch, r.cp, r.lg, r.c, r.fix
    floor = r.floor
    via_a, via_b = cp.via_a, cp.via_b
    if fix or not (via_a or via_b) or floor:
        return
    blocks, k_iter = g.blocks, g.k_iter
    passes_a, passes_b, kc_a, kc_b = ch.passes_a, ch.passes_b, ch.kc_a, ch.kc_b
    la, lb, mm, per = avg.la, avg.lb, avg.mm, avg.per
    per_a = (passes_a >= blocks) if via_a else False
    per_b = (passes_b >= blocks) if via_b else False
    # (Priced on the candidates where it applies only.)
    idx = np.flatnonzero(np.asarray(per_a | per_b) & (blocks >= 2))
    # (Where it applies to every candidate, as on large shapes, priced on all without the
    # gathers: the same values.)
    every = idx.size == np.size(blocks)
    if idx.size:
        path = staged_first_chunk_path(
            None if every else idx, (via_a, via_b), (per_a, per_b),
            (lg.a_full, lg.a_last, lg.b_full, lg.b_last), (kc_a, kc_b, passes_a, passes_b, blocks),
            (bt.drain_total, bt.m3_out, bt.span, cm.start + (k_iter - 1) * per + mm,
             (la, lb + mm - per)),
            c.c_ub_to_gm_cycles(g.rm_t, g.cn_t, r.write_cap),
        )  # fmt: skip
        if every:
            mk.raise_all(path, "staged_first_chunk")
        else:
            mk.raise_at(idx, path, "staged_first_chunk")


def _one_slot_mte3_cycle(r: CoreRecords, ah: AHops, bh: BHops, per: tuple[Any, Any]) -> Any:
    """Per block through MTE3, an operand staged in every block in one L1 slot.

    MTE3 runs the block before's UB->GM copy, then this block's UB->L1 legs; with one slot each
    leg after the first waits for the release of the chunk before (its last step's MMAD start,
    ``rel_af`` / ``qb_kb`` from its arrival), and the last chunk's release (``rel_al`` /
    ``rel_bl``) precedes the K-tail MMAD and the drain's L0C->UB leg, which the next UB->GM
    copy follows: ``drain + m3c + (kc - 1) x (u_full + rel_full) + u_last + rel_last + mm_kt``
    (0 where it does not apply).
    """
    ch, lg, cp = r.ch, r.lg, r.cp
    drain = r.bt.drain_total / r.g.blocks_n + r.typ.m3c + r.typ.mm_kt
    out: Any = 0.0
    for on, via, one, kc, full, last, rel_f, rel_l in (
        (per[0], cp.via_a, ch.single_a, ch.kc_a, lg.a_full, lg.a_last, ah.rel_af, ah.rel_al),
        (per[1], cp.via_b, ch.single_b, ch.kc_b, lg.b_full, lg.b_last, r.avg.qb_kb, bh.rel_bl),
    ):
        if not via:
            continue
        path = drain + (kc - 1.0) * (full[2] + rel_f) + last[2] + rel_l
        out = np.maximum(out, (on & one) * path)
    return out


def _one_slot_a_pass_start(r: CoreRecords, ah: AHops, cyc: Any) -> Any:
    """Cycles a staged B pass's first block adds to the per-block cycle, A in one L1 slot.

    Both staged, A reloaded in every block in one slot and several chunks (with one, the pass
    start's B copy is priced between A's copies), B's K in one chunk per pass. From the
    block before's L0C->UB leg: A's first reorder, then B's GM->UB leg (it waits for that
    reorder, the source half), B's reorder (after A's first UB->L1 leg, which follows the
    UB->GM copy on MTE3: the destination half) and B's UB->L1 leg; A's first chunk is released
    when its last step's MMAD starts, which waits for B's reads (``qb(stepKa)`` from B's
    arrival), and only then A's next UB->L1 leg runs, with the rest of A's one-slot chain, the
    K-tail MMAD and the L0C->UB leg: ``v_a0 + g_b + v_b + u_b + qb(stepKa) + (kc_a - 2) x
    (u_af + rel_af) + u_al + rel_al + mm_kt + drain``, with ``v_b`` from ``max(v_a0 + g_b,
    max(v_a0, m3c) + u_a0)``; less the cycle ``cyc`` the block is priced at (0 where it does not
    apply).
    (Seen: the pinned case block_cycle_with_b_pass_staging, 310P3: 3073 cycles at each column
    start against a 973-cycle block, priced 1765 above it: -3.3 %.)
    """
    ch, lg, typ = r.ch, r.lg, r.typ
    out = np.zeros(np.shape(r.g.blocks))
    if not (r.cp.via_a and r.cp.via_b):
        return out
    # (Priced on the candidates where it applies only.)
    idx = np.flatnonzero(ch.single_a & (ch.kc_a > 1) & (ch.kc_b == 1))
    if not idx.size:
        return out
    kc_a = _sub(ch.kc_a, idx)
    _g_a0, v_a0, u_a0 = (_sub(x, idx) for x in lg.a_full)
    g_b, v_b, u_b = (_sub(x, idx) for x in lg.b_last)
    b_arrival = np.maximum(v_a0 + g_b, np.maximum(v_a0, _sub(typ.m3c, idx)) + u_a0) + v_b + u_b
    # From B's arrival to the MMAD start of A's first chunk's last step.
    rel_0 = b_arrival + _sub(ah.rel_b_ka, idx)
    rest = (
        (kc_a - 2.0) * (u_a0 + _sub(ah.rel_af, idx))
        + _sub(lg.a_last[2], idx)
        + _sub(ah.rel_al, idx)
    )
    drain_1 = _sub(r.bt.drain_total, idx) / _sub(r.g.blocks_n, idx)
    blk = rel_0 + rest + _sub(typ.mm_kt, idx) + drain_1
    out[idx] = np.maximum(blk - _sub(cyc, idx), 0.0)
    return out
