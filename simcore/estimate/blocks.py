"""The estimator's blocks of candidates, grouped by the data path their UB plan takes.

:func:`simcore.estimate.estimator.estimate_arrays` prices long inputs in blocks of a few
thousand candidates so that the intermediate arrays stay in the CPU caches. On chips with a UB
path the cost formulas differ by data path (:func:`simcore.pipeline.costs.vector_path_array`),
so a block should hold candidates of one path: this module forms such blocks.
"""

from __future__ import annotations

import numpy as np

from simcore.hardware.presets import HardwarePreset
from simcore.pipeline.costs import vector_path_array
from simcore.tiling.footprints import uses_ub_path
from simcore.tiling.problem import Problem

__all__ = ["blocks_by_data_path", "vector_paths"]


def blocks_by_data_path(
    problem: Problem, preset: HardwarePreset, f: dict[str, np.ndarray], block: int
) -> list[tuple[slice | np.ndarray, bool | None]]:
    """Blocks of ``block`` candidates: slices of the input, or its candidates by UB data path.

    A block whose candidates take both UB data paths runs the estimator's core once per path
    on a gathered part (:mod:`simcore.estimate.estimator`): twice the numpy calls and a gather
    of every field. Where the input mixes the paths, each block holds the candidates of one
    path (their indices in order, the last block of a path shorter), so all blocks but two
    take one. (A candidate's outputs depend on its own fields only.) Each block comes with its
    UB path where it is one (None on chips without a UB path).
    """
    size = f["baseM"].size
    vp = vector_paths(problem, preset, f, block)
    if vp is None or vp.all() or not vp.any():
        path = None if vp is None else bool(vp[0])
        return [(slice(i, i + block), path) for i in range(0, size, block)]
    out: list[tuple[slice | np.ndarray, bool | None]] = []
    for on in (True, False):
        idx = np.flatnonzero(vp == on)
        out.extend((idx[i : i + block], on) for i in range(0, idx.size, block))
    return out


def vector_paths(
    problem: Problem, preset: HardwarePreset, f: dict[str, np.ndarray], block: int
) -> np.ndarray | None:
    """:func:`vector_path_array` of long inputs, ``block`` candidates at a time.

    (Its ~40 integer operations on the whole input stream every temporary through memory; in
    blocks they stay in the CPU caches: about 3 % of the estimator's time on 910A and 310P3.)
    """
    if not uses_ub_path(problem, preset):
        return None
    size = f["baseM"].size
    out = np.empty(size, dtype=bool)
    for i in range(0, size, block):
        part = vector_path_array(problem, {name: a[i : i + block] for name, a in f.items()}, preset)
        assert part is not None
        out[i : i + block] = part
    return out
