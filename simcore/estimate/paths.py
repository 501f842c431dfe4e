"""The MTE2 path and the drain path: the two queues whose totals bound the kernel from below."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from simcore.estimate.arrays import sub as _sub
from simcore.estimate.drains import (
    c1_drain_chain,
)
from simcore.estimate.records import CoreRecords

if TYPE_CHECKING:
    from simcore.estimate.compute import ComputePath
    from simcore.estimate.stalls import Stalls


class QueuePaths(NamedTuple):
    """What :func:`copy_and_drain_paths` gives the later terms (named as in its formulas)."""

    c1_path: Any
    copy_path: Any
    drain_path: Any
    idx_c1: Any
    stall_c1: Any
    tail_plain: Any


def rotating_slot_idle(r: CoreRecords) -> Any:
    """MTE2's idle cycles where B streams its direct chunk copies through two or more L1 slots.

    With ``S`` slots the copy of B's chunk ``j + S`` waits for the release of chunk ``j``;
    MTE2 runs the ``S - 1`` copies between, then idles until that read if B's reads of chunk
    ``j`` from its arrival outlast them. The short K-tail copy among them leaves the gap (seen:
    910B2 fp16 128 x 4096 x 4096, two B slots, chunks of 2, 2 and 1 steps, row-bound 7407-cycle
    copies and a 273-cycle K-tail copy: the next block's first copy waits 682 cycles for the
    second chunk's reads, -4.2 % without it). Per pass: the windows inside it (full copies
    between) and, on all passes but the last, the ones that end in the next pass (the K-tail
    copy, the next block's bias slice and its share of A's copies between). A's copies are
    spread over B's (an average between: it can only hide a gap, never add one). Direct B
    copies only (a staged copy waits on its UB->L1 leg). Not in the floors (the reads depend on
    the L0 flags).
    """
    ch, lg, cp, avg, problem = r.ch, r.lg, r.cp, r.avg, r.problem
    slots_b, kc_b, passes_b = ch.slots_b, ch.kc_b, ch.passes_b
    out = np.zeros(np.shape(r.g.blocks))
    idx = np.flatnonzero(ch.streamed_b & (slots_b >= 2) & ch.has_b)
    if not idx.size:
        return out
    s_b, kc, pb = _sub(slots_b, idx), _sub(kc_b, idx), _sub(passes_b, idx)
    g_f, g_l = _sub(lg.b_full[0], idx), _sub(lg.b_last[0], idx)
    # (A copy waits for the release of the chunk two slots back: its last step's MMAD start.)
    rb_kb = _sub(avg.qb_kb, idx)
    rb_tail = avg.qb.sub(idx)(_sub(ch.r_last_b, idx))
    # A's MTE2 per B copy, and the next block's bias slice at a pass change.
    a_per = _sub(cp.ga, idx) / np.maximum(_sub(ch.loads_b, idx), 1.0)
    bias = _sub(cp.bias_cyc, idx) if problem.bias else 0.0
    inner = (kc - s_b) * np.maximum(rb_kb - (s_b - 1.0) * (g_f + a_per), 0.0)
    wrap = (s_b - 1.0) * np.maximum(
        rb_kb - (s_b - 2.0) * g_f - g_l - (s_b - 1.0) * a_per - bias, 0.0
    ) + np.maximum(rb_tail - (s_b - 1.0) * (g_f + a_per) - bias, 0.0)
    out[idx] = pb * inner + np.maximum(pb - 1.0, 0.0) * wrap
    return out


def periods_into_k_tail(periods: Any, per: Any, per_kt: Any) -> Any:
    """``periods`` step periods that end at a block's K-tail step (MTE1, M).

    The rule of every path that runs a block's K loop to its end: ``periods - 1`` full step
    periods (``per``), then the period into the K-tail step (``per_kt``: its loads after the
    last full MMAD, a full period where K has no tail). Cycles from the first of those MMAD
    starts to the K-tail step's MMAD start.
    """
    return (periods - 1.0) * per + per_kt


def steps_after_last_copy(steps: Any, per: Any, loads: tuple[Any, Any], kt: Any) -> Any:
    """The steps after a block's last copy arrives, to its last MMAD's end (MTE1, M).

    ``steps`` of them: the first step's loads (``loads``, A's and B's), ``steps - 2`` full
    periods (``per``), the period into the K-tail step (its loads after the full MMAD) and its
    MMAD (``kt``: the K-tail step's A load, B load, that period and its MMAD); where the last
    copy is the K-tail step's own, its loads and MMAD. At least ``(steps - 1) x per`` and the
    K-tail step's loads and MMAD (a period is 1-Lipschitz in the loads): the search's floor.
    Seen on 910B3 fp16 1234 x 900 x 256 (112 x 144 tiles of one block, baseK 224, one L0A
    and L0B buffer): after the last A copy the 32-deep K-tail step's loads and MMAD take 276
    cycles, not a full step's 1,632 (the copy path +36 %).
    """
    la_kt, lb_kt, per_kt, mm_kt = kt
    many = loads[0] + loads[1] + periods_into_k_tail(steps - 1.0, per, per_kt)
    return np.where(steps >= 2, many, la_kt + lb_kt) + mm_kt


def blocks_after_last_copy(r: CoreRecords) -> Any:
    """The K loops of the blocks that copy nothing after the block of the core's last copy.

    Where the core's blocks all read one group of A's rows and one of B's columns (``m_iter <=
    stepM``, ``n_iter <= stepN``) and neither operand streams (its chunks stay in their slots),
    every copy is the first block's: the later blocks' steps follow its last copy in MTE1 and
    M order, each block's from the MMAD before: the first loads across the boundary
    (``normal``), the full periods, the period into the K-tail step and its MMAD (MTE1, M).
    Seen on 910B2 fp16 843 x 929 x 512 (224 x 144 tiles of two 112-row blocks, stepM 2): the
    second block's 3,816 cycles after the last copy, -13 % on the tile without them.
    """
    g, typ, ch, f = r.g, r.typ, r.ch, r.f
    once = (g.m_iter <= f["stepM"]) & (g.n_iter <= f["stepN"]) & ~ch.streamed_a & ~ch.streamed_b
    steps = np.where(g.k_iter >= 2, periods_into_k_tail(g.k_iter - 1.0, typ.per, typ.per_kt), 0.0)
    block = typ.normal + steps + typ.mm_kt
    return np.where(once, (g.blocks - 1.0) * block, 0.0)


def first_block_steps(kf: Any, r: CoreRecords) -> Any:
    """The first block's steps from its first MMAD's start to its last MMAD's end (M, MTE1).

    ``kf`` full steps: ``kf - 1`` periods (the first step's loads are in the start-up), the
    K-tail step's loads after the last full MMAD (``per_kt``) and its MMAD; with one step
    (``kf`` 0) that step's MMAD. Seen on 910B3 fp16 112 x 144 x 256 (one block, baseK 224,
    one L0A and L0B buffer): the first MMAD starts at 2,162 cycles, the 32-deep K-tail step's
    loads and MMAD end 276 after the 884-cycle MMAD, then the 335-cycle drain (3,657); the
    K-tail step priced as a full one gave 4,972 (+36 %).
    """
    typ = r.typ
    return np.where(kf >= 1, periods_into_k_tail(kf, typ.per, typ.per_kt) + typ.mm_kt, typ.mm)


def copy_and_drain_paths(
    r: CoreRecords,
    st: Stalls,
    cm: ComputePath,
    kf: Any,
    km_a: Any,
    km_b: Any,
) -> QueuePaths:
    """The MTE2 path (all copies, then the last chunk's steps and drain) and the drain path.

    MTE2 runs ahead of the step chain; after its last copy the remaining steps of that chunk and
    the drain are left (through UB the last copy's staging legs too). The drain path: the first
    block, then every drain in its queue (without FixPipe the L0C->UB and UB->GM legs chain
    through the one C staging buffer; with one L0C buffer, :func:`c1_drain_chain` over the block
    types).
    """
    g, bt, typ, ch, cp, fix, floor = r.g, r.bt, r.typ, r.ch, r.cp, r.fix, r.floor
    c1_path: Any = None  # (set where the term applies)
    idx_c1: Any = None  # (set where the term applies)
    stall_c1: Any = None  # (set where the term applies)
    blk_types, dr_last, drain_total, m3_out = bt.types, bt.dr_last, bt.drain_total, bt.m3_out
    blocks, c1, k_iter, m_iter, n_iter = g.blocks, g.c1, g.k_iter, g.m_iter, g.n_iter
    order = g.order
    normal = st.normal
    la, lb, per = typ.la, typ.lb, typ.per
    loads_a, loads_b, single_a, single_b = ch.loads_a, ch.loads_b, ch.single_a, ch.single_b
    step_ka, step_kb, streamed_a, streamed_b = ch.step_ka, ch.step_kb, ch.streamed_a, ch.streamed_b
    mte2, ua1, ub1, va1, vb1, via_a = cp.mte2, cp.ua1, cp.ub1, cp.va1, cp.vb1, cp.via_a
    via_b = cp.via_b
    start, start_0 = cm.start, cm.start_0
    # drain are left.
    # (``x * (loads > 0)`` is ``np.where(loads > 0, x, 0)`` for x >= 0, about half the cost.)
    last_step = np.maximum(km_a * step_ka * (loads_a > 0), km_b * step_kb * (loads_b > 0))
    kt = (r.typ.la_kt, r.typ.lb_kt, r.typ.per_kt, r.typ.mm_kt)
    tail_after = steps_after_last_copy(k_iter - last_step, per, (la, lb), kt) + dr_last
    tail_after = tail_after + blocks_after_last_copy(r)
    tail_plain = tail_after
    if via_a or via_b:
        tail_after = tail_after + np.where(via_b, vb1 + ub1, va1 + ua1)
    copy_path = mte2 + tail_after
    if not floor and not via_b:
        copy_path = copy_path + rotating_slot_idle(r)
    # Without FixPipe a block's L0C->UB move waits for the previous block's UB->GM copy (one C
    # staging buffer), so the moves and copies of all blocks chain after the first block.
    drain_path = start + first_block_steps(kf, r) + drain_total + (0.0 if fix else m3_out)
    if not fix and not floor:
        # A chunk copy that waits for a read of its own block (``inner``) holds that block's
        # MMAD chain back after it has started behind the drain, so the chain carries it too:
        # with one slot every copy after the block's first waits so. (With two, the first two
        # wait for reads of the block before, long done when the drain sets the pace: left out.)
        # (The chain applies with one L0C buffer only: priced on those candidates, which also
        # halves the cost of the chain itself.)
        idx_c1 = np.flatnonzero(c1)
        c1_path = np.zeros(np.shape(blocks))
        stall_c1 = np.zeros(0)
        if idx_c1.size:
            i_c = idx_c1
            one_slot = (_sub(single_a, i_c) | ~_sub(streamed_a, i_c)) & (
                _sub(single_b, i_c) | ~_sub(streamed_b, i_c)
            )
            stall_blk = one_slot * _sub(st.inner_rel, i_c) / np.maximum(_sub(blocks, i_c), 1)
            chain_c1 = c1_drain_chain(
                {key: tuple(_sub(x, i_c) for x in v) for key, v in blk_types.items()},
                _sub(m_iter, i_c), _sub(n_iter, i_c), _sub(order, i_c) == 0, _sub(normal, i_c),
                stall_blk,
            )  # fmt: skip
            c1_path[i_c] = _sub(start_0, i_c) + chain_c1
            stall_c1 = stall_blk
    return QueuePaths(
        c1_path=c1_path,
        copy_path=copy_path,
        drain_path=drain_path,
        idx_c1=idx_c1,
        stall_c1=stall_c1,
        tail_plain=tail_plain,
    )
