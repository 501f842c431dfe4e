"""The fast estimator: the simulator's quantities in closed form, vectorized over tilings.

It prices the same kernel as :mod:`simcore.pipeline.simulator` with the same cost formulas
(:mod:`simcore.pipeline.costs`) and the same chunk reuse
(:func:`simcore.pipeline.traffic.operand_traffic`), but instead of playing every instruction it
composes per-step and per-block periods:

* K step period on the MTE1 -> M chain, from the L0 double-buffer flags: with both dbL0A and
  dbL0B = 2 the loads of the next step overlap the MMAD, ``max(mmad, l0a + l0b)``; with dbL0A = 1
  every step is ``mmad + l0a + l0b``; with only dbL0B = 1, ``max(mmad, l0a) + l0b``.
* Block period: the K steps plus, with dbL0C = 1, the drain that the next block's first MMAD
  waits for; with dbL0C = 2 the drain overlaps and only matters when it is longer.
* Chunk copies: a copy waits for the last read of the chunk ``slots`` loads back. A stall is
  what the copy's slot-waiting leg (MTE2, or MTE3 on the UB path) plus the first reads exceeds
  the lead the step chain already gives; copies of B queued behind an A copy add to it; operands
  whose K chunks fill their slots exactly reload in a burst at each group change.
* No FixPipe: the drain's V and MTE3 legs precede the next block's copies in those queues, so
  step-0 copies start after the drain.
* Slot cycles (the max-plus cycles of one pass over an operand's K chunks): a copy waits for
  the last read of the chunk ``slots`` copies back, so each operand's copies chain through their
  chunks' reads. A hop is the chunk's own slot-waiting leg (full chunks and the short K-tail
  chunk priced apart, never averaged) plus its arrival-to-last-read (the step chain restarting
  at the arrival, :func:`_restart_reads`, the K-tail step with its own loads), plus what queues
  in between: B copies behind an A copy (on MTE2, or through the UB staging buffers, all the B
  chunks that start inside the A chunk), with one slot the other operand's copies that MTE2
  issues before the next copy (the bias slice at a block start too), and for a chunk that
  several blocks read before its slot is reused, their compute (or their share of the drain
  chain; without FixPipe, where a drain waits for the previous block's UB->GM copy, the drains
  up to the one dbL0C before the last block, then that block's steps; with one slot too). With
  ``kc`` a multiple of the slots each slot keeps the same K positions and the slowest slot
  sets the pace (the slot of chunk 0 meets the shared boundaries); otherwise the
  chunks rotate and the hops average over the slots. Special cycles: one-step A chunks whose
  next A read queues behind this step's B read; a whole pass with one A slot (every B copy of
  the pass up to the second-to-last step, then the last A read); a group change that reloads a
  resident K panel back to back.
* Slot chains, continued. With one B slot the B copies inside an A chunk also wait for the
  reads of the B chunk before. With one A slot every MTE2 copy issued from the last A chunk's
  start on (B's copies of that block, then the next bias slice) precedes the next A copy; with
  one B slot likewise the A copies between two B copies (those of the block's new A pass and the
  next block's step-0 copy, which fall in different B passes unless A is reloaded every block).
  Passes that reload the other operand and passes that do not are priced apart (an average
  inside the max hides the copies), and B's short K-tail copy behind an A copy is priced as
  itself. A streamed pass (more chunks than slots) also chains the first copy, the reads of
  chunks 0 .. kc - slots in one run from its arrival, and the next pass's first copy; in a
  pass that reloads B that chain runs through MTE2 in program order (every A and B copy up to
  the B chunk under chunk kc - slots's last step, B's staging legs, the reads from its arrival).
  B chunks that start inside the last A chunk (not with it) hold its last read back by their
  copies and the reads from the last one's arrival. With one A slot the whole-pass cycle
  through B's copies holds only in the passes that reload B; the others run A's own chain.
* Phases: a B reloaded in every block runs its slot chain once per block, and the tail row's
  blocks take a shorter step chain; per block type the longer of the step chain and the slot
  chain counts (sum of maxima, not maximum of sums); likewise the step chain and MTE2 when
  an operand is reloaded in every block (its copies are the same in every block type).
* MTE2 gap (:func:`mte2_gap_path`): with one L1 slot the operand's second copy of a block waits
  for the last read of its first chunk, so MTE2 idles after the block's first copies until the
  chunks (an A chunk through UB with its reorder and UB->L1 legs) have arrived and been read.
* UB path: the staging buffers chain every GM->UB copy to the previous reorder and every
  reorder to the previous UB->L1 copy, across both operands: between two reorders sits the
  longer of the previous UB->L1 and the next GM->UB leg (alternating A, B when both stream the
  same K chunks; a sparser operand whose copies each sit alone between two of the other's turns
  one of the other's links into two). With one operand through UB and the other direct, MTE2
  runs all copies in order and a GM->UB copy right after another one waits for its reorder.
  Without FixPipe the drain's L0C->UB leg and the reorders share the vector queue: an operand
  staged through UB in every block puts the drain, the next block's staging chain, the last
  UB->L1 leg, its reads and the MMAD in a cycle per block. Likewise per pass of several blocks
  (:func:`staged_pass_paths`): the drain before the pass, its reorders and UB->L1 legs (the
  first after the drain's UB->GM copy in MTE3's queue), the reads and the pass's blocks; and per
  column when the operand is reloaded in every column, with the full passes at their own group
  rows and the column's last pass linking to the next column's first GM->UB leg through its
  last reorder (the staging buffer), where both operands' copies alternate when both are staged.
* MTE2 order behind a slot-waiting copy: with A chunks longer than B's slots hold (B direct and
  streamed), the B copy issued at an A chunk's last step waits for a B read inside that chunk,
  and the next A copy queues behind it: per A chunk its copy, the reads up to that step, a B
  copy. With one B slot and B reloaded every block, A staged and reloaded per pass: at a pass's
  first block B's chain waits for A's whole staging chain up to the chunks B's first chunk's
  steps read.
* First block and drains: the first block ends after MTE2 brought its chunks and the remaining
  steps ran; every drain follows (with the UB->GM copies on chips without FixPipe, whose one C
  staging buffer chains them).
* Chains over more than one event (model after 2026.11.8). A stall at a chunk boundary is
  anchored on the read that frees the slot, which runs two steps (one slot) or a chunk and two
  steps (two slots) ahead of the MMAD it delays: where the boundaries come at every step their
  jumps overlap and each stall counts over the span of its jump (``m = slots + (stepK == 1)``
  boundaries), not over one step. One-step A chunks in one slot: the A read of the step after a
  B boundary queues on MTE1 behind that step's B read, so A's next copy waits for the B copy
  (its staging legs through UB) and the B read, a jump over two A hops. B chunks shorter than
  A's that do not tile them start at varying offsets inside the A chunks; the B chunk delays
  A's last read only by what its copy exceeds the A reads before it (the first chunks priced at
  their own offsets, the rest at their average); likewise, with one B slot, an A chunk starting
  inside a B chunk delays B's last read by the A copy queued behind B's and A's read before
  B's on MTE1 (in full B chunks, and A's K-tail chunk inside B's last one). With one L0B
  buffer (and two L0A) each MMAD pairs with the next step's loads, so the K-tail step's short
  loads follow a full MMAD and its short MMAD the next block's full loads.
* MTE2 idling behind staged copies: with one operand through UB, a GM->UB copy waits for the
  reorder of the one before, so MTE2 idles for what that reorder takes beyond the direct copy
  between them; and with A direct, reloaded every block in S slots, B staged per pass, the A
  copy S copies after the first A chunk read after step 0 waits for that read, which waits for
  B's staging legs at the pass's first block (MTE2 idles once per B pass). One A slot holding
  a block's K with B staged: the next block's A reads follow B's last read on MTE1, so A's
  chain over two blocks runs through B's whole staging chain.
* Without FixPipe: with one L0C buffer each block's first MMAD waits for the previous block's
  L0C->UB leg, which waits for the UB->GM copy before it (:func:`c1_drain_chain`: a sum over
  consecutive block types of ``max(mmads, previous UB->GM) + L0C->UB``); the per-block cycle of
  an operand staged every block also runs through MTE3 (the drain's UB->GM copy, the block's
  UB->L1 legs with the reorders between them), and the other operand's staging at its pass
  starts joins it.
* UB-path chips, after model 2026.11.10: the one-L0C drain chain carries the chunk stalls of
  one-slot operands and, at a one-slot outer operand's pass starts, its copy behind the block
  before's last read (:func:`c1_pass_start_extra`); per line of blocks the longer of drains
  and MMAD / slot chains counts (:func:`line_phase_path`); the first line brings an inner
  operand loaded once before its last block drains; both operands reloaded every block give a
  per-block cycle of a direct copy and the other's staging chain, in MTE2 order
  (:func:`staged_b_block_cycle`, :func:`staged_a_block_cycle`); MTE2 idles between linked
  GM->UB legs for the reorder each waits for (a full or the K-tail one, less a direct copy or
  bias slice between) and for the UB->L1 leg the K-tail reorder waits for; the V / MTE3
  cycle takes a direct pass copy or a staged pass inserted between two copies of the other
  operand at pass starts; a pass's later blocks wait for the drains as well as their MMADs.
* UB-path chips, after model 2026.11.12: both operands staged and copied in every block link
  their copies in the block's own staging order (:func:`staged_block_links`, each link the
  longer of the earlier UB->L1 and the later GM->UB leg, full and K-tail chunks apart); an
  operand staged in every block also runs a cycle through its first chunk, the block's whole
  MMAD chain after its first UB->L1 leg (:func:`staged_first_chunk_path`). B chunks that do
  not tile A's are priced at their offsets through UB too, B's K-tail chunk among them as
  itself, the first B chunk's own reads as an alternative chain, with one B slot each later B
  copy after the reads of the one before, and a B chunk starting at an A chunk's last step
  holding the next A chunk's reads back; with one slot each and B chunks at least as long, a B
  boundary inside an A chunk puts the A reads up to it, B's read, the B copy and the reads
  after it on A's chain (at the A chunk's last step, the next A copy behind the B copy). One A
  slot holding the whole K for several blocks, B staged in every block: A's chain per pass runs
  through B's staging chain over the pass's blocks. With one L0C buffer the drains after the
  first line chain through the later blocks' MMAD chains (:func:`c1_chain_after_first_line`).
  B direct in one slot, A staged in every block in chunks tiling B's: B's copies chain through
  the A chunks' staging legs queued behind each B copy and the last A chunk's read.
* Without FixPipe, an outer operand loaded once per line of blocks in at most as many chunks
  as slots (:func:`line_stay_path`): its next line's copy waits for its last read in the
  line's last block, so its slot chain holds each line's blocks, priced per line type (full
  lines and the tail line): the longer of the line's drain chain, its step chain and, with the
  other operand in one slot copied every block, that operand's copies and reads per block; and
  the line's first block runs the other operand's whole one-slot chain (with the outer
  operand's later chunk copies queued among its copies) before the drains.
* Without FixPipe, B in several slots copied in every block and A once per pass of blocks
  (both direct or by column DMA): at each later A pass start B's chain takes A's first copy,
  which MTE2 issues before B's and which starts at A's last read of that chunk, no later than
  B's slot-freeing read by the steps B's first chunk has more.
* Both operands reloaded in every block, without FixPipe (:func:`_block_replay_path`): every
  block repeats the same copies, so the first blocks are replayed in program order with the
  simulator's queue, slot, L0 and UB staging rules at the average block dimensions, and the
  rest run at the last replayed block's period (its chains cross MTE2, V, MTE3 and MTE1 in
  series, e.g. a one-slot copy after its previous chunk's last read, the other operand's
  GM->UB leg behind it, its reorder, UB->L1 leg and reads). Priced where the K loop is short
  and the copies may set the period.
* With FixPipe (310B1) and an operand staged through UB, each operand reloaded in every block
  or resident over a pass of blocks: the block replay (:func:`_block_replay_path`) with the
  drain on FixPipe's queue and a resident operand's copies left out (the blocks that reload it
  are no shorter), e.g. a one-slot staged operand's chain through its GM->UB, reorder and
  UB->L1 legs, the bias slice and the other operand's one-slot copies per block.
* Streamed A passes and one-slot B gaps (direct copies, after model 2026.11.12): where A's
  chunk ``kc - slots`` is the K-tail chunk, the next pass's first A copy waits for the K-tail
  step's read, which queues on MTE1 behind every read of the pass from chunk 0's arrival (the
  chain runs all ``k_iter`` reads, not ``k_iter - 1``); in a pass that reloads B that chain
  also runs from B's first chunk, queued behind A's first copy on MTE2, through every read up
  to chunk ``kc - slots``'s last step (longer than the chain through the later B chunk where
  B's copies run ahead). With one B slot and A chunks shorter than B's, B's second copy waits
  for B's read of step stepKb - 1, behind the A chunk under it, copied after B's first: MTE2
  idles per pass for that chunk's reads (:func:`b_slot_gap_behind_a`). Both staged with
  FixPipe, A in one slot and two chunks, both reloaded every block: a per-block cycle through
  A's first staging legs, B's reorder and UB->L1 leg behind them, the reads to A's first
  chunk's last read, A's K-tail UB->L1 leg, B's K-tail reorder and the next block's first
  GM->UB leg (:func:`staged_one_a_slot_cycle`). B chunks at offsets inside A's: the first one
  inside holds every A read from its offset on (as the chunk at A's start does for aligned
  chunks), and where the offsets cycle within the chunks priced exactly, each offset's chunks
  are counted (not the first chunks' average). An operand staged in one slot: a chunk's
  UB->L1 leg waits for the last read of the chunk before and the next chunk's reorder for
  that leg (the destination half), so per chunk the UB->L1 leg and the longer of the chunk's
  reads and the next reorder (:func:`staged_one_slot_chain`).
* UB-path chips, after model 2026.11.16: with one L0C buffer and one-block lines, a B pass of
  several columns starting behind A's first copy (A in one slot, copied every block) puts B's
  copy between the drains like a one-slot outer operand's (:func:`c1_pass_start_extra`); per
  line the longer of the drains and the inner operand's MTE2 copies (reloaded every block)
  counts (:func:`line_phase_path`); linked GM->UB pairs (one operand staged, the other
  direct) at the shorter reorder in the MTE2 path, the exact places priced after it; a one-slot
  B holding a two-step K with both L0 buffers doubled reads its K-tail step without waiting
  for a full MMAD; the line-stay chain does not count A's first copy twice (chain start and the
  first line's first block); a fixed A slot 0 meeting B's K-tail chunk takes that short copy;
  and a staged pass's later blocks, with one L0B buffer and each operand's K in one chunk,
  chain the K-tail step's B read after the full MMAD and the next block's reads after it.
* Makespan of the largest core = the longest of these paths, the compute chain (start-up, step
  periods, stalls, last drain), the MTE2 path (all copies plus what follows the last), the drain
  path and the V / MTE3 totals, clipped to [busiest pipe, sum of all work]. Each path is a chain
  of precedences the simulator also obeys, so adding one only moves the estimate towards it.
  Paths that repeat per block use the block dimensions averaged over the core's blocks (full and
  tail rows and columns), and the copy legs the group rows averaged over the passes.

On UB-path chips each tiling is priced on the path its UB plan takes
(:func:`simcore.pipeline.costs.vector_path_array`): vector reorders through UB, or 32 B column DMA
into L1 and row-by-row output copies when ``2 x transLength`` does not fit. The chip's HBM time is
a floor on the kernel, as in the simulator.

Inputs are numpy arrays of struct fields (one entry per candidate); the problem and chip are
scalars. Long inputs are evaluated in blocks of :data:`_BLOCK` candidates so the intermediate
arrays stay in the CPU caches; throughput is over a million candidates per second on one core.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simcore.estimate.arrays import cdiv as _cdiv
from simcore.estimate.arrays import divides as _divides
from simcore.estimate.arrays import raise_at as _raise_at
from simcore.estimate.arrays import sub as _sub
from simcore.estimate.binding import BINDING_NAMES, Makespan, clip_binding
from simcore.estimate.copies import chunk_legs_of, chunking
from simcore.estimate.copies import copies as copy_record
from simcore.estimate.drains import (
    c1_chain_after_first_line,
    c1_drain_chain,
    c1_pass_start_extra,
    corner_drain_path,
)
from simcore.estimate.grid import block_grid, block_types
from simcore.estimate.lines import both_reloaded_phase_gain, line_phase_path, line_stay_path
from simcore.estimate.mte2_gap import b_slot_gap_behind_a, mte2_gap_path
from simcore.estimate.replay import block_replay_path as _block_replay_path
from simcore.estimate.staged_blocks import (
    staged_a_block_cycle,
    staged_b_block_cycle,
    staged_first_chunk_path,
)
from simcore.estimate.staged_passes import staged_pass_paths
from simcore.estimate.staging import (
    staged_b_between_a,
    staged_block_links,
    staged_one_a_slot_cycle,
    staged_one_slot_chain,
)
from simcore.estimate.steps import average_steps, typical_steps
from simcore.hardware.dtypes import FRACTAL_ROWS, bits, c0_elements
from simcore.hardware.presets import HardwarePreset
from simcore.pipeline.costs import Costs, at_least, ceil_div, vector_path_array
from simcore.pipeline.mmad import mmad_cycles
from simcore.pipeline.traffic import (
    chip_bandwidth_cap,
    hbm_floor_cycles,
    k_chunking,
    operand_chip_traffic,
    reuse_working_set,
    slots,
    traffic_coefficients,
)
from simcore.pipeline.transfer import (
    l1_to_l0_cycles,
)
from simcore.tiling.problem import Problem
from simcore.tiling.tcube import TCubeTiling

#: The arrays :func:`estimate_arrays` needs, by struct name.
ESTIMATOR_FIELDS: tuple[str, ...] = (
    "singleCoreM", "singleCoreN", "baseM", "baseN", "baseK", "depthA1", "depthB1",
    "stepM", "stepN", "stepKa", "stepKb", "iterateOrder", "dbL0A", "dbL0B", "dbL0C",
)  # fmt: skip

PIPE_NAMES: tuple[str, ...] = ("MTE2", "MTE1", "M", "FIX", "V", "MTE3")
#: Candidates per pass of :func:`estimate_arrays` (see :func:`_estimate_blocks`).
_BLOCK = 16384
#: :func:`_block_replay_path` runs where the K loop has at most this many steps (its cost is a
#: numpy pass per step and played block) and the copies' legs take this share of the path so far
#: (below it the copy chains do not set the period).
_REPLAY_MAX_STEPS = 64
_REPLAY_SHARE = 0.7


def _core(
    c: Costs,
    problem: Problem,
    f: dict[str, Any],
    rows: Any,
    cols: Any,
    cap: Any,
    traffic: tuple[Any, Any, Any, Any] | None = None,
    floor: bool = False,
) -> dict[str, Any]:
    """Closed-form schedule of one core with a rows x cols share (arrays).

    ``traffic`` passes the (loads, elements) of A and B from :func:`operand_traffic` when the
    caller already has them for this shape. With ``floor`` the makespan returned is a lower
    bound over every dbL0A / dbL0B / dbL0C (see :func:`makespan_floor_arrays`; the caller
    passes the three flags as 2).
    """
    p = c.preset
    k = problem.k
    fix = c.has_fixpipe
    g = block_grid(c, k, f, rows, cols)
    bt = block_types(c, g, f, cap, floor)
    typ = typical_steps(c, g, cap)
    bm, bn, bk = g.bm, g.bn, g.bk
    m_iter, n_iter, k_iter, blocks = g.m_iter, g.n_iter, g.k_iter, g.blocks
    kf = k_iter - 1
    rm_t, cn_t = g.rm_t, g.cn_t
    a1, b1, c1, wa, zero, ones = g.a1, g.b1, g.c1, g.wa, g.zero, g.ones
    fr_t, fc_t, ka_t = g.fr_t, g.fc_t, g.ka_t
    span, cube, drain_total, m3_out = bt.span, bt.cube, bt.drain_total, bt.m3_out
    span_tail, span_ctail, span_corner, span_seq = (
        bt.span_tail, bt.span_ctail, bt.span_corner, bt.span_seq
    )  # fmt: skip
    mte1, blk_types, dr_last = bt.mte1, bt.types, bt.dr_last
    fr_1, la, lb, mm, per = typ.fr_1, typ.la, typ.lb, typ.mm, typ.per
    lead_a, lead_b, mm_kt, per_bd, dr, m3c = (
        typ.lead_a, typ.lead_b, typ.mm_kt, typ.per_bd, typ.dr, typ.m3c
    )  # fmt: skip

    # --- chunk copies ---------------------------------------------------------------------------
    order = g.order
    ch = chunking(c, g, f, traffic)
    cp = copy_record(c, g, bt, ch, f, problem.bias, cap)
    step_ka, step_kb, slots_a, slots_b = ch.step_ka, ch.step_kb, ch.slots_a, ch.slots_b
    loads_a, loads_b = ch.loads_a, ch.loads_b
    kc_a, kc_b, passes_a, passes_b = ch.kc_a, ch.kc_b, ch.passes_a, ch.passes_b
    km_a, km_b = kc_a - 1, kc_b - 1
    single_a, single_b, single_af, single_bf = ch.single_a, ch.single_b, ch.single_af, ch.single_bf
    streamed_a, streamed_b, st_a, st_b = ch.streamed_a, ch.streamed_b, ch.st_a, ch.st_b
    ga, va, ua, gb, vb, ub = cp.ga, cp.va, cp.ua, cp.gb, cp.vb, cp.ub
    mte2, vec, mte3 = cp.mte2, cp.vec, cp.mte3
    ga1, va1, ua1, gb1, vb1, ub1 = cp.ga1, cp.va1, cp.ua1, cp.gb1, cp.vb1, cp.ub1
    via_a, via_b, wait_a, wait_b, b_after_a = cp.via_a, cp.via_b, cp.wait_a, cp.wait_b, cp.b_after_a

    # --- stalls at chunk boundaries inside a block (steps > 0) ------------------------------------
    # How far ahead a copy may run: it waits for the last read of the chunk `slots` loads back.
    # Streamed operands (more K chunks than slots) with one slot wait for the previous chunk;
    # with two, for the one before it (a chunk of compute of slack). Operands whose K chunks fill
    # the slots exactly reload the whole panel at a group change, each copy waiting for the old
    # chunk at the same K position: a burst with a block minus a chunk of slack.
    base_a = wait_a + la + lb - lead_a - per
    base_a_b = wait_a + np.maximum(la, b_after_a) + lb - lead_a - per
    base_b = wait_b + lb - lead_b - per
    chunk_a = step_ka * per
    chunk_b = step_kb * per
    over_a = base_a - chunk_a * ~single_a  # (minus the slack: none with one slot)
    ex_a_alone = np.maximum(over_a, zero)
    ex_a_with_b = np.maximum(np.where(single_a, base_a_b, over_a), zero)
    ex_b_alone = np.maximum(base_b - chunk_b * ~single_b, zero)
    # Such a stall is anchored on the read that frees the slot, two steps before the delayed
    # MMAD with one slot (a chunk more with two). Where boundaries come at every step (or the
    # two slots keep one chunk of slack) the jumps overlap: over a long run of boundaries the
    # step chain grows by the jump's excess once per m boundaries, m = slots + (stepK == 1).
    m_a = slots_a + (step_ka == 1)
    m_b = slots_b + (step_kb == 1)
    ex_a_alone = ex_a_alone / m_a
    ex_a_with_b = ex_a_with_b / m_a
    ex_b_alone = ex_b_alone / m_b
    # Steps > 0 where both operands start a chunk: the stalls overlap (the B copy queues behind
    # the A copy), so such a step costs the larger one, not the sum.
    co_lcm, co_steps = ch.co_lcm, ch.co_steps
    co = (co_steps - 1) * np.minimum(passes_a, passes_b) * (st_a * st_b)
    inner = (
        co * np.maximum(ex_a_with_b, ex_b_alone)
        + (st_a * (passes_a * km_a - co)) * ex_a_alone
        + (st_b * (passes_b * km_b - co)) * ex_b_alone
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
    normal = per_bd - mm_kt
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

    # --- start-up: first copies (A then B) and the first reads --------------------------------
    if via_a and via_b:
        a_rdy = ga1 + va1 + ua1
        b_rdy = np.maximum(a_rdy, ga1 + va1 + gb1) + vb1 + ub1
    elif via_a:
        a_rdy = ga1 + va1 + ua1
        b_rdy = ga1 + gb1
    elif via_b:
        a_rdy = ga1
        b_rdy = ga1 + gb1 + vb1 + ub1
    else:
        a_rdy = ga1
        b_rdy = ga1 + gb1
    start = np.maximum(a_rdy + la, b_rdy) + lb
    # Span between the first MMAD start of block 0 and the first MMAD start: per-block gaps
    # were summed for every block; block 0 has none.
    # The first step's period counts its loads, which the start-up already holds.
    start_0 = start - (per - mm)
    compute_path = start_0 + span + bound_ex + inner + dr_last
    if not floor and fix:
        # With one L0B buffer (and two L0A) a step's B read waits for the MMAD before it, and
        # its A read follows the B read before it on MTE1: the MMAD-start chain pairs each MMAD
        # with the next step's loads, ``max(mm, la_next) + lb_next``, not with its own. Across
        # the K-tail step the full MMAD meets the short tail loads and the short tail MMAD the
        # next block's full loads, which is longer (rearrangement: the correction is >= 0).
        # (With dbL0A = 1 everything runs in series, the sum is the same; with both doubled
        # the loads run a step ahead; without FixPipe the block boundaries are priced from the
        # drain instead.) Priced on the typical block, for every block.
        # (Priced on the candidates where it applies only.)
        idx = np.flatnonzero(b1 & ~a1 & (k_iter >= 2))
        if idx.size:
            mm_s, la_s, mk_s = _sub(mm, idx), _sub(la, idx), _sub(mm_kt, idx)
            la_t1 = l1_to_l0_cycles(p, True, (_sub(fr_1, idx) * FRACTAL_ROWS), _sub(ka_t, idx))
            pair = (
                np.maximum(mm_s, la_t1)
                + np.maximum(mk_s, la_s)
                - np.maximum(mm_s, la_s)
                - np.maximum(mk_s, la_t1)
            )
            compute_path = np.array(compute_path, dtype=np.float64)
            compute_path[idx] += _sub(blocks, idx) * pair
    # MTE2 runs ahead of the chain; after its last copy the remaining steps of that chunk and the
    # drain are left.
    # (``x * (loads > 0)`` is ``np.where(loads > 0, x, 0)`` for x >= 0, about half the cost.)
    last_step = np.maximum(km_a * step_ka * (loads_a > 0), km_b * step_kb * (loads_b > 0))
    tail_after = (k_iter - last_step - 1) * per + la + lb + mm + dr_last
    tail_plain = tail_after
    if via_a or via_b:
        tail_after = tail_after + np.where(via_b, vb1 + ub1, va1 + ua1)
    copy_path = mte2 + tail_after
    # Without FixPipe a block's L0C->UB move waits for the previous block's UB->GM copy (one C
    # staging buffer), so the moves and copies of all blocks chain after the first block.
    drain_path = start + kf * per + mm + drain_total + (0.0 if fix else m3_out)
    if not fix and not floor:
        # A chunk copy that waits for a read of its own block (``inner``) holds that block's
        # MMAD chain back after it has started behind the drain, so the chain carries it too:
        # with one slot every copy after the block's first waits so. (With two, the first two
        # wait for reads of the block before, long done when the drain sets the pace: left out.)
        # (The chain applies with one L0C buffer only: priced on those candidates, which also
        # halves the cost of the chain itself.)
        idx_c1 = np.flatnonzero(c1)
        c1_path = np.zeros(np.shape(blocks))
        stall_c1: Any = np.zeros(0)
        if idx_c1.size:
            i_c = idx_c1
            one_slot = (_sub(single_a, i_c) | ~_sub(streamed_a, i_c)) & (
                _sub(single_b, i_c) | ~_sub(streamed_b, i_c)
            )
            stall_blk = one_slot * _sub(inner, i_c) / np.maximum(_sub(blocks, i_c), 1)
            chain_c1 = c1_drain_chain(
                {key: tuple(_sub(x, i_c) for x in v) for key, v in blk_types.items()},
                _sub(m_iter, i_c), _sub(n_iter, i_c), _sub(order, i_c) == 0, _sub(normal, i_c),
                stall_blk,
            )  # fmt: skip
            c1_path[i_c] = _sub(start_0, i_c) + chain_c1
            stall_c1 = stall_blk
    if floor:
        # The compute path is not monotone in the L0 flags (its start-up share shrinks as the
        # period grows): left out of the floor (the group bound prices it per L0 class).
        mk = Makespan(copy_path, "copy", track=False)
    else:
        mk = Makespan(compute_path, "compute")
        mk.raise_all(copy_path, "copy")
    mk.raise_all(drain_path, "drain")
    if not fix and not floor and idx_c1.size:
        mk.raise_at(idx_c1, c1_path[idx_c1], "c1_drain_chain")
    if not fix or via_a or via_b:
        mk.raise_all(ga1 + vec + (m3c if not fix else ua1 + la + lb + mm), "vector_queue")
        mk.raise_all(ga1 + va1 + mte3, "mte3_queue")
    if via_a or via_b:
        # The UB staging buffers chain the copies of both operands: a GM->UB copy waits for the
        # previous reorder, a reorder for the previous UB->L1 copy.
        g_ub = (ga if via_a else 0.0) + (gb if via_b else 0.0)
        v_ub = va + vb
        u_ub = ua + ub
        after = la + lb + mm + dr_last
        last_u = np.where(via_b, ub1, ua1) if (via_a and via_b) else (ub1 if via_b else ua1)
        first_g = ga1 if via_a else gb1
        mk.raise_all(g_ub + v_ub + last_u + after, "ub_staging_mte2")
        mk.raise_all(first_g + v_ub + u_ub + after, "ub_staging_vector")

    # --- slot cycles ------------------------------------------------------------------------------
    # A copy waits for the last read of the chunk `slots` copies back, so the copies of one
    # operand chain through their chunks' reads: the slot-waiting leg plus the arrival-to-last-
    # read per chunk, the reads restarting from the arrival, and what queues between (the other
    # operand's copies on MTE2 or in the UB staging buffers). The legs are those of the chunk
    # itself (full chunks, and the last one with the K tail), not averages.
    # These paths repeat per block: price the steps with the block dimensions averaged over
    # the core's blocks (full and tail rows and columns), not the full block's.
    avg = average_steps(c, g, step_kb)
    la, lb, mm, per, ra, rb, rab = avg.la, avg.lb, avg.mm, avg.per, avg.ra, avg.rb, avg.rab
    rb_kb, la_kt, lb_kt, per_kt, kt_d = avg.rb_kb, avg.la_kt, avg.lb_kt, avg.per_kt, avg.kt_d
    lg = chunk_legs_of(c, g, ch, cp, rb_kb, cap)
    a_full, a_last, b_full, b_last, b_first = lg.a_full, lg.a_last, lg.b_full, lg.b_last, lg.b_first
    b_leg_f, b_leg_lc, b_next, b_next_l = lg.b_leg_f, lg.b_leg_lc, lg.b_next, lg.b_next_l
    b_next_in, b_next_in_l = lg.b_next_in, lg.b_next_in_l
    km1_a, km1_b = kc_a - 1, kc_b - 1
    a_last_start, b_last_start, b_many, has_b = (
        ch.a_last_start, ch.b_last_start, ch.b_many, ch.has_b
    )  # fmt: skip
    co_frac, co_rest, co_frac_ab = ch.co_frac, ch.co_rest, ch.co_frac_ab
    inner_links: tuple[np.ndarray, Any] | None = None
    if via_a or via_b:
        # Between two reorders sits the later of the previous copy's UB->L1 leg (the destination
        # half) and the next copy's GM->UB leg (it waits for the previous reorder: the source
        # half), so the reorders chain through max(GM->UB, UB->L1) of consecutive copies: per
        # pass, chunk j's GM->UB pairs with chunk j-1's UB->L1 (the first with the last one).
        pairs: Any = 0.0
        own_pairs: list[Any] = []
        for via, kc, passes, legs_f, legs_l in (
            (via_a, kc_a, passes_a, a_full, a_last),
            (via_b, kc_b, passes_b, b_full, b_last),
        ):
            own_pairs.append(0.0)
            if via:
                g_f, _, u_f = legs_f
                g_l, _, u_l = legs_l
                per_pass = np.where(
                    kc == 1,
                    np.maximum(g_l, u_l),
                    np.maximum(g_f, u_l)
                    + np.maximum(kc - 2, 0) * np.maximum(g_f, u_f)
                    + np.maximum(g_l, u_f),
                )
                own_pairs[-1] = passes * per_pass
                pairs = pairs + own_pairs[-1]
        if via_a and via_b:
            # Both through UB with the same K chunks: the copies alternate A, B, so each A
            # copy's UB->L1 leg pairs with the B copy's GM->UB leg after it and vice versa.
            ga_f, _, ua_f = a_full
            ga_l, _, ua_l = a_last
            gb_f, _, ub_f = b_full
            gb_l, _, ub_l = b_last
            many = kc_a > 1
            cross = passes_a * (
                (kc_a - 1) * np.maximum(gb_f, ua_f)
                + np.maximum(kc_a - 2, 0) * np.maximum(ga_f, ub_f)
                + many * np.maximum(ga_l, ub_f)
                + np.maximum(gb_l, ua_l)
                + np.maximum(np.where(many, ga_f, ga_l), ub_l)
            )
            # One operand's copies sparser and in longer K chunks than the other's: each sits
            # alone between two of the other's, so it turns one pair of the dense operand into
            # a pair with its GM->UB leg and a pair with its UB->L1 leg. A copy is issued before
            # the other operand's copy of the same step, so a sparse A copy sits between B's
            # copy before it and B's copy of its own step (B's last one when both are the last),
            # and a sparse B copy between A's copy of its step (A's last one when both are the
            # last) and A's next copy (the next pass's first after B's last copy).
            at_last = (kc_a - 1) * step_ka == (kc_b - 1) * step_kb

            def ins(g: Any, u: Any, g_prev_u: Any, g_next: Any) -> Any:
                return (
                    np.maximum(g, g_prev_u) + np.maximum(g_next, u) - np.maximum(g_next, g_prev_u)
                )

            gb_n = np.where(at_last, gb_l, gb_f)
            ins_a = passes_a * (
                (kc_a - 1) * ins(ga_f, ua_f, ub_f, gb_f) + ins(ga_l, ua_l, ub_f, gb_n)
            )
            ua_p = np.where(at_last, ua_l, ua_f)
            ga_n = np.where(many, ga_f, ga_l)
            ins_b = passes_b * (
                (kc_b - 1) * ins(gb_f, ub_f, ua_f, ga_f) + ins(gb_l, ub_l, ua_p, ga_n)
            )
            iso = np.where(
                (loads_a <= loads_b) & (step_ka >= step_kb),
                own_pairs[1] + ins_a,
                np.where((loads_b < loads_a) & (step_kb >= step_ka), own_pairs[0] + ins_b, pairs),
            )
            pairs = np.where(
                (step_ka == step_kb) & (passes_a == passes_b), cross, np.maximum(pairs, iso)
            )
            # Both reloaded in every block: the copies' staging order within a block is known
            # (by step, A's first at a shared step), so price each link between consecutive
            # copies as itself (the sparse / dense pairings above assume an order).
            # (Priced on the candidates where it applies only.)
            idx = np.flatnonzero((passes_a > blocks - 0.5) & (passes_b > blocks - 0.5) & has_b)
            if idx.size:
                links_blk, wrap = staged_block_links(
                    idx, (kc_a, kc_b, step_ka, step_kb), (a_full, a_last, b_full, b_last)
                )
                pairs = np.array(np.broadcast_to(pairs, np.shape(blocks)), dtype=np.float64)
                pairs[idx] = _sub(passes_a, idx) * links_blk
                # (The links inside a block, for the per-block cycles below.)
                inner_links = (idx, links_blk - wrap)
        first = a_full[0] if via_a else b_full[0]
        mk.raise_all(first + va + vb + pairs + la + lb + mm + dr_last, "ub_staging_links")
    if via_a != via_b:
        # One operand through UB, the other direct: MTE2 runs every copy in program order, and
        # a GM->UB copy right after another one (no direct copy or bias slice between) also
        # waits for that one's reorder. The direct operand's copies (and the bias slices not at
        # the start of its passes) break such pairs, each at most one when its K chunks are at
        # least as long as the staged operand's (otherwise assume all are broken).
        loads_u, loads_d = (loads_a, loads_b) if via_a else (loads_b, loads_a)
        step_u, step_d = (step_ka, step_kb) if via_a else (step_kb, step_ka)
        passes_d = passes_b if via_a else passes_a
        v_u1, u_u1 = (va1, ua1) if via_a else (vb1, ub1)
        breaks = loads_d + (blocks - passes_d if problem.bias else 0.0)
        linked = np.where(step_d >= step_u, np.maximum(loads_u - 1 - breaks, 0.0), 0.0)
        # (In K chunks of two lengths a linked pair waits for the full or the K-tail reorder
        # by where it sits, which the average misprices (a pass whose one linked pair is the
        # one after its K-tail chunk: +4.5 %): priced here at the shorter, and below by the
        # pairs' places, outside the floor.)
        kc_u1 = kc_a if via_a else kc_b
        v_link = np.where(
            kc_u1 >= 2,
            np.minimum(v_u1, np.minimum(a_full[1], a_last[1]) if via_a
                       else np.minimum(b_full[1], b_last[1])),
            v_u1,
        )  # fmt: skip
        path_link = mte2 + linked * v_link + v_u1 + u_u1 + after
        # The bias slice of a block (MTE2).
        bias_1 = c.bias_load_cycles(np.minimum(bn, cols), cap) if problem.bias else 0.0
        mk.raise_all(path_link, "mte2_linked_pairs")
        if not floor:
            # The linked pairs priced by the reorder they wait for: the pair after a pass's
            # last chunk waits for the short K-tail reorder, the others for a full one (the
            # average underprices a pass of full chunks whose last pair the bias slice breaks,
            # and overprices where direct copies break only the pairs inside). (Seen: 910A
            # fp16 128 x 4096 x 4096, B staged in five one-step chunks per block after the
            # bias slice and A's copy: four 630-cycle reorders per block, not the 512 average:
            # -7.7 %.)
            # And the K-tail chunk's GM->UB leg starts at the reorder before it, but its
            # reorder also waits for the UB->L1 leg before (the destination half), longer than
            # the short tail copy; the next pass's first GM->UB leg waits for that reorder, so
            # MTE2 idles for the difference too, once per pass, where no direct copy or bias
            # slice sits in either pair. (Seen: 910A fp16 2048^3, A staged in four one-step
            # chunks, the last 170 cycles behind a 488-cycle UB->L1 leg: -7.7 %.)
            # (Priced on the candidates where they may exceed the path so far.)
            full_u, last_u = (a_full, a_last) if via_a else (b_full, b_last)
            kc_u = kc_a if via_a else kc_b
            excess = np.maximum(full_u[2] - last_u[0], 0.0)
            passes_u = passes_a if via_a else passes_b
            # (Bounds: every linked pair at a full reorder; with A staged every pair at its
            # whole reorder.)
            if via_a:
                upper = (
                    mte2 + v_u1 + u_u1 + after
                    + loads_a * np.maximum(full_u[1], last_u[1]) + passes_u * excess
                )  # fmt: skip
            else:
                upper = (
                    path_link + linked * (np.maximum(full_u[1] - v_u1, 0.0) + v_u1 - v_link)
                    + passes_u * excess
                )  # fmt: skip
            idx = np.flatnonzero((kc_u >= 2) & (upper > mk.value))
            if idx.size:
                passes_u = _sub(passes_u, idx)
                s_u, s_d, k_s = _sub(step_u, idx), _sub(step_d, idx), _sub(k_iter, idx)
                x_0 = (_sub(kc_u, idx) - 2) * s_u
                x_l = x_0 + s_u
                # A direct copy between (A's at a step precedes B's): into the tail chunk, and
                # after it up to the next pass's first copy (with B staged, A's copy at the
                # next block's start too); the bias slice breaks the latter.
                if via_a:
                    hit = np.ceil(x_0 / s_d) * s_d < x_l
                    hit2 = np.floor((k_s - 1) / s_d) * s_d >= x_l
                else:
                    hit = np.floor(x_l / s_d) * s_d > x_0
                    hit2 = True
                reload_d = np.minimum(_sub(passes_d, idx) / np.maximum(passes_u, 1), 1.0)
                n_after = (not problem.bias) * passes_u * (1.0 - hit2 * reload_d)
                n_tail = n_after * (1.0 - hit * reload_d)
                v_f, v_l = _sub(full_u[1], idx), _sub(last_u[1], idx)
                link_s = _sub(linked, idx)
                n_in = np.maximum(link_s - n_after, 0.0)
                links = n_in * v_f + (link_s - n_in) * v_l
                if via_a:
                    # A pass in every block, each B copy alone between two A copies: per pass,
                    # the pairs inside it a B copy breaks still idle for what the full reorder
                    # exceeds that copy, the others for the whole reorder; the pair after its
                    # K-tail chunk for what that reorder exceeds the B copy and the bias slice
                    # between (A's copy comes first at a step, so the next block's bias slice
                    # sits between the block's last A copy and the next first one).
                    alone = (passes_u > _sub(blocks, idx) - 0.5) & (
                        _sub(loads_d, idx) <= _sub(loads_u, idx)
                    )
                    g_d = _sub(gb1, idx)
                    kc_s = _sub(kc_u, idx)
                    b_after = hit2 * reload_d
                    b_in = np.clip(
                        _sub(loads_d, idx) / np.maximum(passes_u, 1) - b_after, 0.0, kc_s - 1
                    )
                    after_res = np.maximum(
                        v_l - b_after * g_d - problem.bias * _sub(bias_1, idx), 0.0
                    )
                    per_pass = (
                        (kc_s - 1 - b_in) * v_f + b_in * np.maximum(v_f - g_d, 0.0) + after_res
                    )
                    links = np.where(alone & (s_d >= s_u), passes_u * per_pass, links)
                base_u = _sub(mte2 + v_u1 + u_u1 + after, idx) + links
                mk.raise_at(idx, base_u + n_tail * _sub(excess, idx), "mte2_linked_by_place")
        if not floor:
            # Both in chunks of the same steps and reloaded together (the same passes):
            # between two GM->UB copies MTE2 runs one direct copy (A first at a step), and
            # the second GM->UB copy waits for the first one's reorder, so MTE2 idles for what
            # that reorder takes beyond the direct copy (full chunk j before the direct chunk
            # j + 1, the K-tail one the last; the last reorder before the next pass's first
            # direct copy and the bias slice).
            u_f, u_l = (a_full, a_last) if via_a else (b_full, b_last)
            d_f, d_l = (b_full, b_last) if via_a else (a_full, a_last)
            kc_u = kc_a if via_a else kc_b
            passes_u = passes_a if via_a else passes_b
            # Direct operand reloaded with every staged pass (its passes are a superset): inside
            # a staged pass one direct copy sits between two GM->UB copies; after the pass's
            # last one, only where both are reloaded together (else more direct copies).
            together = np.abs(passes_d - passes_u) < 0.5
            if via_a:
                # A copy first at a step: B's copy of the same step sits between.
                gaps = (kc_u - 1) * np.maximum(u_f[1] - d_f[0], 0.0) + together * np.maximum(
                    u_l[1] - d_l[0] - bias_1, 0.0
                )
            else:
                d_first = np.where(kc_u > 1, d_f[0], d_l[0])
                gaps = (
                    np.maximum(kc_u - 2, 0) * np.maximum(u_f[1] - d_f[0], 0.0)
                    + (kc_u >= 2) * np.maximum(u_f[1] - d_l[0], 0.0)
                    + together * np.maximum(u_l[1] - d_first - bias_1, 0.0)
                )
            same = (step_d == step_u) & (passes_d > passes_u - 0.5) & has_b
            path_gap = mte2 + passes_u * gaps + u_l[1] + u_l[2] + after
            mk.raise_all(same * path_gap, "mte2_direct_between_staged")
        if not floor and via_b:
            # A direct and reloaded every block, B staged and reloaded per pass of several
            # blocks: at a B pass's first block the reads after its step-0 A read wait for B's
            # GM->UB, reorder and UB->L1 legs, and A's copy S (A's slots) copies after the
            # first A chunk read after step 0 waits for that read (FIFO slots). MTE2 runs B's
            # GM->UB leg and the A copies in between (with their blocks' bias slices), then
            # idles for the rest, once per B pass. (A's last read of that chunk from B's
            # arrival: rab, its steps from step 0 on.)
            j_st = (step_ka == 1) * 1.0
            t_st = j_st * step_ka + step_ka
            n_between = j_st + slots_a - 1
            b_stage = np.where(kc_b > 1, b_full[1] + b_full[2], b_last[1] + b_last[2])
            # The copies in between: A's chunks j* + 1 .. j* + n (K-tail ones every kc_a).
            n_tail = np.floor((j_st + n_between + 1) / kc_a) - np.floor((j_st + 1) / kc_a)
            a_between = n_between * a_full[0] + n_tail * (a_last[0] - a_full[0])
            idle = (
                b_stage
                + rab(np.minimum(t_st, k_iter))
                - a_between
                - np.floor(n_between / kc_a) * bias_1
            )
            ok = (t_st <= k_iter) & (passes_a > blocks - 0.5) & (passes_b < blocks) & has_b
            # (The last copy is an A copy: its steps and the drain follow, no B staging.)
            mk.raise_all(
                mte2 + tail_plain + ok * passes_b * np.maximum(idle, 0.0),
                "mte2_idle_behind_staged_pass",
            )

    # A: hops of its full chunks and of its last (K-tail) chunk.
    wait_af = a_full[2] if via_a else a_full[0]
    wait_al = a_last[2] if via_a else a_last[0]
    r_last_a = k_iter - a_last_start
    reads_af = ra(step_ka)
    reads_al = ra(r_last_a) - la + la_kt
    # A chunk that several blocks read before its slot is reused (an operand that stays for
    # a group of blocks) is read last in the last of them: the hop spans their compute too.
    # (Each block takes its step chain; the drain chain holds the MMADs back by at most dbL0C
    # blocks.)
    blocks_n = np.maximum(blocks, ones)
    step_per = span / blocks_n
    drain_per = (drain_total + (0.0 if fix else m3_out)) / blocks_n

    # (Without FixPipe, what the last block adds after the drain chain: see stay.)
    enter_blk = drain_total / blocks_n + step_per if not (fix or floor) else 0.0

    def stay(passes: Any) -> Any:
        others = blocks / np.maximum(passes, ones) - 1
        drains = (others - f["dbL0C"]) * drain_per
        held = np.maximum(others * step_per, drains)
        if fix or floor:
            return held
        # Without FixPipe a block's L0C->UB leg waits for the previous block's UB->GM copy (one
        # C staging buffer), so the drain chain runs from the first block's last MMAD through
        # the drains of the blocks up to the one dbL0C before the last, whose L0C->UB leg the
        # last block's first MMAD waits for; then that block's steps.
        enter = (others >= f["dbL0C"]) * enter_blk
        return np.maximum(held, drains + enter)

    stay_a = stay(passes_a)
    stay_b = stay(passes_b)
    hop_f = wait_af + reads_af + stay_a
    hops_f = km1_a * hop_f  # a pass's full chunks
    hop_l = wait_al + reads_al + stay_a
    rs_a = reads_al + stay_a
    # A block's bias slice on MTE2 (before its chunk copies).
    bias_cyc = c.bias_load_cycles(np.minimum(bn, cols), cap) if problem.bias else 0.0
    # A's chain without what B adds (per-operand floor, see operand_floor_arrays): the last
    # hop of a single direct slot is wait + max(reads + stay, ahead) >= wait + reads.
    # (Only the floors use it.)
    if floor:
        hop_l_a_own = wait_al + reads_al + (0.0 if via_a else np.where(single_a, 0.0, stay_a))
    if not via_a:
        # One slot: the next pass's first copy also queues on MTE2 behind what is issued after
        # this pass's last A copy: B's last copy when it starts later (with one B slot it waits
        # for the B read of the step before), then the bias slice of the next block.
        b_after = np.maximum(b_last_start - a_last_start, zero)
        b_wait = (ra(np.maximum(b_after, ones)) + lb) * single_bf
        b_later = b_after > 0
        ahead = bias_cyc + b_later * has_b * co_frac * (b_wait + b_last[0])
        hop_l = np.where(single_a, wait_al + np.maximum(rs_a, ahead), hop_l)
    # B chunks that start with an A chunk or inside it (up to its second-to-last step: the
    # last A read precedes the B read of its own step on MTE1) queue behind the A copy, and the
    # last A read waits for the last of them; with one slot the next A copy also queues on MTE2
    # behind them.
    n_in1 = np.floor((at_least(step_ka, 2) - 2) / step_kb)  # their count less one
    r_in = step_ka - n_in1 * step_kb
    # (B's reads between its copies count where its chunks tile the A chunk.)
    ka_div = _divides(step_ka, step_kb)
    # B chunks shorter than A's that do not tile them (start at varying offsets inside).
    kb_short = step_kb < step_ka
    kb_off = kb_short & ~ka_div
    b_in = np.where(ka_div, b_next_in, b_next)
    # (The B chunk at the A chunk's start holds all of its reads back too: the larger of the
    # two chains through the first and the last B chunk inside.)
    rab_ka = rab(step_ka)
    in_reads = np.maximum(n_in1 * b_in + rab(r_in), rab_ka) - reads_af
    gain_f = np.maximum(b_leg_f + in_reads, zero)
    # The last A chunk meets B's last chunk when both end their K loop together.
    b_at_last = a_last_start == b_last_start
    b_leg_l = np.where(b_at_last, b_leg_lc, b_leg_f)
    gain_l = np.maximum(b_leg_l + rab(r_last_a) - la + la_kt - reads_al, zero)
    # A full A chunk that starts with B's last (K-tail) chunk: that shorter B copy is the one
    # behind it (B chunks at least as long as A's, so the shared boundaries are exact).
    b_tail_co = b_many & ~kb_short & _divides(b_last_start, step_ka) & ~b_at_last & has_b
    gain_fl = np.maximum(b_leg_lc + in_reads, zero)
    if not via_a:
        g_b_l = np.where(b_at_last, b_last[0], b_first[0])
        gain_f = np.maximum(gain_f, single_af * (b_first[0] - reads_af))
        gain_fl = np.maximum(gain_fl, single_af * (b_last[0] - reads_af))
        # One-step A chunks in one slot: the A read of the step after a B boundary queues on
        # MTE1 behind that step's B read, and A's next copy waits for that A read. So between
        # A's copies s and s + 2 lie the B copy behind copy s, the B read (with one L0A buffer
        # the MMAD too) and the A read: over two hops, instead of two A reads and a copy. With
        # B boundaries at every step the jumps overlap and each counts over its two steps.
        # (Priced on the candidates where it applies only.)
        idx = np.flatnonzero(single_a & (step_ka == 1))
        if idx.size:
            jump = _sub(lb, idx) + _sub(wa, idx) * _sub(mm, idx) - _sub(la, idx)
            jump = jump - _sub(wait_af, idx)
            span_j = 1.0 + (_sub(step_kb, idx) == 1)
            for gain, legs in ((gain_f, b_first), (gain_fl, b_last)):
                b_leg = _leg_after_a(False, via_b, tuple(_sub(x, idx) for x in legs))
                gain[idx] = np.maximum(gain[idx], (b_leg + jump) / span_j)
        gain_l = np.maximum(gain_l, single_af * (g_b_l - reads_al))
    # Shared boundaries per pass (one may be the last A chunk's start); shorter B chunks start
    # inside every A chunk, aligned or not.
    # (Without B copies, none: co_frac is 0 there too.)
    last_co = _divides(a_last_start, step_kb) & has_b
    full_co = np.where(kb_short, km1_a, co_steps - last_co) * has_b
    extra = co_frac * (full_co * gain_f + b_tail_co * (gain_fl - gain_f) + last_co * gain_l)
    # B chunks shorter than A's that do not tile them start at varying offsets o inside the A
    # chunks (o cycles through the multiples of gcd(stepKa, stepKb)): the B copies queue behind
    # the A copy, and A's last read waits for them only by what exceeds the A reads before the
    # last B chunk inside. The first chunks are priced at their own offsets (a leading axis),
    # the rest at their average. (Priced on the candidates where it applies only.)
    a_many = kc_a > 1
    nonal = kb_off & has_b & a_many
    idx = np.flatnonzero(nonal) if not floor else np.empty(0, dtype=np.int64)
    if idx.size:
        sk_a, sk_b, kc_s = _sub(step_ka, idx), _sub(step_kb, idx), _sub(kc_a, idx)
        # (With one B slot each later B copy inside also waits for the reads of the one before.)
        bl_s, bi_s, rf_s = _sub(b_leg_f, idx), _sub(b_next_in, idx), _sub(reads_af, idx)
        pipe_f = _sub(single_a, idx) * (_sub(b_first[0], idx) - rf_s) if not via_a else 0.0
        rab_s = rab.sub(idx)
        # B's last (K-tail) chunk among those inside: its shorter copy is the one queued last.
        bls_s = _sub(b_last_start, idx)
        # (Through UB the chain ends with that chunk's own UB->L1 leg.)
        u_tl = _sub(b_last[2] - b_full[2], idx) if via_b else 0.0
        tl_in = _sub(b_next_in_l, idx) - bi_s + u_tl
        tl_lg = _sub(b_leg_lc, idx) - bl_s
        # A B chunk that starts at an A chunk's last step holds the next A chunk's reads back
        # (its copy precedes that A copy, its reads the next step's A read): the chain from
        # this A chunk's copy through every B copy up to it and the reads from its arrival to
        # the next A chunk's last read, less that chunk's own hop (priced in the sum).
        als_s = _sub(a_last_start, idx)
        own_f = _sub(hop_f, idx)
        own_l = _sub(hop_l, idx)
        kt_s = _sub(kt_d, idx)
        r_la = _sub(r_last_a, idx)

        # (Per offset o, a B boundary in the A chunk: o < stepKb < stepKa, so the B chunks
        # starting at o, o + stepKb, ... before the chunk's last step are n_o = m + 1 >= 1, and
        # the last of them has r_o >= 2 steps of the A chunk: no clamps, no n_o >= 1 test.)
        skb_1 = sk_b + 1
        bls_m = bls_s - sk_b
        tl_in_b = tl_in + bi_s
        pipe_0 = np.maximum(pipe_f, 0.0)

        def gain_at(o: Any, x0: Any) -> Any:
            so = sk_a - o  # the A chunk's steps from o on
            m = np.floor((so - 2) / sk_b)
            ms = m * sk_b
            r_o = so - ms
            xs = x0 + o + ms  # the last B chunk inside: its first step in the pass
            many = m >= 1
            tail = (xs == bls_s) * np.where(many, tl_in, tl_lg)
            m_bi = m * bi_s
            # (The B copies run back to back; the first B chunk's own reads hold A's last read
            # too: the longer of the two chains.)
            g_o = bl_s + np.maximum(m_bi + tail + rab_s(r_o), many * rab_s(so)) - rf_s
            # The next B chunk starts at the A chunk's last step (r_o = stepKb + 1) and at or
            # before B's last one.
            strad = (r_o == skb_1) & (xs <= bls_m)
            nxt_last = x0 + sk_a >= als_s
            g_2 = (
                bl_s + m_bi + tail
                + np.where(xs == bls_m, tl_in_b, bi_s)
                + rab_s(np.where(nxt_last, r_la + 1, sk_a + 1)) + nxt_last * kt_s
                - rf_s - np.where(nxt_last, own_l, own_f)
            )  # fmt: skip
            g_o = np.where(strad, np.maximum(g_o, g_2), g_o)
            return np.maximum(g_o, pipe_0)

        # The first n_j full chunks exactly (all at once, a leading axis of chunk indices),
        # the later ones at their average (the offsets cycle). The offset of chunk j: from its
        # start x to the next B boundary (zero where one starts with it).
        n_j = 3
        jj = np.arange(n_j, dtype=np.float64)[:, None]
        x = jj * sk_a
        g_j = (jj <= kc_s - 2) * gain_at(np.ceil(x / sk_b) * sk_b - x, x)
        g_sum = g_j.sum(axis=0) * (1.0 + np.maximum(kc_s - 1 - n_j, 0) / np.clip(kc_s - 1, 1, n_j))
        # Where the offsets cycle within n_j chunks (every lcm / stepKa chunks), count each
        # offset's full chunks exactly: the first n_j's average leans towards the offsets that
        # come first when the cycle does not divide n_j.
        p_cyc = _sub(co_lcm, idx) / sk_a
        cnt = np.maximum(np.floor((kc_s - 2 - jj) / p_cyc) + 1.0, 0.0) * (jj < p_cyc)
        g_sum = np.where(p_cyc <= n_j, (cnt * g_j).sum(axis=0), g_sum)
        extra[idx] += _sub(co_frac, idx) * (g_sum - _sub(full_co, idx) * _sub(gain_f, idx))
    if not via_a:
        # One slot, B chunks at least as long as A's: a B boundary inside a full A chunk that is
        # not its start still puts that B copy on MTE2 before the next A copy.
        # (Priced on the candidates where it applies only.)
        idx = np.flatnonzero(single_a & ~kb_short & has_b)
        if idx.size:
            als, bls = _sub(a_last_start, idx), _sub(b_last_start, idx)
            sk_a, sk_b, rf = _sub(step_ka, idx), _sub(step_kb, idx), _sub(reads_af, idx)
            n_b_in = _cdiv(als, sk_b)
            b_tail_in = (
                (_sub(kc_b, idx) > 1) & (bls < als) & (bls - np.floor(bls / sk_a) * sk_a != 0)
            )
            pipe_in = np.maximum(n_b_in - _sub(full_co, idx) - b_tail_in, 0) * np.maximum(
                _sub(b_full[0], idx) - rf, 0.0
            ) + b_tail_in * np.maximum(_sub(b_last[0], idx) - rf, 0.0)
            if not via_b and not floor:
                # With one B slot too, such a B copy waits for B's read of the step before,
                # inside this A chunk: the hop runs the A copy, the A reads up to that step, the
                # B read, the B copy and the reads from its arrival to the chunk's last A read
                # (not just the B copy ahead of the next A copy on MTE2). The first boundaries at
                # their own offsets, the rest at their average. (Seen: 910A fp16 512 x 1024 x
                # 3000, 9-step A and 14-step B chunks in one slot each by column DMA: -7.8 %.)
                one = np.flatnonzero(_sub(slots_b, idx) == 1)
                if one.size:
                    i_1 = idx[one]
                    ra_s, rab_s = ra.sub(i_1), rab.sub(i_1)
                    lb_s, bf_s, bl_s = _sub(lb, i_1), _sub(b_full[0], i_1), _sub(b_last[0], i_1)
                    kcb_s, sa_1, rf_1 = _sub(kc_b, i_1), sk_a[one], rf[one]
                    n_s = 3
                    mm_i = np.arange(1, n_s + 1, dtype=np.float64)[:, None]
                    s_i = mm_i * sk_b[one]
                    o_i = s_i - np.floor(s_i / sa_1) * sa_1
                    b_i = np.where(mm_i == kcb_s - 1, bl_s, bf_s)
                    # (At the A chunk's last step the A read precedes B's: only the next A
                    # copy, queued behind the B copy on MTE2, waits.)
                    d_i = (
                        ra_s(np.maximum(o_i, 1)) + lb_s + b_i
                        + (o_i < sa_1 - 1) * rab_s(np.maximum(sa_1 - o_i, 2))
                        - rf_1 - np.maximum(b_i - rf_1, 0.0)
                    )  # fmt: skip
                    ok_i = (s_i < als[one]) & (o_i > 0) & (mm_i < kcb_s)
                    d_sum = (ok_i * np.maximum(d_i, 0.0)).sum(axis=0)
                    n_strict = np.maximum(n_b_in[one] - _sub(full_co, i_1) - 1, 0)
                    d_sum = d_sum * (
                        1.0 + np.maximum(n_strict - n_s, 0) / np.clip(n_strict, 1, n_s)
                    )
                    pipe_in = np.array(pipe_in, dtype=np.float64)
                    pipe_in[one] += d_sum
            extra[idx] += _sub(co_frac, idx) * pipe_in
        # Every B copy from the last A chunk's start on (the one issued with that A copy too)
        # precedes the next A copy on MTE2. The B copy issued with it is the one whose delay of
        # the last A read ``gain_l`` prices (in ``extra``): the hop with ``extra`` is then
        # ``wait + max(reads + gain, ahead)``.
        # With one direct B slot the last B copy also waits for the reads of the chunk before
        # (from its arrival when it is among these copies, else B's read of the step before).
        n_ahead = kc_b - _cdiv(a_last_start, step_kb)
        b_hold = np.where(n_ahead >= 2, zero if via_b else single_bf * rb_kb, b_later * b_wait)
        # Only the share co_frac of the passes reloads B: price the two kinds of pass apart
        # (an average inside the max would hide the B copies).
        ahead_all = bias_cyc + has_b * (
            (n_ahead >= 1) * ((n_ahead - 1) * b_full[0] + b_last[0]) + b_hold
        )
        g_l = 0.0 if floor else last_co * gain_l
        rs_bias = np.maximum(rs_a, bias_cyc if problem.bias else zero)
        hop_l_co = wait_al + co_frac * np.maximum(rs_a, ahead_all - g_l) + co_rest * rs_bias
        hop_l = np.where(single_a, np.maximum(hop_l, hop_l_co), hop_l)
    if not floor:
        # B chunks that start inside the last A chunk, after its first step and before its last
        # one (B's last chunk among them): their copies follow the A copy (MTE2 order, or the
        # UB staging), and the last A read waits for the reads from the last one's arrival.
        # (The chains above only hold B chunks that start with an A chunk.)
        # (Priced on the candidates where it applies only.)
        fb = (np.floor(a_last_start / step_kb) + 1) * step_kb
        off = has_b & (fb <= b_last_start) & (b_last_start <= k_iter - 2)
        idx = np.flatnonzero(off)
        if idx.size:
            bls, sk_b = _sub(b_last_start, idx), _sub(step_kb, idx)
            n_off = np.floor((bls - _sub(fb, idx)) / sk_b) + 1
            hop_off = (
                _sub(wait_al, idx)
                + np.maximum(n_off - 1, 0) * _sub(b_next, idx)
                + _sub(b_leg_lc, idx)
                + rab.sub(idx)(np.maximum(_sub(k_iter, idx) - bls, 2))
                - _sub(la, idx)
                + _sub(la_kt, idx)
                + _sub(stay_a, idx)
            )
            h_l = _sub(hop_l, idx)
            hop_l = np.array(np.broadcast_to(hop_l, off.shape), dtype=np.float64)
            hop_l[idx] = h_l + _sub(co_frac, idx) * np.maximum(hop_off - h_l, 0.0)
    if floor:
        # The gains are differences of read times (not monotone in the L0 flags) and >= 0.
        gain_f = 0.0 * gain_f
        extra = 0.0 * extra
    # FIFO slots: with kc a multiple of the slots each slot always holds the same K positions,
    # so the slowest slot's own chain sets the pace, and the slot that holds chunk 0 meets
    # every B chunk that starts with one of its chunks; otherwise the chunks rotate through the
    # slots and the chain averages over them.
    rounds = np.floor(kc_a / slots_a)
    fixed_a = (slots_a > 1) & (rounds * slots_a == kc_a)
    per_pass_a = (hops_f + hop_l + extra) / slots_a
    # (What B's copies add to a pass of A, for line_stay_path.)
    gain_pass_a = extra / slots_a
    # (Fixed slots priced on the candidates that have them only.)
    idx = np.flatnonzero(fixed_a)
    if idx.size:
        sk_a, n_sl, r_s, hf_s = (_sub(x, idx) for x in (step_ka, slots_a, rounds, hop_f))
        # B boundaries meet the chunks of slot 0 every lcm(slots, q) chunks, q = lcm / stepKa.
        q = _sub(co_lcm, idx) / sk_a
        n_co0 = _sub(has_b, idx) * _cdiv(_sub(kc_a, idx), np.where(_divides(q, n_sl), q, q * n_sl))
        gf_s = _sub(gain_f, idx)
        gain_co0 = n_co0 * gf_s
        if not fix and not floor:
            # One of slot 0's meetings may be with B's short K-tail chunk (the A chunk starting
            # with it is in slot 0): that copy, not a full one. (Seen: 910A fp16 512 x 1024 x
            # 3000, A in ten two-step chunks over two slots, B's 16 + 3 steps copied every
            # block: the 1663-cycle tail copy priced as the 4979-cycle full one: +12.6 %.)
            j_tail = np.floor(_sub(b_last_start, idx) / sk_a)
            tail0 = _sub(b_tail_co, idx) & _divides(j_tail, n_sl) & (n_co0 >= 1)
            gain_co0 = gain_co0 + tail0 * (_sub(gain_fl, idx) - gf_s)
        co_gain0 = _sub(co_frac, idx) * gain_co0
        # With the whole K panel resident (one slot per chunk) and read by several blocks, a
        # group change reloads every chunk back to back on MTE2 (each waits for the old chunk's
        # read in the group's last block) before the first block of the new group can run
        # through.
        st_s = _sub(stay_a, idx)
        burst_a = (
            _sub(km1_a, idx) * _sub(wait_af, idx) + _sub(wait_al, idx) + st_s + _sub(ra(1), idx)
        )
        per_pass_a[idx] = np.maximum(
            np.maximum(r_s * hf_s, (r_s - 1) * hf_s + _sub(hop_l, idx)) + co_gain0,
            ((r_s == 1) & (st_s > 0)) * burst_a,
        )
        gain_pass_a[idx] = co_gain0
    # One slot, a whole pass: the next pass's first A copy waits for this pass's last A read,
    # which queues on MTE1 behind the B read of the step before, whose chunk came through every
    # B copy of the pass up to that step (in MTE2 / UB staging order; the copy at the last B
    # boundary, and an A copy at the last A boundary, move the short K-tail chunks).
    n_star1 = np.floor(np.maximum(k_iter - 2, zero) / step_kb)  # B boundaries <= k - 2, less one
    sigma = n_star1 * step_kb
    # B copies with no A copy between them (all in one A chunk) chain through B's reads too.
    no_a_between = sigma < step_ka
    b_nx = np.where(no_a_between, b_next_in, b_next)
    b_nx_l = np.where(no_a_between, b_next_in_l, b_next_l)
    w_pass = (
        np.where(a_many, wait_af, wait_al)
        + b_leg_f
        + n_star1 * b_nx
        + ((n_star1 == km1_b) & (n_star1 > 0)) * (b_nx_l - b_nx)
        + rab(k_iter - sigma)
        - la
        + la_kt
    )
    # (The K-tail A copy's MTE2 leg less a full one's.)
    d_a0 = a_last[0] - a_full[0] if not (via_a and via_b) else 0.0
    if not via_b:
        # Direct B copies share MTE2 with the A copies issued between them.
        w_pass = (
            w_pass
            + np.floor(sigma / step_ka) * a_full[0]
            + ((a_last_start <= sigma) & a_many) * d_a0
        )
    # One-step A chunks, one pass of slots + 1 chunks: the next step's A read (the last read of
    # the next chunk, which frees a slot) queues on MTE1 behind this step's B read, and with one
    # L0A buffer behind its MMAD too: the A copy, the B copy behind it, the B read, (the
    # MMAD,) the next A read.
    # Only the share co_frac of the passes reloads B: the other passes run A's own chain (its
    # hops, the last one behind the bias slice on MTE2), so price the two kinds apart.
    own_pass = hops_f + wait_al + (rs_bias if not via_a else np.maximum(rs_a, 0.0))
    w_mix = co_frac * w_pass + co_rest * own_pass
    per_pass_a = np.maximum(per_pass_a, single_a * (k_iter >= 2) * has_b * w_mix)
    # (Priced on the candidates where it applies only.)
    idx = np.flatnonzero((step_ka == 1) & (kc_a == slots_a + 1) & has_b)
    if idx.size:
        k_s = _sub(k_iter, idx)
        w_next = (
            _sub(wait_af, idx)
            + _sub(b_leg_f, idx)
            + _sub(lb, idx)
            + _sub(wa * mm, idx)
            + np.where(k_s == 2, _sub(la_kt, idx), _sub(la, idx))
        )
        one_step = _divides(_sub(kc_a, idx), _sub(step_kb, idx))
        per_pass_a = _raise_at(
            per_pass_a, idx, _sub(co_frac, idx) * one_step * w_next, step_ka.shape
        )
    # A streamed pass (more chunks than slots): the next pass's first copy waits for the last
    # read of chunk kc - slots, and the reads of chunks 0 .. kc - slots run in order from the
    # arrival of chunk 0 (the hops above restart at every chunk's arrival; with unequal chunks
    # rotating through the slots this longer chain can be the binding one).
    # (Where chunk kc - slots is the K-tail chunk its last read is the K-tail step's, which
    # queues on MTE1 behind every read of the pass from chunk 0's arrival on, and the MMADs a
    # single L0 buffer puts between: the chain runs all k_iter reads, the last one short. The
    # floors keep the chain to k_iter - 1 reads.)
    thru_x = (kc_a - slots_a + 1) * step_ka
    thru_k = np.minimum(thru_x, k_iter)
    end_kt = (thru_k >= k_iter) * kt_d  # (the chain ends at the K-tail step)
    if floor:
        own_thru = wait_af + ra(np.minimum(thru_x, k_iter - 1))
    else:
        own_thru = wait_af + ra(thru_k) + end_kt
    per_pass_a = np.maximum(per_pass_a, streamed_a * own_thru)
    if not via_a:
        # In a pass that reloads B the same chain runs through MTE2 in program order: every A
        # and B copy issued up to the B chunk under chunk kc - slots's last step (B's staging
        # legs when it comes through UB), then the reads from that B chunk's arrival to the
        # last read of A's chunk (where the A read of that step precedes B's, B is not on it).
        end_a = thru_k - 1
        f_bq = np.floor(end_a / step_kb)
        n_bq = f_bq + 1
        s_bq = f_bq * step_kb
        n_aq = np.floor(s_bq / step_ka) + 1
        g_q = (
            n_aq * a_full[0]
            + (n_aq >= kc_a) * d_a0
            + n_bq * b_full[0]
            + (n_bq >= kc_b) * (b_last[0] - b_full[0])
        )
        if via_b:
            g_q = g_q + np.where(n_bq >= kc_b, b_last[1] + b_last[2], b_full[1] + b_full[2])
        r_q = thru_k - s_bq
        thru_q = (r_q >= 2) * (g_q + rab(at_least(r_q, 2)) + end_kt)
        if not floor:
            # Or through B's first chunk: A's first copy, B's behind it (its staging legs when
            # staged), then every read of the pass from that arrival up to chunk kc - slots's
            # last step; longer than the chain through the later B chunk where the reads take
            # longer than the B copies issued between (those run ahead on MTE2). (end_a >= 1 on
            # the streamed passes this counts on; elsewhere rab's _NEVER drops out.)
            thru_0 = a_full[0] + b_first[0] + rab(thru_k) + end_kt
            if via_b:
                thru_0 = thru_0 + b_first[1] + b_first[2]
            thru_q = np.maximum(thru_q, thru_0)
        per_pass_a = np.maximum(
            per_pass_a,
            (streamed_a & has_b) * (co_frac * thru_q + co_rest * own_thru),
        )
    if not floor and not via_a and via_b:
        # One A slot holding a block's whole K (one chunk per block), B staged through UB: in a
        # block that reloads B the next block's A reads follow B's last read of this block on
        # MTE1, which waits for B's whole staging chain (each GM->UB leg after the reorder
        # before it, each reorder after the UB->L1 leg before it). So A's chain over the two
        # blocks runs: A's copy, B's staging, B's last read, the next block's A reads, the
        # next A copy -- instead of two hops of A's own.
        g_f, v_f, u_f = b_full
        g_l, v_l, u_l = b_last
        stage_b = np.where(
            kc_b > 1,
            g_f
            + v_f
            + np.maximum(kc_b - 2, 0) * (np.maximum(g_f, u_f) + v_f)
            + np.maximum(g_l, u_f)
            + v_l
            + u_l,
            g_l + v_l + u_l,
        )
        jump2 = wait_al + stage_b + lb_kt + reads_al + stay_a
        one_blk = single_a & (kc_a == 1) & (k_iter >= 2) & has_b
        per_pass_a = np.maximum(
            per_pass_a, one_blk * (hop_l + co_frac * np.maximum(jump2 - 2.0 * hop_l, 0.0))
        )
        # The same A staying for several blocks, B staged in every block: from A's copy the
        # staging chain runs through B's copies of the pass's blocks (B's first GM->UB leg
        # behind A's copy on MTE2, each reorder after the link before it), in the last block
        # up to the chunk under step k - 2, then that chunk's reads, (with one L0A buffer the
        # MMAD,) and A's last read, which the next A copy waits for. (Seen: 910A fp16 4096 x
        # 512 x 768, A's whole K read by a row of three blocks, B staged in two chunks per
        # block: 5147 cycles per row, priced 4464: -13.1 %; the rest is the drain on MTE3
        # before the last block's UB->L1 leg.) (Priced on the candidates where it applies.)
        idx = np.flatnonzero(
            single_a & (kc_a == 1) & (k_iter >= 2) & has_b & (passes_b > blocks - 0.5)
            & (passes_a < blocks - 0.5)
        )  # fmt: skip
        if idx.size:
            n_pb = _sub(blocks, idx) / np.maximum(_sub(passes_a, idx), 1)
            kb_s, sk_b, ki = _sub(kc_b, idx), _sub(step_kb, idx), _sub(k_iter, idx)
            (g_f, v_f, u_f), (g_l, v_l, u_l) = (
                tuple(_sub(x, idx) for x in leg) for leg in (b_full, b_last)
            )
            stage_blk = _sub((vb + own_pairs[1]) / np.maximum(passes_b, 1), idx)
            c_st = np.floor((ki - 2) / sk_b)
            at_l = c_st >= kb_s - 1
            part = (
                np.where(kb_s > 1, v_f, v_l)
                + np.maximum(c_st - 1, 0) * (np.maximum(g_f, u_f) + v_f)
                + (c_st >= 1) * (np.maximum(np.where(at_l, g_l, g_f), u_f))
                + (c_st >= 1) * np.where(at_l, v_l, v_f)
                + np.where(at_l, u_l, u_f)
            )
            hop_st = (
                _sub(wait_al, idx) + np.where(kb_s > 1, g_f, g_l) + (n_pb - 1.0) * stage_blk
                + part + rb.sub(idx)(np.maximum(ki - 1 - c_st * sk_b, 1))
                + _sub(wa * mm + la_kt, idx)
            )  # fmt: skip
            per_pass_a = _raise_at(per_pass_a, idx, hop_st, step_ka.shape)
    # The chains start behind the bias slice, B's behind the first A copy too (MTE2 order).
    chain_a = passes_a * per_pass_a + bias_cyc
    # per_pass_a >= ((kc_a - 1) * hop_f + hop_l) / slots_a: equal without fixed slots; with
    # them (kc_a = rounds x slots_a) rounds x hop_f >= it when hop_l <= hop_f, and
    # (rounds - 1) x hop_f + hop_l >= it otherwise (hop_l - hop_f >= (hop_l - hop_f) / slots).
    own_a = passes_a * (hops_f + hop_l_a_own) / slots_a + bias_cyc if floor else 0.0

    # B: its hops; with one slot the next pass's first B copy queues on MTE2 behind the bias
    # slice and the A copy that the block start issues before it.
    a_many = kc_a > 1
    # A's first copy of a pass (one chunk, or a full one first).
    a_first0 = np.where(a_many, a_full[0], a_last[0])
    wait_bf = b_full[2] if via_b else b_full[0]
    wait_bl = b_last[2] if via_b else b_last[0]
    kc_b1 = kc_b - 1.0
    kc_b1_n = np.maximum(kc_b1, ones)
    r_last_b = k_iter - b_last_start
    hop_f = wait_bf + rb_kb + stay_b
    # (rb(r - 1) at r = 1 is its one-read value, dropped by the select: no clip needed.)
    reads_bl = np.where(r_last_b <= 1, lb_kt, rb(r_last_b - 1) + per_kt)
    if not fix:
        # A block of two steps in one B chunk, both L0 buffers doubled: the K-tail step's reads
        # wait for the MMAD two steps back, the block before's first (the copy, after that
        # block's last read, outlasts it), not for the step period's full MMAD. (With more
        # chunks that MMAD is the chunk before's and may still run: the cube may lag.) (Seen:
        # 910A int8 1024 x 4096 x 1024, B in one slot holding 960 + 64 of K, copied every
        # block: 16 cycles of K-tail reads, not 122: +12.6 %.) (UB-path chips: their
        # single-slot chains are priced from these.)
        reads_bl = np.where(
            (k_iter == 2) & (kc_b == 1) & ~a1 & ~b1 & (wait_bl >= mm),
            rb(1) + la_kt + lb_kt,
            reads_bl,
        )
    hop_l = wait_bl + reads_bl + stay_b
    # B's chain without what A adds: the single-slot hops below are >= these (each is the wait
    # plus a max with, or an average of maxes with, reads_bf = rb_kb + stay_b).
    own_b = passes_b * ((kc_b - 1) * hop_f + hop_l) / slots_b + bias_cyc if floor else 0.0
    if not via_b:
        # One slot: the next B copy also queues on MTE2 behind the A copies issued between the
        # two (inside this B chunk; after the last B chunk, those up to the next pass's step 0,
        # with the bias slice there).
        a_f0 = a_full[0] if not via_a else 0.0 * a_full[0]
        a_l0 = a_last[0] if not via_a else 0.0 * a_last[0]
        d_l0 = a_l0 - a_f0
        # A boundaries after step 0 up to B's last boundary (spread over the full B chunks;
        # A's last chunk among them when it starts there) and after it.
        n_a_full = np.floor(b_last_start / step_ka)
        a_tail_in = (a_last_start > b_last_start) & a_many
        # (A float 0/1 mask: it weighs three products, float x float is cheaper than bool x
        # float.)
        a_tail_full = (a_many & ~a_tail_in).astype(np.float64)
        # (Only the share co_frac_ab of B's passes reloads A: those passes and the others are
        # priced apart, an average inside the max would hide the A copies.)
        mte2_f = (n_a_full * a_f0 + a_tail_full * d_l0) / kc_b1_n
        n_a_last = np.floor((k_iter - 1) / step_ka) - n_a_full
        # A copies after B's last boundary in this block (a new A pass starts here) and the next
        # block's step-0 A copy (a new A pass starts there): in different B passes unless A is
        # reloaded in every block.
        a_here = n_a_last * a_f0 + a_tail_in * d_l0
        a_next = a_first0 if not via_a else zero
        # With A chunks at least as long as B's, a full B chunk holds at most one A boundary:
        # price the hops with and without one apart (the max does not average).
        reads_bf = rb_kb + stay_b
        n_with = n_a_full * co_frac_ab
        tail_with = a_tail_full * co_frac_ab
        sum_with = (n_with - tail_with) * np.maximum(reads_bf, a_f0) + tail_with * np.maximum(
            reads_bf, a_l0
        )
        # An A boundary strictly inside a full B chunk (offset o > 0): its copy queues behind
        # B's on MTE2, and B's last read of the chunk follows A's read of that step on MTE1,
        # so the next B copy waits for the A copy plus A's reads from its arrival plus B's
        # read, not only the larger of B's reads and the A copy. The first boundaries at their
        # own offsets, the rest at their average. (Priced on the candidates where it applies.)
        ains = kb_off & single_b & (kc_b > 1) & has_b
        idx = np.flatnonzero(ains) if not floor else np.empty(0, dtype=np.int64)
        if idx.size:
            sk_a, sk_b, bls = _sub(step_ka, idx), _sub(step_kb, idx), _sub(b_last_start, idx)
            rbf, af0, al0 = _sub(reads_bf, idx), _sub(a_f0, idx), _sub(a_l0, idx)
            kc_s, lb_s, naf = _sub(kc_a, idx), _sub(lb, idx), _sub(n_a_full, idx)
            ra_s = ra.sub(idx)
            # The first n_s A boundaries exactly (a leading axis), the later ones at their
            # average (the offsets cycle).
            n_s = 3
            ii = np.arange(1, n_s + 1, dtype=np.float64)[:, None]
            s_i = ii * sk_a
            o_i = s_i - np.floor(s_i / sk_b) * sk_b
            a_i = np.where(kc_s - 1 == ii, al0, af0)
            d_i = np.maximum(rbf, a_i + ra_s(np.maximum(sk_b - o_i, 1)) + lb_s)
            d_sum = (((s_i <= bls) & (o_i > 0)) * np.maximum(d_i - np.maximum(rbf, a_i), 0.0)).sum(
                axis=0
            )
            d_sum = d_sum * (1.0 + np.maximum(naf - n_s, 0) / np.clip(naf, 1, n_s))
            sum_with = np.array(sum_with, dtype=np.float64)
            sum_with[idx] += _sub(co_frac_ab, idx) * d_sum
        hop_one = wait_bf + (sum_with + (kc_b1 - n_with) * reads_bf) / kc_b1_n
        hop_many = wait_bf + reads_bf + co_frac_ab * np.maximum(mte2_f - reads_bf, zero)
        hop_f = np.where(single_b, np.where(step_ka >= step_kb, hop_one, hop_many), hop_f)
        reads_bl_s = reads_bl + stay_b
        # Shares of B's passes: A's passes start in passes_a of them (the copies here), and
        # the next block starts one in passes_a - 1 (the first A copy precedes every B copy).
        f_next = np.minimum(np.maximum(passes_a - 1.0, zero) / np.maximum(passes_b, ones), ones)
        co_both = np.maximum(co_frac_ab + f_next - 1.0, zero)
        # In the passes with A copies after B's last boundary, A's last chunk starts inside
        # B's last chunk: its copy queues behind B's on MTE2, and B's last read follows A's
        # read of that step on MTE1 (the K-tail step's), so it waits for A's copies and reads.
        reads_here = reads_bl_s
        if not floor:
            here = a_here + reads_al + lb_kt + stay_b
            reads_here = np.where(a_tail_in, np.maximum(reads_bl_s, here), reads_bl_s)
        # (Without a bias slice bias_cyc is the scalar 0.0, and x + 0.0 is x.)
        here_bias = bias_cyc + a_here if problem.bias else a_here
        next_bias = bias_cyc + a_next if problem.bias else a_next
        hop_l_one = (
            wait_bl
            + co_both * np.maximum(reads_here, here_bias + a_next)
            + (co_frac_ab - co_both) * np.maximum(reads_here, here_bias)
            + (f_next - co_both) * np.maximum(reads_bl_s, next_bias)
            + (1.0 - co_frac_ab - f_next + co_both)
            * np.maximum(reads_bl_s, bias_cyc if problem.bias else zero)
        )
        hop_l = np.where(single_b, hop_l_one, hop_l)
        if via_a and not floor:
            # A staged in chunks that tile B's: the A chunks starting after a B chunk's first
            # step have their GM->UB legs behind that B copy on MTE2, and B's last read of the
            # chunk follows A's read of its step on MTE1, so the next B copy waits for the A
            # staging chain (each GM->UB leg after the reorder before it) and the last A
            # chunk's reads. (Seen: 910A fp16 1024 x 4096 x 1024, one-step A chunks staged,
            # two-step B chunks in one slot: 1820 cycles per B chunk, priced 980: -3.5 %.)
            # (Priced on the candidates where it applies only.)
            idx = np.flatnonzero(
                single_b & has_b & _divides(step_kb, step_ka) & (step_kb > step_ka)
                & (passes_a > blocks - 0.5)
            )  # fmt: skip
            if idx.size:
                n_in = _sub(step_kb / step_ka, idx) - 1.0
                (g_f, v_f, u_f), (g_l, v_l, u_l) = (
                    tuple(_sub(x, idx) for x in leg) for leg in (a_full, a_last)
                )
                link = np.maximum(g_f, u_f)
                ra_s, sk_a = ra.sub(idx), _sub(step_ka, idx)
                lb_s, lbk = _sub(lb, idx), _sub(lb_kt, idx)
                # Full B chunks: full A chunks inside; B's last chunk: A's last one ends it.
                alt_f = (
                    _sub(wait_bf, idx) + g_f + n_in * v_f + (n_in - 1.0) * link + u_f
                    + ra_s(sk_a) + lb_s
                )  # fmt: skip
                n_l = np.floor((_sub(r_last_b, idx) - 1) / sk_a)
                alt_l = (
                    _sub(wait_bl, idx)
                    + np.where(n_l > 1, g_f, g_l)
                    + np.maximum(n_l - 1.0, 0.0) * v_f
                    + v_l
                    + np.maximum(n_l - 2.0, 0.0) * link
                    + np.maximum(g_l, u_f) * (n_l > 1)
                    + u_l
                    + _sub(ra(r_last_a) - la + la_kt, idx)
                    + lbk
                )
                # (Only the share co_frac_ab of B's passes copies A.)
                w_ab = _sub(co_frac_ab, idx)
                h_f, h_l = _sub(hop_f, idx), _sub(hop_l, idx)
                alt_l = np.where(n_l >= 1, alt_l, 0.0)
                hop_f = _raise_at(
                    hop_f, idx, h_f + w_ab * np.maximum(alt_f - h_f, 0.0), np.shape(blocks)
                )
                hop_l = _raise_at(
                    hop_l, idx, h_l + w_ab * np.maximum(alt_l - h_l, 0.0), np.shape(blocks)
                )
    rounds = np.floor(kc_b / slots_b)
    fixed_b = (slots_b > 1) & (rounds * slots_b == kc_b)
    burst_b = kc_b1 * wait_bf + wait_bl + stay_b + rb(1)
    per_pass_b = np.where(
        fixed_b,
        np.maximum(
            np.maximum(rounds * hop_f, (rounds - 1) * hop_f + hop_l),
            ((rounds == 1) & (stay_b > 0)) * burst_b,
        ),
        (kc_b1 * hop_f + hop_l) / slots_b,
    )
    thru_b = np.minimum((kc_b - slots_b + 1) * step_kb, k_iter - 1)
    per_pass_b = np.maximum(per_pass_b, streamed_b * (wait_bf + rb(thru_b)))
    pass_b_cyc = passes_b * per_pass_b
    # (Without a bias slice bias_cyc is the scalar 0.0, and x + 0.0 is x.)
    chain_b = (pass_b_cyc + bias_cyc if problem.bias else pass_b_cyc) + a_first0
    mk.raise_all(
        np.maximum(chain_a, chain_b) + mm + dr_last,
        mk.pick(chain_b > chain_a, "slot_chain_b", "slot_chain_a"),
    )
    if not fix and not floor and not (via_a or via_b):
        # B in several slots copied in every block, A once per pass of several blocks: at an A
        # pass start MTE2 issues A's first copy before B's, and A's copy waits for A's last
        # read of that chunk in the pass before, no later than B's slot-freeing read by what
        # B's first chunk has more steps: B's chain takes the A copy at every later pass
        # start. (Seen: 310P3 int8 128 x 4096 x 4096 by column DMA, A per row of 52 blocks,
        # an 18850-cycle A copy at the row change: -5.2 %.) (Priced where it applies.)
        idx = np.flatnonzero(
            (slots_b >= 2) & (kc_b == slots_b) & (passes_b > blocks - 0.5) & has_b
            & (passes_a < blocks - 0.5) & (passes_a >= 2)
        )  # fmt: skip
        if idx.size:
            a_0 = _sub(np.where(kc_a > 1, a_full[0], a_last[0]), idx)
            ahead = np.maximum(_sub(step_kb - step_ka, idx), 0.0) * _sub(per, idx)
            extra_b = (_sub(passes_a, idx) - 1) * np.maximum(a_0 - ahead, 0.0)
            mk.raise_at(idx, _sub(chain_b + mm + dr_last, idx) + extra_b, "b_chain_at_a_pass_start")
    if not fix and not floor and blk_types:
        # An outer operand that stays for a whole line of blocks (one pass per line) holds its
        # slots over the line's blocks: the stay above averages their drains over all lines,
        # but a full line's long UB->GM copies and the tail line's short ones do not average
        # (each line takes the longer of its drains and its step chain). Priced per line type.
        # (Seen: 310P3 int8 512 x 1024 x 3000 by column DMA, A per row of 22 blocks, 6007-cycle
        # output copies in the two full rows, 876 in the tail row: -7.0 %.) (Priced on the
        # candidates where it applies only.)
        for is_a in (True, False):
            n_out = m_iter if is_a else n_iter
            pas, kc_o, sl_o = (passes_a, kc_a, slots_a) if is_a else (passes_b, kc_b, slots_b)
            idx = np.flatnonzero(
                (order == (1 if is_a else 0)) & (n_out >= 2) & (np.abs(pas - n_out) < 0.5)
                & (kc_o <= sl_o) & (blocks >= 2 * n_out)
            )  # fmt: skip
            if not idx.size:
                continue
            # The other operand copied in every block in one slot: with its K in one chunk each
            # block's copy waits for the last read of the block before, so a block takes at
            # least that copy and its reads (a tail line's blocks read faster by what their
            # steps are shorter); in several chunks each copy waits for the reads of the chunk
            # before: the block takes its copies and its reads. And in a line's first block the
            # outer operand's first chunk waits for that chain too (its later chunks' copies
            # queued on MTE2 among the other's; with the other in one chunk they overlap its
            # reads). (Both direct or by column DMA.)
            sub = [_sub(x, idx) for x in (kc_a, kc_b, passes_a, passes_b, blocks, slots_a,
                                          slots_b, k_iter)]  # fmt: skip
            ka_s, kb_s, pa_s, pb_s, bl_s, sa_s, sb_s, ki_s = sub
            if is_a:
                legs = (wait_af, reads_af, wait_al, reads_al, bias_cyc, gain_pass_a)
                kc_p, w_f, w_l = kb_s, _sub(wait_bf, idx), _sub(wait_bl, idx)
                r_one, l_f, l_t = _sub(reads_bl, idx), _sub(lb, idx), _sub(lb_kt, idx)
                rest = (ka_s > 1) * ((ka_s - 2) * _sub(a_full[0], idx) + _sub(a_last[0], idx))
                o_on = (pb_s > bl_s - 0.5) & (sb_s == 1) & _sub(has_b, idx)
            else:
                lead = np.where(kc_a > 1, a_full[0], a_last[0])
                legs = (wait_bf, rb_kb, wait_bl, reads_bl, bias_cyc + lead, 0.0)
                kc_p, w_f, w_l = ka_s, _sub(wait_af, idx), _sub(wait_al, idx)
                r_one, l_f, l_t = _sub(reads_al, idx), _sub(la, idx), _sub(la_kt, idx)
                rest = (kb_s > 1) * ((kb_s - 2) * _sub(b_full[0], idx) + _sub(b_last[0], idx))
                o_on = (pa_s > bl_s - 0.5) & (sa_s == 1)
            one = kc_p == 1
            copies = (kc_p - 1) * w_f + w_l
            reads = (ki_s - 1) * l_f + l_t
            o_blk = np.where(
                one, w_l + np.maximum(reads, rest), copies + reads - (rest > 0) * l_f + rest
            )
            path = line_stay_path(
                is_a, blk_types, idx, tuple(_sub(x, idx) for x in legs),
                (_sub(kc_o, idx), _sub(sl_o, idx), _sub(m_iter, idx), _sub(n_iter, idx),
                 _sub(f["dbL0C"], idx), (o_on & one) * (w_l + r_one),
                 (o_on & ~one) * (copies + reads), o_on * o_blk * (not (via_a or via_b))),
                # (With B outer the chain's start holds A's first copy, which is the first
                # line's first block's own: not counted twice.)
                0.0 if is_a else o_on * _sub(lead, idx) * (not (via_a or via_b)),
            )  # fmt: skip
            mk.raise_at(idx, path + _sub(mm + dr_last, idx), "line_stay")
    if not fix and not floor and blk_types:
        # The slot chains end at the last block's last MMAD, its drain after it. Without
        # FixPipe the drain of the block before (its long UB->GM copy on MTE3) can still be
        # running then: the last (corner) block is short and its L0C->UB leg waits for that
        # copy (one C staging buffer). The block before the last is the full-row tail-column
        # one (rows inner, several rows; or columns inner, one column), else the tail-row
        # full-column one. (Priced on the candidates where that drain exceeds the corner
        # block's MMAD chain only.)
        rows_inner = order == 0
        prev_col = (rows_inner & (m_iter >= 2)) | (~rows_inner & (n_iter == 1))
        d_prev = [
            np.where(prev_col, x, y)
            for x, y in zip(blk_types[(0, 1)], blk_types[(1, 0)], strict=True)
        ]
        drain_prev_cyc = d_prev[1] + d_prev[2]
        # (At most the chains' end less the corner block's MMAD chain and bias slice, plus the
        # two drains: only where that exceeds the path so far.)
        corner = blk_types[(1, 1)]
        idx = np.flatnonzero(
            (blocks >= 2)
            & (
                np.maximum(chain_a, chain_b) + mm + drain_prev_cyc - corner[0] - bias_cyc
                + corner[1] + corner[2]
                > mk.value
            )
        )  # fmt: skip
        if idx.size:
            # An operand reloaded in every block copies a pass in the corner block; one
            # loaded per pass of several blocks is taken as loaded before it (the corner
            # block is the last of its line and of its group).
            corner_path = corner_drain_path(
                c, k, bk, cap, idx,
                (rows, cols, f["stepM"], f["stepN"], bm, bn, step_ka, step_kb, kc_a, kc_b),
                (passes_a > blocks - 0.5, passes_b > blocks - 0.5),
                np.maximum(chain_a, chain_b) + mm, corner, drain_prev_cyc, bias_cyc,
            )  # fmt: skip
            mk.raise_at(idx, corner_path, "corner_drain")
    if not floor:
        # Phases: a B reloaded in every block runs its slot chain once per block, and the blocks
        # of the tail row take a shorter step chain, so those may be bound by B's copies while
        # the others are bound by the compute. The paths above are totals over all blocks; per
        # block type the core takes the longer of the two. With d = chain - compute per type
        # (the chain's reads after each chunk's first step follow the type's step period, a
        # share w of the steps; its copies are the same) and x, y = blocks x d of the full and
        # the tail row, sum(max) - max(sum) = relu(x) + relu(y) - relu(x + y), which is
        # min(|x|, |y|) where their signs differ, else 0.
        def flip_gain(x: Any, y: Any) -> Any:
            # relu(min(x, -y)) + relu(min(-x, y)): at most one term is > 0, and min(-x, y) is
            # -max(x, -y), so max(min(x, -y), -max(x, -y), 0) (two operations fewer).
            neg_y = -y
            return np.maximum(np.maximum(np.minimum(x, neg_y), -np.maximum(x, neg_y)), zero)

        pa_every = passes_a >= blocks
        pb_every = passes_b >= blocks
        w = (k_iter - kc_b) / k_iter
        w_tail = 1.0 - w
        c_blk = (pass_b_cyc - w * span - bound_ex - inner) / blocks_n
        x = (blocks - n_iter) * c_blk - w_tail * (span - span_tail)
        y = n_iter * c_blk - w_tail * span_tail
        gain = pb_every * flip_gain(x, y)
        mk.raise_all(np.maximum(compute_path, chain_b + mm + dr_last) + gain, "phase_b_every_block")
        if not fix:
            # Without FixPipe the drains chain through the one C staging buffer (V then MTE3),
            # and their cost follows the block's rows and columns: a line of blocks (column
            # with iterateOrder 0, row with 1) of the full outer type may be bound by the
            # drains while the tail line, with short drains, is bound by its MMAD chain or by
            # the inner operand's slot chain (reloaded in every block). The core takes the
            # longer of the two per line, not the longer of the sums. (Seen: 310P3 int8
            # 512 x 1024 x 3000, a 7-row tail row of 22 blocks bound by B's copies: -9.3 %.)
            # (Only where a full line's inner full blocks and the tail line's lean different
            # ways, drains against MMAD chains with their stalls; priced on those.)
            order0 = order == 0
            stall_blk_all = (bound_ex + inner) / blocks_n
            t00, t01, t10 = blk_types[(0, 0)], blk_types[(0, 1)], blk_types[(1, 0)]
            lean_f = t00[1] + t00[2] - t00[0] - stall_blk_all
            lean_t = (
                np.where(order0, t01[1] + t01[2] - t01[0], t10[1] + t10[2] - t10[0]) - stall_blk_all
            )
            # The inner operand reloaded in every block also takes its copies per block on
            # MTE2 (with the bias slices), the same in every line: a tail line of short
            # drains may be bound by them. (Seen: 910A fp16 1024^3, B direct in three chunks
            # per block, a 7-row tail row bound by MTE2 after the full rows' drains: -3.2 %.)
            in_again = np.where(order0, passes_a, passes_b) > blocks - 0.5
            copy_blk = in_again * (mte2 - np.where(order0, gb, ga)) / np.maximum(blocks, 1)
            lean_fc = np.minimum(lean_f, t00[1] + t00[2] - copy_blk)
            lean_tc = np.minimum(
                lean_t, np.where(order0, t01[1] + t01[2], t10[1] + t10[2]) - copy_blk
            )
            idx = np.flatnonzero((lean_f * lean_t < 0.0) | (lean_fc * lean_tc < 0.0))
            if idx.size:
                o0 = _sub(order0, idx)
                pa, pb, bl = _sub(passes_a, idx), _sub(passes_b, idx), _sub(blocks, idx)
                pp_in = np.where(o0, pa * _sub(per_pass_a, idx), pb * _sub(per_pass_b, idx))
                ki = _sub(k_iter, idx)
                w_in = np.where(o0, (ki - _sub(kc_a, idx)) / ki, (ki - _sub(kc_b, idx)) / ki)
                stalls = _sub(bound_ex + inner, idx)
                bn_s = np.maximum(bl, 1)
                c_in = (
                    (np.where(o0, pa, pb) > bl - 0.5)
                    * (pp_in - w_in * _sub(span, idx) - stalls)
                    / bn_s
                )
                lines = line_phase_path(
                    {key: tuple(_sub(x, idx) for x in v) for key, v in blk_types.items()},
                    o0, (_sub(m_iter, idx), _sub(n_iter, idx)), stalls / bn_s, c_in, w_in,
                    _sub(copy_blk, idx),
                )  # fmt: skip
                mk.raise_at(idx, _sub(start - (per - mm), idx) + lines, "line_phase")
        # Likewise MTE2 with one operand reloaded in every block (A, or B): its copies are the
        # same in the blocks of the full and the tail column (row), whose step chains differ,
        # so the tail blocks may be bound by MTE2 and the others by the compute.
        only_a = pa_every & ~pb_every
        # (n_t as an exact integer sum: cheaper than a select.)
        n_t = n_iter + only_a * (m_iter - n_iter)
        sp_t = np.where(only_a, span_ctail, span_tail)
        m_blk = (mte2 - bound_ex - inner) / blocks_n
        x = (blocks - n_t) * m_blk - (span - sp_t)
        y = n_t * m_blk - sp_t
        gain = (pa_every ^ pb_every) * flip_gain(x, y)
        # Both operands reloaded in every block, with a tail line (a set disjoint from the one
        # above, whose gain is 0 there: the two gains add).
        both_tail: Any = None
        n_both = 0
        if not (via_a or via_b or c.a_by_column or c.b_by_column):
            both_tail = (
                pa_every & pb_every & (f["stepM"] == 1) & (f["stepN"] == 1)
                & (((m_iter > 1) & (rm_t < bm)) | ((n_iter > 1) & (cn_t < bn)))
            )  # fmt: skip
            n_both = int(np.count_nonzero(both_tail))
        # (Priced on all candidates where they are more than a quarter, else on those only: a
        # gather costs several times an operation.)
        few = 4 * n_both <= np.size(blocks)
        if n_both and not few:
            gain = gain + both_tail * both_reloaded_phase_gain(
                c, (ga, gb), (m_iter, n_iter, fr_t * FRACTAL_ROWS, fc_t * FRACTAL_ROWS),
                (bm, bn), (span, span_tail, span_ctail, span_corner), bound_ex + inner,
                (kc_a, kc_b), blocks_n,
            )  # fmt: skip
        cc_path = np.maximum(compute_path, copy_path)
        mk.raise_all(cc_path + gain, "phase_copies")
        if n_both and few:
            idx = np.flatnonzero(both_tail)
            gain = both_reloaded_phase_gain(
                c, (_sub(ga, idx), _sub(gb, idx)), (_sub(m_iter, idx), _sub(n_iter, idx),
                _sub(fr_t, idx) * FRACTAL_ROWS, _sub(fc_t, idx) * FRACTAL_ROWS),
                (_sub(bm, idx), _sub(bn, idx)),
                (_sub(span, idx), _sub(span_tail, idx), _sub(span_ctail, idx),
                 _sub(span_corner, idx)),
                _sub(bound_ex + inner, idx), (_sub(kc_a, idx), _sub(kc_b, idx)),
                _sub(blocks_n, idx),
            )  # fmt: skip
            mk.raise_at(idx, _sub(cc_path, idx) + gain, "phase_copies")
    mk.raise_all(
        mte2_gap_path(
            copy_path, via_a, via_b, a_first0, a_full, a_last, b_full, b_last,
            (kc_a, kc_b, step_ka, step_kb, single_a, single_b, passes_a, passes_b, has_b),
            (reads_af, rb_kb, rab_ka, None if via_b else ra(step_kb) + lb),
        ),
        "mte2_gap",
    )  # fmt: skip
    if not floor and not via_a and not via_b:
        # One B slot behind A chunks that start inside B's first chunk (priced on the
        # candidates where it applies only).
        idx = np.flatnonzero(single_b & (step_ka < step_kb))
        if idx.size:
            idx = idx[_sub(streamed_b, idx) & ~_sub(single_a, idx) & _sub(has_b, idx)]
        if idx.size:
            idle_b = b_slot_gap_behind_a(
                (_sub(kc_a, idx), _sub(step_ka, idx), _sub(step_kb, idx)),
                (_sub(a_full[0], idx), _sub(a_last[0], idx)),
                (ra.sub(idx), _sub(rb_kb, idx), _sub(lb, idx)),
            )
            co_s = np.minimum(_sub(passes_a, idx), _sub(passes_b, idx))
            path_s = _sub(copy_path, idx) + co_s * idle_b
            mk.raise_at(idx, path_s, "b_slot_gap_behind_a")
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
        if inner_links is not None:
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
        v_cycle = start + (n_blk >= 1.0) * (blocks - 1) * cyc + (k_iter - 1) * per + mm + dr_last
        if not floor:
            # The other operand staged and reloaded per pass of several blocks: at a pass's
            # first block its reorders join the vector queue of the cycle and its first UB->L1
            # leg precedes the reads (once per pass after the first).
            other: Any = 0.0
            if via_b:
                b_u0 = np.where(kc_b > 1, b_full[2], b_last[2])
                b_pass = vb / np.maximum(passes_b, 1) + b_u0
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
                        b_pass = _raise_at(
                            b_pass, idx,
                            staged_b_between_a(
                                idx, (kc_a, kc_b, step_ka, step_kb),
                                (a_full, a_last, b_full, b_last), (reads_al + lb_kt, reads_bl),
                            ) - staged_spread,
                            blocks.shape,
                        )  # fmt: skip
                other = other + per_a * (passes_b < blocks) * (passes_b - 1) * b_pass
            if via_a:
                a_u0 = np.where(kc_a > 1, a_full[2], a_last[2])
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
        if not floor:
            # The same cycle through the first chunk: the whole MMAD chain of the block
            # follows its first UB->L1 leg. (Priced on the candidates where it applies only.)
            idx = np.flatnonzero(np.asarray(per_a | per_b) & (blocks >= 2))
            if idx.size:
                path = staged_first_chunk_path(
                    idx, (via_a, via_b), (per_a, per_b),
                    (a_full, a_last, b_full, b_last), (kc_a, kc_b, passes_a, passes_b, blocks),
                    (drain_total, m3_out, span, start + (k_iter - 1) * per + mm,
                     (la, lb + mm - per)),
                    c.c_ub_to_gm_cycles(rm_t, cn_t, cap),
                )  # fmt: skip
                mk.raise_at(idx, path, "staged_first_chunk")
    if not floor and not via_a and via_b:
        # A direct and B staged, both reloaded in every block, A streamed through its S slots:
        # the next block's first A copy waits for A's read of chunk kc_a - S (its last step
        # s*), and B's first GM->UB copy is behind it on MTE2. So each block runs: that A
        # copy, B's staging chain up to the chunk under step s* (each GM->UB leg after the
        # reorder before it, each reorder after the GM->UB and the UB->L1 leg before it), that
        # chunk's UB->L1 leg and the reads from its arrival to A's read at s*. (Seen: 310P3
        # int8 2048^3, base 144 x 224 x 96, five staged B chunks per block: -13.1 %.)
        # (Priced on the candidates where it applies and where it may exceed the path so far:
        # per block at most A's copies, B's GM->UB, reorder and one UB->L1 leg, and the reads
        # of a B chunk's steps and one more.)
        idx = np.flatnonzero(gb + vb + blocks * (ga1 + ub1 + (step_kb + 1) * per) > mk.value)
        if idx.size:
            bl = _sub(blocks, idx)
            idx = idx[
                (_sub(passes_a, idx) > bl - 0.5)
                & (_sub(passes_b, idx) > bl - 0.5)
                & (_sub(kc_a, idx) >= _sub(slots_a, idx))
                & _sub(has_b, idx)
            ]
        if idx.size:
            path = staged_b_block_cycle(
                idx,
                (k_iter, kc_a, kc_b, step_ka, step_kb, slots_a, blocks),
                (a_full, a_last, b_full, b_last),
                (rab, la, la_kt, per, mm, dr_last, bias_cyc),
            )
            mk.raise_at(idx, path, "staged_b_block_cycle")
    if not floor and via_a and not via_b:
        # A staged and B direct, both reloaded in every block, B streamed through its S slots:
        # B's last copy of a block waits for B's read of chunk kc_b - 1 - S, A's GM->UB copies
        # issued after it queue behind it on MTE2, and the next block's first GM->UB copy
        # waits for the last of their reorders (the staging buffer). (Seen: 310P3 int8
        # 16 x 11008 x 4096, an A staged in three chunks and B in two one-slot chunks per
        # block: -21.9 %.) (Priced on the candidates where it applies and may exceed the path
        # so far: per block at most B's copies, A's GM->UB legs and reorders, one UB->L1 leg
        # and the reads of an A chunk's steps and one more.)
        idx = np.flatnonzero(ga + va + gb + blocks * (ua1 + (step_ka + 1) * per) > mk.value)
        if idx.size:
            bl = _sub(blocks, idx)
            idx = idx[
                (_sub(passes_a, idx) > bl - 0.5)
                & (_sub(passes_b, idx) > bl - 0.5)
                & (_sub(kc_b, idx) > _sub(slots_b, idx))
                & _sub(has_b, idx)
            ]
        if idx.size:
            path = staged_a_block_cycle(
                idx,
                (k_iter, kc_a, kc_b, step_ka, step_kb, slots_b, blocks),
                (a_full, a_last, b_full, b_last),
                (ra, lb, per, mm, dr_last),
            )
            mk.raise_at(idx, path, "staged_a_block_cycle")
    if not floor and via_a and not via_b:
        # One B slot and B reloaded in every block: B's copies chain through its reads
        # (chain_b). At the block that starts an A pass, B's first chunk's last read waits for
        # the A chunks its steps span, staged through UB after the bias slice on MTE2: each
        # GM->UB leg after the reorder before it, each reorder after the UB->L1 leg before it
        # (the staging buffer). That chain replaces B's first copy in B's hop (which runs on
        # MTE2 meanwhile), once per A pass.
        n_need = np.where(kc_b > 1, np.minimum(kc_a, _cdiv(step_kb, step_ka)), kc_a)
        to_tail = n_need == kc_a
        g_end = np.where(to_tail, a_last[0], a_full[0])
        a_stage = (
            np.where(kc_a > 1, a_full[0], a_last[0])
            + (n_need > 1)
            * (
                (n_need - 1) * a_full[1]
                + np.maximum(n_need - 2, 0) * np.maximum(a_full[2], a_full[0])
                + np.maximum(a_full[2], g_end)
            )
            + np.where(to_tail, a_last[1] + a_last[2], a_full[1] + a_full[2])
        )
        a_in = np.maximum(a_stage - np.where(kc_b > 1, b_full[0], b_last[0]), 0.0)
        a_ok = single_b & (passes_b >= blocks) & (passes_a < blocks) & has_b
        mk.raise_all(a_ok * (chain_b + passes_a * a_in + mm + dr_last), "b_chain_behind_a_staging")
    for via, one, chunks_, legs, reads in (
        (via_a, single_a, (kc_a, passes_a), (a_full, a_last), (reads_af, reads_al, stay_a)),
        (via_b, single_b, (kc_b, passes_b), (b_full, b_last), (rb_kb, reads_bl, stay_b)),
    ):
        if floor or not via:
            continue
        # An operand staged in one slot: a chunk's UB->L1 leg waits for the last read of the
        # chunk before, and the next chunk's reorder for that UB->L1 leg (the destination
        # half), so per chunk its UB->L1 leg, then the longer of its reads and the next
        # reorder (priced on those candidates).
        idx = np.flatnonzero(one)
        if idx.size:
            (g_f, v_f, u_f), (g_l, v_l, u_l) = ((_sub(x, idx) for x in leg) for leg in legs)
            path = staged_one_slot_chain(
                tuple(_sub(x, idx) for x in chunks_),
                ((g_f, v_f, u_f), (g_l, v_l, u_l)),
                tuple(_sub(x, idx) for x in reads),
            )
            tail = _sub(bias_cyc, idx) + _sub(mm, idx) + _sub(dr_last, idx)
            mk.raise_at(idx, path + tail, "staged_one_slot_chain")
    if not floor and fix and via_a and via_b:
        # Both staged with FixPipe (no drain in the vector queue), A in one slot and two
        # chunks per block, both reloaded every block (priced on those candidates).
        idx = np.flatnonzero(
            single_a & (kc_a == 2) & (kc_b <= 2) & (b_last_start >= a_last_start)
            & (passes_a > blocks - 0.5) & (passes_b > blocks - 0.5) & has_b
        )  # fmt: skip
        if idx.size:
            path = staged_one_a_slot_cycle(
                tuple(_sub(x, idx) for x in (kc_b, step_ka, k_iter, blocks)),
                tuple(tuple(_sub(x, idx) for x in leg) for leg in (a_full, a_last, b_full, b_last)),
                (ra.sub(idx), rab.sub(idx), _sub(per, idx), _sub(mm, idx), _sub(dr_last, idx)),
            )
            mk.raise_at(idx, path, "staged_one_a_slot_cycle")
    if not floor and not via_b:
        # A chunks longer than B's slots hold: B streams its chunks through its slots, so the
        # B copy issued at the A chunk's last step waits for the B read slots_b chunks back, a
        # read of this A chunk's steps; the next A copy queues behind that B copy on MTE2.
        # Per A chunk: its copy, its reads up to that step, the B copy (then the next A copy;
        # at a block start the bias slice between).
        # (Priced on the candidates where it applies only.)
        j_f = step_ka - slots_b * step_kb - 1
        q_ok = streamed_b & (j_f >= 0) & ka_div & a_many & has_b
        idx = np.flatnonzero(q_ok)
        if idx.size:
            af, al = (tuple(_sub(x, idx) for x in legs) for legs in (a_full, a_last))
            lb_s, ra_s = _sub(lb, idx), ra.sub(idx)
            sl_b, sk_b = _sub(slots_b, idx), _sub(step_kb, idx)
            j_l = _sub(r_last_a, idx) - sl_b * sk_b - 1
            a_arr_f = af[0] + (af[1] + af[2] if via_a else 0.0)
            a_arr_l = al[0] + (al[1] + al[2] if via_a else 0.0)
            a_next_l = al[0] + (al[1] if via_a else 0.0)
            q_f = a_arr_f + ra_s(np.maximum(_sub(j_f, idx) + 1, 1)) + lb_s + _sub(b_full[0], idx)
            q_l = np.where(
                j_l >= 0,
                a_arr_l + ra_s(np.maximum(j_l + 1, 1)) + lb_s + _sub(b_last[0], idx),
                a_next_l,
            )
            q_path = (
                _sub(passes_a, idx) * ((_sub(kc_a, idx) - 1) * q_f + q_l + _sub(bias_cyc, idx))
                + _sub(mm, idx)
                + _sub(dr_last, idx)
            )
            mk.raise_at(idx, q_path, "mte2_behind_slot_waiting_b")
    if not fix and (via_a or via_b) and not floor:
        # Passes of several blocks, for an operand staged through UB: the drain of the block
        # before a pass precedes the pass's reorders in the vector queue (and its UB->GM copy
        # the UB->L1 legs in MTE3's), so a cycle runs per pass through the drain, the pass's
        # staging chain, its last chunk's reads and the steps of its blocks.
        staged = staged_pass_paths(
            c, k, bk, cap, drain_legs=(drain_total / blocks_n, m3c),
            blk=np.maximum(span, span_seq) / blocks_n,
            run_ends=(reads_al + lb_kt + mm_kt, reads_bl + mm_kt),
            grid=(m_iter, n_iter, f["stepM"], f["stepN"], bm, bn, blocks),
            ops=(
                (via_a, passes_a, loads_a, va, ua, kc_a, step_ka, slots_a, a_full, a_last),
                (via_b, passes_b, loads_b, vb, ub, kc_b, step_kb, slots_b, b_full, b_last),
            ),
        )  # fmt: skip
        tail_path = (k_iter - 1) * per + mm + dr_last
        mk.raise_all(start + staged + tail_path, "staged_pass")
    if not fix and not floor:
        # One L0C buffer without FixPipe: a one-slot outer operand holding its whole K in one
        # chunk is copied again at each of its pass starts (a new column of blocks with
        # iterateOrder 0, a new row with 1), and that copy waits for the previous block's last
        # read, which the drain chain does not see (priced on those candidates).
        outer_b = order == 0
        # (Also a B holding its whole K in several slots, with iterateOrder 0, when A has one
        # slot and is copied again in every block: B's copy at its pass start queues on MTE2
        # behind A's first copy, which waits for A's last read in the block before, so the
        # same chain runs through B's copy: see :func:`c1_pass_start_extra`.)
        b_behind_a = outer_b & (kc_b == 1) & (slots_a == 1) & (passes_a >= blocks)
        idx = np.flatnonzero(
            c1 & ((np.where(outer_b, slots_b + kc_b, slots_a + kc_a) == 2) | b_behind_a)
        )
        if idx.size:
            ob = _sub(outer_b, idx)
            i_n = np.where(ob, _sub(m_iter, idx), _sub(n_iter, idx))
            p_o = np.where(ob, _sub(passes_b, idx), _sub(passes_a, idx))
            # (Lines of one block where B's pass spans several of them, with A behind.)
            keep = ((i_n >= 2) | (_sub(b_behind_a, idx) & (_sub(f["stepN"], idx) >= 2))) & (
                p_o >= 2
            )
            idx, ob, p_o = idx[keep], ob[keep], p_o[keep]
        if idx.size:
            # The other (inner) operand's copy at the same block start: A's is ahead of B's on
            # MTE2 (and waits for A's last read too when A has one slot); B's is behind A's.
            pa, pb = _sub(passes_a, idx), _sub(passes_b, idx)
            a_again = (pa > _cdiv(_sub(m_iter, idx), _sub(f["stepM"], idx)) + 0.5) & (
                _sub(slots_a, idx) == 1
            )
            b_again = pb > _cdiv(_sub(n_iter, idx), _sub(f["stepN"], idx)) + 0.5
            wait_a1 = _sub(a_last[2] if via_a else a_last[0], idx)
            wait_b1 = _sub(b_last[2] if via_b else b_last[0], idx)
            many_a, many_b = _sub(kc_a, idx) > 1, _sub(kc_b, idx) > 1
            g_a0 = 0.0 if via_a else np.where(many_a, _sub(a_full[0], idx), _sub(a_last[0], idx))
            g_b0 = 0.0 if via_b else np.where(many_b, _sub(b_full[0], idx), _sub(b_last[0], idx))
            la_s, lb_s = _sub(la, idx), _sub(lb, idx)
            # Copies from the last read on, the reads before the first MMAD, and what follows
            # the outer operand's last read in the block before (B's read, for A).
            copies = np.where(ob, a_again * g_a0 + wait_b1, wait_a1)
            reads = np.where(ob, lb_s, np.maximum(la_s, b_again * g_b0) + lb_s)
            # (Its own name: ``after`` is the MTE2 path's tail, used below.)
            after_read = np.where(ob, 0.0, _sub(lb_kt, idx))
            extra_c1 = c1_pass_start_extra(
                {key: tuple(_sub(x, idx) for x in v) for key, v in blk_types.items()},
                ob,
                p_o - 1.0,
                _sub(normal, idx) - stall_c1[np.searchsorted(idx_c1, idx)],
                copies + reads - _sub(mm_kt, idx) - after_read,
                np.where(ob, _sub(m_iter, idx), _sub(n_iter, idx)) == 1,
            )
            mk.raise_at(idx, _sub(c1_path, idx) + extra_c1, "c1_pass_start")
    if via_a and via_b and problem.bias and not floor:
        # Both staged, with a bias slice per block on MTE2 besides the GM->UB legs: MTE2 runs
        # all of them, and between two GM->UB legs it idles for the reorder the second waits
        # for, less a bias slice between them (one per block, after the block's last copy,
        # whose reorder is the K-tail one of the operand that starts its last chunk later).
        # (Seen: 910A fp16 1024^3, B staged in three chunks per block, a 192-cycle bias slice
        # each: -4.9 %.)
        v_end = np.where(b_last_start >= a_last_start, b_last[1], a_last[1])
        mk.raise_all(
            mte2 + va + vb - blocks * np.minimum(bias_cyc, v_end) + last_u + after,
            "mte2_bias_between_staged",
        )
    # The first block cannot end before MTE2 has brought in every chunk it reads (the first
    # pass of both operands, in order) and the steps after the last of them have run; the
    # drains of all blocks follow it in their queue (with the UB->GM copies without FixPipe).
    a_pass = (kc_a - 1) * a_full[0] + a_last[0]
    b_pass = (kc_b - 1) * b_full[0] + b_last[0]
    last_copy_step = np.maximum(a_last_start, b_last_start)
    ub_tail = 0.0
    if via_a or via_b:
        ub_tail = np.maximum(
            a_last[1] + a_last[2] if via_a else 0.0, b_last[1] + b_last[2] if via_b else 0.0
        )
    # (bias_cyc without a bias slice, ub_tail without UB staging and m3_out with FixPipe are the
    # scalar 0.0: x + 0.0 is x, so those terms are left out there.)
    first_end = bias_cyc + a_pass + b_pass if problem.bias else a_pass + b_pass
    if via_a or via_b:
        first_end = first_end + ub_tail
    first_end = first_end + (k_iter - last_copy_step - 1) * per + la + lb + mm
    first_all = first_end + drain_total if fix else first_end + drain_total + m3_out
    mk.raise_all(first_all, "first_block")
    if not fix and not floor:
        # Likewise the last block of the first line (column with iterateOrder 0, row with 1)
        # when the inner operand is loaded once: MTE2 has brought its whole panel (every
        # group), the outer operand's first pass and a bias slice per block before that
        # block's last copy; its steps, then its drain and every later one follow (the line's
        # other blocks drain before it). (Seen: 910A int8 512 x 1024 x 3000 by column DMA,
        # the tail A group's 18654-cycle copy ahead of the first column's second block:
        # -10.2 %.) (An inner operand reloaded per line or per block is in the steady paths.)
        # (Priced on the candidates where it applies and the drains take at least half the
        # path so far.)
        outer_b = order == 0
        idx = np.flatnonzero(drain_total + m3_out > 0.5 * mk.value)
        if idx.size:
            ob, m_s, n_s = _sub(outer_b, idx), _sub(m_iter, idx), _sub(n_iter, idx)
            i_s = np.where(ob, m_s, n_s)
            once = np.where(
                ob,
                _sub(passes_a, idx) < _cdiv(m_s, _sub(f["stepM"], idx)) + 0.5,
                _sub(passes_b, idx) < _cdiv(n_s, _sub(f["stepN"], idx)) + 0.5,
            )
            keep = once & (i_s >= 2)
            idx, ob, m_s, n_s, i_s = idx[keep], ob[keep], m_s[keep], n_s[keep], i_s[keep]
        if idx.size:
            o_s = np.where(ob, n_s, m_s)
            # The inner operand's whole panel; the outer one's first pass (every block's
            # share where it is streamed).
            ga_s, gb_s = _sub(ga, idx), _sub(gb, idx)
            line_a = np.where(
                ob, ga_s, np.where(_sub(streamed_a, idx), ga_s / o_s, _sub(a_pass, idx))
            )
            line_b = np.where(
                ob, np.where(_sub(streamed_b, idx), gb_s / o_s, _sub(b_pass, idx)), gb_s
            )
            # The line's blocks before its last: full inner blocks of the first outer line.
            bts = {key: tuple(_sub(x, idx) for x in v) for key, v in blk_types.items()}
            o_1 = o_s >= 2
            d_ff, d_ft = bts[(0, 0)], bts[(0, 1)]
            d_tf = bts[(1, 0)]
            dr_0 = np.where(
                ob,
                np.where(o_1, d_ff[1] + d_ff[2], d_ft[1] + d_ft[2]),
                np.where(o_1, d_ff[1] + d_ff[2], d_tf[1] + d_tf[2]),
            )
            line_end = (
                _sub(bias_cyc, idx) * i_s + line_a + line_b + _sub(ub_tail, idx)
                + _sub((k_iter - last_copy_step - 1) * per + la + lb + mm, idx)
            )  # fmt: skip
            drains_after = _sub(drain_total + m3_out, idx) - (i_s - 1) * dr_0
            # With one L0C buffer a block's MMADs wait for the L0C->UB leg before, so the
            # drains after the line chain through the blocks' MMAD chains where those exceed the
            # UB->GM copy before (:func:`c1_drain_chain`). (Seen: 910A int8 512 x 1024 x 3000
            # by column DMA, each column's full block's 1920-cycle K loop between the tail
            # block's L0C->UB leg and its own: -6.5 %.)
            c1_s = _sub(c1, idx)
            if np.any(c1_s):
                after_c1 = c1_chain_after_first_line(bts, m_s, n_s, ob, _sub(normal, idx))
                drains_after = np.where(c1_s, np.maximum(drains_after, after_c1), drains_after)
            mk.raise_at(idx, line_end + drains_after, "first_line")
    replay: np.ndarray | None = None
    resident: tuple[Any, Any] = (False, False)
    if not fix and not floor:
        # Both operands reloaded in every block: every block repeats the same copies, so a
        # replay of the first blocks gives the period their chains across the queues settle
        # into (see _block_replay_path). (Priced on the candidates where it applies.)
        replay = np.flatnonzero(
            (passes_a > blocks - 0.5)
            & (passes_b > blocks - 0.5)
            & (blocks >= 4)
            & has_b
            & (k_iter <= _REPLAY_MAX_STEPS)
            & (ga + va + ua + gb + vb + ub > _REPLAY_SHARE * mk.value)
        )
    elif fix and (via_a or via_b) and not floor:
        # With FixPipe (310B1), an operand staged through UB and each operand either reloaded
        # in every block or resident over a pass of blocks: the blocks repeat the same copies,
        # so the replay's period holds too, with the drain on FixPipe's own queue and a
        # resident operand's copies left out (blocks that reload it are no shorter: leaving
        # instructions out of in-order queues only moves the rest earlier), see
        # _block_replay_path.
        resident = (passes_a < blocks - 0.5, passes_b < blocks - 0.5)
        replay = np.flatnonzero(
            ~(resident[0] & resident[1]) & (blocks >= 4) & has_b & (k_iter <= _REPLAY_MAX_STEPS)
        )
    if replay is not None and replay.size:
        blocks_r = np.maximum(blocks, 1)
        path = _block_replay_path(
            replay,
            (k_iter, kc_a, kc_b, step_ka, step_kb, slots_a, slots_b, blocks),
            (a_full, a_last, b_full, b_last),
            # (With FixPipe m3_out is 0: no UB->GM leg.)
            (la, lb, avg.mm, la_kt, lb_kt, mmad_cycles(p.mmad_overhead_cycles, c.fractal_cycles,
             avg.fr_1, avg.fc_1, g.fk_t),
             drain_total / blocks_r, m3_out / blocks_r, dr_last, bias_cyc),
            (f["dbL0A"], f["dbL0B"], f["dbL0C"]),
            fix=fix,
            resident=resident,
        )  # fmt: skip
        mk.raise_at(replay, path, "block_replay")
    busy = {
        "MTE2": mte2,
        "MTE1": mte1,
        "M": cube,
        "FIX": drain_total if fix else 0.0 * drain_total,
        "V": vec,
        "MTE3": mte3,
    }
    out: dict[str, Any] = {"makespan": mk.value, "busy": busy}
    if mk.track:
        out["binding"] = mk.code
    if floor:
        # Per-operand floors (operand_floor_arrays): each chain alone, and the work of the
        # pipes that does not depend on the other operand (its copies are >= 0).
        fixed_work = mte1 + cube + drain_total
        out["own_a"] = own_a + mm + dr_last
        out["own_b"] = own_b + mm + dr_last
        out["seq_a"] = fixed_work + ga
        out["seq_b"] = fixed_work + gb
    return out


def _leg_after_a(via_a: bool, via_b: bool, legs_b: tuple[Any, Any, Any]) -> Any:
    """Cycles a B copy issued with an A copy adds after the A copy's slot-waiting leg."""
    g, v, u = legs_b
    if via_a:
        return v + u if via_b else 0.0 * g
    return g + v + u if via_b else g


