"""The k best distinct kernels of a problem under the model: what is worth measuring on a board.

A tune answer names one tiling; a team with a board wants a handful of kernels to compile and
time. :func:`top_k_kernels` takes the screening's best points (:func:`tiler.screen.screen`,
already one per estimate and pipeline path), keeps one per *kernel* and predicts each with the
same estimate a tune answer carries (the simulator where the kernel is short enough).

A kernel is its core split, base block, L1 depths and steps and L0 double-buffer flags
(:data:`KERNEL_FIELDS`). ``iterateOrder`` is not among them: two points that differ only in it
are one candidate (the faster is kept), since the screening already dropped the copies where it
changes nothing and a team would not compile a kernel twice for it.

Each candidate says why it differs from the best: the fields that differ, the binding term of
the estimator on each side, and the pipe whose busy time changes most.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simcore.evaluate import estimate_dict
from simcore.hardware.presets import HardwarePreset
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import Problem
from tiler.limits import MAX_TOP_K
from tiler.screen import screen
from tiler.space import GROUP_FIELDS, build_space

#: Screened points per asked candidate: points that fold into one kernel (iterateOrder) or
#: duplicate the answer are dropped, so the screening is asked for more than k.
SCREEN_FACTOR = 4

#: The fields that make two points different kernels.
KERNEL_FIELDS: tuple[str, ...] = (
    *GROUP_FIELDS,
    "depthA1", "depthB1", "stepM", "stepN", "stepKa", "stepKb", "dbL0A", "dbL0B", "dbL0C",
)  # fmt: skip


def kernel_key(fields: Mapping[str, int]) -> tuple[int, ...]:
    """The identity of a kernel: its :data:`KERNEL_FIELDS` values."""
    return tuple(int(fields[f]) for f in KERNEL_FIELDS)


def _why(best: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """How ``other`` differs from ``best``: fields, binding term and the pipe that moves most."""
    fields = {
        f: {"best": best["fields"][f], "candidate": other["fields"][f]}
        for f in KERNEL_FIELDS
        if best["fields"][f] != other["fields"][f]
    }
    b_busy = best["estimate"]["pipe_busy_us"]
    o_busy = other["estimate"]["pipe_busy_us"]
    deltas = {p: o_busy.get(p, 0.0) - b_busy.get(p, 0.0) for p in set(b_busy) | set(o_busy)}
    pipe = max(sorted(deltas), key=lambda p: abs(deltas[p])) if deltas else None
    b_term, o_term = best["estimate"]["binding_term"], other["estimate"]["binding_term"]
    out: dict[str, Any] = {
        "fields": fields,
        "binding_term": {"best": b_term, "candidate": o_term, "changed": b_term != o_term},
        "bottleneck": {
            "best": best["estimate"]["bottleneck"],
            "candidate": other["estimate"]["bottleneck"],
        },
        "pipe_busy_delta_us": {p: deltas[p] for p in sorted(deltas)},
        "largest_pipe_change": pipe,
    }
    parts = [f"{f} {v['best']} -> {v['candidate']}" for f, v in fields.items()]
    summary = ", ".join(parts) or "same kernel fields"
    if pipe is not None:
        summary += f"; {pipe} busy {deltas[pipe]:+.2f} us"
    if b_term != o_term:
        summary += f"; binding term {b_term} -> {o_term}"
    out["summary"] = summary
    return out


def top_k_kernels(
    problem: Problem,
    preset: HardwarePreset,
    fixed: Mapping[str, int],
    answer_fields: Mapping[str, int] | None,
    k: int,
    simulate: bool = True,
) -> list[dict[str, Any]]:
    """The ``k`` best distinct kernels of a problem under the model, best first.

    Args:
        problem: The Matmul.
        preset: The chip (a calibration profile's preset when one is chosen).
        fixed: The pinned fields of the request (the candidates meet them too).
        answer_fields: The tune answer's tiling (its searched fields at least); it is always a
            candidate, marked ``answer``. None: the screening's best stands in.
        k: How many, 1 to :data:`tiler.limits.MAX_TOP_K`.
        simulate: Predict with the simulator where the kernel is short enough (as a tune
            answer's estimate); False uses the estimator only (faster).

    Returns:
        Up to ``k`` entries (fewer when the legal space has fewer kernels): ``rank``,
        ``answer``, ``tiling`` (every struct field), ``estimate``, ``margin`` (relative time over
        the best) and ``differs`` (:func:`_why`; empty for the best).

    Raises:
        ValueError: ``k`` is out of range.
        simcore.errors.InputError: The problem or a pin is invalid.
    """
    if not 1 <= k <= MAX_TOP_K:
        raise ValueError(f"k must be 1..{MAX_TOP_K}, not {k}")
    space = build_space(problem, preset, fixed)
    screened = screen(space, top_k=max(2, SCREEN_FACTOR * k))
    if answer_fields is None:
        answer_fields = screened.top[0].fields
    answer_key = kernel_key(answer_fields)
    points: list[dict[str, int]] = [dict(answer_fields)]
    seen = {answer_key}
    for cand in screened.top:
        key = kernel_key(cand.fields)
        if key not in seen:
            seen.add(key)
            points.append(dict(cand.fields))
        if len(points) == k:
            break
    entries: list[dict[str, Any]] = []
    for fields in points:
        tiling = complete_tiling(fields, problem, preset)
        estimate = estimate_dict(problem, tiling, preset, simulate_if_cheap=simulate)
        entries.append(
            {
                "answer": kernel_key(fields) == answer_key,
                "tiling": tiling.to_dict(),
                "fields": {f: int(getattr(tiling, f)) for f in KERNEL_FIELDS},
                "estimate": estimate,
            }
        )
    entries.sort(key=lambda e: (e["estimate"]["time_us"], not e["answer"]))
    best = entries[0]
    best_us = float(best["estimate"]["time_us"])
    out = []
    for rank, entry in enumerate(entries):
        time_us = float(entry["estimate"]["time_us"])
        out.append(
            {
                "rank": rank,
                "answer": entry["answer"],
                "tiling": entry["tiling"],
                "estimate": entry["estimate"],
                "margin": (time_us - best_us) / best_us if best_us else None,
                "differs": None if rank == 0 else _why(best, entry),
            }
        )
    return out
