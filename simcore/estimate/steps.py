"""The K-step chain of one block: its steady period, the reads' leads, restarts after a copy.

A block runs ``k_iter`` steps; each step loads A (L1->L0A) then B (L1->L0B) on MTE1 and runs one
MMAD on the cube. The L0 double-buffer flags decide what overlaps: :func:`period` (the steady
MMAD-start to MMAD-start time), :func:`step_chain` (with the leads of the reads ahead of their
MMAD) and :func:`restart_reads` (the chain from a chunk's arrival, MTE1 and the cube idle).
:func:`typical_steps` and :func:`average_steps` give the step times the terms use: those of the
typical (full) block for per-event stalls, those of the block averaged over the core's blocks for
the paths that repeat per block.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from simcore.estimate.arrays import NEVER as _NEVER
from simcore.estimate.arrays import cdiv as _cdiv
from simcore.estimate.arrays import gather
from simcore.estimate.arrays import sub as _sub
from simcore.estimate.grid import BlockTypes, Grid
from simcore.hardware.dtypes import FRACTAL_ROWS
from simcore.pipeline.costs import Costs
from simcore.pipeline.mmad import mmad_cycles
from simcore.pipeline.transfer import l1_to_l0_cycles


def step_chain(la: Any, lb: Any, mm: Any, wa: Any, wb: Any) -> tuple[Any, Any, Any]:
    """Steady K-step period and the leads of the A / B reads ahead of their MMAD.

    ``wa`` / ``wb`` are the float weights of :func:`period`: (dbL0A == 1) and (dbL0A == 1 or
    dbL0B == 1). With both L0 buffers doubled the loads of the next step overlap the MMAD,
    ``max(mm, la + lb)``; a single L0A slot chains every step ``la + lb + mm``; a single L0B slot
    ``max(mm, la) + lb``. The leads (MMAD start minus the end of the step's A / B read, in steady
    state) set how much of a stalled chunk copy the chain absorbs.
    """
    # The three cases as one expression, without selecting between full arrays (an np.where
    # costs ~7 additions' worth of instructions): ``max(wa*la + wb*lb + mm, la + lb)`` is
    # ``la + lb + mm`` with one L0A slot (mm >= 0), ``max(mm + lb, la + lb)`` = ``max(mm, la) + lb``
    # with one L0B slot (rounding is monotone), ``max(mm, la + lb)`` otherwise, bit for bit.
    # (The products are exact: the weights are 0 or 1 and every term finite and >= 0.)
    per = np.maximum((wa * la + wb * lb) + mm, la + lb)
    ahead_b = per - la
    lead_a = ahead_b * (1.0 - wa) + lb * wa
    lead_b = (ahead_b - lb) * (1.0 - wb)
    return per, lead_a, lead_b


def restart_reads(
    la: Any, lb: Any, mm: Any, per: Any, wa: Any, wb: Any, cuts: RampCuts | None = None
) -> tuple[Any, Any, Any]:
    """Arrival-to-last-read time of a chunk spanning ``r`` steps, for A and for B.

    The step chain restarts when the chunk arrives (MTE1 and the cube idle, the L0 slots free):
    the first three steps are played exactly (dbL0A / dbL0B = 1 make a read wait for the MMAD
    before), later steps follow at the steady period ``per``. For B the step's A read is taken as
    done before the arrival. ``wa`` / ``wb`` are the float weights of :func:`period`.

    ``cuts`` (:class:`RampCuts`) shares the functions' cut-offs with others of the block.

    Returns:
        Three functions ``r -> cycles`` over integer arrays ``r >= 1``: A from its arrival, B
        from its arrival, and A's last read from the arrival of a B chunk that starts with it.
    """
    # The waits as masked sums instead of np.where (~7 additions' worth of instructions each),
    # equal bit for bit: every time is finite and >= 0, the weights 0 or 1. With one L0A slot a
    # step's A read waits for the MMAD before it: the previous B read's end plus wa x mm is that
    # MMAD's end (it started at that read's end), or the read's end itself. With one L0B slot B's
    # read waits for the MMAD before it, ``max(ea, wb x me)``; with one L0A slot (wb is 1 there
    # too) the A read before it already followed that MMAD, so the max changes nothing.
    wm = wa * mm

    def chain(eb0: Any) -> tuple[Any, Any, Any, Any, Any]:
        # From the end of the first B read (the reads of a step: A then B).
        me0 = eb0 + mm
        ea1 = (eb0 + wm) + la
        eb1 = np.maximum(ea1, wb * me0) + lb
        ms1 = np.maximum(eb1, me0)  # the second MMAD's start
        ea2 = (ms1 + wm) + la
        return ea1, eb1, ea2, ms1, me0

    a_1, _, a2, _, _ = chain(la + lb)
    ab1, b_1, ab2, ms1, _ = chain(lb)
    b2 = np.maximum(ab2, wb * (ms1 + mm)) + lb
    per3 = 3.0 * per
    pick = _linear_after

    # A one-step A chunk's only read precedes the step's B read: it never waits for B.
    # (The A chunk's first read ends at la, the B chunk's at lb.)
    never = np.full(np.shape(per), _NEVER)
    return (
        pick(la, a_1, a2 - per3, per, cuts),
        pick(lb, b_1, b2 - per3, per, cuts),
        pick(never, ab1, ab2 - per3, per, cuts),
    )


def restart_releases(
    la: Any, lb: Any, mm: Any, per: Any, wa: Any, wb: Any, cuts: RampCuts | None = None
) -> tuple[Any, Any]:
    """Arrival-to-release time of a chunk spanning ``r`` steps, for A and for B.

    A chunk's L1 slot is released when the MMAD of its last step starts
    (:func:`simcore.pipeline.precedence.l1_slot_release`), not when that step's read ends: the
    MMAD waits for the step's B read (after its A read on MTE1) and for the MMAD before it. As
    :func:`restart_reads`, from the chunk's arrival with MTE1 and the cube idle (the first step's
    MMAD starts when its B read ends: ``la + lb`` after A's arrival, ``lb`` after B's, where
    the step's A read is taken as done), the first three MMAD starts played exactly, later ones
    at the steady period ``per``. A and B chunks of one step share the MMAD, so a B chunk's
    release is also A's from that B chunk's arrival.

    ``cuts`` as :func:`restart_reads`'.

    Returns:
        Two functions ``r -> cycles`` over integer arrays ``r >= 1`` (with ``.sub(idx)`` as
        :func:`restart_reads`'): A's release from its arrival, B's from its arrival.
    """
    wm = wa * mm

    def starts(ms0: Any) -> tuple[Any, Any]:
        # From the first MMAD's start (its step's B read's end): the second and third MMADs'.
        # Each step reads A (after the MMAD before with one L0A buffer), then B (after the
        # MMAD before with one L0B buffer), and its MMAD follows B's read and the MMAD before.
        me0 = ms0 + mm
        ms1 = np.maximum(np.maximum((ms0 + wm) + la, wb * me0) + lb, me0)
        me1 = ms1 + mm
        return ms1, np.maximum(np.maximum((ms1 + wm) + la, wb * me1) + lb, me1)

    ra1 = la + lb
    a_1, a_2 = starts(ra1)
    b_1, b_2 = starts(lb)
    per3 = 3.0 * per
    return (
        _linear_after(ra1, a_1, a_2 - per3, per, cuts),
        _linear_after(lb, b_1, b_2 - per3, per, cuts),
    )


#: The ramp of :func:`_linear_after`'s cut-offs.
_RAMP = 2.0**110


class RampCuts:
    """What the restart functions of one block share: cut-offs, products, gathered subsets.

    The functions of one block (``ra``, ``rb``, ``rab``, ``qa``, ``qb``) are often called with
    the same array (``stepKa``, the last chunks' steps, ...): its two cuts and its product with
    the step period (which they all take), four array operations, are made once. Their
    ``.sub(idx)`` functions on one subset share it likewise, and gather each array they have
    in common (the period, a first read) once. An entry holds a weak reference to its argument,
    so an argument freed since (whose ``id`` a new array may take) is never matched; the
    arguments are never written in place.
    """

    __slots__ = ("_gathered", "_idx", "_recent", "_subs")

    def __init__(self, idx: np.ndarray | None = None) -> None:
        self._recent: list[tuple[Any, Any, Any, Any, Any]] = []
        self._subs: list[tuple[Any, RampCuts]] = []
        self._gathered: dict[int, tuple[Any, Any]] = {}
        self._idx = idx

    def of(self, r: Any, pp: Any) -> tuple[Any, Any, Any]:
        """The cuts below r = 2 and r = 3 (``r x ramp - 1.5 / 2.5 ramp``) and ``r x pp``."""
        for ref, pp_e, cut_2, cut_3, r_pp in self._recent:
            if pp_e is pp and ref() is r:
                return cut_2, cut_3, r_pp
        rr = r * _RAMP
        cut_2, cut_3, r_pp = rr - 1.5 * _RAMP, rr - 2.5 * _RAMP, r * pp
        if isinstance(r, np.ndarray):
            # (The last four: the repeats come close together.)
            self._recent.append((weakref.ref(r), pp, cut_2, cut_3, r_pp))
            del self._recent[:-4]
        return cut_2, cut_3, r_pp

    def sub(self, idx: np.ndarray) -> RampCuts:
        """The shared values of the functions' ``.sub(idx)`` (one per subset: the last two)."""
        for ref, child in self._subs:
            if ref() is idx:
                return child
        child = RampCuts(idx)
        self._subs.append((weakref.ref(idx), child))
        del self._subs[:-2]
        return child

    def take(self, x: Any) -> Any:
        """``x`` at this subset's candidates (gathered once per array)."""
        assert self._idx is not None
        hit = self._gathered.get(id(x))
        if hit is not None and hit[0] is x:
            return hit[1]
        out = _sub(x, self._idx)
        self._gathered[id(x)] = (x, out)  # (``x`` held: its id stays its own)
        return out


def _linear_after(t0: Any, t1: Any, c2: Any, pp: Any, cuts: RampCuts | None = None) -> Any:
    """``r -> t0`` at r <= 1, ``t1`` at r = 2, ``c2 + r x pp`` from r = 3, with ``.sub(idx)``.

    (``t2 + (r - 3) x per`` as ``c2 + r x per``, ``c2 = t2 - 3 x per``: one operation less per
    call.) ``cuts`` shares the cut-offs with the other functions of the block.
    """
    # (The cut-offs: ``r * ramp`` shifted, integer multiples of 2**109, exact in float64; a
    # kept term's cut is far above any cycle count, a dropped one's below _NEVER.)
    own = cuts if cuts is not None else RampCuts()

    def times(r: Any) -> Any:
        if isinstance(r, int):
            return t0 if r <= 1 else t1 if r == 2 else c2 + r * pp
        # t0 for r <= 1, t1 for r = 2, the linear part from r = 3 on. The times grow with r
        # (t0 <= t1 <= the linear part at r >= 3: each step adds a read), so that is the
        # largest of t0, of t1 cut off below r = 2 and of the linear part cut off below r = 3,
        # the cuts by a ramp (exact: integer multiples of 2**109): four min / max instead of
        # two np.where and their two comparisons, about half the instructions.
        cut_2, cut_3, r_pp = own.of(r, pp)
        return np.maximum(np.maximum(t0, np.minimum(t1, cut_2)), np.minimum(c2 + r_pp, cut_3))

    def sub(idx: np.ndarray) -> Any:
        # The same function on the candidates ``idx`` only.
        child = own.sub(idx)
        return _linear_after(child.take(t0), child.take(t1), child.take(c2), child.take(pp), child)

    times.sub = sub  # type: ignore[attr-defined]
    return times


def period(la: Any, lb: Any, mm: Any, wa: Any, wb: Any) -> Any:
    """The steady K-step period of :func:`step_chain` in one fused expression.

    ``max(mm + wa*la + wb*lb, la + lb)`` with ``wa`` = (dbL0A == 1) and ``wb`` = (dbL0A == 1 or
    dbL0B == 1) gives the three cases without selecting between three full arrays.
    """
    return np.maximum(mm + wa * la + wb * lb, la + lb)


@dataclass(frozen=True, slots=True)
class TypicalSteps:
    """The step times of the typical (full) block: they drive the per-event stalls.

    Attributes:
        fr_1: Fractal rows of the typical block (``min(baseM, rows)``: the tail when the core
            has one row block).
        la: A full step's A load (MTE1); ``lb`` its B load; ``mm`` its MMAD.
        lb: See ``la``.
        mm: See ``la``.
        per: The steady step period (:func:`step_chain`).
        lead_a: How far A's read of a step ends before its MMAD starts (steady state);
            ``lead_b`` the same for B.
        lead_b: See ``lead_a``.
        mm_kt: The K-tail step's MMAD.
        la_kt: The K-tail step's A load; ``lb_kt`` its B load.
        lb_kt: See ``la_kt``.
        per_kt: The period from the last full step's MMAD start to the K-tail step's.
        per_bd: The period across a block boundary: the K-tail MMAD with the next first loads.
        normal: ``per_bd - mm_kt``: the part of a block's first step period its MMAD chain does
            not wait for.
        dr: The typical block's drain: FixPipe, or without FixPipe its L0C->UB leg (V).
        m3c: Its UB->GM leg (MTE3) without FixPipe, else 0.0.
    """

    fr_1: Any
    la: Any
    lb: Any
    mm: Any
    per: Any
    lead_a: Any
    lead_b: Any
    mm_kt: Any
    la_kt: Any
    lb_kt: Any
    per_kt: Any
    per_bd: Any
    normal: Any
    dr: Any
    m3c: Any


def typical_steps(c: Costs, g: Grid, cap: Any, bt: BlockTypes) -> TypicalSteps:
    """The typical block's loads, MMAD, step period, leads and drain legs.

    The typical block is ``min(baseM, rows) x min(baseN, cols)``: the full block type, or the
    tail row (column) type where the core has one row (column) of blocks, its rows ``rows``.
    Without FixPipe its drain legs are that type's in ``bt`` (:func:`block_types`), the same
    values as pricing them again.
    """
    p = c.preset
    rows_1, cols_1 = np.minimum(g.bm, g.rows), np.minimum(g.bn, g.cols)
    fr_1 = _cdiv(rows_1, FRACTAL_ROWS)
    fc_1 = _cdiv(cols_1, FRACTAL_ROWS)
    la = l1_to_l0_cycles(p, True, (fr_1 * FRACTAL_ROWS), g.ka_f)
    lb = l1_to_l0_cycles(p, False, (fc_1 * FRACTAL_ROWS), g.ka_f)
    mm = mmad_cycles(p.mmad_overhead_cycles, c.fractal_cycles, fr_1, fc_1, g.fk_f)
    per, lead_a, lead_b = step_chain(la, lb, mm, g.wa, g.wb)
    # Across a block boundary the period pairs the last (K-tail) MMAD with the next first loads.
    mm_kt = mmad_cycles(p.mmad_overhead_cycles, c.fractal_cycles, fr_1, fc_1, g.fk_t)
    per_bd = period(la, lb, mm_kt, g.wa, g.wb)
    la_kt = l1_to_l0_cycles(p, True, (fr_1 * FRACTAL_ROWS), g.ka_t)
    lb_kt = l1_to_l0_cycles(p, False, (fc_1 * FRACTAL_ROWS), g.ka_t)
    if c.has_fixpipe:
        dr = c.fix_cycles(rows_1, cols_1, cap)
        m3c: Any = 0.0
    else:
        tails = _tail_types(g.rows < g.bm, g.cols < g.bn)
        dr = _typical_type(bt.types, 1, tails)
        m3c = _typical_type(bt.types, 2, tails)
    return TypicalSteps(
        fr_1=fr_1, la=la, lb=lb, mm=mm, per=per, lead_a=lead_a, lead_b=lead_b, mm_kt=mm_kt,
        la_kt=la_kt, lb_kt=lb_kt, per_kt=period(la_kt, lb_kt, mm, g.wa, g.wb), per_bd=per_bd,
        normal=per_bd - mm_kt, dr=dr, m3c=m3c,
    )  # fmt: skip


def _tail_types(tail_r: Any, tail_c: Any) -> list[tuple[tuple[int, int], Any]]:
    # The candidates whose typical block is a tail type (a core of one row or column of blocks:
    # few), by type; the rest take the full type.
    return [
        (ij, np.flatnonzero(mask))
        for ij, mask in (
            ((0, 1), tail_c & ~tail_r),
            ((1, 0), tail_r & ~tail_c),
            ((1, 1), tail_r & tail_c),
        )
    ]


def _typical_type(
    types: dict[tuple[int, int], tuple[Any, Any, Any]],
    at: int,
    tails: list[tuple[tuple[int, int], Any]],
) -> Any:
    # Item ``at`` of the typical block's type (:func:`_tail_types`). (Selects on the few tail
    # candidates: an ``np.where`` over all of them costs about seven multiplies.)
    full = types[(0, 0)][at]
    shape = np.broadcast_shapes(np.shape(full), *(np.shape(t[at]) for t in types.values()))
    out = np.array(np.broadcast_to(full, shape), dtype=np.float64)
    for ij, idx in tails:
        if idx.size:
            out[idx] = gather(np.broadcast_to(types[ij][at], shape), idx)
    return out


@dataclass(frozen=True, slots=True)
class AverageSteps:
    """The step times of the block averaged over the core's blocks (full and tail rows, cols).

    The paths that repeat per block (slot cycles, staging cycles, the replay) use these.

    Attributes:
        fr_1: Fractal rows of the average block (fractional); ``fc_1`` its fractal columns.
        fc_1: See ``fr_1``.
        la: A full step's A load; ``lb`` its B load; ``mm`` its MMAD; ``per`` its period.
        lb: See ``la``.
        mm: See ``la``.
        per: See ``la``.
        la_kt: The K-tail step's A load; ``lb_kt`` its B load; ``per_kt`` a step period with
            those loads and a full MMAD.
        lb_kt: See ``la_kt``.
        per_kt: See ``la_kt``.
        kt_d: ``la_kt - la``.
        ra: A's last read of an ``r``-step chunk from its arrival (:func:`restart_reads`).
        rb: B's the same.
        rab: A's last read from the arrival of a B chunk that starts with it.
        rb_kb: ``rb(stepKb)``: B's last read of a full chunk from its arrival.
        qa: A's slot release of an ``r``-step chunk from its arrival (:func:`restart_releases`:
            its last step's MMAD start); ``qb`` B's, also A's from a B chunk starting with it.
        qb: See ``qa``.
        qb_kb: ``qb(stepKb)``: B's release of a full chunk from its arrival.
    """

    fr_1: Any
    fc_1: Any
    la: Any
    lb: Any
    mm: Any
    per: Any
    la_kt: Any
    lb_kt: Any
    per_kt: Any
    kt_d: Any
    ra: Any
    rb: Any
    rab: Any
    rb_kb: Any
    qa: Any
    qb: Any
    qb_kb: Any


def average_steps(c: Costs, g: Grid, step_kb: Any) -> AverageSteps:
    """The average block's loads, MMAD, periods and restart reads (``step_kb``: stepKb)."""
    p = c.preset
    fr_1 = ((g.m_iter - 1) * g.fr_f + g.fr_t) / g.m_iter
    fc_1 = ((g.n_iter - 1) * g.fc_f + g.fc_t) / g.n_iter
    rows_1 = fr_1 * FRACTAL_ROWS
    cols_1 = fc_1 * FRACTAL_ROWS
    la = l1_to_l0_cycles(p, True, rows_1, g.ka_f)
    lb = l1_to_l0_cycles(p, False, cols_1, g.ka_f)
    mm = mmad_cycles(p.mmad_overhead_cycles, c.fractal_cycles, fr_1, fc_1, g.fk_f)
    per = period(la, lb, mm, g.wa, g.wb)
    cuts = RampCuts()  # (shared by the five functions)
    ra, rb, rab = restart_reads(la, lb, mm, per, g.wa, g.wb, cuts)
    qa, qb = restart_releases(la, lb, mm, per, g.wa, g.wb, cuts)
    la_kt = l1_to_l0_cycles(p, True, rows_1, g.ka_t)
    lb_kt = l1_to_l0_cycles(p, False, cols_1, g.ka_t)
    return AverageSteps(
        fr_1=fr_1, fc_1=fc_1, la=la, lb=lb, mm=mm, per=per, la_kt=la_kt, lb_kt=lb_kt,
        per_kt=period(la_kt, lb_kt, mm, g.wa, g.wb), kt_d=la_kt - la, ra=ra, rb=rb, rab=rab,
        rb_kb=rb(step_kb), qa=qa, qb=qb, qb_kb=qb(step_kb),
    )  # fmt: skip
