"""Lower bounds of the estimated time of every point of a group (core split x base block).

The estimator (:func:`simcore.estimate.estimator.estimate_arrays`) prices a tiling as

    cycles = min(max(makespan, resource), sequential) + launch

where ``resource`` is the busiest pipe (or the HBM floor) and ``sequential`` the sum of all pipe
work (or the HBM floor); both are exact busy totals. So with lower bounds ``MK <= makespan``,
``RB <= resource`` and ``SQ <= sequential`` every point of a group costs at least
``min(max(MK, RB), SQ) + launch``, and ``min(max(MK, RB), SQ)`` is non-decreasing in each. The
bounds are minimums over the inner fields (steps, L1 depths, iterateOrder, dbL0A/B/C); each
module bounds one thing:

* :mod:`tiler.bounds.group`: the entry points, the data paths a group can reach, what no iterate
  order moves (the M and MTE1 totals of :mod:`simcore.pipeline.busy`, the typical and averaged
  step, the per-pass floors);
* :mod:`tiler.bounds.cases`: the four reuse cases per iterate order (each operand loaded once or
  per block of the other);
* :mod:`tiler.bounds.traffic`: the chip's reads, the HBM floor and the copy rate cap per case;
* :mod:`tiler.bounds.copies`: an operand's copies (MTE2, and through UB the reorder and UB->L1
  legs; column DMAs);
* :mod:`tiler.bounds.slots`: the split of L1 between A and B, one or two slots, the one-slot
  chain;
* :mod:`tiler.bounds.chains`: the compute chain per L0 class, the first block, the steps after
  the last copy, the one-L0C drains;
* :mod:`tiler.bounds.stalls`: the pass-start stalls of operands staged through UB (no FixPipe).

docs/search.md lists every bound with what it bounds and why it is valid. A bound is only useful
while it never exceeds the estimate: ``tests/tiler/test_bound.py`` checks it on random legal
tilings, ``benchmarks/bound_check.py`` on 48,000, and :func:`tiler.screen.screen` checks every
scored point against its group's bound (a violation turns pruning off and the certificate says
so).
"""

from tiler.bounds.group import (
    cube_lower_bounds,
    fixed_lower_bounds,
    fixed_then_relaxed_bounds,
    group_lower_bounds,
    pass_start_stalls_apply,
)

__all__ = [
    "cube_lower_bounds",
    "fixed_lower_bounds",
    "fixed_then_relaxed_bounds",
    "group_lower_bounds",
    "pass_start_stalls_apply",
]