def estimate_arrays(
    problem: Problem, preset: HardwarePreset, fields: dict[str, Any]
) -> dict[str, Any]:
    """Estimates many tilings of one problem at once.

    Args:
        problem: The problem.
        preset: The chip.
        fields: Struct fields (:data:`ESTIMATOR_FIELDS`) as equal-length integer arrays.

    Returns:
        A dict of arrays: ``cycles`` and ``time_us`` (kernel, with launch overhead),
        ``core_cycles`` (slowest core), ``path_cycles`` (its pipeline path before the clip to
        [busiest pipe, sum of work]; breaks ties between equal estimates), per-pipe
        ``busy_<PIPE>`` cycles of the slowest core,
        ``sequential_cycles``, ``resource_cycles``, ``cap_bytes_per_cycle``, ``read_bytes``,
        ``hbm_bytes``.
    """
    # The fields are held as float64: nearly every term mixes them with float cycles, and an
    # int64 operand is cast again at each such operation (about 5 % of the estimator's time).
    # Every field and every product of fields the formulas form stays far below 2**53, where
    # float64 holds integers exactly, so sums, products, comparisons and floor divisions give
    # the same values as in int64 (checked bit for bit on random tilings of five chips).
    f = {name: np.asarray(fields[name], dtype=np.float64) for name in ESTIMATOR_FIELDS}
    return _estimate_blocks(problem, preset, f, False)


