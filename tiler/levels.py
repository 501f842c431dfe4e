"""The screening's second and third levels: operand options, their pairs and the L1 choices.

Inside a group its bound cannot rule out, :func:`tiler.screen.screen` bounds each *operand
option* (A: stepM, stepKa, depthA1; B: stepN, stepKb, depthB1; with the iterateOrder) over every
partner option and L0 flag (:func:`operand_floor_values`), forms only the pairs of options that
both leave below the runner-up, and on UB-path chips bounds each pair with both operands' copies
on the pipes they share (:func:`simcore.estimate.bounds.ub_pair_floor_us`), so only the L1
choices left get their own floor (:func:`simcore.estimate.estimator.makespan_floor_arrays`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from simcore.estimate.bounds import FixedWork, ub_operand_floor_arrays, ub_pair_floor_us
from simcore.estimate.estimator import operand_floor_arrays
from simcore.tiling.problem import Template
from tiler.bounds.dealt import dealt_rows
from tiler.space import GROUP_FIELDS, Space, _Operand, operand_fields

__all__ = [
    "FLOOR_RTOL",
    "DeadCells",
    "GroupOptions",
    "flag_sets",
    "operand_floor_values",
    "operand_floors",
    "operand_rows",
    "options",
    "surviving_choices",
    "table",
]

FloatArray = npt.NDArray[np.float64]

#: Relative margin of the floors from simcore.estimate.estimator (operand and L1-choice floors)
#: against floating-point rounding: they run the estimator's own formulas, so a floor that equals a
#: point's estimate in exact arithmetic can exceed it by an ulp (seen: 2e-16 relative on 310P3
#: 512x28672x8192 fp16). The tests check the floors with the same tolerance.
FLOOR_RTOL = 1e-12


def flag_sets(space: Space, groups: Any) -> Any:
    """Points per L1 choice of each group: its allowed (dbL0A, dbL0B, dbL0C) combinations.

    As in :meth:`tiler.space.Space.with_l0_flags`: each flag takes 1 or 2 up to its group's
    maximum, or its pin.
    """
    per_group = np.ones(np.shape(groups), dtype=np.int64)
    for name, top_name in (("dbL0A", "dbA_max"), ("dbL0B", "dbB_max"), ("dbL0C", "dbC_max")):
        most = space.groups[top_name][groups]
        if name in space.fixed:
            per_group *= space.fixed[name] <= most
        else:
            per_group *= most
    return per_group


@dataclass
class GroupOptions:
    """One group's operand options (from :meth:`tiler.space.Space._group_operands`)."""

    index: int
    scalars: dict[str, int]
    a: _Operand
    b: _Operand
    room: int
    orders: npt.NDArray[np.int64]


def options(space: Space, gi: int) -> GroupOptions:
    """The operand options of group ``gi`` (:meth:`tiler.space.Space._group_operands`)."""
    v, a, b, room = space._group_operands(gi)
    return GroupOptions(gi, v, a, b, room, _orders(space, v))


#: The iterate orders with every L0 flag set allowed, or none (:func:`_orders`), by pins.
_BOTH_ORDERS = np.array([0, 1], dtype=np.int64)


def _orders(space: Space, v: dict[str, int]) -> npt.NDArray[np.int64]:
    """The iterate orders of :meth:`tiler.space.Space._flags`'s combinations, without them.

    A combination takes each L0 flag in 1 or 2 up to the group's largest (or the pin): the
    orders are the allowed ones (both, or the pinned one) where every flag has a value, else none.
    """
    fixed = space.fixed
    for name, top_name in (("dbL0A", "dbA_max"), ("dbL0B", "dbB_max"), ("dbL0C", "dbC_max")):
        values = (fixed[name],) if name in fixed else (1, 2)
        if not any(x in (1, 2) and x <= v[top_name] for x in values):
            return _BOTH_ORDERS[:0]
    if "iterateOrder" in fixed:
        pinned: npt.NDArray[np.int64] = _BOTH_ORDERS[fixed["iterateOrder"] == _BOTH_ORDERS]
        return pinned
    return _BOTH_ORDERS


