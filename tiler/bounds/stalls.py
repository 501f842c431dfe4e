"""Pass-start stalls: without FixPipe, a staged operand's copies queue behind the drain legs.

On chips without FixPipe (310P, 910A) the drain of a block is an L0C->UB leg on the vector pipe
and a UB->GM leg on MTE3. An operand staged through UB (GM->UB, vector reorder, UB->L1) uses the
same two queues, so at each block that starts a pass of it, its copies wait for the previous
block's drain legs: the estimator's ``bound_ex`` (:func:`simcore.estimate.stalls.chunk_stalls`,
:class:`simcore.estimate.stalls.Stalls`) adds ``ex_a0`` / ``ex_b0`` / ``ex_ab0`` at those
boundaries. :func:`pass_start_stalls` bounds their sum over the tilings of a case;
:func:`stalled_paths` adds it to each L0 class's compute chain.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["pass_start_stalls", "stalled_paths"]


def pass_start_stalls(
    terms: tuple[Any, ...], drain: tuple[Any, Any], chunking: tuple[Any, ...]
) -> Any:
    """The least stall sum, as a function of the L0 class offset, at an operand's pass starts.

    Estimator formulas (:func:`simcore.estimate.stalls.chunk_stalls`, block boundaries, no FixPipe):
    the compute path (:class:`simcore.estimate.compute.ComputePath`) ``start_0 + span + bound_ex +
    inner + dr_last`` adds ``bound_ex = both x max(ex_ab0, ex_c) + only_a x max(ex_a0, ex_c) +
    only_b x max(ex_b0, ex_c) + rest x ex_c`` over the block boundaries (``both = min(pa, pb)``,
    ``only_a = pa - both``, ..., ``pa = passes_a - 1`` the boundaries where A starts a pass, all
    counts >= 0), with, for an operand staged through UB, ``ex_a0 = max(a_ready + la + lb - per +
    mm, 0)``, ``a_ready = dr + max(m3c, va1) + ua1`` (``r.typ.dr``, ``r.typ.m3c``, ``r.cp.va1``,
    ``r.cp.ua1``: the drain's L0C->UB leg ``dr`` and UB->GM copy ``m3c`` of a full block, then the
    average reorder ``va1`` and UB->L1 leg ``ua1`` of A's copies), ``ex_b0 = max(b_ready + lb - per
    + mm, 0)`` likewise, ``ex_ab0 = max(ex_a0, ab_ready + lb - per + mm)``. As ``ex_ab0 >= ex_a0``,
    ``bound_ex >= pa x ex_a0``; with both operands staged ``ab_ready = a_ready + vb1 + ub1 >=
    b_ready``, so ``ex_ab0 >= ex_b0`` and ``bound_ex >= pb x ex_b0`` too. ``la + lb - per + mm``
    (``lb - per + mm``) is the class offset of :func:`tiler.bounds.chains.chain_classes`, so the
    compute path of each L0 class is at least its chain plus this figure plus ``dr_last``.

    The pass count (operand A; B alike): ``passes_a`` counts A's group passes, each of ``kc`` chunk
    copies (``loads_a = passes_a x kc``, :func:`simcore.pipeline.traffic.operand_passes`). With its
    K chunks streamed (``kc > slots``) every block reloads its group: ``passes_a`` is the block
    count. Otherwise ``kc <= slots`` (the slot count, 1 or 2: depth = step x stepK x db, db <= 2),
    so ``stepKa >= ceil(k_iter / slots)``, a chunk holds ``stepM x stepKa`` blocks at most ``chunk``
    (the caller's L1 share per slot, and the UB tile through UB), ``stepM <= chunk / ceil(k_iter /
    slots)`` and there are ``ceil(m_iter / stepM)`` groups, each loaded at least ``passes0`` times
    (once, or once per block of the other operand: the caller's reuse case). ``va1 = va / loads_a``
    and ``ua1 = ua / loads_a``: with ``q = (P - 1) / (P x kc)`` (``P = passes_a``), ``pa x ua1 = pa
    x lat + q x bytes / rate`` and ``pa x va1 >= q x repeats + pa x issue`` (the per-pass floors of
    :func:`tiler.bounds.copies.copy_terms`, over ``passes0`` passes of all the core's rows), each
    non-decreasing in P and non-increasing in ``kc`` (at most ``slots``, or ``k_iter`` when
    streamed); ``pa x (dr + lat + offset)`` is non-decreasing in P where ``dr + lat + offset >= 0``
    (else at least its value at the block count).

    Args:
        terms: The operand's :func:`tiler.bounds.copies.copy_terms` (its reorder and UB->L1 terms).
        drain: ``dr`` and ``m3c`` (at the case's largest bandwidth share: ``m3c`` is
            non-increasing in it).
        chunking: (slot index: 0 one slot, 1 two; chunk blocks at most; the operand's blocks
            along its dimension; passes at least of each group; blocks of the core; K steps).

    Returns:
        ``offset -> cycles``: the least ``bound_ex`` over the tilings of the caller's case.
    """
    dr, m3c = drain
    slot, chunk, iters, passes0, blocks, k_iter = chunking
    n_slots = slot + 1.0
    _, _, v_rep, _, v_ovh, u_lat, u_bytes = terms[:7]
    per_group = np.floor(chunk / np.ceil(k_iter / n_slots))
    fits = np.minimum(blocks, passes0 * np.ceil(iters / np.maximum(per_group, 1.0)))
    # Per case (K chunks in the slots, or streamed): the boundaries ``count - 1`` and the
    # stall sum without the offset (with ``x = dr + lat + offset >= 0``, else see ``least``).
    cases = []
    for count, kc_max in ((np.where(per_group >= 1, fits, blocks), n_slots), (blocks, k_iter)):
        bounds = count - 1.0
        q = bounds / (count * kc_max)
        staged = np.maximum(bounds * m3c, q * v_rep + bounds * v_ovh)
        cases.append((bounds, bounds * (dr + u_lat) + staged + q * u_bytes))

    def least(offset: Any) -> Any:
        x = dr + u_lat + offset
        # (Where x < 0 the boundaries' share is at least blocks - 1 of them; A's offsets are
        # never negative, so this is rare.)
        negative = bool(np.any(x < 0.0))
        out: Any = np.inf
        for bounds, base in cases:
            total = base + bounds * offset
            if negative:
                total = total + np.minimum(x, 0.0) * (blocks - 1.0 - bounds)
            out = np.minimum(out, np.maximum(total, 0.0))
        return out

    return least


def stalled_paths(
    classes: list[tuple[Any, Any, Any, Any]],
    operands: tuple[tuple[Any, ...], tuple[Any, ...]],
    drain: tuple[Any, Any, Any, list[Any]],
    grid: tuple[Any, Any],
) -> list[list[Any]]:
    """Each slot pair's compute path with its pass-start stalls (the same in every split).

    Per operand, slot count and L0 class: its pass-start stalls (:func:`pass_start_stalls`),
    with the largest chunk any split of the caller's case allows (A's share at most ``a_hi``,
    B's at most what A's least share leaves): the stalls only fall as the chunks grow, so this
    holds in every split. Per L0 class the compute path is at least its chain plus the largest
    of the stall sums (``bound_ex`` is at least each, and at least the one-L0C drains), then the
    last drain. B's stalls bound the sum only when ``ex_ab0 >= ex_b0``: both operands staged.

    Args:
        classes: :func:`tiler.bounds.chains.chain_classes`.
        operands: Per operand (A, B): its copy terms, passes at least, L1 share at most (blocks),
            UB tile cap (blocks), blocks along its dimension, whether its stalls apply, and the
            index of its offset in a class (1 for A, 2 for B).
        drain: The full block's L0C->UB leg, its UB->GM leg, the last drain, and per class the
            one-L0C drain stalls.
        grid: The core's blocks and K steps.

    Returns:
        ``paths[sa][sb]``: the compute path at least with A in ``sa + 1`` slots and B in
        ``sb + 1``.
    """
    dr_block, m3c, dr_last, drain_ex = drain
    blocks, k_iter = grid
    stalls: list[list[list[Any]]] = [[], []]
    for i, (terms, passes, most, ub_cap, iters, via, off) in enumerate(operands):
        for sl in (0, 1):
            if not via:
                stalls[i].append([0.0 for _ in classes])
                continue
            chunk = np.maximum(np.minimum(np.floor(most / (sl + 1.0)), ub_cap), 1.0)
            least = pass_start_stalls(
                terms, (dr_block, m3c), (sl, chunk, iters, passes, blocks, k_iter)
            )
            stalls[i].append([least(cl[off]) for cl in classes])
    return [
        [
            np.minimum.reduce(
                [
                    cl[0] + np.maximum(np.maximum(st_a, st_b), st_c)
                    for cl, st_a, st_b, st_c in zip(
                        classes, stalls[0][sa], stalls[1][sb], drain_ex, strict=True
                    )
                ]
            )
            + dr_last
            for sb in (0, 1)
        ]
        for sa in (0, 1)
    ]
