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
* ``--issue``: seed 004's in-order scalar issue with finite per-pipe queues
  (:mod:`scripts.inorder_issue`), swept over the queue depth: the task-time error of the
  910B1 and 950PR cases and of the torch.mm rows, the MTE2 idle and MTE1 busy it gives against
  the board's, the order of the constant-tiling / UnitFlag cases; ``--issue-random`` plays
  random tilings at one depth and prints the distribution of the change in simulated time.

    uv run --frozen python -m scripts.probe_open_items [--delays 0,275,550]
    uv run --frozen python -m scripts.probe_open_items --issue=-1,0,2,4,8 [--issue-pipes MTE1]
    uv run --frozen python -m scripts.probe_open_items --issue-random 200 --issue 6
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

import simcore.pipeline.simulator as sim_mod
from benchmarks.agreement import Case
from scripts.inorder_issue import UNBOUNDED, run_case
from simcore.pipeline.simulator import KINDS, simulate
from tests.support.board import BoardCase, msprof_cases, torch_mm_cases

_LOADS = (KINDS.index("load_a"), KINDS.index("load_b"))


@contextmanager
def _slot_rule(wrap: Callable[[float], float], log: list[float] | None = None) -> Iterator[None]:
    """Wraps the simulator's L1 slot rule (its result passed through ``wrap``, logged)."""
    original = getattr(sim_mod, "l1_slot_free")  # noqa: B009 (not re-exported)

    def rule(last_reads: Any, slots: Any) -> Any:
        free = wrap(original(last_reads, slots))
        if log is not None:
            log.append(float(free))
        return free

    setattr(sim_mod, "l1_slot_free", rule)  # noqa: B010
    try:
        yield
    finally:
        setattr(sim_mod, "l1_slot_free", original)  # noqa: B010


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
    chunks, step = sim_mod._Chunks, getattr(sim_mod, "k_step")  # noqa: B009

    class Chunks(chunks):  # type: ignore[misc, valid-type]
        def __init__(self, n_slots: int) -> None:
            super().__init__(n_slots)
            self.last_read = _ReleaseAtMmad()

    def k_step(*args: Any) -> Any:
        out = step(*args)
        _ReleaseAtMmad.mmad_start, _ReleaseAtMmad.pending = float(out[4]), 2
        return out

    sim_mod._Chunks = Chunks  # type: ignore[misc]
    setattr(sim_mod, "k_step", k_step)  # noqa: B010
    try:
        yield
    finally:
        sim_mod._Chunks = chunks  # type: ignore[misc]
        setattr(sim_mod, "k_step", step)  # noqa: B010
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


#: The measured order the issue should reproduce: the cases a file ranks by their time alone
#: (910B1 6 > 7 > 8: constant tiling, then UnitFlag; 950PR 5 > 6 > 7: L2 rounds, then constant
#: tiling).
_ORDERED = {
    "measured_msprof_910b1_8192.csv": ("case6", "case7", "case8"),
    "measured_msprof_950pr_8192.csv": ("case5", "case6", "case7"),
}


def _depth_arg(depth: int, pipes: list[str] | None) -> int | dict[str, int] | None:
    """The queue depth a sweep value means: -1 the model itself, 0 unbounded queues."""
    if depth < 0:
        return None
    entries = depth or UNBOUNDED
    return entries if pipes is None else dict.fromkeys(pipes, entries)


def _depth_name(depth: int) -> str:
    return "model" if depth < 0 else "inf" if depth == 0 else str(depth)


def _issue_sweep(depths: list[int], pipes: list[str] | None, big: bool) -> None:
    """Per depth: the task-time errors, MTE2 idle and MTE1 busy, and the measured order."""
    for file, ordered in _ORDERED.items():
        cases = [c for c in msprof_cases(file) if big or c.name not in ("case0", "case1")]
        print(f"== {file}: task-time error (%) with in-order issue, depth per queue"
              f" ({'all pipes' if pipes is None else '/'.join(pipes)}; others unbounded)")  # fmt: skip
        print(f"{'depth':>6} " + " ".join(f"{c.name:>7}" for c in cases)
              + "  worst  order  in-order  MTE2 idle " + " / ".join(c.name[4:] for c in cases[-5:])
              + "  MTE1 us 5-8  delayed  us " + "/".join(c[4:] for c in ordered))  # fmt: skip
        board_idle = [(1.0 - c.pipes_us["MTE2"] / c.core_avg_us) * 100.0 for c in cases[-5:]
                      if c.core_avg_us]  # fmt: skip
        board_mte1 = [c.pipes_us["MTE1"] for c in cases[-4:]]
        for depth in depths:
            runs = [
                run_case(c.problem, c.tiling, c.preset, _depth_arg(depth, pipes)) for c in cases
            ]
            errs = [(r.time_us / c.time_us - 1.0) * 100.0 for r, c in zip(runs, cases, strict=True)]
            named = {c.name: r.time_us for c, r in zip(cases, runs, strict=True)}
            order = all(named[a] > named[b] for a, b in itertools.pairwise(ordered))
            measured = sorted(range(len(cases)), key=lambda i: cases[i].time_us)
            model = sorted(range(len(cases)), key=lambda i: runs[i].time_us)
            delayed = sum(r.delayed for r in runs) / max(sum(r.instructions for r in runs), 1)
            print(f"{_depth_name(depth):>6} " + " ".join(f"{e:+6.1f}%" for e in errs)
                  + f" {max(abs(e) for e in errs):5.1f}%  {'yes' if order else 'no':>5}"
                  f"  {'yes' if measured == model else 'no':>8}  "
                  + " / ".join(f"{r.mte2_idle_pct:.1f}" for r in runs[-5:])
                  + "  " + " / ".join(f"{r.mte1_us:.0f}" for r in runs[-4:])
                  + f"  {delayed * 100:.1f}%  " + " / ".join(f"{named[c]:.1f}" for c in ordered))  # fmt: skip
        print("board" + " " * (8 * len(cases) + 24) + " / ".join(f"{i:.1f}" for i in board_idle)
              + "  " + " / ".join(f"{m:.0f}" for m in board_mte1))  # fmt: skip
    rows = [c for c in torch_mm_cases() if c.problem.dtype != "fp32"]
    print("== torch.mm (910B2, end to end): error (%) with in-order issue")
    print(f"{'depth':>6} " + " ".join(f"{c.name[9:]:>10}" for c in rows) + "  worst N>=2048")
    for depth in depths:
        errs = [(run_case(c.problem, c.tiling, c.preset, _depth_arg(depth, pipes), device=False)
                 .time_us / c.time_us - 1.0) * 100.0 for c in rows]  # fmt: skip
        worst = max(abs(e) for e, c in zip(errs, rows, strict=True) if c.problem.m >= 2048)
        print(f"{_depth_name(depth):>6} " + " ".join(f"{e:+9.1f}%" for e in errs)
              + f"  {worst:5.1f}%")  # fmt: skip