@dataclass
class _Table:
    """The options of one operand over a batch of groups, concatenated group after group."""

    step: npt.NDArray[np.int64]
    step_k: npt.NDArray[np.int64]
    db: npt.NDArray[np.int64]
    group: npt.NDArray[np.int64]
    offset: npt.NDArray[np.int64]  # each group's first row
    count: npt.NDArray[np.int64]  # each group's options
    l1_bytes: npt.NDArray[np.int64]  # each option's L1 buffer


def table(opts: list[GroupOptions], is_a: bool) -> _Table:
    """One operand's options of the groups ``opts``, concatenated group after group."""
    own = [o.a if is_a else o.b for o in opts]
    count = np.array([x.step.shape[0] for x in own], dtype=np.int64)
    offset = np.concatenate([[0], np.cumsum(count)[:-1]]).astype(np.int64)
    return _Table(
        np.concatenate([x.step for x in own]),
        np.concatenate([x.step_k for x in own]),
        np.concatenate([x.db for x in own]),
        np.repeat(np.array([o.index for o in opts], dtype=np.int64), count),
        offset,
        count,
        np.concatenate([x.l1_bytes for x in own]),
    )


def operand_rows(
    space: Space,
    opts: list[GroupOptions],
    orders: npt.NDArray[np.int64],
    own: _Table,
    is_a: bool,
) -> dict[str, npt.NDArray[np.int64]]:
    """One row per (iterateOrder, option of the operand), order after order.

    Each option is partnered with the other operand's first option of its group: any legal
    partner serves, the floors read one operand only.
    """
    other = [o.b if is_a else o.a for o in opts]
    o_step = np.repeat(np.array([x.step[0] for x in other], dtype=np.int64), own.count)
    o_k = np.repeat(np.array([x.step_k[0] for x in other], dtype=np.int64), own.count)
    o_db = np.repeat(np.array([x.db[0] for x in other], dtype=np.int64), own.count)
    block = {name: space.groups[name][own.group] for name in GROUP_FIELDS}
    mine = (own.step, own.step_k, own.step * own.step_k * own.db)
    theirs = (o_step, o_k, o_step * o_k * o_db)
    a, b = (mine, theirs) if is_a else (theirs, mine)
    block.update(zip(("stepM", "stepKa", "depthA1"), a, strict=True))
    block.update(zip(("stepN", "stepKb", "depthB1"), b, strict=True))
    n = own.step.shape[0]
    rows = {name: np.tile(arr, orders.shape[0]) for name, arr in block.items()}
    rows["iterateOrder"] = np.repeat(orders, n)
    return rows


def operand_floor_values(
    space: Space,
    rows: dict[str, npt.NDArray[np.int64]],
    is_a: bool | None = None,
    work: dict[bool, FixedWork] | None = None,
) -> Any:
    """(A floors, B floors) of operand rows, or None where no per-operand floor exists.

    ``is_a``: the rows are A's options (True) or B's (False), and only that operand's floors
    are needed (on UB-path chips only those are computed); None: both. ``work``: on UB-path
    chips, the work the groups fix, kept between the calls of one batch (its A rows and its B
    rows belong to the same groups: priced once, :class:`simcore.estimate.bounds.FixedWork`).
    """
    if not rows:
        return None
    res = operand_floor_arrays(space.problem, space.preset, rows)
    if res is not None and "usedCoreNum" in rows:
        # A dealt split's operand floors would price one tile at the one-tile traffic: none
        # (0; the group's bound, tiler.bounds.dealt, stands in), its L1 choices' floors
        # price its rounds (makespan_floor_arrays with usedCoreNum).
        dealt = dealt_rows(space, rows)
        if dealt.any():
            res = {key: np.where(dealt, 0.0, res[key]) for key in ("time_a_us", "time_b_us")}
    if res is None:
        operands = (True, False) if is_a is None else (is_a,)
        res = ub_operand_floor_arrays(
            space.problem, space.preset, rows, parts=True, operands=operands, work=work
        )
    return res


@dataclass
class DeadCells:
    """Per operand, (group, iterateOrder) cells its floors were computed on, and the dead ones.

    A cell is dead where none of the operand's options has a floor below the runner-up: no pair
    there needs the other operand's floors. The operand whose floors rule out more cells, per
    row of the other saved, is computed first (:func:`operand_floors`); the rates are counted as
    the screening goes (a cell of the operand computed second only where the first left it open).
    """

    seen: list[int] = field(default_factory=lambda: [0, 0])
    dead: list[int] = field(default_factory=lambda: [0, 0])

    def a_first(self, rows_a: int, rows_b: int) -> bool:
        """Whether A's floors go first: the larger expected count of the other's rows saved."""
        rate = [(self.dead[i] + 1.0) / (self.seen[i] + 2.0) for i in (0, 1)]
        return rate[0] * rows_b >= rate[1] * rows_a


