"""The TCubeTiling search space of one problem on one chip, built legal by construction.

A point of the space is one value of each searchable struct field (:data:`SEARCH_FIELDS`). The
space is built level by level so that later ranges depend on earlier choices and the rules of
seed 002 (tables 2 and 3, as :mod:`simcore.tiling.legality` implements them) hold by construction:

1. **Core split** (``usedCoreNum, singleCoreM, singleCoreN``; K is never split, so
   ``singleCoreK = K``): for every count of row blocks ``mc`` the balanced block
   ``ceil(M / mc)`` and its 16-aligned form (CANN's choice), likewise for N, every pair whose
   block count fits the chip's cores; ``usedCoreNum`` is the block count (extra cores get no work
   and the estimator does not read the field). With an NZ operand only 16-aligned blocks.
2. **Base block** (``baseM, baseN, baseK``): multiples of 16, 16 and C0, each no larger than the
   data it covers (``baseM <= align16(singleCoreM)``, ``baseK <= alignC0(K)``), fitting L0A,
   L0B and L0C with at least single buffering, the BiasTable, and L1 with one block of each.
   A (split, base block) pair is a *group*.
3. **Inner fields** of a group: the balanced steps (:func:`balanced_steps`: ``stepKa = ceil(kIter
   / c)`` for each number ``c`` of K chunks, likewise stepM over the M blocks, stepN, stepKb),
   the L1 buffer factor (``depthA1 = stepM * stepKa
   * db``, db in {1, 2}), the A + B (+ bias) L1 footprint within L1, the MDL rules when the
   template is MDL, ``iterateOrder`` in {0, 1} and ``dbL0A/dbL0B/dbL0C`` in {1, 2} where the L0
   buffer still fits.

Blocks and steps larger than the data they cover are left out by definition: such a tiling moves
the same data with the same instructions as the capped one and only reserves more buffer. A field
the caller pins is taken as given (if legal), even where the definition above would not reach it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from simcore.errors import InputError
from simcore.hardware.dtypes import ACCUMULATOR_BYTES, FRACTAL_ROWS, bits, c0_elements
from simcore.hardware.dtypes import l1_bytes as l1_block_bytes
from simcore.hardware.dtypes import mx_operand_align_bytes as mx_align_of
from simcore.hardware.presets import HardwarePreset
from simcore.pipeline.costs import align_up, ceil_div
from simcore.pipeline.traffic import largest_core_extent
from simcore.tiling.footprints import uses_ub_path
from simcore.tiling.legality import problem_violations
from simcore.tiling.problem import Format, Problem, Template
from simcore.tiling.tcube import REQUIRED_FIELDS

IntArray = npt.NDArray[np.int64]

#: The struct fields the search chooses (every other field is derived or fixed by the problem).
SEARCH_FIELDS: tuple[str, ...] = (*REQUIRED_FIELDS, "iterateOrder", "dbL0A", "dbL0B", "dbL0C")

#: Fields of a group (the outer level of the space).
GROUP_FIELDS: tuple[str, ...] = (
    "usedCoreNum", "singleCoreM", "singleCoreN", "baseM", "baseN", "baseK",
)  # fmt: skip


@dataclass(frozen=True)
class _Operand:
    """The L1 options of one operand in one group: step, K step, buffer factor, bytes."""

    step: IntArray
    step_k: IntArray
    db: IntArray
    l1_bytes: IntArray


def parse_fixed(fixed: Mapping[str, Any]) -> dict[str, int]:
    """Checks the names and value types of pinned fields.

    Raises:
        InputError: A key is not a searchable struct field or a value is not a positive integer
            (``iterateOrder`` may be 0).
    """
    out: dict[str, int] = {}
    for name, value in fixed.items():
        if name not in SEARCH_FIELDS:
            raise InputError(
                f"fixed.{name}",
                "not_searchable",
                f"fixed.{name}: only the searched TCubeTiling fields can be pinned "
                f"({', '.join(SEARCH_FIELDS)}); the others follow from the problem",
                name,
                list(SEARCH_FIELDS),
            )
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(
                f"fixed.{name}", "int_type", f"fixed.{name} must be an integer", value, "int"
            )
        lowest = 0 if name == "iterateOrder" else 1
        if value < lowest:
            raise InputError(
                f"fixed.{name}",
                "range",
                f"fixed.{name} = {value}, but it must be at least {lowest}",
                value,
                lowest,
            )
        out[name] = value
    return dict(sorted(out.items()))


#: At most this many operand option sets kept by :meth:`Space._operand` (then it starts over).
OPERAND_MEMO_ENTRIES = 16384


@dataclass
class Space:
    """The legal search space of a problem on a chip, with pinned fields.

    Build it with :func:`build_space`. ``groups`` holds one entry per (core split, base block)
    with :data:`GROUP_FIELDS` and helper arrays (block counts, K iterations, bias bytes in L1,
    the largest L0 double-buffer factors); :meth:`inner_points` enumerates a group's points.
    """

    problem: Problem
    preset: HardwarePreset
    fixed: dict[str, int]
    groups: dict[str, IntArray]
    in_bits: int
    c0: int
    box_groups: int = 0
    pruned: dict[str, int] = field(default_factory=dict)
    #: The distinct core splits (singleCoreM, singleCoreN, usedCoreNum) of the groups, sorted.
    splits: list[tuple[int, int, int]] = field(default_factory=list)
    #: Per group, the index of its core split in :attr:`splits`.
    split_index: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    #: Whether the space holds dealt splits (:func:`dealt_in_space`, the pins allowing them):
    #: the certificate's scope then says so.
    dealt: bool = False
    #: :meth:`_operand`'s options by its arguments: many groups share an operand's block count,
    #: K steps, block bytes and room (the screening builds the options of up to ~10^4 groups
    #: one by one). Not an init field, so a copy with other pins starts empty.
    _operand_memo: dict[tuple[Any, ...], _Operand] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    #: The dealt groups' bounds by group (:func:`tiler.bounds.group` prices a dealt group at the
    #: same figure at every tier: computed once), filled as they are priced.
    dealt_memo: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def size(self) -> int:
        """Number of groups."""
        return int(self.groups["baseM"].shape[0])

    @property
    def scope(self) -> str:
        """What the space holds: :data:`DEALT_SCOPE` or :data:`CERTIFICATE_SCOPE`."""
        return DEALT_SCOPE if self.dealt else CERTIFICATE_SCOPE

    def holds_group(self, fields: Mapping[str, int]) -> bool:
        """Whether a group of the space has these :data:`GROUP_FIELDS` values."""
        match = np.ones(self.size, dtype=bool)
        for name in GROUP_FIELDS:
            match &= self.groups[name] == fields[name]
        return bool(match.any())

    # --- inner level -----------------------------------------------------------------------

    def _bytes(self, elements: Any) -> Any:
        # L1 bytes of a block: the data and, for MX types, its e8m0 scales.
        return l1_block_bytes(self.problem.dtype, elements)

    def _operand(
        self,
        blocks: int,
        k_iter: int,
        blk_bytes: int,
        room_bytes: int,
        names: tuple[str, str, str],
    ) -> _Operand:
        """Every (step, stepK, db) of one operand whose L1 buffer fits ``room_bytes``."""
        key = (int(blocks), int(k_iter), int(blk_bytes), int(room_bytes), names)
        memo = self._operand_memo.get(key)
        if memo is not None:
            return memo
        step_name, stepk_name, depth_name = names
        fx = self.fixed
        steps = (
            np.array([fx[step_name]], dtype=np.int64) if step_name in fx else balanced_steps(blocks)
        )
        stepks = (
            np.array([fx[stepk_name]], dtype=np.int64)
            if stepk_name in fx
            else balanced_steps(k_iter)
        )
        units = room_bytes // max(blk_bytes, 1)
        # The (step, stepK) grid in row-major order (np.meshgrid's "ij" raveled, without its
        # cost: screening builds the options of up to ~10^5 groups).
        s = np.repeat(steps, stepks.shape[0])
        k = np.tile(stepks, steps.shape[0])
        keep = s * k <= units
        s, k = s[keep], k[keep]
        s = np.concatenate([s, s])
        k = np.concatenate([k, k])
        db = np.repeat(np.array([1, 2], dtype=np.int64), s.shape[0] // 2)
        depth = s * k * db
        keep = depth <= units
        if depth_name in fx:
            keep &= depth == fx[depth_name]
        if self.problem.template is Template.MDL:
            # Seed 002 table 3: K not fully resident in L1 -> one base block at a time.
            keep &= (k >= k_iter) | (s == 1)
        s, k, db, depth = s[keep], k[keep], db[keep], depth[keep]
        if len(self._operand_memo) >= OPERAND_MEMO_ENTRIES:
            self._operand_memo.clear()  # bounded memory (a few KB an entry)
        memo = self._operand_memo[key] = _Operand(s, k, db, depth * blk_bytes)
        return memo

    def _group_scalars(self, g: int) -> dict[str, int]:
        gr = self.groups
        return {name: int(gr[name][g]) for name in gr}

    def _group_operands(self, g: int) -> tuple[dict[str, int], _Operand, _Operand, int]:
        v = self._group_scalars(g)
        a_blk = self._bytes(v["baseM"] * v["baseK"])
        b_blk = self._bytes(v["baseN"] * v["baseK"])
        room = self.preset.l1_bytes - v["bias_l1"]
        a = self._operand(
            v["m_iter"], v["k_iter"], a_blk, room - b_blk, ("stepM", "stepKa", "depthA1")
        )
        b = self._operand(
            v["n_iter"], v["k_iter"], b_blk, room - a_blk, ("stepN", "stepKb", "depthB1")
        )
        return v, a, b, room

    def _pairs(self, v: dict[str, int], a: _Operand, b: _Operand, room: int) -> Any:
        fits = a.l1_bytes[:, None] + b.l1_bytes[None, :] <= room
        if self.problem.template is Template.MDL:
            ka = ceil_div(v["k_iter"], a.step_k)[:, None]
            kb = ceil_div(v["k_iter"], b.step_k)[None, :]
            fits &= (ka % kb == 0) | (kb % ka == 0)
        return np.nonzero(fits)

    def _flags(self, v: dict[str, int]) -> IntArray:
        """The (iterateOrder, dbL0A, dbL0B, dbL0C) combinations of a group, shape (n, 4)."""
        combos = []
        for order in (0, 1):
            for da in (1, 2):
                for dbb in (1, 2):
                    for dc in (1, 2):
                        combos.append((order, da, dbb, dc))
        arr = np.array(combos, dtype=np.int64)
        keep = (
            (arr[:, 1] <= v["dbA_max"]) & (arr[:, 2] <= v["dbB_max"]) & (arr[:, 3] <= v["dbC_max"])
        )
        for col, name in enumerate(("iterateOrder", "dbL0A", "dbL0B", "dbL0C")):
            if name in self.fixed:
                keep &= arr[:, col] == self.fixed[name]
        return arr[keep]

    def inner_points(self, g: int) -> dict[str, IntArray]:
        """Every point of group ``g`` as arrays of :data:`SEARCH_FIELDS` (legal by construction)."""
        v, a, b, room = self._group_operands(g)
        ia, ib = self._pairs(v, a, b, room)
        flags = self._flags(v)
        n_pairs, n_flags = ia.shape[0], flags.shape[0]
        rep_pairs = np.tile(np.arange(n_pairs), n_flags)
        rep_flags = np.repeat(np.arange(n_flags), n_pairs)
        ia, ib = ia[rep_pairs], ib[rep_pairs]
        n = ia.shape[0]
        out: dict[str, IntArray] = {
            name: np.full(n, v[name], dtype=np.int64) for name in GROUP_FIELDS
        }
        out.update(operand_fields(a, ia, b, ib))
        for col, name in enumerate(("iterateOrder", "dbL0A", "dbL0B", "dbL0C")):
            out[name] = flags[rep_flags, col]
        return out

    def point_count(self, g: int) -> int:
        """How many points group ``g`` has (:meth:`inner_points` without building them)."""
        v, a, b, room = self._group_operands(g)
        return int(self._pairs(v, a, b, room)[0].shape[0]) * int(self._flags(v).shape[0])

    def l1_choices(self, g: int) -> dict[str, IntArray]:
        """Every L1 choice of group ``g``: the points of :meth:`inner_points` without the L0 flags.

        One entry per (stepM, stepKa, depthA1, stepN, stepKb, depthB1, iterateOrder) that some
        point of the group has; :meth:`with_l0_flags` expands entries back into points.
        """
        v, a, b, room = self._group_operands(g)
        ia, ib = self._pairs(v, a, b, room)
        orders = np.unique(self._flags(v)[:, 0])
        n_pairs = ia.shape[0]
        ia = np.tile(ia, orders.shape[0])
        ib = np.tile(ib, orders.shape[0])
        n = ia.shape[0]
        out: dict[str, IntArray] = {
            name: np.full(n, v[name], dtype=np.int64) for name in GROUP_FIELDS
        }
        out.update(operand_fields(a, ia, b, ib))
        out["iterateOrder"] = np.repeat(orders, n_pairs)
        out["group"] = np.full(n, g, dtype=np.int64)
        return out

    def with_l0_flags(self, choices: dict[str, IntArray]) -> dict[str, IntArray]:
        """The points of L1 choices (from :meth:`l1_choices`, with their ``group``).

        Each choice gets every (dbL0A, dbL0B, dbL0C) its group's L0 buffers hold and the pins
        allow, as in :meth:`inner_points`. The ``choice`` array gives each point's row in
        ``choices``.
        """
        combos = np.array(
            [(da, dbb, dc) for da in (1, 2) for dbb in (1, 2) for dc in (1, 2)], dtype=np.int64
        )
        n = choices["baseM"].shape[0]
        rows = np.repeat(np.arange(n), combos.shape[0])
        flags = np.tile(combos, (n, 1))
        grp = choices["group"][rows]
        keep = (
            (flags[:, 0] <= self.groups["dbA_max"][grp])
            & (flags[:, 1] <= self.groups["dbB_max"][grp])
            & (flags[:, 2] <= self.groups["dbC_max"][grp])
        )
        for col, name in enumerate(("dbL0A", "dbL0B", "dbL0C")):
            if name in self.fixed:
                keep &= flags[:, col] == self.fixed[name]
        rows, flags = rows[keep], flags[keep]
        out = {name: arr[rows] for name, arr in choices.items()}
        for col, name in enumerate(("dbL0A", "dbL0B", "dbL0C")):
            out[name] = flags[:, col]
        out["choice"] = rows
        return out


class OperandOptions(Protocol):
    """Per-option arrays of one operand: its step, K step and L1 buffer factor."""

    @property
    def step(self) -> IntArray:
        """The step of each option: stepM (A) or stepN (B)."""
        ...

    @property
    def step_k(self) -> IntArray:
        """The K step of each option: stepKa (A) or stepKb (B)."""
        ...

    @property
    def db(self) -> IntArray:
        """The L1 double-buffer factor (1 or 2) of each option."""
        ...


def operand_fields(
    a: OperandOptions, ia: IntArray, b: OperandOptions, ib: IntArray
) -> dict[str, IntArray]:
    """The L1 fields of pairs of operand options (rows ``ia`` of A's, ``ib`` of B's)."""
    return {
        "stepM": a.step[ia],
        "stepKa": a.step_k[ia],
        "depthA1": a.step[ia] * a.step_k[ia] * a.db[ia],
        "stepN": b.step[ib],
        "stepKb": b.step_k[ib],
        "depthB1": b.step[ib] * b.step_k[ib] * b.db[ib],
    }


@functools.lru_cache(maxsize=4096)
def balanced_steps(iterations: int) -> IntArray:
    """The steps that cut ``iterations`` into chunks as evenly as possible: ``ceil(n / c)``.

    For each chunk count ``c`` only the smallest step reaching it is kept: every other step with
    that chunk count moves the same data in the same number of copies, with a smaller last chunk
    and a larger L1 buffer.

    Cached (read-only arrays): a screening asks for the same few counts thousands of times and
    ``np.unique`` costs more than the rest of a group's options.
    """
    c = np.arange(1, iterations + 1, dtype=np.int64)
    steps = np.unique(ceil_div(iterations, c))
    steps.flags.writeable = False
    return steps


def _split_candidates(dim: int, cores: int, aligned_only: bool, pin: int | None) -> list[int]:
    """Per-core block sizes along one dimension: balanced, and 16-aligned (CANN's form)."""
    if pin is not None:
        return [pin]
    values: set[int] = set()
    for parts in range(1, min(cores, dim) + 1):
        block = ceil_div(dim, parts)
        values.add(int(align_up(block, FRACTAL_ROWS)))
        if not aligned_only:
            values.add(int(block))
    return sorted(values)


def _core_splits(
    problem: Problem, preset: HardwarePreset, fixed: dict[str, int]
) -> tuple[IntArray, IntArray, IntArray]:
    """(singleCoreM, singleCoreN, usedCoreNum) of every core split in the space."""
    cores = preset.cube_core_count
    ms = _split_candidates(
        problem.m, cores, problem.format_a is Format.NZ, fixed.get("singleCoreM")
    )
    ns = _split_candidates(
        problem.n, cores, problem.format_b is Format.NZ, fixed.get("singleCoreN")
    )
    sm = np.array(ms, dtype=np.int64)[:, None]
    sn = np.array(ns, dtype=np.int64)[None, :]
    need = ceil_div(problem.m, sm) * ceil_div(problem.n, sn)
    # One tile per core here; the dealt splits (more tiles than usedCoreNum) come with their
    # base blocks (_dealt_splits).
    if "usedCoreNum" in fixed:
        used = np.full(need.shape, fixed["usedCoreNum"], dtype=np.int64)
        ok = (need <= used) & (used <= cores)
    else:
        used = need
        ok = need <= cores
    sm_b, sn_b = np.broadcast_arrays(sm, sn)
    return sm_b[ok], sn_b[ok], used[ok]


#: What the certificate proves its optimum over where the space holds no dealt split (chips
#: staging operands through UB, not the 910B family, one core, or a pinned usedCoreNum below
#: the cores): the legal tilings with one tile per core (usedCoreNum = the tiles).
CERTIFICATE_SCOPE = "one tile per core"
#: The scope where the space holds dealt splits too (:func:`dealt_in_space`): tiles of
#: :data:`DEALT_TILE_BLOCKS` base blocks along M and N dealt in rounds to every cube core, bounded
#: by :mod:`tiler.bounds.dealt`.
DEALT_SCOPE = (
    "one tile per core, or dealt to every core in tiles of 1 or 2 base blocks along M and N"
)
#: A dealt split's tile along M (and along N) is this many base blocks: MatMulV3's one
#: (``matmul_v3_base_tiling.cpp`` ``SetBaseBlockTiling``: a tile is one base block) and two
#: (docs/search.md, "The space": the search time and the estimator's agreement on them).
DEALT_TILE_BLOCKS: tuple[int, ...] = (1, 2)


#: The chip architectures whose space holds dealt splits: the 910B family (its 910_93xx
#: variants too), where aclnn MatMulV3 deals its tiles.
DEALT_ARCHS: tuple[int, ...] = (2201,)


def dealt_in_space(problem: Problem, preset: HardwarePreset) -> bool:
    """Whether the space holds dealt splits: the 910B family, no operand staged through UB.

    The ``dealt_rounds`` term agrees with the simulator there on MatMulV3's tiles (within
    2 %) and on the search's dealt points of small 910B problems (``benchmarks.agreement_dealt``,
    model 2026.11.30.1, seeds 2026 / 7 / 11: p95 1.7-3.2 % per chip, the worst draw -10.5 %,
    errors either way as on undealt points, no longer pessimistic only). Where the operands
    are staged through UB it is off both ways (p95 22-35 % on 310P, 910A, 310B:
    docs/estimator.md). On the 950 (arch 3510) the dealt bound is too loose for the screening
    (median bound / estimate 0.42 on random dealt points; 950PR
    fp16 8192^3 and 4096^3 lost their certificate within the budget): left out. One core deals
    nothing.
    """
    return (
        preset.npu_arch in DEALT_ARCHS
        and preset.cube_core_count > 1
        and not uses_ub_path(problem, preset)
    )


def _dealt_splits(
    problem: Problem,
    preset: HardwarePreset,
    pins: dict[str, int],
    bm3: IntArray,
    bn3: IntArray,
) -> tuple[IntArray, IntArray, IntArray]:
    """The dealt groups: (base triple index, singleCoreM, singleCoreN) of each.

    A dealt split (legality rule ``DEALT_SPLIT``: more ``singleCoreM x singleCoreN`` tiles
    than cores, on every cube core) whose tile is :data:`DEALT_TILE_BLOCKS` base blocks along
    M and along N, no more blocks than the data along M or N fills (a tile of two blocks
    covers more than one block of rows), on the chips of :func:`dealt_in_space`. Pins are
    honoured (a pinned usedCoreNum other than the core count leaves none).
    """
    none = np.zeros(0, dtype=np.int64)
    cores = preset.cube_core_count
    if not dealt_in_space(problem, preset) or pins.get("usedCoreNum", cores) != cores:
        return none, none, none
    m_al, n_al = align_up(problem.m, FRACTAL_ROWS), align_up(problem.n, FRACTAL_ROWS)
    parts = []
    for jm in DEALT_TILE_BLOCKS:
        for jn in DEALT_TILE_BLOCKS:
            dsm, dsn = jm * bm3, jn * bn3
            ok = (ceil_div(problem.m, dsm) * ceil_div(problem.n, dsn) > cores) & (
                ((jm == 1) | ((jm - 1) * bm3 < m_al)) & ((jn == 1) | ((jn - 1) * bn3 < n_al))
            )
            if "singleCoreM" in pins:
                ok &= dsm == pins["singleCoreM"]
            if "singleCoreN" in pins:
                ok &= dsn == pins["singleCoreN"]
            idx = np.flatnonzero(ok)
            parts.append((idx, dsm[idx], dsn[idx]))
    if not parts:
        return none, none, none
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))  # type: ignore[return-value]


