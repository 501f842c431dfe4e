"""Random legal tilings of a problem, for property tests and model-agreement benchmarks.

Draws every searchable field so that the capacity and alignment rules of seed 002 hold by
construction (L0A/L0B/L0C with their double-buffer factors, L1 with depthA1/depthB1, BiasTable,
16-alignment of baseM/baseN, C0-alignment of baseK, cores covering M x N). Draws that still break
a rule (rare corner cases) are redrawn.
"""

from __future__ import annotations

import numpy as np

from simcore.hardware.dtypes import (
    ACCUMULATOR_BYTES,
    bits,
    c0_elements,
    l1_bytes,
    mx_operand_align_bytes,
)
from simcore.hardware.presets import HardwarePreset
from simcore.pipeline.costs import align_up, ceil_div
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import Format, Problem, Template
from simcore.tiling.tcube import TCubeTiling


def _pick(rng: np.random.Generator, hi: int, unit: int) -> int:
    """A random multiple of ``unit`` in [unit, hi] (hi >= unit)."""
    return int(rng.integers(1, hi // unit + 1)) * unit


def random_tiling(
    problem: Problem, preset: HardwarePreset, rng: np.random.Generator, max_tries: int = 200
) -> TCubeTiling:
    """Draws one random legal tiling of ``problem`` on ``preset``.

    Raises:
        RuntimeError: No legal tiling was drawn in ``max_tries`` attempts.
    """
    in_bytes = bits(problem.dtype) / 8.0
    c0 = c0_elements(problem.dtype)
    k_unit = max(16, c0)
    # NZ inputs need 16-row single-core blocks (seed 002 table 1).
    m_align = 16 if problem.format_a is Format.NZ else 1
    n_align = 16 if problem.format_b is Format.NZ else 1
    for _ in range(max_tries):
        db_a, db_b, db_c = (int(rng.integers(1, 3)) for _ in range(3))
        k_cap = min(align_up(problem.k, k_unit), 1024)
        base_k = _pick(rng, max(k_cap, k_unit), k_unit)
        max_m = int(preset.l0a_bytes // (base_k * in_bytes * db_a)) // 16 * 16
        max_n = int(preset.l0b_bytes // (base_k * in_bytes * db_b)) // 16 * 16
        if problem.bias and preset.bt_bytes:
            max_n = min(max_n, preset.bt_bytes // (bits(problem.bias_type) // 8) // 16 * 16)
        max_m = min(max_m, align_up(problem.m, 16), 1024)
        max_n = min(max_n, align_up(problem.n, 16), 1024)
        if max_m < 16 or max_n < 16:
            continue
        base_m = _pick(rng, max_m, 16)
        n_l0c = preset.l0c_bytes // (base_m * ACCUMULATOR_BYTES * db_c) // 16 * 16
        if n_l0c < 16:
            continue
        base_n = _pick(rng, min(max_n, n_l0c), 16)
        cores = preset.cube_core_count
        m_cores = int(rng.integers(1, min(cores, ceil_div(problem.m, 16)) + 1))
        single_m = align_up(ceil_div(problem.m, m_cores), m_align)
        m_cores = ceil_div(problem.m, single_m)
        n_max = max(1, min(cores // m_cores, ceil_div(problem.n, 16)))
        n_cores = int(rng.integers(1, n_max + 1))
        single_n = align_up(ceil_div(problem.n, n_cores), n_align)
        n_cores = ceil_div(problem.n, single_n)
        k_steps = ceil_div(problem.k, base_k)
        step_ka = int(rng.integers(1, k_steps + 1))
        step_kb = int(rng.integers(1, k_steps + 1))
        if problem.template is Template.MDL:
            ka_iter = ceil_div(k_steps, step_ka)
            kb_iter = ceil_div(k_steps, step_kb)
            if ka_iter % kb_iter and kb_iter % ka_iter:
                step_kb = step_ka
        full_a = step_ka >= k_steps
        full_b = step_kb >= k_steps
        m_blocks = ceil_div(single_m, base_m)
        n_blocks = ceil_div(single_n, base_n)
        step_m = int(rng.integers(1, m_blocks + 1)) if rng.random() < 0.3 else 1
        step_n = int(rng.integers(1, n_blocks + 1)) if rng.random() < 0.3 else 1
        if problem.template is Template.MDL:
            step_m = step_m if full_a else 1
            step_n = step_n if full_b else 1
        db1_a, db1_b = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        depth_a = step_m * step_ka * db1_a
        depth_b = step_n * step_kb * db1_b
        l1 = depth_a * l1_bytes(problem.dtype, base_m * base_k) + depth_b * l1_bytes(
            problem.dtype, base_n * base_k
        )
        if problem.bias and preset.bt_bytes:
            l1 += base_n * bits(problem.bias_type) / 8
        if l1 > preset.l1_bytes:
            continue
        align = mx_operand_align_bytes(problem.dtype)
        if align and (base_m * base_k * in_bytes % align or base_n * base_k * in_bytes % align):
            continue  # MX_OPERAND_ALIGN: MmadMx operands are 512 B (fp4) / 1024 B (fp8) units
        spec = {
            "usedCoreNum": m_cores * n_cores,
            "singleCoreM": single_m,
            "singleCoreN": single_n,
            "baseM": base_m,
            "baseN": base_n,
            "baseK": base_k,
            "depthA1": depth_a,
            "depthB1": depth_b,
            "stepM": step_m,
            "stepN": step_n,
            "stepKa": step_ka,
            "stepKb": step_kb,
            "iterateOrder": int(rng.integers(0, 2)),
            "dbL0A": db_a,
            "dbL0B": db_b,
            "dbL0C": db_c,
        }
        return complete_tiling(spec, problem, preset)
    raise RuntimeError(f"no legal tiling drawn for {problem.canonical()} in {max_tries} tries")