def operand_floors(
    space: Space,
    opts: list[GroupOptions],
    orders: npt.NDArray[np.int64],
    tables: tuple[_Table, _Table],
    bound: float,
    lb: FloatArray,
    cells: DeadCells,
) -> tuple[Any, Any, Any, int] | None:
    """The A and B floors of the batch's options (:func:`operand_rows`'s rows), one operand first.

    The second operand's floors are computed only in the (group, iterateOrder) cells where some
    option of the first is below ``bound`` (with its group bound): elsewhere no pair of the cell
    can be below it, whatever the second's floors, and they are left at inf.

    Returns:
        A's and B's floors (with :data:`FLOOR_RTOL`), the pair parts for
        :func:`surviving_choices` (None off the UB-path chips) and the rows computed; None where
        no per-operand floor exists.
    """
    n_groups = len(opts)
    first = 0 if cells.a_first(tables[0].step.shape[0], tables[1].step.shape[0]) else 1
    keys = ("time_a_us", "time_b_us")
    floors: list[Any] = [None, None]
    parts: list[Any] = [None, None]
    maps: list[Any] = [None, None]
    live = np.ones(orders.shape[0] * n_groups, dtype=bool)
    computed = 0
    work: dict[bool, FixedWork] = {}
    for which in (first, 1 - first):
        tab = tables[which]
        rows = operand_rows(space, opts, orders, tab, which == 0)
        cell = _cells(tab.count, orders.shape[0])
        need = live[cell]
        values = np.full(cell.shape[0], np.inf)
        if need.any():
            sub = rows if need.all() else {name: arr[need] for name, arr in rows.items()}
            res = operand_floor_values(space, sub, which == 0, work)
            if res is None:
                return None
            values[need] = np.asarray(res[keys[which]]) * (1.0 - FLOOR_RTOL)
            computed += int(need.sum())
            part_key = "parts_a" if which == 0 else "parts_b"
            if part_key in res:
                parts[which] = res[part_key]
                maps[which] = np.cumsum(need) - 1
        floors[which] = values
        open_cells = np.zeros(live.shape[0], dtype=bool)
        group_lb = lb[np.tile(tab.group, orders.shape[0])]
        open_cells[cell[np.maximum(values, group_lb) < bound]] = True
        cells.seen[which] += int(live.sum())
        cells.dead[which] += int((live & ~open_cells).sum())
        live &= open_cells
    pair_parts = None
    if parts[0] is not None and parts[1] is not None:
        pair_parts = (parts[0], parts[1], maps[0], maps[1])
    return floors[0], floors[1], pair_parts, computed


def _cells(count: npt.NDArray[np.int64], n_orders: int) -> npt.NDArray[np.int64]:
    """The (iterateOrder, group) cell of each of :func:`operand_rows`'s rows: order x groups + i."""
    position = np.repeat(np.arange(count.shape[0]), count)
    cells: npt.NDArray[np.int64] = (
        np.arange(n_orders)[:, None] * count.shape[0] + position[None, :]
    ).reshape(-1)
    return cells


def _pair_counts(space: Space, opts: list[GroupOptions], tables: tuple[_Table, _Table]) -> Any:
    """:func:`_pair_count` of every group of the batch (one sort, not one per group)."""
    ta, tb = tables
    if space.problem.template is Template.MDL or not opts:
        return np.array([_pair_count(space, o) for o in opts], dtype=np.int64)
    n = len(opts)
    room = np.array([o.room for o in opts], dtype=np.int64)
    pos_a = np.repeat(np.arange(n), ta.count)
    pos_b = np.repeat(np.arange(n), tb.count)
    # Each group's B bytes sorted in its own key range: a B option fits next to an A option of
    # its group when its bytes are at most the room left, counted by two binary searches.
    span = int(max(room.max(), tb.l1_bytes.max(initial=0))) + 2
    keys = np.sort(pos_b * span + tb.l1_bytes)
    left = np.clip(room[pos_a] - ta.l1_bytes, -1, span - 1)
    hi = np.searchsorted(keys, pos_a * span + left, side="right")
    lo = np.searchsorted(keys, pos_a * span, side="left")
    return np.bincount(pos_a, weights=np.maximum(hi - lo, 0), minlength=n).astype(np.int64)