def makespan_floor_arrays(
    problem: Problem, preset: HardwarePreset, fields: dict[str, Any]
) -> dict[str, Any]:
    """A lower bound of :func:`estimate_arrays` over dbL0A, dbL0B and dbL0C, per L1 choice.

    For each entry (core split, base block, steps, L1 depths, iterateOrder; the three L0 flags
    are ignored) the returned ``time_us`` is at most the estimated time of the tiling with any
    dbL0A, dbL0B, dbL0C in {1, 2}. It runs the estimator's own code (:func:`_core` with
    ``floor``) with the flags at 2, which gives the busy totals exactly (no busy total depends
    on an L0 flag) and a makespan no longer than the estimator's for any flags, because

    * every K-step period ``max(mm + wa*la + wb*lb, la + lb)`` is smallest with wa = wb = 0
      (dbL0A = dbL0B = 2), and so are the steady periods of :func:`_step_chain`, the sums of
      periods and the restart reads of :func:`_restart_reads` (built from ``+`` and ``max``
      of terms that only grow when a flag is 1);
    * the chunk-chain hops, the slot cycles, the MTE2 gap path, the copy, drain and first-
      block paths and the UB paths are built from those by ``+``, ``max`` and non-negative
      weights, so they are non-decreasing in them; a chunk's stay behind the drain chain
      ``(others - dbL0C) x drain`` is smallest with dbL0C = 2;
    * the terms that are not monotone in the flags -- the compute path (its start-up share
      ``start - (per - mm)`` falls as the period grows) and the chain gains (differences of
      read times, also the one the one-slot A hop subtracts from its MTE2 term), all
      non-negative or one argument of a ``max`` -- are left out;
    * the hops that price passes apart are weighted sums, weights >= 0 and independent of the
      flags, of ``max``es of read times, so they are non-decreasing in them too;

    and the estimate is ``min(max(makespan, busiest), sum of busy) + launch``, non-decreasing
    in the makespan.

    Args:
        problem: The problem.
        preset: The chip.
        fields: Struct fields (:data:`ESTIMATOR_FIELDS`; dbL0A / dbL0B / dbL0C may be absent).

    Returns:
        ``cycles`` and ``time_us``: the floor of each entry (launch overhead included).
    """
    f = {
        name: np.asarray(fields[name], dtype=np.int64)
        for name in ESTIMATOR_FIELDS
        if not name.startswith("dbL0")
    }
    two = np.full(f["baseM"].shape, 2, dtype=np.int64)
    for name in ("dbL0A", "dbL0B", "dbL0C"):
        f[name] = two
    out = _estimate_blocks(problem, preset, f, True)
    return {"cycles": out["cycles"], "time_us": out["time_us"]}