def _quantiles(label: str, values: list[float]) -> None:
    q = (0, 50, 90, 95, 99, 100)
    v = np.asarray(values)
    print(f"  {label}: " + " ".join(f"p{p}={x:+.2f}" for p, x in zip(q, np.percentile(v, q),
          strict=True)) + f"; |x| < 0.01: {int((np.abs(v) < 0.01).sum())}, > 1: "
          f"{int((v > 1.0).sum())}, > 5: {int((v > 5.0).sum())}, > 10: {int((v > 10.0).sum())}")  # fmt: skip


def _issue_random(count: int, depth: int, pipes: list[str] | None, seed: int) -> None:
    """The change in simulated time of random problems and tilings under the issue.

    Split into the scalar's share (unbounded queues: the start-up and the per-step and
    per-copy work before each issue) and the queues' (depth ``depth`` against unbounded).
    """
    from benchmarks.agreement import SOCS, describe, draw_problem
    from simcore.hardware.presets import load_preset
    from tests.support.random_tilings import random_tiling

    rng = np.random.default_rng(seed)
    total, scalar, queues, shares, shares_inf = [], [], [], [], []
    worst: list[tuple[float, str]] = []
    for i in range(count):
        soc = list(SOCS)[i % len(SOCS)]
        preset = load_preset(soc)
        problem = draw_problem(rng, soc)
        tiling = random_tiling(problem, preset, rng)
        base = run_case(problem, tiling, preset, None).time_us
        free = run_case(problem, tiling, preset, _depth_arg(0, pipes))
        run = run_case(problem, tiling, preset, _depth_arg(depth, pipes))
        total.append((run.time_us / base - 1.0) * 100.0)
        scalar.append((free.time_us / base - 1.0) * 100.0)
        queues.append((run.time_us / free.time_us - 1.0) * 100.0)
        shares.append(run.delayed / max(run.instructions, 1) * 100.0)
        shares_inf.append(free.delayed / max(free.instructions, 1) * 100.0)
        case = Case(soc, problem, tiling, run.time_us, base)
        worst.append((queues[-1], describe(case)))
    print(f"== {count} random tilings (benchmarks.agreement's draw, seed {seed}), depth "
          f"{_depth_name(depth)}: change of simulated time, percent")  # fmt: skip
    _quantiles("issue at this depth vs model", total)
    _quantiles("unbounded queues vs model (the scalar's work alone)", scalar)
    _quantiles("this depth vs unbounded (the queues alone)", queues)
    _quantiles("instructions started later by the issue, % of a core's", shares)
    _quantiles("  the same with unbounded queues", shares_inf)
    print("  the queues' largest changes ('est' is the issue's time, 'sim' the model's):")
    for change, text in sorted(worst, reverse=True)[:8]:
        print(f"    {change:+6.1f}%  {text}")


def main() -> None:
    """Prints the idle shares, the slack, the release-delay sweep and the torch.mm rates."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--delays", default="0,150,275,413,550")
    ap.add_argument("--issue", help="queue depths to sweep (-1 the model, 0 unbounded)")
    ap.add_argument("--issue-pipes", help="the pipes the depth applies to (default: all)")
    ap.add_argument("--issue-big", action="store_true", help="include cases 0-1 (slow)")
    ap.add_argument("--issue-random", type=int, default=0, help="random tilings at --issue")
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    if args.issue:
        depths = [int(d) for d in args.issue.split(",")]
        pipes = args.issue_pipes.split(",") if args.issue_pipes else None
        if args.issue_random:
            _issue_random(args.issue_random, depths[0], pipes, args.seed)
        else:
            _issue_sweep(depths, pipes, args.issue_big)
        return
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
