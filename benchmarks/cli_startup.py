"""Start-up cost of the ``tiler`` command line, as ratios against numpy's import in the same run.

A build system calls ``tiler tune`` / ``tiler evaluate`` once per shape, so every command pays the
interpreter start and the imports of :mod:`app.cli` before any work. Each figure is the CPU time
(user + system) of a fresh process, best of ``--repeat``, beside the CPU time of a fresh
``python -c "import numpy"`` (numpy is imported by every model command, so it is the floor):

* ``import app.cli``: the imports alone;
* ``tiler --help``;
* ``tiler evaluate`` of one JSON line on standard input;
* ``tiler tune --soc Ascend310B1 --m 1024 --n 4096 --k 4096`` (``--no-tune`` skips it).

The processes are ``python -m app.cli`` with the interpreter running this script, so uv's own
start-up is not in the figures. Child CPU time comes from ``os.wait4``, not wall time (the host
may be shared)::

    OMP_NUM_THREADS=1 uv run --frozen python -m benchmarks.cli_startup
    OMP_NUM_THREADS=1 uv run --frozen python -m benchmarks.cli_startup --repeat 9 --no-tune
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

# One 4096^3 fp16 tiling on 910B2 (one line of `tiler evaluate --jsonl -`).
EVALUATE_LINE = (
    '{"problem": {"soc": "Ascend910B2", "m": 4096, "n": 4096, "k": 4096, "dtype": "fp16"}, '
    '"tiling": {"usedCoreNum": 24, "singleCoreM": 1024, "singleCoreN": 768, "baseM": 128, '
    '"baseN": 256, "baseK": 64, "depthA1": 16, "depthB1": 8, "stepM": 1, "stepN": 1, '
    '"stepKa": 8, "stepKb": 4}}'
)
TUNE_ARGS = ["tune", "--soc", "Ascend310B1", "--m", "1024", "--n", "4096", "--k", "4096"]


def cpu_s(argv: list[str], stdin: str = "") -> float:
    """CPU seconds (user + system) of one run of ``argv`` in a fresh process (exit 0 required)."""
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert proc.stdin is not None
    proc.stdin.write(stdin.encode())
    proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{argv} exited {proc.returncode}")
    return usage.ru_utime + usage.ru_stime


def best_cpu_s(argv: list[str], repeat: int, stdin: str = "") -> float:
    """The least CPU time of ``repeat`` runs (noise from a shared host only ever adds)."""
    return min(cpu_s(argv, stdin) for _ in range(repeat))


def main() -> None:
    """Prints each figure in ms of CPU and as a ratio to ``import numpy``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure (best taken)")
    parser.add_argument("--no-tune", action="store_true", help="skip the tune command")
    args = parser.parse_args()
    py = sys.executable
    cli = [py, "-m", "app.cli"]
    cases: list[tuple[str, list[str], str]] = [
        ("python -c pass", [py, "-c", "pass"], ""),
        ("import numpy (baseline)", [py, "-c", "import numpy"], ""),
        ("import app.cli", [py, "-c", "import app.cli"], ""),
        ("tiler --help", [*cli, "--help"], ""),
        ("tiler evaluate (1 line)", [*cli, "evaluate", "--jsonl", "-"], EVALUATE_LINE + "\n"),
    ]
    if not args.no_tune:
        cases.append(("tiler tune 310B1 1024x4096x4096", [*cli, *TUNE_ARGS], ""))
    figures = {name: best_cpu_s(argv, args.repeat, stdin) for name, argv, stdin in cases}
    base_s = figures["import numpy (baseline)"]
    print(f"CPU time (user + system), best of {args.repeat}, fresh processes of {py}")
    for name, seconds in figures.items():
        print(f"  {name:34s} {seconds * 1e3:8.0f} ms   {seconds / base_s:5.2f} x import numpy")


if __name__ == "__main__":
    main()