def operand_floor_arrays(
    problem: Problem, preset: HardwarePreset, fields: dict[str, Any]
) -> dict[str, Any] | None:
    """Lower bounds of :func:`estimate_arrays` that depend on one operand's L1 choice only.

    For each entry, ``time_a_us`` bounds the estimated time of every tiling with the same core
    split, base block, iterateOrder and A choice (stepM, stepKa, depthA1), whatever its B
    choice (stepN, stepKb, depthB1) and L0 flags; ``time_b_us`` the same for B. A search can
    so rule out all pairs of an A choice with one evaluation (cost #A + #B instead of #A x #B).

    Why each is a bound: it runs :func:`makespan_floor_arrays`'s code (a floor over the L0
    flags), with two changes that only lower it:

    * the bandwidth cap is the largest any tiling of the core split can get, the L2 share with
      every reload hitting (:func:`simcore.pipeline.traffic.chip_bandwidth_cap` with hit = 1; the
      miss slowdown is >= 1); every copy and drain cost is ``bytes / min(peak, cap)``, so
      non-increasing in the cap, and the makespan terms are sums and maxes of them;
    * of the makespan it keeps A's slot-cycle chain (B's for ``time_b_us``) without the terms
      the other operand adds (all >= 0; see ``own_a`` / ``own_b`` in :func:`_core`), and of
      the total work the cube, MTE1, drain and the operand's own copies (the other's >= 0);

    and the estimate is ``min(max(makespan, busiest), total work) + launch``, at least
    ``min(chain, own work) + launch``. The A terms use no B field (stepN, stepKb, depthB1 only
    enter B's traffic, B's chain and the chip traffic, i.e. the cap, which is replaced), and
    conversely.

    Returns None on chips with a UB path (the data path there depends on both operands'
    buffers), where a caller falls back to :func:`makespan_floor_arrays`.

    Args:
        problem: The problem.
        preset: The chip.
        fields: Struct fields (:data:`ESTIMATOR_FIELDS`; dbL0A / dbL0B / dbL0C may be absent).

    Returns:
        ``time_a_us`` and ``time_b_us`` per entry, or None (see above).
    """
    f = {
        name: np.asarray(fields[name], dtype=np.int64)
        for name in ESTIMATOR_FIELDS
        if not name.startswith("dbL0")
    }
    if vector_path_array(problem, f, preset) is not None:
        return None
    two = np.full(f["baseM"].shape, 2, dtype=np.int64)
    for name in ("dbL0A", "dbL0B", "dbL0C"):
        f[name] = two
    c = Costs(problem, preset)
    m, n, k = problem.m, problem.n, problem.k
    sm, sn = f["singleCoreM"], f["singleCoreN"]
    cores = ceil_div(m, sm) * ceil_div(n, sn)
    cap = np.minimum(
        preset.l2_bytes_per_cycle / np.maximum(cores, 1), preset.l2_bytes_per_cycle_per_core
    ).astype(np.float64)
    bm, bn = f["baseM"], f["baseN"]
    order0 = f["iterateOrder"] == 0
    slots_a = slots(f["depthA1"], f["stepM"], f["stepKa"])
    slots_b = slots(f["depthB1"], f["stepN"], f["stepKb"])
    chunk_a = k_chunking(k, f["baseK"], f["stepKa"], c.c0)
    chunk_b = k_chunking(k, f["baseK"], f["stepKb"], c.c0)
    a_full = traffic_coefficients(
        sm, bm, f["stepM"], k, f["baseK"], f["stepKa"], slots_a, order0, c.c0, chunk_a
    )
    b_full = traffic_coefficients(
        sn, bn, f["stepN"], k, f["baseK"], f["stepKb"], slots_b, ~order0, c.c0, chunk_b
    )
    m_iter_f, n_iter_f = ceil_div(sm, bm), ceil_div(sn, bn)
    # The slowest core (full rows x full cols) is the one the estimator prices.
    first_traffic = (
        a_full[0] + a_full[1] * n_iter_f,
        a_full[2] + a_full[3] * n_iter_f,
        b_full[0] + b_full[1] * m_iter_f,
        b_full[2] + b_full[3] * m_iter_f,
    )
    res = _core(c, problem, f, sm, sn, cap, first_traffic, True)
    launch = preset.launch_overhead_us * preset.clock_mhz
    out = {}
    for op in ("a", "b"):
        cycles = np.minimum(res[f"own_{op}"], res[f"seq_{op}"]) + launch
        out[f"time_{op}_us"] = np.broadcast_to(cycles / preset.clock_mhz, sm.shape)
    return out


