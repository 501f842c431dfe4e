"""The tuned tiling against CANN's pick on Ascend 950, and what fp8 / MX fp4 gain over bf16.

For LLM-like shapes on Ascend950PR_9589 (the measured 950PR's 32 cores), tune each shape in bf16,
fp8_e4m3 and mxfp4 (``tiler.compare.compare_dtypes``, screening only: budget 0) and print, per
shape and dtype, the tuned time, CANN's pick (``cann950``: base 256 x 256 x 128 bytes of K, one
L0C buffer, docs/ascend950.md) and the ratio of the two, then the dtype's speedup over bf16.
All times are the model's (model version printed); no 950 measurement of these shapes exists.
``--template mdl`` tunes and prices the MDL template's large-packet copies (the measured 950PR
file's fastest kernels); the default is the problem's default, Norm.

    uv run --frozen python -m benchmarks.cann950_compare [--template norm|mdl]
"""

from __future__ import annotations

import argparse
import statistics
import time

from simcore.version import MODEL_VERSION
from tiler.compare import compare_dtypes
from tiler.tune import parse_tune_request

SOC = "Ascend950PR_9589"
#: M x N x K: decode and prefill projections of 7B-70B models, square GEMMs, an odd shape.
SHAPES: tuple[tuple[int, ...], ...] = tuple(
    tuple(int(x) for x in shape.split("x"))
    for shape in [
        "16x4096x4096",
        "128x14336x4096",
        "1024x1024x1024",
        "2048x11008x4096",
        "4096x4096x4096",
        "4096x28672x8192",
        "8192x8192x8192",
        "3000x5000x7000",
    ]
)
DTYPES = ["bf16", "fp8_e4m3", "mxfp4"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--template", default="norm", choices=("norm", "mdl"))
    template = parser.parse_args().template
    print(f"model {MODEL_VERSION}, {SOC}, budget 0 (screening), B transposed, {template}")
    print(f"{'shape':>20} {'dtype':>11} {'tuned us':>10} {'CANN us':>10} {'CANN/tuned':>10} "
          f"{'vs bf16':>8}")  # fmt: skip
    gains: dict[str, list[float]] = {d: [] for d in DTYPES}
    speedups: dict[str, list[float]] = {d: [] for d in DTYPES}
    t0 = time.perf_counter()
    for m, n, k in SHAPES:
        req = parse_tune_request(
            {
                "problem": {
                    "soc": SOC,
                    "m": m,
                    "n": n,
                    "k": k,
                    "trans_b": True,
                    "template": template,
                },
                "budget": 0,
            }
        )
        out = compare_dtypes(req, DTYPES)
        for name, row in zip(DTYPES, out["rows"], strict=True):
            cann = row["cann950"]["time_us"]
            gains[name].append(row["gain_vs_cann"])
            speedups[name].append(row["speedup_vs_reference"])
            print(f"{f'{m}x{n}x{k}':>20} {name:>11} {row['time_us']:>10.1f} {cann:>10.1f} "
                  f"{row['gain_vs_cann']:>10.3f} {row['speedup_vs_reference']:>8.2f}")  # fmt: skip
    print("\n".join(_summary(name, gains[name], speedups[name]) for name in DTYPES))
    print(f"{time.perf_counter() - t0:.0f} s")
    return 0


def _summary(name: str, gains: list[float], speedups: list[float]) -> str:
    """One dtype's medians: CANN's pick over the tuned time, and the speedup over bf16."""
    return (
        f"{name:>11}: CANN/tuned median {statistics.median(gains):.3f} (max {max(gains):.3f}); "
        f"vs bf16 median {statistics.median(speedups):.2f} (min {min(speedups):.2f}, "
        f"max {max(speedups):.2f})"
    )


if __name__ == "__main__":
    raise SystemExit(main())
