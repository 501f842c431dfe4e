"""What a simulated core carries from one block of its program to the next, and its snapshot.

The simulator (:mod:`simcore.pipeline.simulator`) plays a core's program block by block, and
the schedule of block ``i`` depends only on the blocks before it through this state: the pipes'
queue ends and busy totals, the instruction log so far, the chunks in L1 (their keys, arrivals
and last reads), the L0C drains still in flight, the UB staging halves, the last two MMADs (the
L0A / L0B hand-offs) and the DMA copies issued (the scalar pipe's work). So programs that begin
with the same blocks share that run: it is played once, and each program continues from a
:meth:`CoreState.copy` of the state at its end (:func:`simcore.pipeline.simulator.simulate`).
"""

from __future__ import annotations

from collections import deque


class ChunkState:
    """One operand's chunks copied into L1 so far, numbered in copy order.

    ``reads`` holds each copy's last L1 read (its arrival until a K step reads it), oldest
    first, as :func:`simcore.pipeline.precedence.l1_slot_free` takes it; ``ready`` each copy's
    arrival; ``index`` maps the key of a chunk in L1 to its number, ``keys`` each copy's key.
    """

    __slots__ = ("index", "keys", "reads", "ready")

    def __init__(self) -> None:
        self.keys: list[int] = []
        self.index: dict[int, int] = {}
        self.ready: list[float] = []
        self.reads: list[float] = []

    def copy(self) -> ChunkState:
        """An independent copy (the simulator appends to and writes into the lists)."""
        out = ChunkState()
        out.keys = self.keys.copy()
        out.index = self.index.copy()
        out.ready = self.ready.copy()
        out.reads = self.reads.copy()
        return out


class CoreState:
    """A core's state after the blocks played so far (``blocks`` of them).

    ``free`` and ``busy`` are per pipe (the simulator's ``PIPES`` order); ``log_code`` and
    ``log_times`` the packed instruction log (:func:`simcore.pipeline.simulator._core_result`
    unpacks it); ``drain_end`` the last ``dbL0C`` drains' ends (the L0C slots); ``ub_src_free``
    and ``ub_dst_free`` the ND->NZ staging halves of UB, ``c_ub_free`` the UB staging of C's
    drain on chips without FixPipe; ``mm_end1`` and ``mm_end2`` the last two MMADs' ends (0.0
    before there is such an MMAD); ``copies`` the DMA copies issued.
    """

    __slots__ = (
        "a",
        "b",
        "blocks",
        "busy",
        "c_ub_free",
        "copies",
        "drain_end",
        "free",
        "log_code",
        "log_times",
        "mm_end1",
        "mm_end2",
        "ub_dst_free",
        "ub_src_free",
    )

    def __init__(self, pipes: int, startup_cycles: float, l0c_buffers: int) -> None:
        """A core before its first block: no pipe free before ``startup_cycles``.

        Args:
            pipes: The number of pipes.
            startup_cycles: The scalar start-up before the first issue (0 where it overlaps).
            l0c_buffers: The L0C buffers the drains hand over (dbL0C as the core plays it).
        """
        self.blocks = 0
        self.free = [startup_cycles] * pipes
        self.busy = [0.0] * pipes
        self.log_code: list[int] = []
        self.log_times: list[float] = []
        self.a = ChunkState()
        self.b = ChunkState()
        self.drain_end: deque[float] = deque(maxlen=max(l0c_buffers, 1))
        self.ub_src_free = self.ub_dst_free = self.c_ub_free = 0.0
        self.mm_end1 = self.mm_end2 = 0.0
        self.copies = 0

    def copy(self) -> CoreState:
        """An independent snapshot: playing on from either leaves the other as it was."""
        out = CoreState.__new__(CoreState)
        out.blocks = self.blocks
        out.free = self.free.copy()
        out.busy = self.busy.copy()
        out.log_code = self.log_code.copy()
        out.log_times = self.log_times.copy()
        out.a = self.a.copy()
        out.b = self.b.copy()
        out.drain_end = self.drain_end.copy()  # (keeps its maxlen)
        out.ub_src_free, out.ub_dst_free = self.ub_src_free, self.ub_dst_free
        out.c_ub_free = self.c_ub_free
        out.mm_end1, out.mm_end2 = self.mm_end1, self.mm_end2
        out.copies = self.copies
        return out