def _values(lo: int, hi: int, unit: int, pin: int | None) -> IntArray:
    if pin is not None:
        return np.array([pin], dtype=np.int64)
    return np.arange(lo, hi + 1, unit, dtype=np.int64)


def build_space(problem: Problem, preset: HardwarePreset, fixed: Mapping[str, Any]) -> Space:
    """Builds the legal space of ``problem`` on ``preset`` with the ``fixed`` fields pinned.

    Raises:
        InputError: The problem itself breaks a rule (for example an ND row longer than 65535
            elements), a pin is malformed, or no legal tiling meets the pins (the error names the
            pinned field that cannot be met and the limit it broke).
    """
    pins = parse_fixed(fixed)
    broken = problem_violations(problem, preset)
    if broken:
        v = broken[0]
        raise InputError(f"problem.{v.fields[0].lower()}", v.id, v.message, v.value, v.limit)
    _check_single_pins(problem, preset, pins)

    in_bits = bits(problem.dtype)
    c0 = c0_elements(problem.dtype)
    sm, sn, used = _core_splits(problem, preset, pins)
    k_align = int(align_up(problem.k, c0))
    bias_bytes = bits(problem.bias_type) // 8 if problem.bias else 0
    has_bt = problem.bias and preset.bt_bytes > 0

    # (With no one-tile split, a dealt split's tile is at most the pinned one or the data.)
    hi_m = int(sm.max()) if sm.size else pins.get("singleCoreM", problem.m)
    hi_n = int(sn.max()) if sn.size else pins.get("singleCoreN", problem.n)
    bm_hi = int(align_up(hi_m, FRACTAL_ROWS))
    bn_hi = int(align_up(hi_n, FRACTAL_ROWS))
    bms = _values(FRACTAL_ROWS, bm_hi, FRACTAL_ROWS, pins.get("baseM"))
    bns = _values(FRACTAL_ROWS, bn_hi, FRACTAL_ROWS, pins.get("baseN"))
    bks = _values(c0, k_align, c0, pins.get("baseK"))
    dba_min, dbb_min, dbc_min = (pins.get(f, 1) for f in ("dbL0A", "dbL0B", "dbL0C"))
    mx_align = mx_align_of(problem.dtype)

    # Base triples that fit L0A/L0B/L0C (with the smallest double-buffer factor), the BiasTable
    # and L1 with one block of each operand (or the pinned depths).
    # Base triples that fit L0A/L0B/L0C (with the smallest double-buffer factor), the BiasTable
    # and L1 with one block of each operand (or the pinned depths).
    depth_a = pins.get("depthA1", pins.get("stepM", 1) * pins.get("stepKa", 1))
    depth_b = pins.get("depthB1", pins.get("stepN", 1) * pins.get("stepKb", 1))
    parts: list[tuple[IntArray, IntArray, IntArray]] = []
    box_triples = 0
    for bk in bks.tolist():
        bm_ok = bms[bms * bk * in_bits // 8 * dba_min <= preset.l0a_bytes]
        bn_ok = bns[bns * bk * in_bits // 8 * dbb_min <= preset.l0b_bytes]
        if has_bt:
            bn_ok = bn_ok[bn_ok * bias_bytes <= preset.bt_bytes]
        box_triples += bms.shape[0] * bns.shape[0]
        bm2, bn2 = (a.ravel() for a in np.meshgrid(bm_ok, bn_ok, indexing="ij"))
        ok = bm2 * bn2 * ACCUMULATOR_BYTES * dbc_min <= preset.l0c_bytes
        if problem.c_position == "UB":
            # One output block must fit a vector core's UB (C_UB_CAPACITY).
            ok &= bm2 * bn2 * bits(problem.c_dtype) // 8 <= preset.ub_bytes
        bias_l1_2 = bn2 * bias_bytes if has_bt else 0
        ok &= (
            depth_a * l1_block_bytes(problem.dtype, bm2 * bk)
            + depth_b * l1_block_bytes(problem.dtype, bn2 * bk)
            + bias_l1_2
            <= preset.l1_bytes
        )
        if mx_align:
            # MmadMx operand blocks are whole 512 B (fp4) / 1024 B (fp8) units (MX_OPERAND_ALIGN).
            ok &= (bm2 * bk * in_bits // 8) % mx_align == 0
            ok &= (bn2 * bk * in_bits // 8) % mx_align == 0
        parts.append((bm2[ok], bn2[ok], np.full(int(ok.sum()), bk, dtype=np.int64)))
    bm3 = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    bn3 = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    bk3 = np.concatenate([p[2] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    kept = bm3.shape[0]
    pruned = {"capacity": int(box_triples - kept) * int(sm.shape[0])}

    # Join with the core splits: a base block no larger than the core's block (pins excepted).
    sm_al = align_up(sm, FRACTAL_ROWS)
    sn_al = align_up(sn, FRACTAL_ROWS)
    fit = np.ones((bm3.shape[0], sm.shape[0]), dtype=bool)
    if "baseM" not in pins:
        fit &= bm3[:, None] <= sm_al[None, :]
    if "baseN" not in pins:
        fit &= bn3[:, None] <= sn_al[None, :]
    ti, si = np.nonzero(fit)
    one_tile_splits = sm.shape[0]
    # The dealt splits (more tiles than cores), each with the base blocks that tile it.
    tj, dsm, dsn = _dealt_splits(problem, preset, pins, bm3, bn3)
    # Every split of the space, one-tile ones first, then the dealt ones (never the same
    # triple: a dealt split has more tiles than cores, a one-tile split at most as many).
    dkey, dinv = np.unique(dsm * (problem.n + 1) + dsn, return_inverse=True)
    all_sm = np.concatenate([sm, dkey // (problem.n + 1)])
    all_sn = np.concatenate([sn, dkey % (problem.n + 1)])
    all_used = np.concatenate(
        [used, np.full(dkey.shape[0], preset.cube_core_count, dtype=np.int64)]
    )
    ti = np.concatenate([ti, tj])
    si = np.concatenate([si, sm.shape[0] + dinv.reshape(-1)])
    sm, sn, used = all_sm, all_sn, all_used
    groups: dict[str, IntArray] = {
        "usedCoreNum": used[si],
        "singleCoreM": sm[si],
        "singleCoreN": sn[si],
        "baseM": bm3[ti],
        "baseN": bn3[ti],
        "baseK": bk3[ti],
    }
    groups["m_iter"] = ceil_div(groups["singleCoreM"], groups["baseM"])
    groups["n_iter"] = ceil_div(groups["singleCoreN"], groups["baseN"])
    # The largest core's rows and columns, the share the estimator prices (singleCoreM above M
    # leaves the one core along M with M rows): the per-core bounds take these.
    groups["core_rows"] = largest_core_extent(problem.m, groups["singleCoreM"])
    groups["core_cols"] = largest_core_extent(problem.n, groups["singleCoreN"])
    groups["k_iter"] = ceil_div(problem.k, groups["baseK"])
    groups["bias_l1"] = groups["baseN"] * bias_bytes if has_bt else np.zeros_like(ti)
    blk_a = groups["baseM"] * groups["baseK"] * in_bits // 8
    blk_b = groups["baseN"] * groups["baseK"] * in_bits // 8
    groups["dbA_max"] = np.where(2 * blk_a <= preset.l0a_bytes, 2, 1)
    groups["dbB_max"] = np.where(2 * blk_b <= preset.l0b_bytes, 2, 1)
    groups["dbC_max"] = np.where(
        2 * groups["baseM"] * groups["baseN"] * ACCUMULATOR_BYTES <= preset.l0c_bytes, 2, 1
    )
    space = Space(problem, preset, pins, groups, in_bits, c0)
    # The ones some group uses, sorted, are the space's distinct splits (sorting the split
    # table, not every group's triple: a second and more on a million groups).
    present = np.flatnonzero(np.bincount(si, minlength=sm.shape[0]) > 0)
    present = present[np.lexsort((used[present], sn[present], sm[present]))]
    rank = np.full(sm.shape[0], -1, dtype=np.int64)
    rank[present] = np.arange(present.shape[0], dtype=np.int64)
    space.dealt = (
        dealt_in_space(problem, preset)
        and pins.get("usedCoreNum", preset.cube_core_count) == preset.cube_core_count
    )
    space.split_index = rank[si]
    space.splits = [(int(sm[i]), int(sn[i]), int(used[i])) for i in present]
    space.box_groups = int(box_triples) * int(one_tile_splits)
    space.pruned = pruned
    space.pruned["oversized_base"] = kept * int(one_tile_splits) - int(ti.shape[0] - tj.shape[0])
    if space.size == 0:
        raise _no_point_error(problem, preset, pins)
    return space


def _limit_error(name: str, value: int, limit: int, rule: str, why: str) -> InputError:
    return InputError(
        f"fixed.{name}",
        rule,
        f"fixed.{name} = {value} cannot be met: {why}",
        value,
        limit,
    )


def _check_single_pins(problem: Problem, preset: HardwarePreset, pins: dict[str, int]) -> None:
    """Rejects a pin that no legal tiling can have, whatever the other fields are."""
    in_bits = bits(problem.dtype)
    c0 = c0_elements(problem.dtype)
    cores = preset.cube_core_count
    soc = preset.soc
    # The largest baseM / baseN: L0A (L0B) with the smallest baseK and single buffering, and
    # L0C with the smallest partner block.
    max_bm = min(
        preset.l0a_bytes * 8 // (c0 * in_bits) // FRACTAL_ROWS * FRACTAL_ROWS,
        preset.l0c_bytes // (FRACTAL_ROWS * ACCUMULATOR_BYTES) // FRACTAL_ROWS * FRACTAL_ROWS,
    )
    max_bn = min(
        preset.l0b_bytes * 8 // (c0 * in_bits) // FRACTAL_ROWS * FRACTAL_ROWS,
        preset.l0c_bytes // (FRACTAL_ROWS * ACCUMULATOR_BYTES) // FRACTAL_ROWS * FRACTAL_ROWS,
    )
    if problem.bias and preset.bt_bytes > 0:
        max_bn = min(max_bn, preset.bt_bytes // (bits(problem.bias_type) // 8))
    max_bk = min(preset.l0a_bytes, preset.l0b_bytes) * 8 // (FRACTAL_ROWS * in_bits) // c0 * c0
    checks: list[tuple[str, int, int, str]] = [
        ("usedCoreNum", cores, 1, f"{soc} has {cores} cube cores (CORE_COUNT)"),
        ("singleCoreM", int(align_up(problem.m, 16)), 1, "singleCoreM <= ceil(M / 16) * 16"),
        ("singleCoreN", int(align_up(problem.n, 16)), 1, "singleCoreN <= ceil(N / 16) * 16"),
        ("baseM", max_bm, FRACTAL_ROWS,
         f"the largest baseM that fits L0A ({preset.l0a_bytes} B with baseK = {c0}) and L0C "
         f"({preset.l0c_bytes} B of 4-byte accumulators with baseN = 16) is {max_bm}"),
        ("baseN", max_bn, FRACTAL_ROWS,
         f"the largest baseN that fits L0B, L0C (and the BiasTable) on {soc} is {max_bn}"),
        ("baseK", max_bk, c0,
         f"the largest baseK that fits L0A and L0B with 16-row blocks is {max_bk}"),
        ("iterateOrder", 1, 1, "iterateOrder is 0 (M first) or 1 (N first)"),
        ("dbL0A", 2, 1, "dbL0A is 1 or 2"),
        ("dbL0B", 2, 1, "dbL0B is 1 or 2"),
        ("dbL0C", 2, 1, "dbL0C is 1 or 2"),
    ]  # fmt: skip
    for name, limit, unit, why in checks:
        if name not in pins:
            continue
        value = pins[name]
        if value > limit:
            raise _limit_error(name, value, limit, "exceeds_limit", why)
        if unit > 1 and value % unit:
            raise _limit_error(
                name, value, unit, "alignment", f"{name} must be a multiple of {unit}"
            )
    nz_checks = (
        ("singleCoreM", problem.format_a is Format.NZ),
        ("singleCoreN", problem.format_b is Format.NZ),
    )
    for name, nz in nz_checks:
        if nz and name in pins and pins[name] % FRACTAL_ROWS:
            raise _limit_error(
                name, pins[name], FRACTAL_ROWS, "alignment", f"an NZ operand needs {name} % 16 == 0"
            )
    for depth, steps in (("depthA1", ("stepM", "stepKa")), ("depthB1", ("stepN", "stepKb"))):
        if depth in pins and all(s in pins for s in steps):
            prod = pins[steps[0]] * pins[steps[1]]
            if pins[depth] not in (prod, 2 * prod):
                raise _limit_error(
                    depth, pins[depth], prod, "DEPTH_STEPS",
                    f"{depth} must be {steps[0]} * {steps[1]} = {prod} or twice that",
                )  # fmt: skip


def _no_point_error(problem: Problem, preset: HardwarePreset, pins: dict[str, int]) -> InputError:
    """Names the pin that empties the space: the first whose removal makes it non-empty."""
    for name in pins:
        rest = {k: v for k, v in pins.items() if k != name}
        try:
            build_space(problem, preset, rest)
        except InputError:
            continue
        return InputError(
            f"fixed.{name}",
            "no_legal_tiling",
            f"fixed.{name} = {pins[name]} cannot be met together with the other pins "
            f"({', '.join(f'{k}={v}' for k, v in rest.items()) or 'none'}) on {preset.soc}: no "
            "legal tiling has it (L0/L1 capacity, core count or alignment)",
            pins[name],
            None,
        )
    return InputError(
        "fixed",
        "no_legal_tiling",
        f"no legal tiling meets the pins {pins} on {preset.soc}",
        pins,
        None,
    )