def _pair_count(space: Space, o: GroupOptions) -> int:
    """How many (A, B) option pairs of a group fit L1 together.

    That is the group's L1 choices per iterate order, counted without forming the pairs
    (except under the MDL rules).
    """
    if space.problem.template is Template.MDL:
        return int(space._pairs(o.scalars, o.a, o.b, o.room)[0].shape[0])
    b_sorted = np.sort(o.b.l1_bytes)
    return int(np.searchsorted(b_sorted, o.room - o.a.l1_bytes, side="right").sum())


def _cell_pairs(
    opts: list[GroupOptions],
    tables: tuple[_Table, _Table],
    floors: tuple[FloatArray, FloatArray],
    n_orders: int,
    bound: float,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The pairs of options below ``bound`` that fit L1 together, every cell at once.

    Each (order, group) cell pairs every A option below the bound with every B option below it
    (A-major, as :meth:`tiler.space.Space._pairs`), those that fit the group's L1 kept.
    Returns their A and B rows of the operand floors and the pairs kept per group.
    """
    ta, tb = tables
    n_groups = len(opts)
    rows_a = np.flatnonzero(floors[0] < bound)
    rows_b = np.flatnonzero(floors[1] < bound)
    # The rows of operand_rows run order after order and group after group, so their cells
    # never decrease: each cell's B rows are one run, found by a binary search.
    cell_a = _cells(ta.count, n_orders)[rows_a]
    cell_b = _cells(tb.count, n_orders)[rows_b]
    n_cells = n_orders * n_groups
    per_b = np.bincount(cell_b, minlength=n_cells)
    first_b = np.searchsorted(cell_b, np.arange(n_cells))
    rep = per_b[cell_a]
    pa = np.repeat(rows_a, rep)
    pcell = np.repeat(cell_a, rep)
    within = np.arange(pa.shape[0]) - np.repeat(np.cumsum(rep) - rep, rep)
    pb = rows_b[first_b[pcell] + within]
    group = pcell % n_groups
    room = np.array([o.room for o in opts], dtype=np.int64)
    order = pcell // n_groups
    l1_a = ta.l1_bytes[pa - order * ta.step.shape[0]]
    l1_b = tb.l1_bytes[pb - order * tb.step.shape[0]]
    fits = l1_a + l1_b <= room[group]
    kept = np.bincount(group[fits], minlength=n_groups).astype(np.int64)
    return pa[fits], pb[fits], kept


def _cell_pairs_loop(
    space: Space,
    opts: list[GroupOptions],
    tables: tuple[_Table, _Table],
    floors: tuple[FloatArray, FloatArray],
    open_cells: npt.NDArray[np.int64],
    bound: float,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """:func:`_cell_pairs` one cell at a time with :meth:`tiler.space.Space._pairs` (MDL rules)."""
    ta, tb = tables
    n_groups = len(opts)
    n_rows_a, n_rows_b = ta.step.shape[0], tb.step.shape[0]
    out_a: list[npt.NDArray[np.int64]] = [np.zeros(0, dtype=np.int64)]
    out_b: list[npt.NDArray[np.int64]] = [np.zeros(0, dtype=np.int64)]
    kept = np.zeros(n_groups, dtype=np.int64)
    for cell in open_cells.tolist():
        j, i = divmod(cell, n_groups)
        o = opts[i]
        a0 = j * n_rows_a + ta.offset[i]
        b0 = j * n_rows_b + tb.offset[i]
        ka = np.flatnonzero(floors[0][a0 : a0 + ta.count[i]] < bound)
        kb = np.flatnonzero(floors[1][b0 : b0 + tb.count[i]] < bound)
        sub_a = _Operand(o.a.step[ka], o.a.step_k[ka], o.a.db[ka], o.a.l1_bytes[ka])
        sub_b = _Operand(o.b.step[kb], o.b.step_k[kb], o.b.db[kb], o.b.l1_bytes[kb])
        ia, ib = space._pairs(o.scalars, sub_a, sub_b, o.room)
        kept[i] += ia.shape[0]
        out_a.append(a0 + ka[ia])
        out_b.append(b0 + kb[ib])
    return np.concatenate(out_a), np.concatenate(out_b), kept


def surviving_choices(
    space: Space,
    opts: list[GroupOptions],
    orders: npt.NDArray[np.int64],
    tables: tuple[_Table, _Table],
    floors: tuple[Any, Any],
    bound: float,
    lb: FloatArray,
    pair_parts: Any = None,
) -> tuple[dict[str, npt.NDArray[np.int64]], FloatArray, int]:
    """The L1 choices of the groups whose A and B floors are both below ``bound``.

    ``floors`` are the A and B floors of :func:`operand_rows`'s rows (None: no per-operand
    floors, every pair is kept). ``pair_parts`` (UB-path chips, from :func:`operand_floors`: the
    ``parts_a`` and ``parts_b`` of :func:`simcore.estimate.bounds.ub_operand_floor_arrays` over
    the rows computed, and each row's index among them) add each pair's floor, and the pairs not
    below ``bound`` are dropped. Returns the choices (as :meth:`tiler.space.Space.l1_choices`
    gives them), the larger of their group bound and operand (and pair) floors, and how many
    points these floors ruled out.
    """
    ta, tb = tables
    floors_a, floors_b = floors
    n_rows_a, n_rows_b = ta.step.shape[0], tb.step.shape[0]
    groups = np.array([o.index for o in opts], dtype=np.int64)
    per_choice = flag_sets(space, groups)
    n_orders, n_groups = orders.shape[0], len(opts)
    group_a, group_b = np.tile(ta.group, n_orders), np.tile(tb.group, n_orders)
    if floors_a is None or floors_b is None:
        all_a, all_b = lb[group_a], lb[group_b]
    else:
        all_a, all_b = np.maximum(floors_a, lb[group_a]), np.maximum(floors_b, lb[group_b])
    # Only the (order, group) cells where both operands have an option below the bound can
    # hold a pair: the others are skipped without a look at their options.
    n_cells = n_orders * n_groups
    live_a = np.bincount(_cells(ta.count, n_orders)[all_a < bound], minlength=n_cells)
    live_b = np.bincount(_cells(tb.count, n_orders)[all_b < bound], minlength=n_cells)
    open_cells = np.flatnonzero((live_a > 0) & (live_b > 0))
    if space.problem.template is Template.MDL:
        fra, frb, kept = _cell_pairs_loop(space, opts, tables, (all_a, all_b), open_cells, bound)
    else:
        fra, frb, kept = _cell_pairs(opts, tables, (all_a, all_b), n_orders, bound)
    cut_points = 0
    if floors_a is not None and floors_b is not None:
        all_pairs = _pair_counts(space, opts, tables) * n_orders
        cut_points = int(((all_pairs - kept) * per_choice).sum())
    if fra.shape[0] == 0:
        return {}, np.zeros(0), cut_points
    oj = fra // n_rows_a
    ra, rb = fra - oj * n_rows_a, frb - oj * n_rows_b
    values_all = np.maximum(all_a[fra], all_b[frb])
    if pair_parts is not None:
        # The pairs' own floor (simcore.estimate.bounds.ub_pair_floor_us): both operands'
        # copies on the pipes they share; the pairs it rules out get no L1-choice floor (and
        # are not built).
        parts_a, parts_b, map_a, map_b = pair_parts
        pair = ub_pair_floor_us(
            space.preset,
            (parts_a, parts_b),
            map_a[fra],
            map_b[frb],
        )
        values_all = np.maximum(values_all, np.asarray(pair) * (1.0 - FLOOR_RTOL))
        live = values_all < bound
        cut_points += int(flag_sets(space, ta.group[ra[~live]]).sum())
        ra, rb, oj, values_all = ra[live], rb[live], oj[live], values_all[live]
    group = ta.group[ra]
    merged = {name: space.groups[name][group] for name in GROUP_FIELDS}
    merged.update(operand_fields(ta, ra, tb, rb))
    merged["iterateOrder"] = orders[oj]
    merged["group"] = group
    return merged, values_all, cut_points
