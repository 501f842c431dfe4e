"""The precedence rules of the AI Core's pipes, written once for both fidelities.

An instruction starts when its pipe is free (each pipe is an in-order queue) and every buffer it
fills or reads is ready. These functions say *when* each buffer of the Matmul is ready, as cycle
counts: on Python floats for the event simulator (:mod:`simcore.pipeline.simulator`, one
instruction at a time) and on numpy arrays for the estimator's block replay
(:mod:`simcore.estimate.replay`, many candidate tilings at once). Both call the same functions,
so the two fidelities cannot drift apart on a rule; the simulator's loop and the replay's loop
only decide *which* instructions are issued in which order (the program order of the kernel).

The rules, and the pipes they tie:

* :func:`queue_start`: each pipe runs its instructions in order (all pipes);
* :func:`l1_slot_free`: a chunk copy takes the L1 slot of the chunk ``slots`` copies before
  (MTE2 or MTE3 after MTE1);
* :func:`l0_buffer_free`: an L1->L0 load fills the L0A / L0B buffer an MMAD released (MTE1 after
  M); :func:`k_step` composes it with the queue order into a K step's loads and MMAD;
* :func:`l0c_buffer_free`: a block's first MMAD after the drain ``dbL0C`` blocks back (M after
  FIX or V);
* :func:`drain_ready`: a drain after its block's last MMAD and, without FixPipe, after the C
  staging buffer is free (FIX or V after M and MTE3);
* :func:`staged_copy`: GM->UB, reorder and UB->L1 through UB's two staging halves (MTE2, V,
  MTE3);
* :func:`handoff_copy_ready`, :func:`handoff_read_ready`: the Norm template's step hand-off
  (MTE2 and MTE1), the simulator's only;
* :func:`chunk_of_step`: which chunk a K step reads.

Each function has a float path and an array path side by side. The float path compares plainly
(a numpy call on a scalar costs ten times more, and the simulator plays up to 100,000
instructions per tiling); the array path takes numpy's elementwise maximum and ``where``. Both
give the same values bit for bit (a maximum and a selection never round, and the sums are taken
in the same order): ``tests/simcore/pipeline/test_precedence.py`` checks it. :func:`k_step` and
:func:`staged_copy` write :func:`queue_start` out in their bodies, as they run once per K step or
per copy, and :func:`l1_slot_release` writes :func:`later` out on floats (once per K step).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar, overload

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
#: A cycle count: one instruction's (the simulator) or one per candidate tiling (the replay).
Time = TypeVar("Time", float, FloatArray)


def later(a: Time, b: Time | float) -> Time:
    """The later of two cycle counts (elementwise on arrays)."""
    if type(a) is float and type(b) is float:
        return a if a > b else b
    return np.maximum(a, b)  # type: ignore[no-any-return]


def queue_start(pipe_free: Time, ready: Time, ready2: Time | float | None = None) -> Time:
    """When an instruction starts on its pipe: in order, once all it waits for is done.

    Each pipe (MTE2, MTE1, M, FIX, V, MTE3) runs its instructions in program order (seed 004),
    so an instruction starts at the later of the end of the one before it on the same pipe
    (``pipe_free``) and of every time it waits for (its flags: a buffer's release, an operand's
    arrival). It then holds the pipe for its cost: its end is ``start + cycles``.

    Args:
        pipe_free: The end of the pipe's previous instruction.
        ready: A time the instruction waits for.
        ready2: Another (None: no other).

    Returns:
        The start cycle(s).
    """
    # Fixed arity and a plain float test: the simulator calls this per copy and per drain.
    if type(pipe_free) is float:
        start = pipe_free if pipe_free > ready else ready
        if ready2 is not None and ready2 > start:
            start = ready2
        return start
    wait: Any = ready if ready2 is None else np.maximum(ready, ready2)
    return np.maximum(pipe_free, wait)  # type: ignore[no-any-return]


@overload
def l1_slot_free(last_reads: Sequence[float], slots: int) -> float: ...
@overload
def l1_slot_free(
    last_reads: Sequence[FloatArray], slots: int | Sequence[BoolArray]
) -> FloatArray: ...
def l1_slot_free(last_reads: Sequence[Any], slots: Any) -> Any:
    """When the L1 slot a chunk copy fills is free: FIFO reuse of an operand's slots.

    An operand's chunks stay in L1 in ``depthA1 / (stepM x stepKa)`` slots (``depthB1`` for B:
    one or two), and a new chunk takes the slot of the oldest, first in, first out. So a copy
    (MTE2 GM->L1, or MTE3 UB->L1) waits for the last MTE1 read of the chunk ``slots`` copies
    before it; while fewer copies came before, its slot was never used (time 0).

    Args:
        last_reads: The last L1->L0 reads of the chunks copied before, oldest first, the last
            ``slots`` at least (the simulator: the chunks in L1; the replay: as many as the
            most slots of any candidate, 0 where none was copied).
        slots: The operand's L1 slot count; on arrays, where the candidates' counts differ,
            their :func:`slot_masks`.

    Returns:
        The cycle(s) the slot is free.
    """
    if type(slots) is int:
        return last_reads[-slots] if len(last_reads) >= slots else 0.0
    free = last_reads[-1]
    for j, has_j in enumerate(slots, start=2):
        # (A copy and putmask: cheaper than np.where on the replay's short arrays.)
        free = free.copy()
        np.putmask(free, has_j, last_reads[-j])
    return free


def slot_masks(slots: FloatArray, most: int) -> list[BoolArray]:
    """Per-candidate slot counts as :func:`l1_slot_free` takes them: ``slots == j``, j = 2..most."""
    return [slots == j for j in range(2, most + 1)]


def l1_slot_release(read_end: Time, mmad_start: Time) -> Time:
    """When a K step releases the L1 slots of the chunks it reads: once its MMAD starts.

    The kernel frees a chunk's L1 slot (FreeTensor, the MTE1 -> MTE2 flag) after the K loop that
    reads it, in program order after the MMAD of the chunk's last K step (Ascend C's MDL and
    Norm schedulers: CopyIn, then every K step's SplitA / SplitB / CubeCompute, then
    ClearL1BufferCache), and instructions are issued in order (seed 004), so the release is not
    issued before that MMAD starts, nor before the step's last L1 read (its L0B load) ends. The
    step's MMAD starts after that read (:func:`k_step`), so this is the MMAD's start; the
    maximum keeps the rule true where a caller passes an earlier bound of the start.

    Args:
        read_end: The end of the step's last L1->L0 read (its L0B load).
        mmad_start: The start of the step's MMAD.

    Returns:
        The release cycle(s), which :func:`l1_slot_free` takes as the chunk's last read.
    """
    if type(mmad_start) is float and type(read_end) is float:
        # The simulator's path, once per K step: :func:`later` written out (its comparison).
        return mmad_start if mmad_start > read_end else read_end
    return later(mmad_start, read_end)


@overload
def l0_buffer_free(
    last_mmad_end: float, mmad_end_before: float, single_buffer: tuple[bool, bool]
) -> tuple[float, float]: ...
@overload
def l0_buffer_free(
    last_mmad_end: FloatArray, mmad_end_before: FloatArray, single_buffer: tuple[bool, bool]
) -> tuple[FloatArray, FloatArray]: ...
@overload
def l0_buffer_free(
    last_mmad_end: FloatArray, mmad_end_before: FloatArray, single_buffer: BoolArray
) -> FloatArray: ...
def l0_buffer_free(last_mmad_end: Any, mmad_end_before: Any, single_buffer: Any) -> Any:
    """When the L0A and L0B buffers an MTE1 load fills are free: the ping-pong flags.

    L0A holds ``dbL0A`` buffers (1 or 2), used in turn by the K steps; the MMAD that read a
    buffer frees it. So with one buffer an L1->L0A load waits for the last MMAD, with two for
    the MMAD before it (the cube reads one buffer while MTE1 fills the other); likewise L0B.

    Args:
        last_mmad_end: End of the last MMAD issued (0 before the first).
        mmad_end_before: End of the MMAD before it (0 before the second).
        single_buffer: Whether L0A and L0B have one buffer: a ``(dbL0A == 1, dbL0B == 1)`` pair
            (the simulator; the replay where its candidates share the flags) or a boolean
            array of shape (2, candidates).

    Returns:
        The (L0A, L0B) buffers' free cycles: a pair, or an array of shape (2, candidates).
    """
    if type(single_buffer) is tuple:
        single_a, single_b = single_buffer
        return (
            last_mmad_end if single_a else mmad_end_before,
            last_mmad_end if single_b else mmad_end_before,
        )
    return np.where(single_buffer, last_mmad_end, mmad_end_before)


@overload
def k_step(
    mte1_free: float,
    m_free: float,
    a_ready: float,
    b_ready: float,
    last_mmad_end: float,
    mmad_end_before: float,
    single_buffer: tuple[bool, bool],
    l0c_free: float | None,
    cycles: tuple[float, float, float],
    out: None = None,
) -> tuple[float, float, float, float, float, float]: ...
@overload
def k_step(
    mte1_free: FloatArray,
    m_free: FloatArray,
    a_ready: FloatArray,
    b_ready: FloatArray,
    last_mmad_end: FloatArray,
    mmad_end_before: FloatArray,
    single_buffer: tuple[bool, bool] | BoolArray,
    l0c_free: FloatArray | float | None,
    cycles: tuple[FloatArray, FloatArray, FloatArray],
    out: tuple[FloatArray, FloatArray, FloatArray]
    | tuple[FloatArray, FloatArray, FloatArray, FloatArray],
) -> tuple[FloatArray, ...]: ...
def k_step(
    mte1_free: Any,
    m_free: Any,
    a_ready: Any,
    b_ready: Any,
    last_mmad_end: Any,
    mmad_end_before: Any,
    single_buffer: Any,
    l0c_free: Any,
    cycles: tuple[Any, Any, Any],
    out: tuple[Any, ...] | None = None,
) -> Any:
    """One K step: MTE1 loads L0A, then L0B, then the cube's MMAD reads both.

    MTE1 runs the L1->L0A load and then the L1->L0B load (one in-order queue), each once its
    chunk is in L1 and its L0 buffer is free (:func:`l0_buffer_free`); the MMAD (pipe M) starts
    once both loads are done (the L0B load, behind the L0A load in MTE1's queue, ends last)
    and, for a block's first step, once its L0C buffer is free (:func:`l0c_buffer_free`).

    Args:
        mte1_free: The end of MTE1's queue.
        m_free: The end of M's queue (the last MMAD's end).
        a_ready: When the A chunk the step reads is in L1.
        b_ready: When the B chunk is.
        last_mmad_end: The last MMAD's end (an L0 buffer's release, see :func:`l0_buffer_free`).
        mmad_end_before: The end of the MMAD before it.
        single_buffer: Whether L0A and L0B have one buffer (see :func:`l0_buffer_free`).
        l0c_free: When the block's L0C buffer is free; None after the block's first step.
        cycles: The L0A load, L0B load and MMAD cycles.
        out: Arrays only: where to write the three ends (the replay's state, in place; the
            MMAD's may be ``mmad_end_before``, read before it is written), and optionally a
            fourth array for the MMAD's start (the slots' release, :func:`l1_slot_release`).

    Returns:
        On floats the (start, end) of the L0A load, the L0B load and the MMAD, flattened (the
        simulator logs both); on arrays ``out``: the three ends (and the MMAD's start).
    """
    la, lb, mm = cycles
    if out is None:
        # The simulator's path, once per K step: queue_start and l0_buffer_free written out
        # (the same comparisons; three calls would cost a third of the simulator's time).
        start_a = mte1_free if mte1_free > a_ready else a_ready
        wait = last_mmad_end if single_buffer[0] else mmad_end_before
        if wait > start_a:
            start_a = wait
        end_a = start_a + la
        start_b = end_a if end_a > b_ready else b_ready
        wait = last_mmad_end if single_buffer[1] else mmad_end_before
        if wait > start_b:
            start_b = wait
        end_b = start_b + lb
        start_m = m_free if m_free > end_b else end_b
        if l0c_free is not None and l0c_free > start_m:
            start_m = l0c_free
        return start_a, end_a, start_b, end_b, start_m, start_m + mm
    # The replay's path: queue_start written out too (numpy's maximum into the state arrays).
    l0a_free, l0b_free = l0_buffer_free(last_mmad_end, mmad_end_before, single_buffer)
    end_a, end_b, end_m = out[:3]
    maximum = np.maximum
    maximum(mte1_free, maximum(a_ready, l0a_free), out=end_a)
    end_a += la
    maximum(end_a, maximum(b_ready, l0b_free), out=end_b)
    end_b += lb
    # The MMAD's start goes to the fourth array when the caller asks for it (the release).
    start_m = end_m if len(out) == 3 else out[3]
    maximum(m_free, end_b if l0c_free is None else maximum(end_b, l0c_free), out=start_m)
    # (The end from the start in one call, not a copy and an add: the replay calls this per
    # K step and played block.)
    np.add(start_m, mm, out=end_m)
    return out


@overload
def l0c_buffer_free(drain_ends: Sequence[float], db_l0c: int) -> float | None: ...
@overload
def l0c_buffer_free(
    drain_ends: Sequence[FloatArray], db_l0c: FloatArray
) -> FloatArray | float | None: ...
def l0c_buffer_free(drain_ends: Sequence[Any], db_l0c: Any) -> Any:
    """When a block's L0C buffer is free: its first MMAD waits for a drain ``dbL0C`` blocks back.

    L0C holds ``dbL0C`` accumulation buffers (1 or 2), one per block in turn; a block's drain
    (FixPipe L0C->GM, or L0C->UB on the vector pipe) frees its buffer. So the first MMAD of a
    block (pipe M) waits for the drain of the block ``dbL0C`` blocks before it, and for none
    while fewer blocks were drained.

    Args:
        drain_ends: The ends of the drains so far, oldest first (the last ``dbL0C`` at least).
        db_l0c: L0C buffers (the unit flag's effective count): an int, or on the replay's path
            an array of 1s and 2s, one per candidate.

    Returns:
        The cycle(s) the buffer is free: 0 where it was never used, None when no candidate's
        was.
    """
    if type(db_l0c) is int:
        return drain_ends[-db_l0c] if len(drain_ends) >= db_l0c else None
    if not drain_ends:
        return None
    before = drain_ends[-2] if len(drain_ends) >= 2 else 0.0
    return np.where(db_l0c == 1, drain_ends[-1], before)


def drain_ready(last_mmad_end: Time, c_staging_free: Time | float) -> Time:
    """When a block's drain may start: after its last MMAD, into a free C staging buffer.

    The drain (FixPipe L0C->GM, or L0C->UB on the vector pipe on chips without FixPipe) moves
    the block's finished accumulation, so it waits for the block's last MMAD (pipe M). Without
    FixPipe the output leaves through one C staging buffer in UB, which the previous block's
    UB->GM copy (MTE3) frees; with FixPipe there is none (pass 0).
    """
    return later(last_mmad_end, c_staging_free)


def staged_copy(
    queue_free: tuple[Time, Time, Time],
    halves_free: tuple[Time, Time],
    slot_free: Time,
    legs: tuple[Time, Time, Time],
) -> tuple[tuple[Time, Time], tuple[Time, Time], tuple[Time, Time]]:
    """A chunk copy staged through UB's two halves: GM->UB, the ND->NZ reorder, UB->L1.

    Without on-the-fly ND->NZ, a chunk goes GM->UB (MTE2) into the source half, is reordered
    (V) into the destination half, and leaves UB->L1 (MTE3) into its L1 slot. UB holds one
    source and one destination half (UB >= 2 x transLength), so the GM->UB leg waits for the
    previous reorder to free the source half, the reorder for its GM->UB leg and for the
    previous UB->L1 leg to free the destination half, and the UB->L1 leg for the reorder and
    the L1 slot (:func:`l1_slot_free`). The reorder's end frees the source half again, the
    UB->L1 leg's end the destination half.

    Args:
        queue_free: The ends of the MTE2, V and MTE3 queues.
        halves_free: When the (source, destination) halves are free: the previous staged copy's
            reorder and UB->L1 ends.
        slot_free: When the chunk's L1 slot is free.
        legs: Cycles of the (GM->UB, reorder, UB->L1) legs.

    Returns:
        The (start, end) of the GM->UB, reorder and UB->L1 legs.
    """
    mte2_free, vec_free, mte3_free = queue_free
    src_free, dst_free = halves_free
    gm_to_ub, reorder, ub_to_l1 = legs
    if type(mte2_free) is float:
        s1 = queue_start(mte2_free, src_free)
        e1 = s1 + gm_to_ub
        s2 = queue_start(vec_free, e1, dst_free)
        e2 = s2 + reorder
        s3 = queue_start(mte3_free, e2, slot_free)
        return (s1, e1), (s2, e2), (s3, s3 + ub_to_l1)
    # The replay's path: queue_start written out (numpy's maximum; this runs per copy).
    maximum = np.maximum
    s1 = maximum(mte2_free, src_free)
    e1 = s1 + gm_to_ub
    if src_free is vec_free and dst_free is mte3_free:
        # The halves' ends are V's and MTE3's (the replay's copies): the GM->UB leg ends after
        # V's end (it waits for the source half) and the reorder after MTE3's (the destination
        # half), legs being >= 0, so those two waits are already in the maxima (the same
        # values: a maximum returns one of its operands), one numpy call fewer each.
        s2 = maximum(e1, dst_free)
        e2 = s2 + reorder
        s3 = maximum(e2, slot_free)
    else:
        s2 = maximum(vec_free, maximum(e1, dst_free))
        e2 = s2 + reorder
        s3 = maximum(mte3_free, maximum(e2, slot_free))
    return (s1, e1), (s2, e2), (s3, s3 + ub_to_l1)


def handoff_copy_ready(slot_free: Time, mte1_free: Time) -> Time:
    """Norm step hand-off: a chunk copy waits for every L1 read issued before it.

    With the Norm template, one L1 slot per operand and both operands' chunks turning over at
    the same K steps (:func:`simcore.pipeline.transfer.norm_step_handoff`), the kernel hands L1
    over once per chunk for both operands: the next copy (MTE2) waits for MTE1's last read
    (``mte1_free``), not only for the reads of the chunk its slot held.
    """
    return later(slot_free, mte1_free)


def handoff_read_ready(a_ready: Time, b_ready: Time) -> Time:
    """Norm step hand-off: a K step's L1->L0A load waits for both operands' chunks.

    Under the same hand-off (:func:`handoff_copy_ready`) a chunk's reads (MTE1) start once both
    operands' copies (MTE2) are in L1, so the L0A load, the step's first, waits for B's chunk too.
    """
    return later(a_ready, b_ready)


def chunk_of_step(step: Any, step_k: Any) -> Any:
    """The index of the L1 chunk a K step reads: ``stepKa`` (``stepKb``) K steps per chunk.

    An operand reaches L1 in chunks of ``stepK`` base K steps, so K step ``s`` (MTE1 L1->L0
    loads and the MMAD) reads the operand's chunk ``s // stepK``; its first step is the one
    that needs a copy (MTE2, or the UB legs) unless the chunk is still in L1. Ints, or arrays.
    """
    if type(step) is int and type(step_k) is int:
        return step // step_k
    # (Floor of the quotient: exact for these integers, and cheaper than a float floor_divide.)
    return np.floor(np.true_divide(step, step_k))
