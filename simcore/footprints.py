"""Buffer footprints a tiling implies, and completing a partial JSON tiling.

The derived struct fields follow the struct's own definitions (seed 002 table 1 and table 2;
ascend-notes.md §1.8 for how CANN fills them):

* ``shareL1Size`` = depthA1 x baseM x baseK x sizeof(A) + depthB1 x baseN x baseK x sizeof(B),
  plus baseN x sizeof(bias) when the bias is staged in L1 for a BiasTable (910B, 310B).
* ``shareL0CSize`` = baseM x baseN x sizeof(accumulator).
* ``transLength`` = max(A1Length, B1Length, C1Length, BiasLength): the UB scratch each operand
  needs on chips that convert formats through UB (910A, 310P, 310B); 0 elsewhere.
* ``shareUbSize``: UB the Matmul keeps for itself on those chips (C staging); 0 elsewhere.
"""

from __future__ import annotations

from typing import Any

from simcore.dtypes import ACCUMULATOR_BYTES, nbytes
from simcore.hardware import HardwarePreset
from simcore.problem import Format, Problem
from simcore.tiling import TCubeTiling, build_tiling, parse_tiling_fields


def a_l1_bytes(problem: Problem, t: TCubeTiling) -> int:
    """Bytes of L1 the A buffers take: depthA1 blocks of baseM x baseK."""
    return t.depthA1 * nbytes(problem.dtype, t.baseM * t.baseK)


def b_l1_bytes(problem: Problem, t: TCubeTiling) -> int:
    """Bytes of L1 the B buffers take: depthB1 blocks of baseN x baseK."""
    return t.depthB1 * nbytes(problem.dtype, t.baseN * t.baseK)


def bias_l1_bytes(problem: Problem, t: TCubeTiling, preset: HardwarePreset) -> int:
    """Bytes of L1 the bias block takes on chips with a BiasTable (staged L1 -> BT), else 0."""
    if not problem.bias or preset.bt_bytes == 0:
        return 0
    return nbytes(problem.bias_type, t.baseN)


def share_l1_size(problem: Problem, t: TCubeTiling, preset: HardwarePreset) -> int:
    """The struct's shareL1Size: every L1 buffer the Matmul holds."""
    return a_l1_bytes(problem, t) + b_l1_bytes(problem, t) + bias_l1_bytes(problem, t, preset)


def share_l0c_size(t: TCubeTiling) -> int:
    """The struct's shareL0CSize: one baseM x baseN accumulator block."""
    return t.baseM * t.baseN * ACCUMULATOR_BYTES


def uses_ub_path(problem: Problem, preset: HardwarePreset) -> bool:
    """True when the Matmul stages data through UB (no on-the-fly ND->NZ or no FixPipe)."""
    nd_input = problem.format_a is Format.ND or problem.format_b is Format.ND
    return (nd_input and not preset.nd2nz_on_the_fly) or not preset.has_fixpipe


def trans_length(problem: Problem, t: TCubeTiling, preset: HardwarePreset) -> int:
    """The struct's transLength: the largest UB scratch one operand needs (0 without a UB path)."""
    if not uses_ub_path(problem, preset):
        return 0
    a1 = nbytes(problem.dtype, t.baseM * t.baseK) if problem.format_a is Format.ND else 0
    b1 = nbytes(problem.dtype, t.baseN * t.baseK) if problem.format_b is Format.ND else 0
    c1 = 0 if preset.has_fixpipe else nbytes(problem.c_dtype, t.baseM * t.baseN)
    bias = nbytes(problem.bias_type, t.baseN) if problem.bias else 0
    return max(a1, b1, c1, bias)


def share_ub_size(problem: Problem, t: TCubeTiling, preset: HardwarePreset) -> int:
    """The struct's shareUbSize: UB the Matmul reserves (C staging on chips without FixPipe)."""
    if preset.has_fixpipe:
        return 0
    return nbytes(problem.c_dtype, t.baseM * t.baseN)


def complete_tiling(data: Any, problem: Problem, preset: HardwarePreset) -> TCubeTiling:
    """Validates a JSON tiling and fills every field it leaves out.

    Shape fields come from the problem, the rest take the documented defaults of
    :class:`~simcore.tiling.TCubeTiling`, and the derived sizes are computed.

    Raises:
        InputError: Unknown key, non-integer or out-of-int32 value, or a required field missing.
    """
    fields = parse_tiling_fields(data)
    defaults = {
        "M": problem.m,
        "N": problem.n,
        "Ka": problem.k,
        "Kb": problem.k,
        "singleCoreK": problem.k,
        "isBias": int(problem.bias),
    }
    merged = {**defaults, **fields}
    partial = build_tiling(merged)
    derived = {
        "shareL1Size": share_l1_size(problem, partial, preset),
        "shareL0CSize": share_l0c_size(partial),
        "transLength": trans_length(problem, partial, preset),
        "shareUbSize": share_ub_size(problem, partial, preset),
    }
    for key, value in derived.items():
        merged.setdefault(key, value)
    return build_tiling(merged)
