"""The C allocator's settings for the estimator's short-lived arrays.

The estimator scores candidates in blocks of 16,384 (:mod:`simcore.estimate.estimator`): each block
allocates and frees ~2,600 float64 arrays of 128 KiB, a few hundred of them alive at once.
128 KiB is glibc's default mmap threshold, and glibc adapts its thresholds to what was freed last:
with only such arrays in play the heap top is given back to the kernel (trimmed) over and over,
and each block touches its pages again, one page fault per 4 KiB. On the 2-core benchmark VM
(2026-11-21) that doubled the time of a block in a process that had not allocated anything larger
before (36 ms against 15 ms of CPU for one 910B2 block; 23,000 minor faults against none for
the same allocation pattern), and took a third off the wall-clock throughput of
``benchmarks/model_speed.py`` (0.54-0.62 against 0.87 M candidates/s).

:func:`tune_allocator` fixes both thresholds once per process: arrays up to 32 MiB (glibc's
largest allowed mmap threshold on 64-bit) come from the heap, and up to 64 MiB of free heap
top stays with the process. A process that runs the estimator keeps at most that much more
memory mapped. Importing the estimator changes nothing: the entry points that run it at length
call :func:`tune_allocator` once (the ``tiler`` command, the search-pool and job-worker
processes, the benchmarks). ``SIMCORE_MALLOC_TUNING=0`` in the environment leaves the allocator
alone (for a host process whose own allocator settings must not change). Elsewhere than glibc on
Linux it does nothing.
"""

from __future__ import annotations

import ctypes
import os
import sys

#: mallopt parameters (glibc's malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

#: Arrays below this come from the heap (glibc rejects more than 32 MiB on 64-bit).
MMAP_THRESHOLD_BYTES = 32 * 1024 * 1024
#: Free memory at the heap top that is kept rather than given back to the kernel.
TRIM_THRESHOLD_BYTES = 64 * 1024 * 1024
#: Environment variable that turns the tuning off when set to ``0``.
OPT_OUT_ENV = "SIMCORE_MALLOC_TUNING"


def tune_allocator() -> bool:
    """Fixes glibc's mmap and trim thresholds for the estimator's block temporaries.

    Returns:
        True when both settings were applied; False when turned off by ``SIMCORE_MALLOC_TUNING=0``,
        off Linux, or when the C library has no ``mallopt`` or refuses a value.
    """
    if os.environ.get(OPT_OUT_ENV, "1").strip() == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library the interpreter runs on
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    # mallopt returns 1 on success, 0 when it rejects the value (musl: always 0).
    mmap_ok: bool = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) == 1
    trim_ok: bool = mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES) == 1
    return mmap_ok and trim_ok
