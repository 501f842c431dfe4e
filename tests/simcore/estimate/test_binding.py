"""The makespan keeps the term that set it; the clip names a floor or the sequential sum."""

from __future__ import annotations

import numpy as np

from simcore.estimate.binding import (
    BINDING_NAMES,
    MECHANISMS,
    TERM,
    TERM_NAMES,
    Makespan,
    clip_binding,
)


def names(code: np.ndarray) -> list[str]:
    return [BINDING_NAMES[int(i)] for i in code]


def test_a_raise_names_the_term_only_where_it_is_longer() -> None:
    mk = Makespan(np.array([10.0, 10.0, 10.0]), "compute")
    mk.raise_all(np.array([5.0, 10.0, 12.0]), "copy")
    assert list(mk.value) == [10.0, 10.0, 12.0]
    # An equal path does not take the makespan over: the first term to reach it keeps it.
    assert names(mk.code) == ["compute", "compute", "copy"]
    mk.raise_at(np.array([0, 2]), np.array([11.0, 11.0]), "mte2_gap")
    assert list(mk.value) == [11.0, 10.0, 12.0]
    assert names(mk.code) == ["mte2_gap", "compute", "copy"]


def test_a_path_over_two_chains_names_the_longer() -> None:
    mk = Makespan(np.zeros(3), "compute")
    chain_a, chain_b = np.array([1.0, 3.0, 2.0]), np.array([2.0, 1.0, 2.0])
    mk.raise_all(
        np.maximum(chain_a, chain_b) + 1.0, ("slot_chain_b", chain_b, "slot_chain_a", chain_a)
    )
    # (A tie names the second.)
    assert names(mk.code) == ["slot_chain_b", "slot_chain_a", "slot_chain_a"]


def test_the_clip_names_a_floor_or_the_sequential_sum() -> None:
    code = np.full(3, TERM["compute"], dtype=np.int8)
    makespan = np.array([100.0, 100.0, 100.0])
    busy = [np.array([50.0, 120.0, 50.0])] + [np.zeros(3)] * 6  # MTE2 then six idle pipes
    hbm = np.array([0.0, 0.0, 130.0])
    busiest = np.maximum(busy[0], hbm)
    seq = np.array([500.0, 500.0, 110.0])
    # 0: the path binds; 1: MTE2's busy total exceeds it; 2: HBM exceeds it and the sum of
    # work (110) is below both, so the core overlaps nothing.
    peak = np.maximum(makespan, busiest)
    out = clip_binding(code, makespan, busy, hbm, busiest, seq < peak)
    assert names(out) == ["compute", "pipe:MTE2", "sequential"]
    out = clip_binding(code, makespan, busy, hbm, busiest, np.full(3, 500.0) < peak)
    assert names(out)[2] == "hbm_floor"


def test_every_binding_name_has_a_mechanism() -> None:
    assert set(MECHANISMS) == set(BINDING_NAMES)
    assert len(set(TERM_NAMES)) == len(TERM_NAMES)
