"""Group gap: where the group bound falls short of the groups the certified search must enumerate.

The screening (:func:`tiler.screen.screen`) enumerates every group whose bound
(:func:`tiler.bounds.group_lower_bounds`) is below the runner-up's time. This finds those groups
for one problem (the cube, fixed and full tiers against the runner-up of a screening), samples
some, scores every point of each, and prints:

* the median bound / best point of the group, and the term that sets the best point's estimate
  (:mod:`simcore.estimate.binding`);
* per class of tilings by K chunking (each operand's K chunks in its L1 slots, or streamed
  through them: ``kc > slots``, then the operand is reloaded for every block,
  :func:`simcore.pipeline.traffic.operand_passes`), on the vector data path: how many groups
  have no point of the class below the runner-up (what a bound exact in the class would rule
  out), and how many have the least ``staged_pass`` path of the class at or above it (what an
  exact floor of that term alone would rule out), with the terms that set the estimate where
  that path is least.

The ``staged_pass`` path (:func:`simcore.estimate.staged_passes.staged_pass`) is read by
wrapping :meth:`simcore.estimate.binding.Makespan.raise_all` for the run: a diagnostic, nothing
else is changed. Each class's figures are a ceiling on what a bound of that kind can rule out.

    uv run python -m benchmarks.group_gap                 # 910A int8 333 x 12345 x 777
    uv run python -m benchmarks.group_gap --groups 20 --seed 3
"""

from __future__ import annotations

import argparse
import os
import time
from collections import Counter
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

from simcore.estimate import binding
from simcore.estimate.binding import BINDING_NAMES
from simcore.estimate.estimator import estimate_arrays
from simcore.hardware.presets import load_preset
from simcore.pipeline.costs import vector_path_array
from simcore.pipeline.traffic import kernel_us
from simcore.tiling.problem import Problem
from tiler.bounds import cube_lower_bounds, fixed_lower_bounds, group_lower_bounds
from tiler.screen import screen
from tiler.space import build_space

CLASSES = ("A, B in slots", "A streamed", "B streamed", "both streamed")


def _open_groups(space: Any, threshold: float) -> tuple[Any, Any]:
    """The groups whose full group bound is below ``threshold``, with those bounds."""
    idx = np.flatnonzero(cube_lower_bounds(space) < threshold)
    idx = idx[fixed_lower_bounds(space, idx) < threshold]
    full = group_lower_bounds(space, idx)
    return idx[full < threshold], full[full < threshold]


def _staged_paths(problem: Problem, preset: Any, pts: dict[str, Any]) -> tuple[Any, Any]:
    """The estimate of ``pts`` (one data path) and each point's ``staged_pass`` path (cycles)."""
    paths: list[Any] = []
    original = binding.Makespan.raise_all

    def record(self: Any, path: Any, term: Any) -> None:
        if term == "staged_pass":
            paths.append(np.broadcast_to(path, np.shape(self.value)).copy())
        original(self, path, term)

    binding.Makespan.raise_all = record  # type: ignore[method-assign]
    try:
        out = estimate_arrays(problem, preset, pts)
    finally:
        binding.Makespan.raise_all = original  # type: ignore[method-assign]
    size = pts["baseM"].shape[0]
    staged = np.concatenate(paths) if paths else np.zeros(size)
    return out, staged


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--soc", default="Ascend910A")
    parser.add_argument("--dtype", default="int8")
    parser.add_argument("--m", type=int, default=333)
    parser.add_argument("--n", type=int, default=12345)
    parser.add_argument("--k", type=int, default=777)
    parser.add_argument("--groups", type=int, default=40, help="open groups sampled")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    problem = Problem(m=args.m, n=args.n, k=args.k, dtype=args.dtype, soc=args.soc)
    preset = load_preset(problem.soc)
    space = build_space(problem, preset, {})
    start = time.process_time()
    res = screen(space)
    runner_up = res.top[1].time_us
    print(
        f"{problem.soc} {problem.dtype} {problem.m} x {problem.n} x {problem.k}: screening "
        f"{time.process_time() - start:.2f} s CPU, exact {res.exact}, optimum "
        f"{res.top[0].time_us:.3f} us, runner-up {runner_up:.3f} us"
    )
    groups, bounds = _open_groups(space, runner_up)
    print(f"groups with a full bound below the runner-up: {groups.shape[0]} of {space.size}")
    rng = np.random.default_rng(args.seed)
    pick = rng.choice(groups.shape[0], size=min(args.groups, groups.shape[0]), replace=False)
    ratios: list[float] = []
    best_terms: Counter[str] = Counter()
    per_class: dict[int, list[tuple[float, float]]] = {}
    least_terms: dict[int, Counter[str]] = {}
    for j in pick:
        g = int(groups[j])
        pts = space.with_l0_flags(space.l1_choices(g))
        whole = estimate_arrays(problem, preset, pts)
        i = int(np.argmin(whole["time_us"]))
        ratios.append(float(bounds[j] / whole["time_us"][i]))
        best_terms[BINDING_NAMES[whole["binding_term"][i]]] += 1
        vp = vector_path_array(problem, pts, preset)
        on = np.flatnonzero(vp) if vp is not None else np.arange(pts["baseM"].shape[0])
        if on.shape[0] == 0:
            continue
        sub = {name: arr[on] for name, arr in pts.items()}
        out, staged = _staged_paths(problem, preset, sub)
        staged_us = kernel_us(preset, staged / preset.clock_mhz)
        k_iter = int(space.groups["k_iter"][g])
        kc_a = -(-k_iter // sub["stepKa"])
        kc_b = -(-k_iter // sub["stepKb"])
        slots_a = sub["depthA1"] // (sub["stepM"] * sub["stepKa"])
        slots_b = sub["depthB1"] // (sub["stepN"] * sub["stepKb"])
        cls = (kc_a > slots_a) * 1 + (kc_b > slots_b) * 2
        for c in range(4):
            mask = cls == c
            if not mask.any():
                continue
            per_class.setdefault(c, []).append(
                (float(out["time_us"][mask].min()), float(staged_us[mask].min()))
            )
            low = mask & (staged_us <= np.percentile(staged_us[mask], 5))
            least_terms.setdefault(c, Counter()).update(
                BINDING_NAMES[b] for b in out["binding_term"][low]
            )
    print(
        f"sampled {len(ratios)}: median bound / best point {np.median(ratios):.3f}; "
        f"best point set by {best_terms.most_common(4)}"
    )
    print("class (vector path)  groups  none below  staged_pass >= runner-up  median least est")
    for c, rows in sorted(per_class.items()):
        arr = np.array(rows)
        print(
            f"{CLASSES[c]:20s} {arr.shape[0]:6d} {int((arr[:, 0] >= runner_up).sum()):10d} "
            f"{int((arr[:, 1] >= runner_up).sum()):24d} {np.median(arr[:, 0]):9.1f} us "
            f"(least staged_pass path {np.median(arr[:, 1]):.1f} us; set by "
            f"{least_terms[c].most_common(2)} there)"
        )


if __name__ == "__main__":
    main()
