"""The block replay: a short program-order replay of blocks that all repeat the same copies.

Where both operands are reloaded in every block (or, with FixPipe, an operand staged through UB),
the closed-form terms price the chains across the queues only piecewise. The replay plays the
first blocks with the simulator's rules, vectorized over the distinct candidates, and the rest at
the last played block's period (:func:`replay_rows`, :func:`replay_paths`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from simcore.estimate.arrays import sub as _sub
from simcore.pipeline import precedence as rule


@dataclass(frozen=True, slots=True)
class ReplayRows:
    """The replay inputs of some candidates (:func:`replay_rows`).

    Attributes:
        cols: One column per candidate (one row per input): ``k_iter``, the chunking, the
            legs, the steps (the last drain left out), the flags and the resident operands, as
            float64.
        blocks: The candidates' block counts (they enter the path after the replay).
        dr_last: Their last drains (likewise).
    """

    cols: np.ndarray
    blocks: Any
    dr_last: Any


def replay_rows(
    idx: np.ndarray,
    chunking: tuple[Any, ...],
    legs: tuple[tuple[Any, Any, Any], ...],
    steps: tuple[Any, ...],
    flags: tuple[Any, Any, Any],
    resident: tuple[Any, Any] = (False, False),
) -> ReplayRows:
    """The block replay's inputs on the candidates ``idx``, one row each (see below).

    Without FixPipe, with both operands reloaded in every block, every block issues the same
    copies (all K chunks of both operands) into the same queues, so the schedule settles into
    one period per block. Its chains cross the queues in ways the closed-form cycles only
    price piecewise: a one-slot operand's copy waits for its previous chunk's last read, which
    waits for the other operand's chunk staged through UB behind that copy on MTE2, and the
    next block's first reorder queues behind the drain's L0C->UB leg. So the first ``n_play``
    blocks are played here in program order with the simulator's rules (in-order MTE2, MTE1,
    M, V and MTE3 queues, FIFO L1 slots, L0A / L0B / L0C buffer flags, the UB staging halves,
    a bias slice per block), at the core's average block dimensions, and the path is their
    end plus the remaining blocks at the last played block's period, then the last drain.
    Distinct candidates are played together, in one loop over the K steps
    (:func:`replay_paths`, :func:`_replay_group`).

    Args:
        idx: The candidates it applies to (the caller selects them).
        chunking: ``(k_iter, kc_a, kc_b, stepKa, stepKb, slots_a, slots_b, blocks)``.
        legs: ``(a_full, a_last, b_full, b_last)``: (MTE2, V, MTE3) legs of a full and of the
            K-tail chunk (V and MTE3 zero for a direct copy).
        steps: ``(la, lb, mm, la_kt, lb_kt, mm_kt, c_ub, ub_gm, dr_last, bias)``: the L0 loads
            and MMAD of a full and of the K-tail step, a block's drain legs (L0C->UB, UB->GM),
            the last block's drain and a bias slice.
        flags: ``(dbL0A, dbL0B, dbL0C)``.
        resident: Per operand, where it stays in L1 over the blocks (its copies are not
            played): full-length arrays like the others (``idx`` selects), or False; used with
            FixPipe.

    Returns:
        The rows, for :func:`replay_paths`.
    """
    inputs = (*chunking[:7], *(x for leg in legs for x in leg), *steps[:8], *steps[9:])
    inputs = (*inputs, *flags, *resident)
    # Each input gathered straight into its row (a scalar broadcast, an integer or a flag
    # converted to float64: the values of ``x * ones``, without the product and the stack).
    # (Input-major: each input's values contiguous, for the gathers here, the hashes and the
    # replay's arrays; a candidate-major write strides over all inputs, ~10x slower.)
    cols = np.empty((len(inputs), idx.size))
    for j, x in enumerate(inputs):
        if isinstance(x, np.ndarray) and x.ndim == 1 and x.dtype == np.float64:
            # Gathered into the row itself, without a temporary and its copy. (``clip``: the
            # indices are in range, and a ``raise`` gather into ``out`` goes through a buffer.)
            x.take(idx, out=cols[j], mode="clip")
        else:
            cols[j] = _sub(x, idx)
    return ReplayRows(cols, _sub(chunking[7], idx), _sub(steps[8], idx))


def replay_paths(requests: list[ReplayRows], n_play: int = 4, fix: bool = False) -> list[Any]:
    """The block replay's path of each request (:func:`replay_rows`), played together.

    The replay's cost is a loop of numpy calls over the K steps, nearly the same for a few
    candidates as for a few thousand, so requests (the blocks of candidates of one estimate)
    are played in one loop. A candidate's path depends on its own row only, and on which
    operands take the UB legs at all (:func:`_replay_group` decides it over the rows it is
    given): requests are played together where that is the same, so each path is the one it
    would be alone, bit for bit.

    Args:
        requests: The rows of each request.
        n_play: Blocks played.
        fix: FixPipe drains C (the steps' L0C->UB entry is then its cycles, UB->GM zero).

    Returns:
        Each request's path cycles, on its candidates.
    """
    out: list[Any] = [None] * len(requests)
    by_staged: dict[tuple[bool, bool], list[int]] = {}
    for i, rq in enumerate(requests):
        # (The V legs of A's and B's full chunks: cols 8 and 14, see replay_rows.)
        key = (bool(np.any(rq.cols[8] > 0)), bool(np.any(rq.cols[14] > 0)))
        by_staged.setdefault(key, []).append(i)
    for members in by_staged.values():
        distinct, inv = _distinct_rows([requests[i].cols for i in members])
        bounds = np.cumsum([0] + [requests[i].cols.shape[1] for i in members]).tolist()
        for batch in _batches(inv, bounds):
            # The batch's distinct rows, and where each of them is among those played.
            played = np.flatnonzero(batch[1])
            # Rows that issue their copies at the same steps with the same slots and L0 flags
            # played next to each other: the loop's masked updates branch per element, and a
            # mask in runs is predicted where one in hash order is not (2x the loop's time on
            # 310P3 int8 2048 x 4096 x 4096).
            mask_keys = _hash_rows(distinct[_MASK_COLS].take(played, axis=1))
            played = played[np.argsort(mask_keys, kind="stable")]
            at = np.zeros(distinct.shape[1], dtype=np.int64)
            at[played] = np.arange(played.shape[0])
            uniq = distinct.take(played, axis=1)
            end, period = _replay_group(
                uniq[0],
                tuple(uniq[1:7]),
                tuple(tuple(uniq[7 + 3 * i : 10 + 3 * i]) for i in range(4)),
                tuple(uniq[19:28]),
                tuple(uniq[28:31]),
                n_play,
                fix,
                (uniq[31] > 0.5, uniq[32] > 0.5),
            )
            for j in batch[0]:
                rq = requests[members[j]]
                own = at[inv[bounds[j] : bounds[j + 1]]]
                out[members[j]] = end[own] + (rq.blocks - n_play) * period[own] + rq.dr_last
    return out


#: Distinct rows one replay loop plays at most, unless one request alone has more: below it the
#: loop's cost is mostly its fixed count of numpy calls, above it the rows' arrays leave the CPU
#: caches (a loop over 87,000 rows took 4x the time of six over 15,000; 310P3 int8 8192 x 5120 x
#: 5120, 2026-11-27).
_BATCH_ROWS = 4096


def _batches(inv: np.ndarray, bounds: list[int]) -> list[tuple[list[int], np.ndarray]]:
    """Requests (their rows ``inv[bounds[j]:bounds[j + 1]]``) grouped into replay loops.

    Consecutive requests join a loop while their distinct rows together stay within
    :data:`_BATCH_ROWS`. Returns each loop's requests and the mask of its distinct rows.
    """
    size = int(inv.max()) + 1 if inv.shape[0] else 0
    out: list[tuple[list[int], np.ndarray]] = []
    for j in range(len(bounds) - 1):
        rows = np.zeros(size, dtype=bool)
        rows[inv[bounds[j] : bounds[j + 1]]] = True
        if out:
            merged = out[-1][1] | rows
            if int(np.count_nonzero(merged)) <= _BATCH_ROWS:
                out[-1] = (out[-1][0] + [j], merged)
                continue
        out.append(([j], rows))
    return out


def _distinct_rows(parts: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Distinct candidates of ``parts`` (tables of columns, one per request), played once.

    Returns the distinct columns (one table) and each candidate's index among them, the parts'
    candidates in order. The columns are told apart by a hash of their bits (a 1-D sort of
    integers, several times cheaper than sorting the columns as byte strings), and every column
    is then checked bit for bit against the distinct column of its hash: where two share a
    hash without being equal, the columns are sorted as byte strings instead. The parts are
    hashed and checked one by one, not concatenated (a copy of every column: about 6 % of the
    replay's instructions on 910A).
    """
    keys = np.concatenate([_hash_rows(p) for p in parts])
    first, inv = _groups(keys)
    bounds = np.cumsum([0] + [p.shape[1] for p in parts])
    # Each distinct column from the part its representative is in.
    part_of = np.searchsorted(bounds, first, side="right") - 1
    distinct = np.empty((parts[0].shape[0], first.shape[0]))
    for j, p in enumerate(parts):
        sel = np.flatnonzero(part_of == j)
        if sel.size:
            distinct[:, sel] = p.take(first[sel] - bounds[j], axis=1)
    # (Checked input by input, both tables column-major: a comparison of two contiguous
    # tables, where one gathered as rows and transposed compares element by element, at
    # strides: twice the time.)
    bits = distinct.view(np.uint64)
    if all(
        np.array_equal(p.view(np.uint64), bits.take(inv[bounds[j] : bounds[j + 1]], axis=1))
        for j, p in enumerate(parts)
    ):
        return distinct, inv
    cols = np.concatenate(parts, axis=1)
    rows = np.ascontiguousarray(cols.view(np.uint64).T)
    raw = rows.view(np.dtype((np.void, rows.itemsize * rows.shape[1]))).ravel()
    _, first, inv = np.unique(raw, return_index=True, return_inverse=True)
    return cols.take(first, axis=1), inv


def _groups(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``keys`` in increasing order: one index of each, and each key's group.

    ``np.unique`` with the first index of each key sorts stably (a timsort of the 64-bit keys);
    any index of a key serves as its representative (each column is checked against it), so
    an unstable argsort (vectorized quicksort, about 5x cheaper) is enough.
    """
    perm = keys.argsort()
    ordered = keys[perm]
    new = np.empty(ordered.shape[0], dtype=bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    inv = np.empty(keys.shape[0], dtype=np.int64)
    inv[perm] = np.cumsum(new) - 1
    return perm[new], inv


def _hash_rows(cols: np.ndarray) -> np.ndarray:
    """A 64-bit hash of the bits of each candidate (column): multiply and sum, wrapping around."""
    bits = np.ascontiguousarray(cols).view(np.uint64)
    keys: np.ndarray = (bits * _HASH_WEIGHTS[: bits.shape[0], None]).sum(axis=0, dtype=np.uint64)
    return keys


#: The columns that decide the replay's masks: the chunking (K steps, chunks, K steps per
#: chunk, slots) and the L0 flags and resident operands (see replay_rows).
_MASK_COLS = [0, 1, 2, 3, 4, 5, 6, 28, 29, 30, 31, 32]
#: Weights of :func:`_hash_rows` (odd: every bit of a column moves the key).
_HASH_WEIGHTS = np.random.default_rng(16).integers(1, 2**63, 64, dtype=np.uint64) | np.uint64(1)


def _replay_group(
    k_it: np.ndarray,
    chunking: tuple[np.ndarray, ...],
    legs: tuple[tuple[np.ndarray, ...], ...],
    steps: tuple[np.ndarray, ...],
    flags: tuple[np.ndarray, ...],
    n_play: int,
    fix: bool = False,
    resident: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`replay_paths` on distinct candidates (arrays of equal length).

    Every start is a rule of :mod:`simcore.pipeline.precedence` (the simulator's own functions,
    here on arrays); this loop only issues the instructions in program order. The loop over the
    K steps makes numpy calls on a few dozen to a few hundred candidates, so its cost is the
    number of calls. It is kept lean, with the values of a plain masked replay bit for bit:

    * The candidates are sorted by K steps, longest first, so those still playing a step are a
      prefix; the steps between two K-step counts (a run) play the same prefix, through views
      of the state arrays updated in place (the others keep their values).
    * What depends only on the step is tabulated per run before the blocks are played: the
      copies issued, the legs of the chunk they load (the K-tail chunk's from its index on),
      and which candidates play their K-tail step (from ``p1`` on, at the run's last step: its
      cycles are tabulated with the K-tail's from ``p1`` on), and, where the run's candidates
      share them, the slot count and the L0 flags (the rules then pick an array, not per
      candidate).
    * A copy into one of ``slots`` FIFO L1 slots waits for the last read of the chunk ``slots``
      copies before (zero while a slot is still unused): a short history of chunk last reads,
      shifted at each copy, instead of slot arrays indexed per candidate.
    * The last two MMAD ends alternate between two arrays over a block's steps (each MMAD's end
      is written over the older), swapped back after the block where the K steps are odd,
      instead of two copies per step.
    * Every candidate issues its first staged copy at step 0, and until the block's drain only
      staged copies move V and MTE3, each to the UB halves it frees and fills: so from that
      copy on the UB halves' ends are V's and MTE3's, and are kept apart only over the drain.
    * Masked updates go through ``np.putmask`` (cheaper than ``np.where`` on short arrays).

    Returns:
        The last played block's last MMAD end and its period (from the block before).
    """
    # Whether an operand's copies take the UB legs is decided over all the candidates (a direct
    # copy's V and MTE3 legs are zero, but its end then still queues on them).
    staged = (bool(np.any(legs[0][1] > 0)), bool(np.any(legs[2][1] > 0)))
    first_staged = staged.index(True) if any(staged) else -1
    order = np.argsort(-k_it, kind="stable")
    k_it = k_it[order]
    kc_a, kc_b, sk_a, sk_b, sl_a, sl_b = (x[order] for x in chunking)
    la, lb, mm, la_t, lb_t, mm_t, c_ub, ub_gm, bias = (x[order] for x in steps)
    # An operand resident in L1 over the blocks (loaded once per pass) issues no copies there.
    res = [np.zeros(k_it.size, bool)] * 2 if resident is None else [x[order] for x in resident]
    # The unmasked first staged copy below assumes every candidate issues it.
    res_any = (bool(np.any(res[0])), bool(np.any(res[1])))
    legs_o = [[x[order] for x in leg] for leg in legs]
    single_l0 = np.stack([flags[0][order] == 1, flags[1][order] == 1])  # (L0A, L0B) x candidates
    db_l0c = flags[2][order]
    n = k_it.size
    k_max = int(k_it[0])
    # Candidates playing step s: the first n_at[s] (n_at[k_max] = 0).
    n_at = (n - np.cumsum(np.bincount(k_it.astype(np.int64), minlength=k_max + 1))).tolist()
    # Runs of steps playing the same prefix: from each step where n_at drops to the next.
    drops = (np.flatnonzero(np.diff(n_at[:-1])) + 1).tolist()
    # Queue ends: MTE2, MTE1 (also B's last L0B load), A's last L0A load, V, MTE3, the
    # operands' chunk arrivals, and the last two MMADs (M's end; the L0 buffers' releases): at
    # a block's start mm_x holds the last MMAD's end and mm_y the one's before; over its steps
    # they alternate (``last``), so after it they are swapped where the K steps are odd.
    mte2, mte1, read_a, vec, mte3, ready_a, ready_b, mm_x, mm_y, mm_start = np.zeros((10, n))
    # The UB half a GM->UB leg waits for (the last reorder) and the one a reorder waits for (the
    # last UB->L1 leg), kept over the drain.
    ub_src, ub_dst = np.zeros(n), np.zeros(n)
    # Per operand the slot releases of its chunks, oldest first, as many as its most slots: the
    # last is the chunk read now, released at the last MMAD's start (rule.l1_slot_release: the
    # MMAD starts after the step's reads, so its start is the release; k_step writes it).
    hist = [[np.zeros(n) for _ in range(int(sl.max()) - 1)] + [mm_start] for sl in (sl_a, sl_b)]
    masks = [rule.slot_masks(sl, len(h)) for sl, h in zip((sl_a, sl_b), hist, strict=True)]
    # The candidates (a prefix, as they are sorted) sharing the first's slot counts and L0 flags.
    uniform = [_prefix_equal(sl) for sl in (sl_a, sl_b)]
    uniform_l0 = min(_prefix_equal(single_l0[0]), _prefix_equal(single_l0[1]))
    runs = []
    for s0, s1 in zip([0, *drops], [*drops, k_max], strict=True):
        p, p1 = n_at[s0], n_at[s1]
        s_blk = np.arange(s0, s1)[:, None]
        copies: list[list[Any]] = [[] for _ in range(s0, s1)]
        for o, (sk, kc, sl) in enumerate(((sk_a, kc_a, sl_a), (sk_b, kc_b, sl_b))):
            # A copy is issued at its chunk's first step: where the step is the chunk index
            # times the chunk's steps (exact in float64; a float ``%`` costs several times the
            # division the chunk index already takes).
            chunk = rule.chunk_of_step(s_blk, sk[:p])
            issued = (chunk * sk[:p] == s_blk) & ~res[o][:p]
            # The legs of the chunks copied, on the steps where some candidate copies only.
            at = np.flatnonzero(issued.any(axis=1))
            tail = chunk[at] >= kc[:p] - 1
            gvu = [
                np.where(tail, y[:p], x[:p])
                for x, y in zip(legs_o[2 * o], legs_o[2 * o + 1], strict=True)
            ]
            hist_p = [h[:p] for h in hist[o]]
            # Where the run's candidates share a slot count, the slot is always that of the
            # same entry of the history (updated in place): picked once, here.
            slot: Any = (
                rule.l1_slot_free(hist_p, int(sl[0]))
                if p <= uniform[o]
                else [m[:p] for m in masks[o]]
            )
            views = (hist_p, slot, (ready_a, ready_b)[o][:p])
            for j, i in enumerate(at.tolist()):
                copies[i].append((o, issued[i], gvu[0][j], gvu[1][j], gvu[2][j], *views))
        state = tuple(x[:p] for x in (mte2, mte1, read_a, vec, mte3, ready_a, ready_b, mm_start))
        # The run's last step is the K-tail step of the candidates from p1 on.
        cycles = (la[:p], lb[:p], mm[:p])
        cycles_last = (
            np.concatenate([la[:p1], la_t[p1:p]]),
            np.concatenate([lb[:p1], lb_t[p1:p]]),
            np.concatenate([mm[:p1], mm_t[p1:p]]),
        )
        # L0A's and L0B's buffer counts as bools where the run's candidates share them.
        single_p = single_l0[:, :p]
        single: Any = (bool(single_p[0, 0]), bool(single_p[1, 0])) if p <= uniform_l0 else single_p
        runs.append((s0, s1, state, (mm_x[:p], mm_y[:p]), copies, single, cycles,
                     cycles_last))  # fmt: skip
    putmask = np.putmask
    # The rules called per copy and per K step, in local names.
    slot_free_of, queue_start, staged_copy, k_step = (
        rule.l1_slot_free,
        rule.queue_start,
        rule.staged_copy,
        rule.k_step,
    )
    odd_steps = k_it % 2 == 1
    has_bias = bool(np.any(bias))
    any_odd = bool(np.any(odd_steps))
    fix_end = c_staging_free = np.zeros(n)  # FixPipe's queue; the C staging buffer in UB
    drains: list[np.ndarray] = []  # the drains' ends (L0C->UB's, or FixPipe's)
    ends = []
    for _ in range(n_play):
        if has_bias:
            mte2 += bias  # the block's bias slice, before its copies
        c_wait = rule.l0c_buffer_free(drains, db_l0c)
        last = 0
        for s0, s1, state, mm_v, copies, single_p, cycles, cycles_last in runs:
            mte2_p, mte1_p, read_a_p, vec_p, mte3_p, ready_a_p, ready_b_p, mm_start_p = state
            for s, per_op in zip(range(s0, s1), copies, strict=True):
                for o, new, g, v, u, hist_p, slot, ready_p in per_op:
                    free = slot if isinstance(slot, np.ndarray) else slot_free_of(hist_p, slot)
                    if not staged[o]:
                        end = queue_start(mte2_p, free) + g
                        putmask(mte2_p, new, end)
                    elif s or o != first_staged or res_any[o]:
                        # The UB halves' ends are V's and MTE3's here (see the docstring).
                        (_, e1), (_, e2), (_, end) = staged_copy(
                            (mte2_p, vec_p, mte3_p), (vec_p, mte3_p), free, (g, v, u)
                        )
                        putmask(mte2_p, new, e1)
                        putmask(vec_p, new, e2)
                        putmask(mte3_p, new, end)
                    else:  # the block's first staged copy, every candidate's (p = n)
                        (_, e1), (_, e2), (_, end) = staged_copy(
                            (mte2, vec, mte3), (ub_src, ub_dst), free, (g, v, u)
                        )
                        mte2[:], vec[:], mte3[:] = e1, e2, end
                    putmask(ready_p, new, end)
                    for j in range(len(hist_p) - 1):
                        putmask(hist_p[j], new, hist_p[j + 1])
                # The MMAD's end goes to the array of the one before (read first), which then
                # holds the last.
                k_step(
                    mte1_p, mm_v[last], ready_a_p, ready_b_p, mm_v[last], mm_v[1 - last],
                    single_p, c_wait if s == 0 else None, cycles if s < s1 - 1 else cycles_last,
                    out=(read_a_p, mte1_p, mm_v[1 - last], mm_start_p),
                )  # fmt: skip
                last = 1 - last
        if any_odd:  # back to mm_x last, mm_y before
            mm_before = mm_x.copy()
            putmask(mm_x, odd_steps, mm_y)
            putmask(mm_y, odd_steps, mm_before)
        ub_src[:], ub_dst[:] = vec, mte3
        if fix:
            # FixPipe drains C on its own queue (``c_ub`` is its cycles), after the last MMAD;
            # V and MTE3 only carry the staged copies (the UB halves' ends are theirs).
            fix_end = rule.queue_start(fix_end, rule.drain_ready(mm_x, 0.0)) + c_ub
            drains.append(fix_end)
            ends.append(mm_x.copy())
            continue
        # The drain: L0C->UB on the vector queue after the previous UB->GM copy, then UB->GM.
        drained = rule.queue_start(vec, rule.drain_ready(mm_x, c_staging_free)) + c_ub
        vec[:] = drained
        c_staging_free = rule.queue_start(mte3, drained) + ub_gm
        mte3[:] = c_staging_free
        drains.append(drained)
        ends.append(mm_x.copy())
    end_out, period = np.empty(n), np.empty(n)
    end_out[order] = ends[-1]
    period[order] = ends[-1] - ends[-2]
    return end_out, period


def _prefix_equal(x: np.ndarray) -> int:
    """How many leading entries of ``x`` equal its first."""
    differ = np.flatnonzero(x != x[0])
    return int(differ[0]) if differ.size else x.size