def _estimate_blocks(
    problem: Problem, preset: HardwarePreset, f: dict[str, np.ndarray], floor: bool
) -> dict[str, Any]:
    """:func:`_estimate_block` over long inputs, block by block."""
    size = f["baseM"].size
    if f["baseM"].ndim != 1 or size <= _BLOCK:
        return _estimate_block(problem, preset, f, floor)
    # Long inputs go through in blocks: the estimator keeps ~100 intermediate arrays alive, and
    # at this size they stay in the CPU caches instead of streaming through memory (about 1.5x
    # the throughput of one pass over a million candidates). Smaller blocks pay the fixed cost
    # of the ~2,600 numpy calls of a block more often: going from 8192 to 16384 took 12 % of the
    # instructions per candidate on 910B2 and 28 % on 310P3 / 910A (valgrind, 2026-11-21), and
    # measured 5 % (910B2) to 30 % (310P3) faster; 32768 was no faster on 910B2 or 310P3.
    out: dict[str, np.ndarray] = {}
    for i in range(0, size, _BLOCK):
        part = _estimate_block(
            problem, preset, {name: a[i : i + _BLOCK] for name, a in f.items()}, floor
        )
        if not out:
            # Written in place block by block: concatenating the parts at the end cost ~4 % of
            # the estimator's time.
            out = {key: np.empty(size, dtype=np.result_type(v)) for key, v in part.items()}
        for key, v in part.items():
            out[key][i : i + _BLOCK] = v
    return out


