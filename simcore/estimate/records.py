"""The records every term reads: one core's grid, block types, step times, chunking and copies.

:func:`core_records` builds them once per block of candidates; the terms take the bundle
(:class:`CoreRecords`) and the named results of earlier terms.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from simcore.estimate.copies import (
    Chunking,
    ChunkLegs,
    Copies,
    chunk_legs_of,
    chunking,
    copy_totals_of,
)
from simcore.estimate.grid import BlockCounts, BlockTypes, Grid, block_grid, block_types
from simcore.estimate.steps import AverageSteps, TypicalSteps, average_steps, typical_steps
from simcore.pipeline.costs import Costs
from simcore.tiling.problem import Problem


@dataclass(frozen=True, slots=True)
class CoreRecords:
    """The shared records of one core's share and what the terms price it with.

    Attributes:
        c: The costs of the problem on the chip (the UB path chosen).
        problem: The problem.
        f: The struct fields (arrays over the candidates).
        cap: The core's bandwidth share for reads, bytes per cycle.
        write_cap: Its share for writes (C's drains), bytes per cycle.
        fix: The chip drains L0C with FixPipe.
        floor: Pricing the floors (:func:`simcore.estimate.estimator.makespan_floor_arrays`).
        g: The block grid (:class:`simcore.estimate.grid.Grid`).
        bt: The block types' K loops and drains.
        typ: The typical block's step times; ``avg`` the average block's.
        avg: See ``typ``.
        ch: The chunking of K through the L1 slots.
        cp: The copies' totals per pipe and one copy's legs.
        lg: The full and K-tail chunk legs of each operand.
    """

    c: Costs
    problem: Problem
    f: dict[str, Any]
    cap: Any
    write_cap: Any
    fix: bool
    floor: bool
    g: Grid
    bt: BlockTypes
    typ: TypicalSteps
    avg: AverageSteps
    ch: Chunking
    cp: Copies
    lg: ChunkLegs


def core_records(
    c: Costs,
    problem: Problem,
    f: dict[str, Any],
    rows: Any,
    cols: Any,
    caps: tuple[Any, Any],
    traffic: tuple[Any, ...] | None,
    floor: bool,
    counts: BlockCounts | None = None,
) -> CoreRecords:
    """The records of a ``rows x cols`` core share (``traffic``: the operands' loads, elements).

    (``traffic`` may go on with each operand's groups and full and tail passes: see
    :func:`simcore.estimate.copies.chunking`.)

    ``caps``: the reads' and the writes' bandwidth shares (the writes' None: the reads').
    ``counts``: the blocks, K steps, slots, K chunks and cores the caller has already formed.
    """
    cap, write_cap = caps
    if write_cap is None:
        write_cap = cap
    g = block_grid(c, problem.k, f, rows, cols, counts)
    bt = block_types(c, g, f, write_cap, floor)
    ch = chunking(c, g, f, traffic, counts)
    cp = copy_totals_of(c, g, bt, ch, f, problem.bias, cap, counts)
    avg = average_steps(c, g, ch.step_kb)
    return CoreRecords(
        c=c, problem=problem, f=f, cap=cap, write_cap=write_cap, fix=c.has_fixpipe,
        floor=floor, g=g, bt=bt, typ=typical_steps(c, g, write_cap, bt), avg=avg, ch=ch, cp=cp,
        # (B's one-slot copies wait for the previous chunk's release; the floors: its last read.)
        lg=chunk_legs_of(c, g, ch, cp, avg.rb_kb if floor else avg.qb_kb, cap),
    )  # fmt: skip
