"""Tuned tilings against CANN's own (tests/data/reference/cann_default_tilings.csv).

For each distinct problem of the CSV (soc, dtypes, M, N, K, transposes, bias) and each CANN row
of it (``single`` and ``nosingle`` modes): ``tiler tune`` runs once per problem WITHOUT CANN's
rows as baselines (the search alone), then each CANN row is predicted with the same model
(``simcore.evaluate.estimate_dict``: the simulator) and compared with the answer.
Prints the geometric-mean speedup (CANN time / tuned time, both measured in this run) overall
and by shape class, the share of problems where the answer is CANN's own tiling, and the rows
that could not be compared (a dtype the chip lacks, an illegal CANN row).

    uv run python -m benchmarks.cann_compare --limit 200 [--budget 0] [--workers 2] [--soc S]
        [--unaligned]
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

from simcore.alloc import tune_allocator
from simcore.errors import InputError
from simcore.evaluate import estimate_dict
from simcore.hardware.presets import load_preset
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.legality import check_tiling
from simcore.tiling.problem import parse_problem
from tiler.space import SEARCH_FIELDS
from tiler.tune import parse_tune_request, tune

CSV = Path(__file__).resolve().parents[1] / "tests/data/reference/cann_default_tilings.csv"
TILING_FIELDS = ("usedCoreNum", "singleCoreM", "singleCoreN", "singleCoreK", "baseM", "baseN",
                 "baseK", "depthA1", "depthB1", "stepM", "stepN", "stepKa", "stepKb",
                 "iterateOrder", "dbL0A", "dbL0B", "dbL0C", "transLength", "shareL1Size",
                 "shareL0CSize", "shareUbSize")  # fmt: skip


def shape_class(m: int, n: int, k: int) -> str:
    if m == n == k:
        return "square"
    if m <= 16:
        return "decode (M<=16)"
    if m <= 512:
        return "small M (<=512)"
    return "large M (>512)"


Row = tuple[str, str, float, float, bool]


def compare_one(
    job: tuple[tuple[str, ...], list[dict[str, str]], int | None],
) -> tuple[tuple[str, ...], list[Row] | str]:
    """Tunes one problem and simulates each of its CANN rows.

    Returns the key and, per CANN row, (shape class, "soc dtype", CANN us, tuned us, whether
    the answer is that row's tiling); a class of "" marks an illegal CANN row. For a problem
    the search rejects, the rule it broke instead of the rows.
    """
    key, rows, budget = job
    soc, dtype, out_dtype, m, n, k, ta, tb, bias = key
    prob = {"soc": soc, "m": int(m), "n": int(n), "k": int(k), "dtype": dtype,
            "out_dtype": out_dtype, "trans_a": ta == "1", "trans_b": tb == "1",
            "bias": bias == "1", "intrinsics_check": True}  # fmt: skip
    p = parse_problem(prob)
    preset = load_preset(p.soc)
    # The search alone, without CANN's rows as baselines: passing them would make "never
    # slower than CANN" hold by construction and prove nothing about the search.
    try:
        req = {"problem": prob} if budget is None else {"problem": prob, "budget": budget}
        out = tune(parse_tune_request(req))
    except InputError as exc:
        return key, exc.rule
    tuned_us = float(out["estimate"]["time_us"])
    tuned = out["tiling"]
    result: list[Row] = []
    for r in rows:
        tiling = {f: int(r[f]) for f in TILING_FIELDS}
        t = complete_tiling(tiling, p, preset)
        if not check_tiling(p, t, preset).valid:
            result.append(("", "", 0.0, 0.0, False))
            continue
        cann_us = float(estimate_dict(p, t, preset)["time_us"])
        same = all(tuned[f] == tiling[f] for f in SEARCH_FIELDS)
        result.append((shape_class(p.m, p.n, p.k), f"{soc} {dtype}", cann_us, tuned_us, same))
    return key, result


def _unaligned(r: dict[str, str]) -> bool:
    """Whether A's or B's GM row pitch (bytes) is not a multiple of 512 B."""
    elem = {"fp16": 2, "bf16": 2, "fp32": 4, "hf32": 4, "int8": 1}.get(r["dtype"], 2)
    a_row = int(r["M"] if r["trans_a"] == "1" else r["K"]) * elem
    b_row = int(r["K"] if r["trans_b"] == "1" else r["N"]) * elem
    return a_row % 512 != 0 or b_row % 512 != 0


def main() -> None:
    tune_allocator()  # as the tiler command does: the estimator's block temporaries stay mapped
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=None, help="First N distinct problems only.")
    ap.add_argument(
        "--budget",
        type=int,
        default=None,
        help="Optuna trials per problem (default: the tuner's own).",
    )
    ap.add_argument("--workers", type=int, default=1, help="Processes (each tunes whole problems).")
    ap.add_argument(
        "--soc", default=None, help="Only this chip's rows (after a model change on it alone)."
    )
    ap.add_argument(
        "--unaligned",
        action="store_true",
        help="Only problems with an operand row pitch that is not a multiple of 512 B "
        "(the GM row alignment of simcore.pipeline.alignment).",
    )
    args = ap.parse_args()
    rows = list(csv.DictReader(CSV.open()))
    problems: dict[tuple[str, ...], list[dict[str, str]]] = defaultdict(list)
    for r in rows:
        if args.soc is not None and r["soc"] != args.soc:
            continue
        if args.unaligned and not _unaligned(r):
            continue
        key = (r["soc"], r["dtype"], r["out_dtype"], r["M"], r["N"], r["K"], r["trans_a"],
               r["trans_b"], r["bias"])  # fmt: skip
        problems[key].append(r)
    keys = list(problems)
    # Spread a partial run over the whole file (socs, dtypes, shapes), not its first block.
    if args.limit and args.limit < len(keys):
        step = len(keys) / args.limit
        keys = [keys[int(i * step)] for i in range(args.limit)]
    speedups: dict[str, list[float]] = defaultdict(list)
    skipped: dict[str, int] = defaultdict(int)
    answer_is_cann = 0
    slower = 0
    t_start = time.perf_counter()
    jobs = [(key, problems[key], args.budget) for key in keys]
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for done, (done_key, result) in enumerate(pool.map(compare_one, jobs, chunksize=4), 1):
            if isinstance(result, str):
                skipped[result] += len(problems[done_key])
                continue
            for cls, soc_dtype, cann_us, tuned_us, same in result:
                if cls == "":
                    skipped["cann_row_illegal"] += 1
                    continue
                answer_is_cann += same
                ratio = cann_us / tuned_us
                if ratio < 1.0 - 1e-9:
                    slower += 1
                    print(f"CANN faster: {done_key} cann {cann_us:.2f} us, tuned {tuned_us:.2f} us",
                          flush=True)  # fmt: skip
                speedups[cls].append(ratio)
                speedups[soc_dtype].append(ratio)
                speedups["all"].append(ratio)
            if done % 100 == 0:
                print(f"  {done}/{len(jobs)} problems, {time.perf_counter() - t_start:.0f} s",
                      flush=True)  # fmt: skip
    seconds = time.perf_counter() - t_start
    print(f"{len(keys)} problems ({len(speedups['all'])} CANN rows compared) in {seconds:.0f} s, "
          f"budget {args.budget}")  # fmt: skip
    print(f"CANN rows predicted faster than the tuned answer: {slower}")
    print(f"answer is CANN's own tiling for {answer_is_cann} rows")
    print(f"skipped: {dict(skipped)}")
    print("\nspeedup = CANN time / tuned time (model 'simulated' figures, same run)")
    print(f"{'class':24s} {'rows':>5s} {'geomean':>8s} {'p10':>7s} {'median':>7s} {'p90':>7s} "
          f"{'max':>7s}")  # fmt: skip
    for name in sorted(speedups, key=lambda s: (s != "all", s)):
        v = sorted(speedups[name])
        p10, p50, p90 = (v[min(len(v) - 1, int(f * (len(v) - 1)))] for f in (0.1, 0.5, 0.9))
        print(f"{name:24s} {len(v):5d} {statistics.geometric_mean(v):8.3f} {p10:7.3f} "
              f"{p50:7.3f} {p90:7.3f} {v[-1]:7.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
