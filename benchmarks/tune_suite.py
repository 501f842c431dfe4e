"""Tune suite: search time per shape, and Optuna samplers against the certified optimum.

Part 1 (time): ``tiler.tune.tune`` with the default budget on every shape of the suite (LLM
layers M in {1, 16, 128, 512, 2048, 8192} x (N, K) of 7B-70B models, squares, odd sizes; fp16,
bf16, int8; Ascend910B2, Ascend910B4, Ascend310P3). ``--families`` adds the chips the base suite
lacks (910A: Ascend910A, 310B: Ascend310B1; fp16 and int8, every other (N, K) pair, the squares,
the odd sizes and, on 910A, the held-out shapes of issue 16) and keeps only the named families.
Each shape is tuned cold (no cache; Optuna is imported once before timing). Prints median and p95
seconds overall and per chip family, how many answers were certified exact and the median proven
gap of the others, and the speedup over seed 002's tiling.

Part 2 (samplers): on the first ``--sampler-shapes`` shapes, each sampler runs cold (no
enqueued points) for up to 1,000 trials with the **estimator** as the objective (stated: so the
comparison runs in minutes), and the best found after 100 / 300 / 1,000 trials is compared with
the screened optimum of the same estimator. GP is run to 100 trials only (about 1 s per trial).

    uv run python -m benchmarks.tune_suite --shapes 20 --sampler-shapes 2
    uv run python -m benchmarks.tune_suite --families 910B,910A,310P,310B --sampler-shapes 0
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

from simcore.alloc import tune_allocator
from simcore.estimate.estimator import estimate_one
from simcore.hardware.presets import load_preset
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import Problem
from tiler.screen import screen
from tiler.space import build_space
from tiler.study import Evaluation, Predictor, _excess, run_study
from tiler.tune import parse_tune_request, tune

# (N, K) of Llama-2 7B / 13B / 70B and Llama-3 8B / 70B layers (qkv, o, gate/up, down).
LLM_NK = [(4096, 4096), (12288, 4096), (11008, 4096), (4096, 11008), (5120, 5120),
          (13824, 5120), (5120, 13824), (14336, 4096), (4096, 14336), (8192, 8192),
          (28672, 8192), (8192, 28672), (1024, 8192), (10240, 8192)]  # fmt: skip
M_VALUES = [1, 16, 128, 512, 2048, 8192]
SQUARES = [256, 512, 1024, 2048, 4096, 8192]
ODD = [(77, 333, 1000), (1000, 1000, 1000), (4095, 4097, 1023), (333, 12345, 777),
       (17, 50000, 4096), (3000, 129, 5000), (1, 1, 1), (31, 31, 31), (640, 3, 640),
       (100, 200, 300)]  # fmt: skip


#: The chip each family is tuned on where the base suite has no shape of it.
FAMILY_CHIPS = {"910A": "Ascend910A", "310B": "Ascend310B1"}
#: Shapes the issue measured as slow on 910A (held out of every earlier tuning of the search).
HELD_OUT_910A = [("int8", 1000, 12288, 4096), ("fp16", 4096, 28672, 8192),
                 ("fp16", 2048, 8192, 8192)]  # fmt: skip


def family(soc: str) -> str:
    """The chip family of a SoC name (Ascend910B4 -> 910B, Ascend310P3 -> 310P)."""
    name = soc.removeprefix("Ascend")
    return name[:4]


def suite(families: list[str] | None = None) -> list[dict[str, object]]:
    """The shapes, round-robin over dtype and SoC so any prefix mixes them.

    Args:
        families: None: the base suite (910B2, 910B4, 310P3). Otherwise the base suite's shapes of
            these families, then the shapes of the families it lacks (:data:`FAMILY_CHIPS`).
    """
    base = _base_suite()
    if families is None:
        return base
    out = [s for s in base if family(str(s["soc"])) in families]
    for fam, soc in FAMILY_CHIPS.items():
        if fam not in families:
            continue
        shapes = [(m, n, k) for m in M_VALUES for n, k in LLM_NK[::2]]
        shapes += [(s, s, s) for s in SQUARES] + ODD
        for i, (m, n, k) in enumerate(shapes):
            out.append({"soc": soc, "m": m, "n": n, "k": k, "dtype": ("fp16", "int8")[i % 2]})
        if fam == "910A":
            for dtype, m, n, k in HELD_OUT_910A:
                out.append({"soc": soc, "m": m, "n": n, "k": k, "dtype": dtype})
    return out


def _base_suite() -> list[dict[str, object]]:
    shapes: list[tuple[int, int, int]] = []
    for m in M_VALUES:
        for n, k in LLM_NK:
            shapes.append((m, n, k))
    shapes += [(s, s, s) for s in SQUARES] + ODD
    combos = [
        ("fp16", "Ascend910B2"), ("bf16", "Ascend910B4"), ("int8", "Ascend310P3"),
        ("bf16", "Ascend910B2"), ("fp16", "Ascend310P3"), ("int8", "Ascend910B2"),
    ]  # fmt: skip
    out = []
    for i, (m, n, k) in enumerate(shapes):
        dtype, soc = combos[i % len(combos)]
        out.append({"soc": soc, "m": m, "n": n, "k": k, "dtype": dtype})
    return out


class EstimatorObjective(Predictor):
    """The estimator as the study objective (fast enough for 1,000-trial sampler runs)."""

    def __call__(self, fields: dict[str, int]) -> Evaluation:
        key = self.key(fields)
        if key in self.cache:
            return self.cache[key]
        from simcore.tiling.legality import check_tiling

        p, pre = self.space.problem, self.space.preset
        t = complete_tiling(dict(fields), p, pre)
        report = check_tiling(p, t, pre)
        if report.valid:
            ev = Evaluation(dict(fields), estimate_one(p, t, pre)["time_us"], False, True)
        else:
            ev = Evaluation(dict(fields), float("inf"), False, False, _excess(report.violations))
        self.cache[key] = ev
        return ev


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def baseline_seconds() -> float:
    """Seconds to estimate 500k fixed tilings: the machine's speed in this run (a yardstick)."""
    import numpy as np

    from simcore.estimate.estimator import estimate_arrays

    problem = Problem(m=4096, n=4096, k=4096)
    preset = load_preset(problem.soc)
    space = build_space(problem, preset, {"baseM": 128})
    pts = space.inner_points(0)
    reps = -(-500_000 // pts["baseM"].shape[0])
    big = {f: np.tile(v, reps)[:500_000] for f, v in pts.items()}
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        estimate_arrays(problem, preset, big)
        best = min(best, time.perf_counter() - t0)
    return best


def part_time(shapes: list[dict[str, object]]) -> None:
    import optuna  # noqa: F401  (imported once: its import time is not a tune's)

    times, exact, gaps, speedups, screens = [], 0, [], [], []
    per_family: dict[str, list[tuple[float, float, bool]]] = {}
    base = baseline_seconds()
    print(f"baseline (same run): {base:.3f} s to estimate 500k fixed points of 4096^3 fp16")
    for prob in shapes:
        t0 = time.perf_counter()
        out = tune(parse_tune_request({"problem": prob}))
        dt = time.perf_counter() - t0
        times.append(dt)
        cert = out["certificate"]
        screens.append(out["search"]["screen_seconds"])
        exact += bool(cert["exact"])
        if not cert["exact"] and cert["gap_bound"] is not None:
            gaps.append(cert["gap_bound"])
        speedups.append(out["baselines"][0]["speedup"])
        per_family.setdefault(family(str(prob["soc"])), []).append(
            (dt, out["search"]["screen_seconds"], bool(cert["exact"]))
        )
        print(f"{prob['soc']:12s} {prob['dtype']:5s} {prob['m']:>6}x{prob['n']:>6}x{prob['k']:>6} "
              f"{dt:6.2f} s  exact={cert['exact']!s:5s} gap<={cert['gap_bound'] or 0:.3f} "
              f"x{out['baselines'][0]['speedup']:.3f} vs seed002", flush=True)  # fmt: skip
    geo = statistics.geometric_mean(speedups)
    print("\nper family (tune seconds / screening seconds):")
    for fam, rows in per_family.items():
        tune_s = [r[0] for r in rows]
        screen_s = [r[1] for r in rows]
        print(
            f"  {fam}: {len(rows)} shapes, tune median {statistics.median(tune_s):.2f} p95 "
            f"{pct(tune_s, 0.95):.2f} max {max(tune_s):.2f}; screening median "
            f"{statistics.median(screen_s):.2f} p95 {pct(screen_s, 0.95):.2f} max "
            f"{max(screen_s):.2f}; exact {sum(r[2] for r in rows)}/{len(rows)}"
        )
    print(f"\n{len(shapes)} shapes: tune seconds median {statistics.median(times):.2f}, "
          f"p95 {pct(times, 0.95):.2f}, max {max(times):.2f}")  # fmt: skip
    print(
        f"screening (certified optimum) seconds: median {statistics.median(screens):.2f}, "
        f"p95 {pct(screens, 0.95):.2f}, max {max(screens):.2f}; as a ratio to the baseline: "
        f"median {statistics.median(screens) / base:.2f}, p95 {pct(screens, 0.95) / base:.2f}"
    )
    print(
        f"tune seconds as a ratio to the baseline: median {statistics.median(times) / base:.2f}, "
        f"p95 {pct(times, 0.95) / base:.2f}"
    )
    if gaps:
        print("proven gaps of the non-exact shapes: " + ", ".join(f"{g:.4f}" for g in sorted(gaps)))
    gap_med = statistics.median(gaps) if gaps else 0.0
    gap_max = max(gaps) if gaps else 0.0
    print(
        f"certified exact: {exact}/{len(shapes)}; proven gap of the others: median "
        f"{gap_med:.3f}, max {gap_max:.3f}"
    )
    print(f"speedup over seed 002's tiling (same run, simulator): geometric mean {geo:.3f}, "
          f"min {min(speedups):.3f}, max {max(speedups):.3f}")  # fmt: skip


def part_samplers(
    shapes: list[dict[str, object]], checkpoints: list[int], samplers: list[str]
) -> None:
    print("\nsampler gap to the screened optimum (estimator objective), best after N trials")
    rows: dict[str, dict[int, list[float]]] = {}
    for prob in shapes:
        problem = Problem.model_validate(prob)
        preset = load_preset(problem.soc)
        space = build_space(problem, preset, {})
        ref = screen(space)
        opt = ref.top[0].time_us
        print(f"  {prob}: optimum {opt:.2f} us (exact={ref.exact}, gap<={ref.gap_bound})")
        for sampler in samplers:
            n_max = min(max(checkpoints), 100) if sampler == "gp" else max(checkpoints)
            objective = EstimatorObjective(space)
            t0 = time.perf_counter()
            res = run_study(space, objective, [], n_max, sampler, 0)
            dt = time.perf_counter() - t0
            # Per trial (a re-proposed or projected point counts as the trial it came from).
            history = res.history_us
            best = float("inf")
            bests = []
            for t in history:
                best = min(best, t)
                bests.append(best)
            line = []
            for n in checkpoints:
                if n > n_max:
                    continue
                b = bests[min(n, len(bests)) - 1] if bests else float("inf")
                gap = (b - opt) / opt
                rows.setdefault(sampler, {}).setdefault(n, []).append(gap)
                line.append(f"@{n}: {gap * 100:6.1f} %")
            print(f"    {sampler:6s} {'  '.join(line)}   ({dt / n_max * 1e3:.1f} ms/trial)",
                  flush=True)  # fmt: skip
    print(f"\ngap over {len(shapes)} shapes (median / p90 / max; shapes at the optimum):")
    for sampler, per_n in rows.items():
        cells = "  ".join(
            f"@{n}: {statistics.median(g) * 100:.1f} / {pct(g, 0.9) * 100:.1f} / "
            f"{max(g) * 100:.1f} % ({sum(x <= 1e-9 for x in g)}/{len(g)})"
            for n, g in per_n.items()
        )
        print(f"  {sampler:6s} {cells}")


def main() -> None:
    tune_allocator()  # as the tiler command does: the estimator's block temporaries stay mapped
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", type=int, default=None, help="Tune only the first N shapes.")
    ap.add_argument("--sampler-shapes", type=int, default=3)
    ap.add_argument(
        "--sampler-skip", type=int, default=0,
        help="Leave out the first S of the picked sampler shapes (to finish an interrupted run).",
    )  # fmt: skip
    ap.add_argument("--trials", default="100,300,1000")
    ap.add_argument("--samplers", default="tpe,cmaes,random,gp")
    ap.add_argument(
        "--families", default=None,
        help="Comma-separated chip families (910B,910A,310P,310B): their shapes only, with the "
        "shapes of the families the base suite lacks.",
    )  # fmt: skip
    args = ap.parse_args()
    shapes = suite(args.families.split(",") if args.families else None)
    print(f"suite: {len(shapes)} shapes")
    if args.shapes != 0:
        part_time(shapes if args.shapes is None else shapes[: args.shapes])
    if args.sampler_shapes:
        picks = shapes[:: max(len(shapes) // args.sampler_shapes, 1)][: args.sampler_shapes]
        picks = picks[args.sampler_skip :]
        part_samplers(picks, [int(x) for x in args.trials.split(",")], args.samplers.split(","))


if __name__ == "__main__":
    main()