def _estimate_block(
    problem: Problem, preset: HardwarePreset, f: dict[str, np.ndarray], floor: bool = False
) -> dict[str, Any]:
    """:func:`estimate_arrays` on one block of candidates (integer field arrays).

    With ``floor`` the makespan is :func:`_core`'s floor (:func:`makespan_floor_arrays`).
    """
    c = Costs(problem, preset)
    m, n, k = problem.m, problem.n, problem.k
    sm, sn = f["singleCoreM"], f["singleCoreN"]
    m_cores = ceil_div(m, sm)
    n_cores = ceil_div(n, sn)
    # Cores with the full singleCoreM (singleCoreN); the last one gets the tail.
    full_m_cores = m_cores - 1
    full_n_cores = n_cores - 1
    tail_m = m - full_m_cores * sm
    tail_n = n - full_n_cores * sn
    in_b = bits(problem.dtype) / 8.0
    bm, bn = f["baseM"], f["baseN"]
    order0 = f["iterateOrder"] == 0
    slots_a = slots(f["depthA1"], f["stepM"], f["stepKa"])
    slots_b = slots(f["depthB1"], f["stepN"], f["stepKb"])
    # Chip traffic first (it sets the per-core bandwidth cap), from the closed-form reuse. Core
    # shapes are (full or tail rows) x (full or tail cols): A's traffic is summed over the row
    # shapes x the columns' blocks, B's over the column shapes x the rows' blocks.
    m_iter_f, m_iter_t = ceil_div(sm, bm), ceil_div(tail_m, bm)
    n_iter_f, n_iter_t = ceil_div(sn, bn), ceil_div(tail_n, bn)
    # Row blocks summed over the cores along M (column blocks over the cores along N).
    m_blocks = full_m_cores * m_iter_f + m_iter_t
    n_blocks = full_n_cores * n_iter_f + n_iter_t
    group_m = bm * f["stepM"]
    group_n = bn * f["stepN"]
    loads_a, el_a, chip_el_a = operand_chip_traffic(
        (sm, tail_m), (m_iter_f, m_iter_t), group_m, f["stepM"], slots_a, order0,
        k_chunking(k, f["baseK"], f["stepKa"], c.c0), full_m_cores, n_cores, n_iter_f, n_blocks,
    )  # fmt: skip
    loads_b, el_b, chip_el_b = operand_chip_traffic(
        (sn, tail_n), (n_iter_f, n_iter_t), group_n, f["stepN"], slots_b, ~order0,
        k_chunking(k, f["baseK"], f["stepKb"], c.c0), full_n_cores, m_cores, m_iter_f, m_blocks,
    )  # fmt: skip
    read = (chip_el_a + chip_el_b) * in_b
    if problem.bias:
        # One bias slice per output block: baseN values per row block, fewer in the tail
        # column, i.e. N values per row block of the grid.
        read = read + m_blocks * n * (bits(problem.bias_type) / 8.0)
    first_traffic = (loads_a, el_a, loads_b, el_b)
    write = m * n * bits(problem.c_dtype) / 8.0
    unique = (m + n) * k * in_b + write
    working = reuse_working_set(m, n, k, sm, sn, group_m, group_n, f["iterateOrder"], in_b)
    cap, hbm = chip_bandwidth_cap(read, write, unique, working, m_cores * n_cores, preset)

    # The slowest core is the one with the largest share (singleCoreM x singleCoreN): every cost
    # grows with the rows and columns, so the tail cores never take longer; only it is priced.
    vp = vector_path_array(problem, f, preset)
    if vp is None or vp.all() or not vp.any():
        c = Costs(problem, preset, vp is None or bool(vp.all()))
        res = _core(c, problem, f, sm, sn, cap, first_traffic, floor)
        busy = {p: np.broadcast_to(res["busy"][p], sm.shape) for p in PIPE_NAMES}
        makespan = res["makespan"]
        code = res.get("binding")
    else:
        # Tilings whose reorder halves do not fit in UB take the column-DMA path: price the two
        # groups with their own costs and put the results back in place.
        makespan = np.empty(sm.shape)
        code = None if floor else np.empty(sm.shape, dtype=np.int8)
        busy = {p: np.empty(sm.shape) for p in PIPE_NAMES}
        for on in (True, False):
            idx = np.flatnonzero(vp == on)
            # ``take`` gathers in ~15 % fewer instructions than indexing with an index array.
            sub = {name: a.take(idx) for name, a in f.items()}
            res = _core(
                Costs(problem, preset, on), problem, sub, sub["singleCoreM"],
                sub["singleCoreN"], cap.take(idx), tuple(x.take(idx) for x in first_traffic),
                floor,
            )  # fmt: skip
            makespan[idx] = res["makespan"]
            if code is not None:
                code[idx] = res["binding"]
            for p in PIPE_NAMES:
                busy[p][idx] = res["busy"][p]
    # HBM's time is a chip-wide floor on the kernel (see
    # simcore.pipeline.traffic.chip_bandwidth_cap).
    hbm_floor = hbm_floor_cycles(hbm, preset)
    seq = np.maximum(sum(busy[p] for p in PIPE_NAMES), hbm_floor)
    # Pairwise maxima: np.maximum.reduce over a list first stacks the arrays into a new one
    # (~4x the instructions).
    rb = busy[PIPE_NAMES[0]]
    for p in PIPE_NAMES[1:]:
        rb = np.maximum(rb, busy[p])
    rb = np.maximum(rb, hbm_floor)
    # The simulated makespan always lies between the busiest pipe and the sum of all work.
    span = np.minimum(np.maximum(makespan, rb), seq)
    binding = None
    if code is not None:
        busy_list = [busy[p] for p in PIPE_NAMES]
        binding = clip_binding(code, makespan, busy_list, hbm_floor, rb, seq)
    worst = {"span": span, "seq": seq, "res": rb, "busy": busy}
    launch = preset.launch_overhead_us * preset.clock_mhz
    cycles = worst["span"] + launch
    out: dict[str, Any] = {
        "cycles": cycles,
        "time_us": cycles / preset.clock_mhz,
        "core_cycles": worst["span"],
        # The pipeline path before the clip to [busiest pipe, sum of work]: among tilings
        # whose estimate is the same resource floor (HBM, a saturated pipe) the one with the
        # shorter path has slack the floor hides, which a search uses to break such ties.
        "path_cycles": np.broadcast_to(makespan, span.shape),
        "sequential_cycles": worst["seq"] + launch,
        "resource_cycles": worst["res"] + launch,
        "cap_bytes_per_cycle": cap,
        "read_bytes": read,
        "hbm_bytes": hbm,
    }
    for p in PIPE_NAMES:
        out[f"busy_{p}"] = worst["busy"][p]
    if binding is not None:
        out["binding_term"] = binding
    return out


def estimate_one(problem: Problem, t: TCubeTiling, preset: HardwarePreset) -> dict[str, Any]:
    """Estimates a single tiling.

    Returns:
        The keys of :func:`estimate_arrays` as floats, and ``binding_term`` as its name
        (:data:`simcore.estimate.binding.BINDING_NAMES`).
    """
    fields = {name: np.asarray([getattr(t, name)]) for name in ESTIMATOR_FIELDS}
    res = estimate_arrays(problem, preset, fields)
    out: dict[str, Any] = {
        key: float(np.asarray(v).reshape(-1)[0]) for key, v in res.items() if key != "binding_term"
    }
    out["binding_term"] = BINDING_NAMES[int(res["binding_term"][0])]
    return out


del c0_elements  # imported for symmetry with kernel; C0 comes from Costs
