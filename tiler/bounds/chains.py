"""The compute chain's bounds: the estimator's compute path, first block and copy path tail.

The estimator's compute path (:func:`simcore.estimate.compute.compute_chain`, the ``compute``
term, :class:`simcore.estimate.compute.ComputePath`) is ``start_0 + span + bound_ex + inner +
dr_last`` with ``start_0 = start - (per - mm)``: the start-up after the first copies, the sum of
every K step's period over the core's blocks (``r.bt.span``), the stalls at block boundaries
(``bound_ex``) and inside blocks (``inner``, both :class:`simcore.estimate.stalls.Stalls`, >= 0)
and the last block's drain (``r.bt.dr_last``). Its copy path (:func:`simcore.estimate.paths.
copy_and_drain_paths`, the ``copy`` term) is ``mte2 + tail_after`` and its first-block path
(:func:`simcore.estimate.first_block.first_block`) the first block's copies and step, then every
drain. Each is bounded here over the tilings of a group: per L0 buffering class
(:func:`chain_classes`), and with one L0C buffer the drain at every block boundary
(:func:`fixed_paths`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from simcore.hardware.dtypes import FRACTAL_ROWS
from simcore.pipeline.busy import BlockSteps, drain_busy
from simcore.pipeline.costs import Costs, ceil_div
from simcore.pipeline.mmad import mmad_cycles
from simcore.pipeline.scalar import scalar_cycles, startup_cycles
from simcore.pipeline.transfer import l1_to_l0_cycles
from tiler.bounds import copies

__all__ = [
    "USE_CHAIN_BOUND",
    "FixedPaths",
    "average_step",
    "chain_classes",
    "class_reach",
    "class_spans",
    "fixed_paths",
    "last_chunk_steps",
    "least_scalar",
    "least_span",
]

#: Whether the makespan (compute chain) terms are used; they rely on the structure of the
#: estimator's paths (module doc), the resource terms only on its busy totals.
USE_CHAIN_BOUND = True


def average_step(c: Costs, g: dict[str, Any]) -> Any:
    """A full-K step's ``la + lb + mm`` at the block dimensions averaged over the core's blocks.

    Estimator formula (the average block's steps ``r.avg``,
    :func:`simcore.estimate.steps.average_steps`, which the slot cycles and the first block
    read): the fractal counts averaged over the core's blocks, ``fr_1 = ((m_iter - 1) x fr_f +
    fr_t) / m_iter`` (likewise ``fc_1``), ``la = lat1 + fr_1 x 16 x ka_f / rate_a``, ``mm = ovh
    + fr_1 x fc_1 x fk_f x frc``. With tail blocks this is below
    the typical block's.
    """
    p = c.preset
    bm, bn, bk = g["baseM"], g["baseN"], g["baseK"]
    m_iter, n_iter = g["m_iter"], g["n_iter"]
    rm_t = g["core_rows"] - (m_iter - 1) * bm
    cn_t = g["core_cols"] - (n_iter - 1) * bn
    fr = ((m_iter - 1) * ceil_div(bm, FRACTAL_ROWS) + ceil_div(rm_t, FRACTAL_ROWS)) / m_iter
    fc = ((n_iter - 1) * ceil_div(bn, FRACTAL_ROWS) + ceil_div(cn_t, FRACTAL_ROWS)) / n_iter
    fk = ceil_div(bk, c.c0)
    k_bytes = (fk * c.c0) * c.in_bytes
    la = l1_to_l0_cycles(p, True, fr * FRACTAL_ROWS, k_bytes)
    lb = l1_to_l0_cycles(p, False, fc * FRACTAL_ROWS, k_bytes)
    mm = mmad_cycles(p.mmad_overhead_cycles, c.fractal_cycles, fr, fc, fk)
    return la + lb + mm


def chain_classes(
    c: Costs,
    k: int,
    g: dict[str, Any],
    fixed: dict[str, int],
    ready: tuple[Any, Any],
    types: list[BlockSteps],
) -> list[tuple[Any, Any, Any, Any]]:
    """Per L0 class: the sum of the K-step periods plus the start-up's least share.

    The estimator's compute path (:class:`simcore.estimate.compute.ComputePath`) is ``start_0 + span
    + ... + dr_last`` with ``start_0 = start - (per - mm)``, ``start >= a_rdy + la + lb`` (the first
    copy, then the first A and B reads of a typical block), ``per`` and ``mm`` the typical block's
    period and MMAD and ``span`` the sum of the periods of every step. Per class of (dbL0A, dbL0B):

    * dbL0A = 1: ``per = mm + la + lb`` so ``start - (per - mm) >= a_rdy``;
    * dbL0A = 2, dbL0B = 1: ``per = max(mm, la) + lb``, so it is ``>= a_rdy + min(la, mm)``;
    * both 2: ``per = max(mm, la + lb)``, so it is ``>= a_rdy + min(la + lb, mm)``;

    where ``start = max(a_rdy + la, b_rdy) + lb``, so ``start - (per - mm)`` is at least
    ``a_rdy`` plus the A offset below and at least ``b_rdy`` plus the B offset (the three cases
    above are the A offsets). The first copies: ``a_rdy >= ga1`` and ``b_rdy >= ga1 + gb1`` on
    every data path (``ga1``, ``gb1`` the average MTE2 leg of an A, B copy: B's first copy
    follows A's on MTE2, and through UB the reorder and UB->L1 legs only add), and ``ready``
    gives lower bounds of ``ga1`` and ``gb1``.

    Each class also gives ``la + lb - (per - mm)`` and ``lb - (per - mm)`` of the typical block
    (what the block-boundary stalls ``ex_a0`` / ``ex_b0`` of
    :func:`simcore.estimate.stalls.chunk_stalls` add to a copy's ready time, see
    :func:`tiler.bounds.stalls.pass_start_stalls`): ``0`` and ``-la`` with dbL0A = 1; ``min(la,
    mm)`` and ``-max(la - mm, 0)`` with only dbL0B = 1; ``min(la + lb, mm)`` and ``lb - max(la + lb
    - mm, 0)`` with both 2.

    And the part of a block boundary's period beside its MMAD, ``normal = per_bd - mm_kt``
    (``per_bd`` the period of the typical block's K-tail MMAD ``mm_kt`` with the next
    block's loads): ``la + lb`` with dbL0A = 1, ``max(lb, la + lb - mm_kt)`` with only dbL0B
    = 1, ``max(la + lb - mm_kt, 0)`` with both 2 (with one L0C buffer the estimator adds
    ``max(dr - normal, 0)`` at every block boundary, see :func:`tiler.bounds.cases.order_bound`).

    ``types`` are the groups' block types with their step costs
    (:func:`simcore.pipeline.busy.block_steps`).

    Returns:
        One ``(chain, A offset, B offset, normal)`` per L0 class the pins and the group allow.
    """
    bk, k_iter = g["baseK"], g["k_iter"]
    k_t = k - (k_iter - 1) * bk
    m_iter, n_iter = g["m_iter"], g["n_iter"]
    rows, cols = g["core_rows"], g["core_cols"]
    bm, bn = g["baseM"], g["baseN"]
    spans = class_spans(types, k_iter)
    # The typical block of the estimator: the tail when the core has a single block.
    r1 = np.where(m_iter == 1, rows - (m_iter - 1) * bm, bm)
    c1 = np.where(n_iter == 1, cols - (n_iter - 1) * bn, bn)
    la1, lb1, mm1 = c.la_cycles(r1, bk), c.lb_cycles(c1, bk), c.mmad_cycles(r1, c1, bk)
    mm_kt = c.mmad_cycles(r1, c1, k_t)
    reach = class_reach(g, fixed)
    ga1, gb1 = ready
    offsets = []
    if "a1" in reach:
        offsets.append((spans["a1"], 0.0 * la1, -la1, la1 + lb1))
    if "b1" in reach:
        offsets.append(
            (
                spans["b1"] + reach["b1"],
                np.minimum(la1, mm1),
                -np.maximum(la1 - mm1, 0.0),
                np.maximum(lb1, la1 + lb1 - mm_kt),
            )
        )
    if "both" in reach:
        offsets.append(
            (
                spans["both"] + reach["both"],
                np.minimum(la1 + lb1, mm1),
                lb1 - np.maximum(la1 + lb1 - mm1, 0.0),
                np.maximum(la1 + lb1 - mm_kt, 0.0),
            )
        )
    return [
        (span + np.maximum(ga1 + off_a, ga1 + gb1 + off_b), off_a, off_b, normal)
        for span, off_a, off_b, normal in offsets
    ]


def class_spans(types: list[BlockSteps], k_iter: Any) -> dict[str, Any]:
    """Per L0 class, the sum over every block's K steps of the class's step period.

    ``a1`` (dbL0A = 1): ``mm + la + lb``; ``b1`` (dbL0A = 2, dbL0B = 1): ``max(max(mm, la) +
    lb, la + lb)``; ``both`` (both 2): ``max(mm, la + lb)`` (:func:`chain_classes`).
    """
    spans: dict[str, Any] = {"a1": 0.0, "b1": 0.0, "both": 0.0}
    for b in types:
        count = b.count
        for la, lb, mm, steps in ((b.la, b.lb, b.mm, k_iter - 1), (b.la_t, b.lb_t, b.mm_t, 1)):
            spans["a1"] = spans["a1"] + count * steps * (mm + la + lb)
            spans["b1"] = spans["b1"] + count * steps * np.maximum(np.maximum(mm, la) + lb, la + lb)
            spans["both"] = spans["both"] + count * steps * np.maximum(mm, la + lb)
    return spans


def class_reach(g: dict[str, Any], fixed: dict[str, int]) -> dict[str, Any]:
    """The L0 classes of :func:`class_spans` the pins allow, each with 0 where a group can hold it.

    A group only holds the L0 flags its blocks fit (tiler.space: ``dbA_max`` / ``dbB_max``, 1
    where two base blocks do not fit in L0A / L0B): inf where a class is out of its reach.
    """
    a_pin, b_pin = fixed.get("dbL0A"), fixed.get("dbL0B")
    no_a2 = np.where(g["dbA_max"] >= 2, 0.0, np.inf) if "dbA_max" in g else 0.0
    no_b2 = np.where(g["dbB_max"] >= 2, 0.0, np.inf) if "dbB_max" in g else 0.0
    reach: dict[str, Any] = {}
    if a_pin in (None, 1):
        reach["a1"] = 0.0
    if a_pin in (None, 2) and b_pin in (None, 1):
        reach["b1"] = no_a2
    if a_pin in (None, 2) and b_pin in (None, 2):
        reach["both"] = no_a2 + no_b2
    return reach


def least_span(
    types: list[BlockSteps],
    k_iter: Any,
    g: dict[str, Any] | None = None,
    fixed: dict[str, int] | None = None,
) -> Any:
    """The least compute chain over the L0 classes a group can hold, at least.

    Each class's span (:func:`class_spans`) sums per step ``mm + la + lb``, ``max(max(mm, la)
    + lb, la + lb)`` or ``max(mm, la + lb)``; its chain (:func:`chain_classes`) adds ``ga1``
    plus the A offset (both >= 0), and the group bound's makespan is at least the least chain
    over the classes the pins and the group allow (:func:`class_reach`; every class with no
    ``g``: then the last, the least). The busy totals' sum (M + MTE1, in the sum of work) is at
    least the first, so at least this too, and the busiest pipe only raises ``max(MK, RB)``,
    so ``min(max(MK, RB), SQ)`` of every tiling of the group is at least it: a first filter
    before the group's other terms. (Groups whose base blocks do not fit twice in L0A run every
    step at ``mm + la + lb`` or ``max(mm, la) + lb``: on 910A fp16 4095 x 4097 x 1023 the
    classes' reach rules out 421k of the 910k groups the cube bound leaves where ``max(mm, la
    + lb)`` at every step rules out 155k.)
    """
    spans = class_spans(types, k_iter)
    if g is None:
        return spans["both"]
    reach = class_reach(g, fixed or {})
    return np.minimum.reduce(
        [np.broadcast_to(spans[name] + extra, np.shape(k_iter)) for name, extra in reach.items()]
    )


def least_scalar(space: Any, c: Costs, g: dict[str, Any]) -> Any:
    """The scalar pipe's busy cycles of a group's tilings on the path of ``c``, at least.

    :func:`simcore.pipeline.scalar.scalar_cycles` (issue 17) of the group's K steps (one per
    MMAD, fixed by the base block) and its least DMA copies: under Norm every base block of a
    direct operand is copied at least once, one copy each; 0 otherwise (non-decreasing in the
    copies). The estimate's busiest pipe and its sum of work both hold it.
    """
    m_iter, n_iter, k_iter = g["m_iter"], g["n_iter"], g["k_iter"]
    least_copies: Any = 0.0
    if c.norm:
        least_copies = (m_iter * (not c.a_via_ub) + n_iter * (not c.b_via_ub)) * k_iter
    return scalar_cycles(space.preset, space.problem, m_iter * n_iter * k_iter, least_copies)


def last_chunk_steps(per: Any, k_iter: Any, lat: Any, passes: Any, chunk: Any, priced: Any) -> Any:
    """Least ``steps x per`` left after an operand's last copy, plus the copies that costs.

    Estimator formulas (:func:`simcore.estimate.paths.copy_and_drain_paths`, the ``copy`` term):
    ``copy_path = mte2 + tail_after``
    with ``tail_after = (k_iter - last_step - 1) x per + la + lb + mm + dr_last``, where
    ``last_step`` is the larger of ``D_a = (kc_a - 1) x stepKa`` and ``D_b`` (the start of
    each operand's last K chunk), ``per`` is the typical block's period (at least ``max(mm, la
    + lb)``, ``per`` given here) and every copy pays its latency ``lat`` on MTE2 (``mte2``
    sums all copies).

    An operand's chunks hold at most ``s`` K steps (``stepK <= chunk blocks``), so ``D <= (kc
    - 1) x s`` and a pass has ``kc >= 1 + D / s`` copies; with ``p`` passes at least (each of
    ``kc`` copies) its copies are at least ``p x (1 + D / s)``, of which the caller already
    priced ``i0`` (its instructions at least; ``i0 >= p``). The steps left are ``k_iter - 1 -
    D`` with ``D = max(D_a, D_b)``: the operand with the larger D pays ``lat x max(p x (1 + D /
    s) - i0, 0)`` beyond the caller's figure and the other nothing more, so the caller takes
    the smaller of the two operands' figures. Relaxed to a real D in ``[0, k_iter - 1]`` the
    sum is convex piecewise linear with one knee, so its least is at D = 0, at the knee or at
    ``k_iter - 1``.

    Args:
        per: A step's period at least.
        k_iter: K steps.
        lat: The operand's latency per copy.
        passes: Its passes at least.
        chunk: Blocks one of its chunks holds at most.
        priced: Its copies (instructions) the caller already priced.

    Returns:
        Cycles to add to the caller's copies, steps after them, a step and the drain.
    """
    k1 = np.maximum(k_iter - 1, 0)
    s = np.maximum(np.minimum(chunk, k_iter), 1.0)
    # Up to the knee no copy is added (and D = 0 leaves more steps than the knee does): the
    # knee's figure is its steps alone; at k_iter - 1 no step is left.
    knee = np.minimum(np.maximum((priced / passes - 1.0) * s, 0.0), k1)
    at_end = lat * np.maximum(passes * (1.0 + k1 / s) - priced, 0.0)
    return np.minimum(per * (k1 - knee), at_end)


@dataclass(frozen=True, slots=True)
class FixedPaths:
    """What a group fixes of one order's paths (at the order's largest bandwidth share).

    Attributes:
        drain: The drains' busy cycles on FIX (with FixPipe) or V (the L0C->UB legs).
        c_out: The UB->GM legs on MTE3 without FixPipe (0.0 with it).
        dr_last: The last block's drain, both legs.
        bias_mte2: The bias slices on MTE2 (one per block before its copies).
        fixed_busy: The largest of the M, MTE1 (and FIX) busy totals.
        fixed_sum: Their sum.
        makespan: The makespan at least from the compute chain, the first block and the one-L0C
            drains (0.0 without :data:`USE_CHAIN_BOUND`).
        drain_ex: Per L0 class, the one-L0C drain stalls over the block boundaries.
        dr_block: The full block's L0C->UB leg (0.0 with FixPipe): what a block's staged copies
            queue behind.
        startup: The scalar start-up every path follows (0.0 where the preset overlaps it):
            added to the makespan where the paths are combined, not to ``makespan`` itself.
    """

    drain: Any
    c_out: Any
    dr_last: Any
    bias_mte2: Any
    fixed_busy: Any
    fixed_sum: Any
    makespan: Any
    drain_ex: list[Any]
    dr_block: Any
    #: The scalar start-up every path of the estimate follows (0.0 where the preset overlaps
    #: it; :func:`simcore.pipeline.scalar.startup_cycles`): the makespan's share no tiling moves.
    startup: float = 0.0


def fixed_paths(space: Any, c: Costs, g: dict[str, Any], terms: Any, cap: Any) -> FixedPaths:
    """The busy totals and paths of a group that no inner field moves, at the share ``cap``.

    The cube, MTE1 and drain totals are :mod:`simcore.pipeline.busy`'s (the drains priced with
    the largest bandwidth share of the order, ``cap``: a drain's cost is non-increasing in it).
    The makespan is at least the compute chain of the cheapest L0 class
    (:func:`chain_classes`) plus the last drain, and at least the first-block path (the first
    copies' latency, the averaged step :func:`average_step`, every drain). With one L0C buffer
    (dbL0C = 1: pinned, or two blocks do not fit, ``dbC_max``) each block's first MMAD waits for
    the previous block's drain out of L0C: the estimator's ``bound_ex``
    (:func:`simcore.estimate.stalls.chunk_stalls`) adds at least ``ex_c = max(dr - normal, 0)``
    at each of the ``blocks - 1`` boundaries (``dr`` the full block's drain leg out of L0C,
    ``normal`` the boundary period's loads, per L0 class), beside the span of every step's
    period. (Every MMAD and drain leg in series would overshoot it: the span's K-tail steps
    carry the K-tail loads, shorter than ``normal``.)

    Args:
        space: The :class:`tiler.space.Space` (its pins).
        c: The costs on the path priced.
        g: The groups' fields.
        terms: The order-free terms (:class:`tiler.bounds.group.GroupTerms`).
        cap: The order's largest bandwidth share (bytes per cycle).
    """
    problem, p = space.problem, space.preset
    rows, cols = g["core_rows"], g["core_cols"]
    bm, bn = g["baseM"], g["baseN"]
    m_iter, n_iter = g["m_iter"], g["n_iter"]
    drain_fix, drain_v, c_out, dr_last = drain_busy(c, rows, cols, bm, bn, cap)
    drain = drain_fix if p.has_fixpipe else drain_v
    bias_mte2: Any = 0.0
    if problem.bias:
        # The estimator fetches one bias slice per block before its copies (exact).
        bias_mte2 = m_iter * n_iter * p.gm_to_l1_latency_cycles + m_iter * cols * (
            c.bias_bytes / np.minimum(p.gm_to_l1_peak_bytes_per_cycle, cap)
        )
    fixed = [terms.cube, terms.mte1, drain] if p.has_fixpipe else [terms.cube, terms.mte1]
    fixed.append(least_scalar(space, c, g))
    fixed_busy = np.maximum.reduce([np.broadcast_to(x, rows.shape) for x in fixed])
    fixed_sum = sum(fixed)
    classes = terms.chain_classes
    # Without FixPipe a block's staged copies queue behind the previous block's drain legs
    # (tiler.bounds.stalls.pass_start_stalls): the full block's L0C->UB leg.
    dr_block = (
        0.0 if p.has_fixpipe else c.c_to_ub_cycles(np.minimum(bm, rows), np.minimum(bn, cols))
    )
    makespan: Any = 0.0
    drain_ex: list[Any] = [0.0 for _ in classes]
    if USE_CHAIN_BOUND:
        chain = np.minimum.reduce([np.broadcast_to(x[0], rows.shape) for x in classes]) + dr_last
        # The first-block path: the first block's copies and step, then every drain.
        first_copies = copies.first_copy_latency(c, True) + copies.first_copy_latency(c, False)
        if problem.bias:
            first_copies += p.gm_to_l1_latency_cycles
        # (With UnitFlag the first block's drain may start with its last MMAD: the step's
        # MMAD is not on that path, and the step is left out of it.)
        step_first = 0.0 if c.unit_flag_overlap else terms.step_avg
        first_path = first_copies + step_first + drain + (0.0 if p.has_fixpipe else c_out)
        makespan = np.maximum(chain, first_path)
        c_pin = space.fixed.get("dbL0C")
        one_c: Any = c_pin == 1
        if c_pin is None and "dbC_max" in g:
            one_c = g["dbC_max"] < 2
        if problem.unit_flag:
            # UnitFlag hands L0C off as two buffers do (simcore.pipeline.drain.unit_flag_db_l0c).
            one_c = False
        dr_full = (
            c.fix_cycles(np.minimum(bm, rows), np.minimum(bn, cols), cap)
            if p.has_fixpipe
            else dr_block
        )
        drain_ex = [
            np.where(one_c, (m_iter * n_iter - 1) * np.maximum(dr_full - cl[3], 0.0), 0.0)
            for cl in classes
        ]
        drain_chain = np.minimum.reduce(
            [cl[0] + ex for cl, ex in zip(classes, drain_ex, strict=True)]
        )
        makespan = np.maximum(makespan, drain_chain + dr_last)
    return FixedPaths(
        drain=drain, c_out=c_out, dr_last=dr_last, bias_mte2=bias_mte2, fixed_busy=fixed_busy,
        fixed_sum=fixed_sum, makespan=makespan, drain_ex=drain_ex, dr_block=dr_block,
        startup=startup_cycles(space.preset, space.problem),
    )  # fmt: skip
