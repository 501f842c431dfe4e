"""Figures behind the open calibration items of docs/calibration.md (issues 17 and 21).

Not a fit and not part of the model: it measures, on the simulator's schedule of the shared
profiler kernels, the quantities that decide whether a candidate mechanism can close an item.

* ``idle``: the core time the MTE2 pipe is not busy, on the board (aicore_time - mte2_us, over
  the average core time) and in the model (the simulator's core mean against its MTE2 busy).
* ``slack``: per GM->L1 chunk copy that reuses an L1 slot, the cycles between the release of its
  slot (the last MTE1 read of the chunk it replaces) and the cycle the MTE2 queue would start it
  anyway (the end of the copy before it). Any delay added after a slot's release (a scalar
  set-up issued after the release, a flag's latency) idles MTE2 only where it exceeds this.
* ``release delay``: the task-time error of every case with each copy held ``d`` cycles after
  its slot's release (the simulator's slot rule wrapped, the model untouched).
* ``release at MMAD start``: the task-time error of every case with an L1 slot released when
  the MMAD of the last K step reading its chunk starts, not when that MTE1 read ends (the slot's
  release, FreeTensor's flag, follows the step's MMAD in the kernel's program order, and seed
  004 issues instructions in order; the model's rule since 2026.11.27.7, so both columns agree).
* torch.mm: the per-core MTE2 rate the board's time implies against the model's cap.

    uv run --frozen python -m scripts.probe_open_items [--delays 0,275,550]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

import simcore.pipeline.simulator as sim_mod
from simcore.pipeline.simulator import KINDS, simulate
from tests.support.board import BoardCase, msprof_cases, torch_mm_cases

_LOADS = (KINDS.index("load_a"), KINDS.index("load_b"))


@contextmanager
def _slot_rule(wrap: Callable[[float], float], log: list[float] | None = None) -> Iterator[None]:
    """Wraps the simulator's L1 slot rule (its result passed through ``wrap``, logged)."""
    original = sim_mod.l1_slot_free

    def rule(last_reads: Any, slots: Any) -> Any:
        free = wrap(original(last_reads, slots))
        if log is not None:
            log.append(float(free))
        return free

    sim_mod.l1_slot_free = rule  # type: ignore[assignment]
    try:
        yield
    finally:
        sim_mod.l1_slot_free = original  # type: ignore[assignment]


class _ReleaseAtMmad(dict[tuple[int, int], float]):
    """A chunk's last-read cycle, raised to the start of the MMAD of the step that read it.

    The simulator writes A's and B's last read right after each K step (two writes); the
    wrapped step rule stashes the step's MMAD start for exactly those two writes.
    """

    mmad_start = 0.0
    pending = 0

    def __setitem__(self, key: tuple[int, int], value: float) -> None:
        if _ReleaseAtMmad.pending:
            _ReleaseAtMmad.pending -= 1
            value = max(value, _ReleaseAtMmad.mmad_start)
        super().__setitem__(key, value)


@contextmanager
def _release_at_mmad() -> Iterator[None]:
    """Runs the simulator with :class:`_ReleaseAtMmad` as every operand's last-read map."""
    chunks, step = sim_mod._Chunks, sim_mod.k_step

    class Chunks(chunks):  # type: ignore[misc, valid-type]
        def __init__(self, n_slots: int) -> None:
            super().__init__(n_slots)
            self.last_read = _ReleaseAtMmad()

    def k_step(*args: Any) -> Any:
        out = step(*args)
        _ReleaseAtMmad.mmad_start, _ReleaseAtMmad.pending = float(out[4]), 2
        return out

    sim_mod._Chunks, sim_mod.k_step = Chunks, k_step  # type: ignore[misc, assignment]
    try:
        yield
    finally:
        sim_mod._Chunks, sim_mod.k_step = chunks, step  # type: ignore[misc]
        _ReleaseAtMmad.pending = 0


def _device_err(case: BoardCase, delay: float) -> float:
    with _slot_rule(lambda free: free + delay if free > 0.0 else free):
        out = simulate(case.problem, case.tiling, case.preset)
    return (out.device_time_us / case.time_us - 1.0) * 100.0


