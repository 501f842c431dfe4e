"""Simulations of the measured kernels, computed once per test run instead of once per process.

The calibration tests simulate the nine 8192^3 kernels of the profiler files; case 0 (64 x 64 x
64 blocks) alone takes half a minute. ``functools.cache`` kept one copy per process, so with
``pytest -n 2`` both xdist workers computed every kernel. Here the first process to need a
kernel simulates it under an exclusive lock and stores it in a directory of this test run;
the other process waits for the lock and reads the stored result.

What keeps a stored result from ever answering the wrong question:

* The directory belongs to one pytest run (``tmp_path_factory``'s base directory, shared by
  the run's xdist workers, fresh each run): a result never outlives the code that computed it,
  so an edit to the model between two runs is always simulated anew.
* The file's name is a digest of MODEL_VERSION and the full problem, tiling and preset; the
  file also holds those inputs, and a result is used only when they are equal to the asked ones.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import pickle
from collections.abc import Iterator
from pathlib import Path

from simcore.hardware.presets import HardwarePreset
from simcore.pipeline.simulator import SimResult, simulate
from simcore.tiling.problem import Problem
from simcore.tiling.tcube import TCubeTiling
from simcore.version import MODEL_VERSION

_Inputs = tuple[str, Problem, TCubeTiling, HardwarePreset]


@contextlib.contextmanager
def _exclusive(path: Path) -> Iterator[None]:
    """Holds an exclusive ``flock`` on ``path`` (released when the process dies, too)."""
    with path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


class SharedSimulations:
    """``simulate`` with its results shared through ``directory`` between processes.

    Args:
        directory: Where results are stored; the same for every process of one test run and
            for no other run.
    """

    def __init__(self, directory: Path) -> None:
        self._dir = directory
        self._dir.mkdir(parents=True, exist_ok=True)
        self._memory: dict[str, SimResult] = {}

    def simulate(self, problem: Problem, tiling: TCubeTiling, preset: HardwarePreset) -> SimResult:
        """The result of :func:`simulate` for these inputs: computed here or by another process
        of the run, never one of other inputs or another model version."""
        inputs: _Inputs = (MODEL_VERSION, problem, tiling, preset)
        key = hashlib.sha256(
            "\n".join(
                [MODEL_VERSION, *(m.model_dump_json() for m in (problem, tiling, preset))]
            ).encode()
        ).hexdigest()
        if key in self._memory:
            return self._memory[key]
        path = self._dir / f"{key}.pickle"
        with _exclusive(self._dir / f"{key}.lock"):
            result = self._load(path, inputs)
            if result is None:
                result = simulate(problem, tiling, preset)
                part = path.with_suffix(f".{os.getpid()}.part")
                part.write_bytes(pickle.dumps((inputs, result), pickle.HIGHEST_PROTOCOL))
                part.replace(path)  # whole or absent, even if this process is killed
        self._memory[key] = result
        return result

    @staticmethod
    def _load(path: Path, inputs: _Inputs) -> SimResult | None:
        if not path.exists():
            return None
        stored_inputs, result = pickle.loads(path.read_bytes())  # written by this run only
        if stored_inputs != inputs or not isinstance(result, SimResult):
            return None
        return result
