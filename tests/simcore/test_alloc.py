"""The allocator tuning that keeps the estimator's block temporaries mapped between blocks."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from simcore import alloc, estimator

_GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"
_REPO = Path(__file__).resolve().parents[2]

# Scores one block of random 910B2 tilings, then three more, and prints the minor page faults
# of those three (the steady state a search runs in).
_FAULTS = """
import resource
import numpy as np
from simcore.estimator import ESTIMATOR_FIELDS, _BLOCK, estimate_arrays
from simcore.hardware import load_preset
from simcore.problem import Problem
from simcore.random_tilings import random_tiling
preset = load_preset("Ascend910B2")
problem = Problem(m=4096, n=4096, k=4096)
rng = np.random.default_rng(0)
pool = [random_tiling(problem, preset, rng) for _ in range(200)]
idx = rng.integers(0, len(pool), _BLOCK)
fields = {f: np.array([getattr(t, f) for t in pool])[idx] for f in ESTIMATOR_FIELDS}
estimate_arrays(problem, preset, fields)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(3):
    estimate_arrays(problem, preset, fields)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _steady_faults(tuning: str) -> int:
    env = {**os.environ, alloc.OPT_OUT_ENV: tuning, "PYTHONPATH": str(_REPO)}
    out = subprocess.run(
        [sys.executable, "-c", _FAULTS], env=env, capture_output=True, text=True, check=True
    )
    return int(out.stdout.strip())


@pytest.mark.skipif(not _GLIBC, reason="mallopt thresholds are glibc's (Linux)")
def test_glibc_takes_both_thresholds() -> None:
    assert alloc.tune_allocator()
    assert estimator.ALLOCATOR_TUNED


def test_opt_out_leaves_the_allocator_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(alloc.OPT_OUT_ENV, "0")
    assert not alloc.tune_allocator()


@pytest.mark.skipif(not _GLIBC, reason="mallopt thresholds are glibc's (Linux)")
def test_blocks_do_not_fault_their_temporaries_in_again() -> None:
    # Three blocks of 16,384 candidates allocate ~7,800 arrays of 128 KiB: with the thresholds
    # fixed they reuse the heap; with glibc's adaptive ones the heap top is trimmed and every
    # block faults tens of thousands of pages in again (measured 32,188 against 1).
    tuned = _steady_faults("1")
    untuned = _steady_faults("0")
    assert tuned < 500
    assert untuned > 20 * max(tuned, 100)