def _slack(case: BoardCase) -> dict[str, Any]:
    """Idle shares and per-copy slack of the slowest core (first core shape simulated)."""
    freed: list[float] = []
    with _slot_rule(lambda free: free, freed):
        out = simulate(case.problem, case.tiling, case.preset)
    core = out.slowest
    # The slot rule runs for every core shape in turn: the slowest's copies are its own slice.
    counts = [int(np.isin(c.kind[c.pipe == 0], _LOADS).sum()) for c in out.cores]
    first = sum(counts[: out.cores.index(core)])
    mte2 = core.pipe == 0
    ends = core.end[mte2]
    natural = np.concatenate(([0.0], ends[:-1]))
    kinds = core.kind[mte2]
    release = np.asarray(freed[first : first + len(ends)])
    used = release > 0.0
    slack = natural - release
    res: dict[str, Any] = {}
    for name, kind in zip(("A", "B"), _LOADS, strict=True):
        sel = used & (kinds == kind)
        res[name] = (float(np.median(slack[sel])), float(slack[sel].min())) if sel.any() else None
    total = sum(c.shape.cores for c in out.cores)
    mte2_avg = sum(c.busy_cycles["MTE2"] * c.shape.cores for c in out.cores) / total
    mean = sum(c.makespan_cycles * c.shape.cores for c in out.cores) / total
    res["model_idle"] = (1.0 - mte2_avg / mean) * 100.0
    if case.core_avg_us:
        res["board_idle"] = (1.0 - case.pipes_us["MTE2"] / case.core_avg_us) * 100.0
    return res


def main() -> None:
    """Prints the idle shares, the slack, the release-delay sweep and the torch.mm rates."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--delays", default="0,150,275,413,550")
    args = ap.parse_args()
    delays = [float(d) for d in args.delays.split(",")]
    for file in ("measured_msprof_910b1_8192.csv", "measured_msprof_950pr_8192.csv"):
        cases = msprof_cases(file)
        print(f"== {file}")
        print(f"{'case':6} {'board idle':>10} {'model idle':>10} {'slack A med/min':>16} "
              f"{'slack B med/min':>16}")  # fmt: skip
        for case in cases:
            r = _slack(case)
            cells = ["-" if r[op] is None else f"{r[op][0]:7.0f}/{r[op][1]:<7.0f}" for op in "AB"]
            print(f"{case.name:6} {r.get('board_idle', 0.0):9.1f}% {r['model_idle']:9.1f}% "
                  f"{cells[0]:>16} {cells[1]:>16}")  # fmt: skip
        print("task-time error (%) with each copy held d cycles after its slot's release")
        print(f"{'case':6} " + " ".join(f"{f'd={d:.0f}':>8}" for d in delays))
        for case in cases:
            errs = [_device_err(case, d) for d in delays]
            print(f"{case.name:6} " + " ".join(f"{e:+7.1f}%" for e in errs))
        print("task-time error (%): slot released at the read's end (model) / at the MMAD start")
        for case in cases:
            with _release_at_mmad():
                late = simulate(case.problem, case.tiling, case.preset)
            late_err = (late.device_time_us / case.time_us - 1.0) * 100.0
            print(f"{case.name:6} {_device_err(case, 0.0):+7.1f}% {late_err:+7.1f}%")
    print("== torch.mm (910B2): the per-core MTE2 rate the board's time allows")
    for case in torch_mm_cases():
        if case.problem.dtype == "fp32":
            continue
        out = simulate(case.problem, case.tiling, case.preset)
        core = out.slowest
        nbytes = float(out.read_bytes) / sum(c.shape.cores for c in out.cores)
        board_cycles = (case.time_us - case.preset.launch_overhead_us) * case.preset.clock_mhz
        need = nbytes / board_cycles
        print(f"{case.name:20} model {out.end_to_end_us:8.1f} us board {case.time_us:8.1f} us "
              f"cap {out.cap_bytes_per_cycle:6.1f} B/c/core, board >= {need:6.1f} B/c/core, "
              f"MAC {core.busy_cycles['M'] / case.preset.clock_mhz:7.1f} us")  # fmt: skip


if __name__ == "__main__":
    main()
