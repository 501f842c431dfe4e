"""Validate and evaluate a (problem, tiling) pair.

This is the behaviour behind ``tiler validate`` and ``tiler evaluate`` and their HTTP twins.

The answer dicts are the CLI contract: ``{"valid", "violations", "warnings"}`` and, for evaluate,
an ``"estimate"`` with ``time_us``, ``tflops``, ``bottleneck``, ``sequential_bound_us``,
``resource_bound_us``, ``simulated`` and the per-pipe figures.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from simcore.estimate.estimator import estimate_one
from simcore.estimate.roofline import roofline
from simcore.hardware.presets import HardwarePreset, load_preset
from simcore.pipeline.costs import ceil_div
from simcore.pipeline.simulator import PIPES, SimResult, simulate
from simcore.pipeline.traffic import core_programs, dealt_rounds
from simcore.tiling.footprints import complete_tiling, uses_ub_path
from simcore.tiling.legality import check_tiling
from simcore.tiling.problem import Problem, check_supported, parse_problem
from simcore.tiling.tcube import TCubeTiling
from simcore.ub.path import ub_plan
from simcore.version import MODEL_VERSION

#: Above this many simulated instructions (:func:`simulated_instruction_count`, every core
#: program the simulator plays) evaluate falls back to the estimator (simulated=false).
MAX_SIMULATED_INSTRUCTIONS = 3_000_000


def parse_request(data: Any) -> tuple[Problem, TCubeTiling, HardwarePreset]:
    """Parses ``{"problem": {...}, "tiling": {...}}`` into checked objects.

    Raises:
        InputError: A key is unknown or missing, a value has the wrong type or range, or the chip
            cannot run the problem.
        UnknownSocError: The problem names no known SoC.
    """
    from simcore.errors import InputError

    if not isinstance(data, dict):
        raise InputError("request", "type", "request must be a JSON object", type(data).__name__)
    extra = set(data) - {"problem", "tiling"}
    if extra:
        key = sorted(extra)[0]
        raise InputError(key, "unknown_field", f"unknown key {key!r}", key, "problem, tiling")
    if "problem" not in data:
        raise InputError("problem", "required", "problem is required")
    if "tiling" not in data:
        raise InputError("tiling", "required", "tiling is required")
    problem = parse_problem(data["problem"])
    preset = load_preset(problem.soc)
    check_supported(problem, preset)
    tiling = complete_tiling(data["tiling"], problem, preset)
    return problem, tiling, preset


def validate(problem: Problem, tiling: TCubeTiling, preset: HardwarePreset) -> dict[str, Any]:
    """Returns the legality report of a tiling as the CLI prints it."""
    return check_tiling(problem, tiling, preset).to_dict()


def instruction_count(problem: Problem, t: TCubeTiling) -> int:
    """An upper estimate of the instructions one core issues (to bound simulation cost).

    A core of a dealt split runs its R tiles (:func:`simcore.pipeline.traffic.dealt_rounds`).
    """
    blocks = ceil_div(t.singleCoreM, t.baseM) * ceil_div(t.singleCoreN, t.baseN)
    return int(dealt_rounds(problem, t) * blocks * _block_instructions(problem, t))


def simulated_instruction_count(problem: Problem, t: TCubeTiling) -> int:
    """An estimate of the instructions the simulator plays for the whole kernel.

    The simulator plays every distinct core program
    (:func:`simcore.pipeline.traffic.core_programs`): up to four shapes (full and tail rows and
    columns) for one tile per core, but up to usedCoreNum programs of R tiles each for a dealt
    split, whose tail tiles fall on different cores in different rounds. This is the cost of a
    simulation (the search's budget, the simulate-or-estimate choice), where
    :func:`instruction_count` is one core's (a timeline's).
    """
    per_block = _block_instructions(problem, t)
    return sum(
        int(ceil_div(rows, t.baseM) * ceil_div(cols, t.baseN)) * per_block
        for shape in core_programs(problem, t)
        for rows, cols in shape.program
    )


def _block_instructions(problem: Problem, t: TCubeTiling) -> int:
    # Per output block: each K step's A load, B load and MMAD, plus the block's drain legs.
    return int(3 * ceil_div(problem.k, t.baseK) + 4)


def estimate_dict(
    problem: Problem,
    tiling: TCubeTiling,
    preset: HardwarePreset,
    simulate_if_cheap: bool = True,
    sim: SimResult | None = None,
) -> dict[str, Any]:
    """Predicts a legal tiling's time with the simulator (or the estimator when too long).

    Args:
        problem: The Matmul.
        tiling: A legal tiling of it.
        preset: The chip.
        simulate_if_cheap: Simulate when the kernel is short enough.
        sim: This tiling's simulation when the caller already ran it (a timeline picture needs
            it too): it is used instead of simulating again.

    Returns:
        The ``estimate`` object of the CLI contract; on chips that stage through UB it also has
        ``ub`` (:meth:`simcore.ub.path.UbPlan.to_dict`: buffers, conflicts, cycles per repeat)
        and ``explanation`` (one sentence per conflict).
    """
    est = estimate_one(problem, tiling, preset)
    roof = roofline(problem, preset)
    cheap = simulated_instruction_count(problem, tiling) <= MAX_SIMULATED_INSTRUCTIONS
    simulated = sim is not None or (simulate_if_cheap and cheap)
    if simulated:
        if sim is None:
            sim = simulate(problem, tiling, preset)
        time_us = sim.time_us
        times = {
            "device_time_us": sim.device_time_us,
            "core_time_avg_us": sim.core_time_avg_us,
            "end_to_end_us": sim.end_to_end_us,
        }
        busy = sim.busy_cycles
        seq_us = sim.sequential_cycles / preset.clock_mhz
        res_us = sim.resource_cycles / preset.clock_mhz
        core_cycles = sim.slowest.makespan_cycles
    else:
        time_us = est["time_us"]
        times = {k: est[k] for k in ("device_time_us", "core_time_avg_us", "end_to_end_us")}
        busy = {p: est[f"busy_{p}"] for p in PIPES}
        seq_us = est["sequential_cycles"] / preset.clock_mhz
        res_us = est["resource_cycles"] / preset.clock_mhz
        core_cycles = est["core_cycles"]
    bottleneck = max(busy, key=lambda p: busy[p])
    util = {p: (busy[p] / core_cycles if core_cycles else 0.0) for p in PIPES if busy[p] > 0}
    out: dict[str, Any] = {
        "time_us": time_us,
        # The profiler's figures (simcore.pipeline.traffic.kernel_times): the slowest core
        # with the start-up, the cores' mean, and per back-to-back call.
        **times,
        "tflops": problem.flops / time_us / 1e6,
        "bottleneck": bottleneck,
        "sequential_bound_us": seq_us,
        "resource_bound_us": res_us,
        "simulated": simulated,
        "estimator_time_us": est["time_us"],
        # The estimator's term that sets its time (a named path, a pipe or HBM floor, or the
        # sequential clip: simcore.estimate.binding), also where the time above is simulated.
        "binding_term": est["binding_term"],
        "launch_overhead_us": preset.launch_overhead_us,
        "pipe_busy_us": {p: busy[p] / preset.clock_mhz for p in PIPES if busy[p] > 0},
        "pipe_utilization": util,
        "gm_read_bytes": est["read_bytes"],
        "hbm_bytes": est["hbm_bytes"],
        "roofline": roof.to_dict(),
        "model_version": MODEL_VERSION,
        "preset_digest": preset.digest,
    }
    if uses_ub_path(problem, preset):
        # Chips that stage through UB: the layout of that path and its bank conflicts, with a
        # sentence for each conflict (and for a vector path that does not fit).
        plan = ub_plan(problem, tiling, preset)
        out["ub"] = plan.to_dict()
        out["explanation"] = plan.explanation()
    return out


def evaluate(
    problem: Problem,
    tiling: TCubeTiling,
    preset: HardwarePreset,
    simulation: Callable[[], SimResult | None] | None = None,
) -> dict[str, Any]:
    """Validates and, when legal, predicts a tiling (the ``tiler evaluate`` answer).

    Args:
        problem: The Matmul.
        tiling: The tiling to check and predict.
        preset: The chip.
        simulation: Called only when the tiling is legal; a SimResult it returns is used for
            the estimate (the caller keeps it, e.g. for a timeline), None lets evaluate decide.
    """
    out = validate(problem, tiling, preset)
    if out["valid"]:
        sim = simulation() if simulation is not None else None
        out["estimate"] = estimate_dict(problem, tiling, preset, sim=sim)
    return out
