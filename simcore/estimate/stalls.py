"""The step chain's stalls: chunk copies waiting for their L1 slot, drains at block boundaries."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from simcore.estimate.records import CoreRecords

if TYPE_CHECKING:
    pass


class Stalls(NamedTuple):
    """What :func:`chunk_stalls` gives the later terms (named as in its formulas)."""

    bound_ex: Any
    burst_a: Any
    inner: Any
    inner_rel: Any
    normal: Any


def chunk_stalls(
    r: CoreRecords,
    km_a: Any,
    km_b: Any,
) -> Stalls:
    """Stalls at chunk boundaries inside a block and at block boundaries, added to the step chain.

    A chunk copy waits for the last read of the chunk ``slots`` copies back (MTE2 or MTE3 on the
    UB path, then MTE1): it stalls the step chain by what its slot-waiting leg and the first
    reads exceed the lead the chain gives; operands whose chunks fill their slots reload in a
    burst. At a block boundary, with one L0C buffer, the drain (FIX, or V and MTE3) delays the
    next first MMAD, and without FixPipe the step-0 copies start after the drain. Numbers: the
    typical block's step times, the average copy's legs.

    Returns:
        ``inner`` (the stalls inside blocks) and ``bound_ex`` (at block boundaries), and the
        parts other terms reuse (``inner_rel``: the inner stalls from the releases, one-slot
        copies without a read lead and without overlapping jumps).
    """
    g, typ, ch, cp, fix = r.g, r.typ, r.ch, r.cp, r.fix
    b_after_a, ua1, ub1, va1, vb1, via_a = cp.b_after_a, cp.ua1, cp.ub1, cp.va1, cp.vb1, cp.via_a
    via_b, wait_a, wait_b = cp.via_b, cp.wait_a, cp.wait_b
    blocks, c1, k_iter, zero = g.blocks, g.c1, g.k_iter, g.zero
    dr, la, lb, lead_a, lead_b, m3c = typ.dr, typ.la, typ.lb, typ.lead_a, typ.lead_b, typ.m3c
    mm, per = typ.mm, typ.per
    kc_a, kc_b, passes_a, passes_b = ch.kc_a, ch.kc_b, ch.passes_a, ch.passes_b
    single_a, single_af, single_b, single_bf = ch.single_a, ch.single_af, ch.single_b, ch.single_bf
    slots_a, slots_b, st_a, st_b, step_ka = ch.slots_a, ch.slots_b, ch.st_a, ch.st_b, ch.step_ka
    step_kb = ch.step_kb

    # --- stalls at chunk boundaries inside a block (steps > 0) ------------------------------------
    # How far ahead a copy may run: it waits for the last read of the chunk `slots` loads back.
    # Streamed operands (more K chunks than slots) with one slot wait for the previous chunk;
    # with two, for the one before it (a chunk of compute of slack). Operands whose K chunks fill
    # the slots exactly reload the whole panel at a group change, each copy waiting for the old
    # chunk at the same K position: a burst with a block minus a chunk of slack.
    # (What does not depend on the reads' leads, once for both calls of inner_of below; the
    # sums keep their order, so the values are the same bit for bit.)
    not_single_a, not_single_b = ~single_a, ~single_b
    ahead_a, ahead_b = wait_a + la + lb, wait_b + lb
    ahead_a_b = wait_a + np.maximum(la, b_after_a) + lb
    chunk_a = step_ka * per
    chunk_b = step_kb * per
    slack_a, slack_b = chunk_a * not_single_a, chunk_b * not_single_b
    one_step_a, one_step_b = step_ka == 1, step_kb == 1
    # Steps > 0 where both operands start a chunk: the stalls overlap (the B copy queues behind
    # the A copy), so such a step costs the larger one, not the sum.
    co = (ch.co_steps - 1) * np.minimum(passes_a, passes_b) * (st_a * st_b)
    alone_a = st_a * (passes_a * km_a - co)
    alone_b = st_b * (passes_b * km_b - co)

    def inner_of(lead_a: Any, lead_b: Any, runs: bool = True) -> tuple[Any, ...]:
        base_a = ahead_a - lead_a - per
        base_a_b = ahead_a_b - lead_a - per
        base_b = ahead_b - lead_b - per
        over_a = base_a - slack_a  # (minus the slack: none with one slot)
        ex_a_alone = np.maximum(over_a, zero)
        ex_a_with_b = np.maximum(np.where(single_a, base_a_b, over_a), zero)
        ex_b_alone = np.maximum(base_b - slack_b, zero)
        # Such a stall is anchored on the read that frees the slot, two steps before the delayed
        # MMAD with one slot (a chunk more with two). Where boundaries come at every step (or the
        # two slots keep one chunk of slack) the jumps overlap: over a long run of boundaries the
        # step chain grows by the jump's excess once per m boundaries, m = slots + (stepK == 1).
        # From the release (``runs`` False) a one-slot copy is anchored on the MMAD start of
        # the step just before the one it delays: no overlap, every boundary's stall adds up
        # (m = 1). (Seen: the pinned case b_pass_start_behind_one_slot_a_between_drains, 910A:
        # A's second copy puts 1229.5 cycles from one MMAD start to the next in every block,
        # its stall priced at half: -2.6 %.)
        m_a = slots_a + one_step_a * (runs | not_single_a)
        m_b = slots_b + one_step_b * (runs | not_single_b)
        ex_a_alone = ex_a_alone / m_a
        ex_a_with_b = ex_a_with_b / m_a
        ex_b_alone = ex_b_alone / m_b
        inner = (
            co * np.maximum(ex_a_with_b, ex_b_alone) + alone_a * ex_a_alone + alone_b * ex_b_alone
        )
        return inner, base_a, base_b, chunk_a, chunk_b, ex_a_alone, ex_a_with_b, ex_b_alone

    inner, base_a, base_b, chunk_a, chunk_b, ex_a_alone, ex_a_with_b, ex_b_alone = inner_of(
        lead_a, lead_b
    )
    # With one slot a copy waits for the release of the chunk the step before read, its MMAD
    # start (precedence.l1_slot_release): no lead beyond it, and no overlap of the jumps. Only
    # the one-L0C drain chain takes these (``inner_rel``; the other terms price the release on
    # their own paths).
    # (With FixPipe or in the floors that chain is not priced: ``inner`` stands in, unread.)
    inner_rel = (
        inner
        if fix or r.floor
        else inner_of(lead_a * not_single_a, lead_b * not_single_b, False)[0]
    )

    def burst(base: Any, wait: Any, step_k: Any, chunk: Any, kc: Any, km: Any, n_slots: Any) -> Any:
        # (Zero where streamed: kc == slots is not streamed.)
        d0 = base - np.maximum(k_iter - step_k, zero) * per
        b = np.maximum(np.maximum(d0, d0 + km * (wait - chunk)), zero)
        return b * (kc == n_slots)

    # Streamed operands keep the stalls above, the others take the burst (zero where streamed).
    burst_a = burst(base_a, wait_a, step_ka, chunk_a, kc_a, km_a, slots_a)
    burst_b = burst(base_b, wait_b, step_kb, chunk_b, kc_b, km_b, slots_b)
    ex_a_alone = ex_a_alone * st_a + burst_a
    ex_a_with_b = ex_a_with_b * st_a + burst_a
    ex_b_alone = ex_b_alone * st_b + burst_b

    # --- block boundaries: drain into the next first MMAD (dbL0C = 1) and the step-0 copies ------
    normal = typ.normal
    ex_c = np.maximum(dr - normal, zero) * c1
    if fix:
        ex_a0 = ex_a_alone
        ex_b0 = ex_b_alone
        ex_ab0 = np.maximum(ex_a_with_b, ex_b_alone)
    else:
        # No FixPipe: the drain's V and MTE3 legs sit in those queues ahead of the next block's
        # copies, so the step-0 copies cannot start before the drain (from the last MMAD end).
        a_ready = dr + np.maximum(m3c, va1) + ua1 if via_a else zero
        b_ready = dr + np.maximum(m3c, vb1) + ub1 if via_b else zero
        ab_ready = (a_ready + vb1 + ub1) if via_b else b_ready
        ex_a0 = np.maximum(a_ready + la + lb - per + mm, zero)
        ex_b0 = np.maximum(b_ready + lb - per + mm, zero)
        ex_ab0 = np.maximum(ex_a0, np.maximum(ab_ready + lb - per + mm, zero))
        # (With one slot the larger one: ``x * single`` is x there and 0 elsewhere.)
        if not via_a:
            ex_a0 = np.maximum(ex_a0, ex_a_alone * single_af)
        if not via_b:
            ex_b0 = np.maximum(ex_b0, base_b * single_bf)
    # Boundaries with copies: assume the rarer operand's passes coincide with the other's.
    pa = np.maximum(passes_a - 1, zero)
    pb = np.maximum(passes_b - 1, zero)
    both = np.minimum(pa, pb)
    only_a = pa - both
    only_b = pb - both
    bounds = np.maximum(blocks - 1, zero)
    bound_ex = (
        both * np.maximum(ex_ab0, ex_c)
        + only_a * np.maximum(ex_a0, ex_c)
        + only_b * np.maximum(ex_b0, ex_c)
        + (bounds - both - only_a - only_b) * ex_c
    )

    return Stalls(
        bound_ex=bound_ex, burst_a=burst_a, inner=inner, inner_rel=inner_rel, normal=normal
    )
