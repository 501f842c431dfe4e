"""How long a 10,000-problem job body keeps other work of the server waiting.

    uv run --frozen python -m benchmarks.job_body

The route validates a job's body on a worker thread while the event loop serves other requests.
This runs the same validation on a thread while the main thread ticks every millisecond (as an
idle event loop would), and prints the main thread's longest wait between ticks: once for
pydantic validating the whole list in one call (it keeps the GIL for the whole call) and once
for :func:`app.api.jobs.parse_job_body` (slices of 200 with the GIL let go between them). The
inline time is what the event loop itself used to spend on it.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from collections.abc import Callable

from app.api.jobs import parse_job_body
from app.schemas import JobBody

PROBLEMS = 10_000
REPEATS = 5


def longest_wait_ms(work: Callable[[], object]) -> float:
    """The main thread's longest gap between 1 ms ticks while ``work`` runs on a thread."""
    done = threading.Event()
    thread = threading.Thread(target=lambda: (work(), done.set()))
    longest = 0.0
    last = time.perf_counter()
    thread.start()
    while not done.is_set():
        time.sleep(0.001)
        now = time.perf_counter()
        longest = max(longest, now - last)
        last = now
    thread.join()
    return longest * 1000


def main() -> None:
    raw = json.dumps(
        {"problems": [{"m": 1 + i, "n": 64, "k": 64} for i in range(PROBLEMS)], "budget": 0}
    ).encode()
    start = time.perf_counter()
    JobBody.model_validate(json.loads(raw))
    inline_ms = (time.perf_counter() - start) * 1000
    whole = [
        longest_wait_ms(lambda: JobBody.model_validate(json.loads(raw))) for _ in range(REPEATS)
    ]
    sliced = [longest_wait_ms(lambda: parse_job_body(raw)) for _ in range(REPEATS)]
    print(f"{PROBLEMS:,} problems, {len(raw):,} bytes; inline validation {inline_ms:.0f} ms")
    print(f"longest wait of the main thread, median (max) of {REPEATS} runs:")
    for name, waits in (("whole list in one call", whole), ("parse_job_body", sliced)):
        print(f"  {name}, on a thread: {statistics.median(waits):.1f} ms ({max(waits):.1f})")


if __name__ == "__main__":
    main()
