"""Batch job throughput: shapes per minute with 1 and 2 workers, and the job machinery's overhead.

An LLM suite (the GEMMs of Llama-2 7B/13B/70B, Llama-3-8B, Mistral-7B and Qwen-7B layers - QKV,
O, gate+up, down, LM head - at 23 token counts from 1 to 8192, fp16 and bf16, B transposed as
nn.Linear stores it, on Ascend910B2 and 910B4) is tuned three ways in one run, each on a fresh
SQLite database so that no shape is served from the cache:

1. ``loop``: :func:`tiler.tune.tune` on every shape in a loop in this process (the floor: what
   the tuning costs without any job machinery);
2. ``1 worker``: one job of every shape, one ``tiler worker --once`` process;
3. ``2 workers``: the same with two worker processes.

Shapes per minute are counted over the job's own span (first claim to last result, from the
database), so process start-up is not in them; it is printed separately. The overhead per shape
is (1-worker span - loop time) / shapes: claiming, the lease, the cache lookup and store, the
single-flight claim, the progress counters and the event log.

Usage::

    uv run python -m benchmarks.jobs_throughput --shapes 1000 --budget 0
    uv run python -m benchmarks.jobs_throughput --shapes 60          # a few minutes on 2 cores
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# (name, hidden, intermediate, kv width, vocab)
MODELS = [
    ("llama2-7b", 4096, 11008, 4096, 32000),
    ("llama2-13b", 5120, 13824, 5120, 32000),
    ("llama2-70b", 8192, 28672, 1024, 32000),
    ("qwen-7b", 4096, 11008, 4096, 151936),
    ("llama3-8b", 4096, 14336, 1024, 128256),
    ("mistral-7b", 4096, 14336, 1024, 32000),
]
TOKENS = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048,
          3072, 4096, 6144, 8192]  # fmt: skip
DTYPES = ["fp16", "bf16"]
SOCS = ["Ascend910B2", "Ascend910B4"]


def llm_suite(count: int, seed: int = 0) -> list[dict[str, Any]]:
    """``count`` distinct problems of the suite, in a fixed shuffled order."""
    shapes: list[dict[str, Any]] = []
    seen: set[tuple[Any, ...]] = set()
    suite = itertools.product(SOCS, MODELS, TOKENS, DTYPES)
    for soc, (_name, hidden, ffn, kv, vocab), m, dtype in suite:
        layers = [
            (hidden + 2 * kv, hidden),  # QKV
            (hidden, hidden),  # O
            (2 * ffn, hidden),  # gate + up
            (hidden, ffn),  # down
            (vocab, hidden),  # LM head
        ]
        for n, k in layers:
            key = (soc, m, n, k, dtype)
            if key not in seen:
                seen.add(key)
                # nn.Linear keeps its weight as [out, in]: B is transposed.
                shapes.append({"soc": soc, "m": m, "n": n, "k": k, "dtype": dtype, "trans_b": True})
    random.Random(seed).shuffle(shapes)
    if count > len(shapes):
        msg = f"the suite has {len(shapes)} distinct shapes; asked for {count}"
        raise SystemExit(msg)
    return shapes[:count]


def _requests(shapes: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    from simcore.tiling.problem import Problem

    return [
        {"problem": Problem.model_validate(s).model_dump(mode="json"), "budget": budget}
        for s in shapes
    ]


def run_loop(shapes: list[dict[str, Any]], budget: int) -> dict[str, float]:
    """Wall and CPU seconds to tune every shape with tiler.tune.tune in a loop (no database)."""
    from tiler.tune import parse_tune_request, tune

    start, cpu = time.perf_counter(), time.process_time()
    for request in _requests(shapes, budget):
        tune(parse_tune_request(request))
    return {"span_s": time.perf_counter() - start, "cpu_s": time.process_time() - cpu}


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run_workers(url: str, workers: int) -> float:
    """Runs ``workers`` ``tiler worker --once`` processes to the end; returns the wall time."""
    env = {**os.environ, "TILER_DATABASE_URL": url, "OMP_NUM_THREADS": "1"}
    start = time.perf_counter()
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "app.cli", "worker", "--once", "--poll-s", "0.05"],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(workers)
    ]
    for proc in procs:
        proc.wait()
    return time.perf_counter() - start


def _span_s(job: Any) -> float:
    assert job is not None and job.status == "succeeded", job
    assert job.started_at is not None and job.finished_at is not None
    return float((job.finished_at - job.started_at) / dt.timedelta(seconds=1))


def run_job(shapes: list[dict[str, Any]], budget: int, workers: int) -> dict[str, float]:
    """Runs one job of ``shapes`` with ``workers`` worker processes on a fresh SQLite file.

    Then the same shapes again as a second job, now all in the cache: its span is the job
    machinery alone (claim, lease, cache lookup, result, progress, events).
    """
    from app.db import migrate
    from app.db.engine import Database
    from app.jobs import store
    from app.jobs.service import JobService, prepare_job
    from app.schemas import JobBody
    from app.settings import Settings

    with tempfile.TemporaryDirectory(prefix="jobs-bench-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'tiler.db'}"
        migrate.upgrade(url)
        settings = Settings(database_url=url, job_max_problems=len(shapes))
        db = Database.from_url(url)
        try:
            t0 = time.perf_counter()
            body = JobBody.model_validate(
                {"problems": [r["problem"] for r in _requests(shapes, budget)], "budget": budget}
            )
            prepared = prepare_job(body, settings)
            service = JobService(db, settings)
            job, _ = service.submit(prepared, None)
            submit_s = time.perf_counter() - t0
            cpu0 = _children_cpu_s()
            wall_s = _run_workers(url, workers)
            # Every worker's CPU time, start-up included (imports: about 2 s per process).
            cpu_s = _children_cpu_s() - cpu0
            span_s = _span_s(store.find_job(db, job.id))
            again, _ = service.submit(prepared, None)
            _run_workers(url, 1)
            cached_span_s = _span_s(store.find_job(db, again.id))
        finally:
            db.dispose()
    return {
        "submit_s": submit_s,
        "wall_s": wall_s,
        "span_s": span_s,
        "cpu_s": cpu_s,
        "cached_span_s": cached_span_s,
    }


def main() -> None:
    """Runs the three measurements and prints a table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", type=int, default=1000, help="shapes in the suite")
    parser.add_argument("--budget", type=int, default=0, help="Optuna trials per shape")
    args = parser.parse_args()
    shapes = llm_suite(args.shapes)
    print(f"LLM suite: {len(shapes)} shapes, budget {args.budget}, {os.cpu_count()} CPUs")

    loop = run_loop(shapes, args.budget)
    one = run_job(shapes, args.budget, 1)
    two = run_job(shapes, args.budget, 2)

    n = len(shapes)
    print()
    print("| run | seconds | shapes/min | CPU s per shape | note |")
    print("| --- | --- | --- | --- | --- |")
    print(
        f"| loop over tiler.tune.tune | {loop['span_s']:.1f} | {n / loop['span_s'] * 60:.0f} | "
        f"{loop['cpu_s'] / n:.3f} | in-process |"
    )
    for label, r in (("1 worker", one), ("2 workers", two)):
        print(
            f"| {label} | {r['span_s']:.1f} | {n / r['span_s'] * 60:.0f} | {r['cpu_s'] / n:.3f} "
            f"| wall {r['wall_s']:.1f} s with process start; submit {r['submit_s']:.2f} s |"
        )
    per_shape_ms = loop["span_s"] / n * 1e3
    overhead_ms = (one["span_s"] - loop["span_s"]) / n * 1e3
    machinery_ms = min(one["cached_span_s"], two["cached_span_s"]) / n * 1e3
    print()
    print(f"scaling 2 workers / 1 worker: {one['span_s'] / two['span_s']:.2f}x")
    print(
        f"job machinery overhead: {overhead_ms:.1f} ms per shape of wall time, 1 worker against "
        f"the loop ({overhead_ms / per_shape_ms * 100:.1f} % of the {per_shape_ms:.0f} ms a "
        "shape takes in the loop)"
    )
    print(
        f"job machinery alone (a second job of the same shapes, all cached, 1 worker): "
        f"{machinery_ms:.1f} ms per shape"
    )
    load = os.getloadavg()
    print(f"load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
