"""The pair tier: a group bound that couples A and B through their options' least copies.

On UB-path chips the group bound (:mod:`tiler.bounds`) prices each operand's copies from
per-pass floors and splits of L1; on 910A it stays well below the groups' best points (int8
333 x 12345 x 777: 0.93 x the runner-up at the median of the groups the enumeration scores),
while the pair floor of each (A option, B option) pair
(:func:`simcore.estimate.bounds.ub_pair_floor_us`) rules most of them out. That floor is
non-decreasing in each operand's own copy cycles (MTE2 ``g``, reorder ``v``, UB->L1 ``u``), so
it is at least its value at each operand's least ``g``, ``v`` and ``u`` over the options that
can be on the data path, taken apart (:func:`simcore.estimate.bounds.ub_pair_floor_from_copies`).

The data path couples the operands exactly: a tiling takes the vector path where shareUbSize and
twice each of the A, B, C and bias UB tiles fit UB (:func:`simcore.ub.sizes.trans_length_array`),
each tile non-decreasing in the steps; so a pair is on the vector path exactly where the group
fits with every step at 1 (``V``) and both operands' own tiles fit, and on the column path
otherwise. Per (group, iterateOrder) cell the bound is the least of

* the vector path at the least copies of the options whose tile fits (where ``V``);
* the column path at the least copies of every option (where not ``V``), or else the lesser of
  (A's options whose tile does not fit, every B option) and (every A option, B's that do not).

An operand's options and copies depend on a few group fields only (its core extent and base
block, the other operand's block count, the core count through the bandwidth cap, and the L1
units its options may use, :meth:`tiler.space.Space._operand`), so their least copies are
computed once per such key (:class:`PairTier`) and shared by the groups with that key (about
3.7 groups a key among those the enumeration scores on 910A). The L1 room the two operands
share is left out (it only removes pairs), as are the L0 flags (no copy depends on them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from simcore.estimate.bounds import (
    PathWork,
    split_bandwidth_cap,
    ub_operand_copies,
    ub_pair_floor_from_copies,
    ub_path_work,
)
from simcore.hardware.dtypes import l1_bytes as l1_block_bytes
from simcore.pipeline.costs import ceil_div, vector_path_array
from simcore.pipeline.traffic import largest_core_extent
from tiler.levels import FLOOR_RTOL
from tiler.space import GROUP_FIELDS, Space, _Operand

__all__ = ["PairTier"]

FloatArray = npt.NDArray[np.float64]

#: Least copies of a key: [order, variant, (g, v, u)], the variants the vector path over the
#: options whose tile fits, the column path over every option, and over those whose tile does
#: not fit (inf where there is none).
_VEC, _COL_ALL, _COL_FAIL = 0, 1, 2

#: :meth:`PairTier.refine`: every STRIDE-th group of a window first, the rest where at least
#: MIN_SHARE of those were ruled out (310P3 int8 8192 x 5120 x 5120: none of 1,615 groups, at
#: 403k option rows; 910A int8 1000^3: 65 % of 27,889; fp16 1 x 4096 x 14336: 20-26 %).
STRIDE = 8
MIN_SHARE = 0.1


@dataclass
class PairTier:
    """The pair tier of groups (module doc), with each operand key's least copies kept.

    Attributes:
        least: Per operand (0: A, 1: B), key -> least copies (``[order, variant, 3]``).
        rows: Operand options (times iterate orders) priced so far.
        priced: Groups bounded so far by :meth:`refine`.
        ruled_out: Those of them the tier put at or above the runner-up.
    """

    least: tuple[dict[tuple[int, ...], FloatArray], dict[tuple[int, ...], FloatArray]] = field(
        default_factory=lambda: ({}, {})
    )
    rows: int = 0
    priced: int = 0
    ruled_out: int = 0

    def refine(self, space: Space, lb: FloatArray, idx: Any, threshold: float) -> int:
        """Raises ``lb`` of the groups ``idx`` (a window) to the tier, where it pays (in place).

        Every :data:`STRIDE`-th group is priced first and the rest only where at least
        :data:`MIN_SHARE` of those were put at or above ``threshold``: how much the tier rules
        out moves as the runner-up tightens (910A int8 333 x 12345 x 777: none of the first
        window's groups, half of the later ones).

        Returns:
            The option rows priced (for the budget).
        """
        before = self.rows
        sample = np.zeros(idx.shape[0], dtype=bool)
        sample[::STRIDE] = True
        if self._raise(space, lb, idx[sample], threshold) >= MIN_SHARE:
            self._raise(space, lb, idx[~sample], threshold)
        return self.rows - before

    def _raise(self, space: Space, lb: FloatArray, idx: Any, threshold: float) -> float:
        """Raises ``lb`` of ``idx`` to the tier; the share of them it rules out (0: none)."""
        if not idx.shape[0]:
            return 0.0
        bound = self.bounds(space, idx)
        lb[idx] = np.maximum(lb[idx], bound)
        ruled_out = int((bound >= threshold).sum())
        self.priced += int(idx.shape[0])
        self.ruled_out += ruled_out
        return ruled_out / int(idx.shape[0])

    def bounds(self, space: Space, groups: npt.NDArray[np.int64]) -> FloatArray:
        """A lower bound (us) of every point's estimate in each of ``groups`` (UB-path chips).

        Returns inf for a group with no option of an operand (it has no point), and 0 on chips
        without a UB path (no bound).
        """
        problem, preset = space.problem, space.preset
        g = {name: space.groups[name][groups] for name in GROUP_FIELDS}
        extra = {name: space.groups[name][groups] for name in ("m_iter", "n_iter", "k_iter")}
        extra["bias_l1"] = space.groups["bias_l1"][groups]
        n = groups.shape[0]
        if n == 0:
            return np.zeros(0)
        one = np.ones(n, dtype=np.int64)
        at_one = {**g, "stepM": one, "stepN": one, "stepKa": one, "stepKb": one}
        fits_at_one = vector_path_array(problem, at_one, preset)
        if fits_at_one is None:
            return np.zeros(n)
        orders = _orders(space)
        keys = (_keys(space, {**g, **extra}, True), _keys(space, {**g, **extra}, False))
        for which in (0, 1):
            self._fill(space, groups, keys[which], which == 0, orders)
        least = [
            np.stack([self.least[w][k] for k in keys[w]]) for w in (0, 1)
        ]  # [group, order, variant, 3]
        best = np.full(n, np.inf)
        # (What the groups fix, per data path: the same for every order and every variant.)
        work = {v: ub_path_work(problem, preset, g, v) for v in (True, False)}
        for j in range(orders.shape[0]):
            la, lb = least[0][:, j], least[1][:, j]
            vec = _at(preset, work[True], la[:, _VEC], lb[:, _VEC], fits_at_one)
            col_all = _at(preset, work[False], la[:, _COL_ALL], lb[:, _COL_ALL], ~fits_at_one)
            col_a = _at(preset, work[False], la[:, _COL_FAIL], lb[:, _COL_ALL], fits_at_one)
            col_b = _at(preset, work[False], la[:, _COL_ALL], lb[:, _COL_FAIL], fits_at_one)
            value = np.where(fits_at_one, np.minimum(vec, np.minimum(col_a, col_b)), col_all)
            best = np.minimum(best, value)
        out: FloatArray = best * (1.0 - FLOOR_RTOL)
        return out

    def _fill(
        self,
        space: Space,
        groups: npt.NDArray[np.int64],
        keys: list[tuple[int, ...]],
        is_a: bool,
        orders: npt.NDArray[np.int64],
    ) -> None:
        """Prices the options of the keys not seen yet (one group of each stands for it)."""
        known = self.least[0 if is_a else 1]
        reps: dict[tuple[int, ...], int] = {}
        for key, gi in zip(keys, groups.tolist(), strict=True):
            if key not in known and key not in reps:
                reps[key] = gi
        if not reps:
            return
        names = ("stepM", "stepKa", "depthA1") if is_a else ("stepN", "stepKb", "depthB1")
        own = [_operand_of(space, gi, is_a) for gi in reps.values()]
        count = np.array([x.step.shape[0] for x in own], dtype=np.int64)
        rep_rows = np.repeat(np.array(list(reps.values()), dtype=np.int64), count)
        fields = {name: space.groups[name][rep_rows] for name in GROUP_FIELDS}
        step = np.concatenate([x.step for x in own])
        step_k = np.concatenate([x.step_k for x in own])
        depth = step * step_k * np.concatenate([x.db for x in own])
        fields.update(zip(names, (step, step_k, depth), strict=True))
        owner = np.repeat(np.arange(count.shape[0]), count)
        n_keys = count.shape[0]
        out = np.full((n_keys, 2, 3, 3), np.inf)
        for j, order in enumerate(orders.tolist()):
            rows = {**fields, "iterateOrder": np.full(owner.shape[0], order, dtype=np.int64)}
            copies = ub_operand_copies(space.problem, space.preset, rows, is_a)
            assert copies is not None  # (a UB-path chip: the caller checked)
            self.rows += owner.shape[0]
            for variant, on_vector, pick in (
                (_VEC, True, True),
                (_COL_ALL, False, None),
                (_COL_FAIL, False, False),
            ):
                g, v, u, _ = copies[on_vector]
                fits = copies[True][3]
                sel = np.ones(owner.shape[0], dtype=bool) if pick is None else fits == pick
                for c, x in enumerate((g, v, u)):
                    np.minimum.at(out[:, j, variant, c], owner[sel], x[sel])
        for i, key in enumerate(reps):
            known[key] = out[i]


def _operand_of(space: Space, gi: int, is_a: bool) -> _Operand:
    """Group ``gi``'s options of one operand, as :meth:`tiler.space.Space._group_operands`."""
    gr = space.groups
    a_blk = int(l1_block_bytes(space.problem.dtype, int(gr["baseM"][gi] * gr["baseK"][gi])))
    b_blk = int(l1_block_bytes(space.problem.dtype, int(gr["baseN"][gi] * gr["baseK"][gi])))
    room = space.preset.l1_bytes - int(gr["bias_l1"][gi])
    k_iter = int(gr["k_iter"][gi])
    if is_a:
        names = ("stepM", "stepKa", "depthA1")
        return space._operand(int(gr["m_iter"][gi]), k_iter, a_blk, room - b_blk, names)
    names = ("stepN", "stepKb", "depthB1")
    return space._operand(int(gr["n_iter"][gi]), k_iter, b_blk, room - a_blk, names)


def _orders(space: Space) -> npt.NDArray[np.int64]:
    """The iterate orders a point can take (the pinned one, or both)."""
    if "iterateOrder" in space.fixed:
        return np.array([space.fixed["iterateOrder"]], dtype=np.int64)
    return np.array([0, 1], dtype=np.int64)


def _keys(space: Space, g: dict[str, Any], is_a: bool) -> list[tuple[int, ...]]:
    """Per group, what fixes one operand's options and their copies (module doc).

    The options (:meth:`tiler.space.Space._operand`): the operand's block count, K blocks, block
    bytes and the L1 units it may use; the copies (:func:`simcore.estimate.bounds.
    _own_copies`): the largest core's extent, the base block, the other operand's block count
    there and the core count (the bandwidth cap).
    """
    problem = space.problem
    sm = largest_core_extent(problem.m, g["singleCoreM"])
    sn = largest_core_extent(problem.n, g["singleCoreN"])
    # (The copies read the core count through the bandwidth cap only: on 910A every split
    # gets the core's port, so keyed by the cap, groups of other core counts share a key.)
    cap = split_bandwidth_cap(problem, space.preset, g["singleCoreM"], g["singleCoreN"])
    a_blk = l1_block_bytes(problem.dtype, g["baseM"] * g["baseK"])
    b_blk = l1_block_bytes(problem.dtype, g["baseN"] * g["baseK"])
    room = space.preset.l1_bytes - g["bias_l1"]
    if is_a:
        own = (g["m_iter"], sm, g["baseM"], (room - b_blk) // np.maximum(a_blk, 1))
        other = ceil_div(sn, g["baseN"])
    else:
        own = (g["n_iter"], sn, g["baseN"], (room - a_blk) // np.maximum(b_blk, 1))
        other = ceil_div(sm, g["baseM"])
    cols = (*own, g["baseK"], g["k_iter"], other)
    ints = np.stack(cols, axis=1).tolist()
    return [
        (*row, c) for row, c in zip(ints, np.broadcast_to(cap, other.shape).tolist(), strict=True)
    ]


def _at(
    preset: Any, work: PathWork, la: FloatArray, lb: FloatArray, where: npt.NDArray[np.bool_]
) -> FloatArray:
    """The pair figure at least copies ``la`` (A) and ``lb`` (B) per group, at ``where``.

    inf where an operand has no option (inf copies) or off ``where``.
    """
    ok = where & np.isfinite(la[:, 0]) & np.isfinite(lb[:, 0])
    out = np.full(la.shape[0], np.inf)
    if not ok.any():
        return out
    at = np.flatnonzero(ok)
    own_a = tuple(la[at, c] for c in range(3))
    own_b = tuple(lb[at, c] for c in range(3))
    out[at] = ub_pair_floor_from_copies(preset, work, at, (own_a, own_b))
    return out
