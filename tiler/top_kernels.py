"""The best kernels a screening has scored: the k best distinct ones, in the answer's order.

Equal estimates are common (a resource floor hides the pipeline), so the order among them, and
which copies of one kernel count once, is a rule of its own: :class:`TopKernels`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from tiler.space import SEARCH_FIELDS

FloatArray = npt.NDArray[np.float64]


@dataclass
class Candidate:
    """One scored point: its searched fields and its estimated time."""

    fields: dict[str, int]
    time_us: float
    #: The estimator's pipeline path before the clip to [busiest pipe, sum of work], cycles.
    path_cycles: float = 0.0
    #: :func:`first_load_elements` of the point.
    load_elements: int = 0


def first_load_elements(pts: dict[str, Any]) -> Any:
    """Elements a core copies into L1 before its first cube instruction: one step of A and of B.

    Two points with the same estimate and pipeline path but different steps are different
    kernels (910B2 fp16 4096 x 768 x 3072, A transposed: stepKb 2 simulates 74.48 us, stepKb 5
    74.63 at the same estimate): the first load is a fill the kernel cannot overlap with work,
    and where a floor hides the path (HBM traffic) the smaller one is likelier to reach it.
    """
    a = pts["stepM"] * pts["baseM"] * pts["stepKa"]
    return (a + pts["stepN"] * pts["baseN"] * pts["stepKb"]) * pts["baseK"]


class TopKernels:
    """The k best distinct kernels seen so far, and the best two times.

    Equal estimates are common where a resource floor sets the time (HBM, a saturated pipe):
    among them the shorter pipeline path (``path_cycles`` of the estimator, the makespan the
    floor hides) ranks first, since it has slack the simulator may show; then the smaller first
    load (:func:`first_load_elements`); then the fields, so the answer does not depend on
    enumeration order.

    Points with the same estimate, path AND first load are one kernel to the estimator (an
    iterate order or an L0C buffer that changes nothing); the list keeps the first of them, so
    its k entries are k different kernels for the simulator to re-rank (on small shapes
    thousands of such copies filled a list of 64 within 0.1 % of the optimum). The pruning
    threshold is still the second best *point* (copies count): keeping one copy must not
    weaken the bound.
    """

    def __init__(self, k: int) -> None:
        self.k = max(k, 2)
        #: The two smallest times scored, copies included (the pruning threshold's source).
        self.best2: FloatArray = np.full(2, np.inf)
        self.times: FloatArray = np.zeros(0)
        self.paths: FloatArray = np.zeros(0)
        self.loads: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.fields: dict[str, npt.NDArray[np.int64]] = {
            f: np.zeros(0, dtype=np.int64) for f in SEARCH_FIELDS
        }

    def add(self, pts: dict[str, npt.NDArray[np.int64]], est: dict[str, Any]) -> FloatArray:
        """Adds scored points (``est``: the estimator's output for ``pts``); returns the times."""
        times = np.asarray(est["time_us"], dtype=np.float64)
        paths = np.asarray(est["path_cycles"], dtype=np.float64)
        loads = np.asarray(first_load_elements(pts), dtype=np.int64)
        if times.shape[0]:
            two = np.partition(times, 1)[:2] if times.shape[0] > 1 else times
            self.best2 = np.sort(np.concatenate([self.best2, two]))[:2]
        if times.shape[0] > self.k:
            kth = np.partition(times, self.k - 1)[self.k - 1]
            idx = np.flatnonzero(times <= kth)  # every tie at the k-th time takes part
            if idx.shape[0] > 4 * self.k:
                idx = idx[np.lexsort((loads[idx], paths[idx], times[idx]))[: 4 * self.k]]
        else:
            idx = np.arange(times.shape[0])
        all_t = np.concatenate([self.times, times[idx]])
        all_p = np.concatenate([self.paths, paths[idx]])
        all_l = np.concatenate([self.loads, loads[idx]])
        all_f = {f: np.concatenate([self.fields[f], pts[f][idx]]) for f in SEARCH_FIELDS}
        keys = [all_f[f] for f in reversed(SEARCH_FIELDS)] + [all_l, all_p, all_t]
        order = np.lexsort(keys)
        t_o, p_o, l_o = all_t[order], all_p[order], all_l[order]
        first = np.ones(order.shape[0], dtype=bool)
        first[1:] = (t_o[1:] != t_o[:-1]) | (p_o[1:] != p_o[:-1]) | (l_o[1:] != l_o[:-1])
        order = order[first][: self.k]
        self.times = all_t[order]
        self.paths = all_p[order]
        self.loads = all_l[order]
        self.fields = {f: all_f[f][order] for f in SEARCH_FIELDS}
        return times

    def threshold(self) -> float:
        """The time a group must beat to change the best two (inf until two are known)."""
        return float(self.best2[1])

    def candidates(self) -> list[Candidate]:
        """The kept kernels, best first, as :class:`Candidate` records."""
        return [
            Candidate(
                {f: int(self.fields[f][i]) for f in SEARCH_FIELDS},
                float(self.times[i]),
                float(self.paths[i]),
                int(self.loads[i]),
            )
            for i in range(self.times.shape[0])
        ]
