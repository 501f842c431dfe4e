"""Baselines every tune answer is compared with.

* ``seed002``: the recommended tiling of seed 002 ("性能调优推荐取值"): base block (128, 256, 64),
  dbL0A = dbL0B = 2, depth = 2 x step, K made fully resident in L1 first, cores split to cover
  M x N. Adapted so it stays legal for every shape (each step is a documented rule, not a search):

  - cores: the (row blocks, column blocks) pair with at most the chip's cores whose largest core
    block (16-aligned) has the smallest area, ties to the more square block;
  - base block: each of 128 / 256 / 64 clipped to the core block (16-aligned) and to K (C0
    aligned), then halved (baseN first, then baseK, then baseM) until L0A, L0B (double
    buffered), L0C (single buffered) and the BiasTable hold it;
  - L1: stepM = stepN = 1, stepKa = stepKb = every K step if both K panels fit double buffered,
    else the largest balanced K step that does, else single buffered (depth = step);
  - iterateOrder 0, dbL0C 1 (the struct's defaults).
* ``cann950`` (arch 3510 only): what CANN's own tiling picks on Ascend 950 (ascend950.md "What
  CANN's own tiling does on 950"): base 256 x 256 x (128 bytes of K), no L0C double buffer; the
  cores split over M x N as all of them with the most compute per loaded byte (the idea of CANN's
  SPLIT_MN, ascend-notes.md §1.4, in a simple form of ours; ``seed002``'s split where no such
  split keeps every core busy); the L1 steps as ``seed002``. For 8192^3 fp16 on 32 cores this is
  singleCoreM 2048 x singleCoreN 1024, depthA1 = depthB1 = 8, stepKa = stepKb = 4: the measured
  best kernel of measured_msprof_950pr_8192.csv.
* ``user``: the caller's tiling (for example what CANN gave them), completed with the struct's
  defaults and validated; an illegal one is reported with its violations, never tuned against.
"""

from __future__ import annotations

from typing import Any

from simcore.hardware.dtypes import ACCUMULATOR_BYTES, FRACTAL_ROWS, bits, c0_elements, l1_bytes
from simcore.hardware.presets import HardwarePreset
from simcore.pipeline.costs import align_up, ceil_div
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.legality import check_tiling
from simcore.tiling.problem import Problem
from simcore.tiling.tcube import TCubeTiling

#: Seed 002's recommended base block.
RECOMMENDED_BASE: tuple[int, int, int] = (128, 256, 64)
#: CANN's base block on arch 3510: 256 x 256, and baseK of 128 bytes' worth of elements.
CANN_950_BASE_MN: tuple[int, int] = (256, 256)
CANN_950_BASE_K_BYTES = 128


def _core_split(problem: Problem, preset: HardwarePreset) -> tuple[int, int, int]:
    """(singleCoreM, singleCoreN, usedCoreNum): the most even cover of M x N by the cores."""
    best: tuple[int, int, int, int] | None = None
    cores = preset.cube_core_count
    for mc in range(1, cores + 1):
        nc = cores // mc
        sm = int(align_up(ceil_div(problem.m, mc), FRACTAL_ROWS))
        sn = int(align_up(ceil_div(problem.n, nc), FRACTAL_ROWS))
        sm = min(sm, int(align_up(problem.m, FRACTAL_ROWS)))
        sn = min(sn, int(align_up(problem.n, FRACTAL_ROWS)))
        key = (sm * sn, abs(sm - sn), sm, sn)
        if best is None or key < best:
            best = key
    assert best is not None
    sm, sn = best[2], best[3]
    return sm, sn, ceil_div(problem.m, sm) * ceil_div(problem.n, sn)


def _mn_split(problem: Problem, preset: HardwarePreset) -> tuple[int, int, int] | None:
    """(singleCoreM, singleCoreN, usedCoreNum) on every core, the most compute per byte loaded.

    Every factor pair mDim x nDim of the core count whose blocks leave no core idle; each core
    computes sm x sn x K and loads (sm + sn) x K, so the pair with the largest sm x sn / (sm + sn)
    wins (the first, fewer M blocks, on a tie). None when no pair keeps every core busy (small
    shapes). The idea of the split ascend-notes.md §1.4 gives for CANN on 910B and 950
    (SPLIT_MN: all cores, factor pairs, computation over traffic), in our own simple form.
    """
    cores = preset.cube_core_count
    best: tuple[float, int, int] | None = None
    for md in range(1, cores + 1):
        if cores % md:
            continue
        nd = cores // md
        sm = int(align_up(ceil_div(problem.m, md), FRACTAL_ROWS))
        sn = int(align_up(ceil_div(problem.n, nd), FRACTAL_ROWS))
        if ceil_div(problem.m, sm) * ceil_div(problem.n, sn) != cores:
            continue
        intensity = sm * sn / (sm + sn)
        if best is None or intensity > best[0] * (1 + 1e-9):
            best = (intensity, sm, sn)
    if best is None:
        return None
    return best[1], best[2], cores


def recommended_fields(
    problem: Problem,
    preset: HardwarePreset,
    base: tuple[int, int, int] = RECOMMENDED_BASE,
    split: tuple[int, int, int] | None = None,
) -> dict[str, int]:
    """The seed-002 recommended tiling of ``problem`` on ``preset`` (searched fields only).

    Args:
        problem: The Matmul.
        preset: The chip.
        base: The base block to start from (seed 002's by default), clipped and halved as the
            module docstring says.
        split: (singleCoreM, singleCoreN, usedCoreNum); None for the module docstring's split.
    """
    in_bits = bits(problem.dtype)
    c0 = c0_elements(problem.dtype)
    sm, sn, used = split or _core_split(problem, preset)
    bm = min(base[0], int(align_up(sm, FRACTAL_ROWS)))
    bn = min(base[1], int(align_up(sn, FRACTAL_ROWS)))
    bk = min(int(align_up(base[2], c0)), int(align_up(problem.k, c0)))
    bias_bytes = bits(problem.bias_type) // 8 if problem.bias else 0
    has_bt = problem.bias and preset.bt_bytes > 0

    def fits(bm: int, bn: int, bk: int) -> bool:
        ok = bm * bk * in_bits // 8 * 2 <= preset.l0a_bytes
        ok &= bn * bk * in_bits // 8 * 2 <= preset.l0b_bytes
        ok &= bm * bn * ACCUMULATOR_BYTES <= preset.l0c_bytes
        if has_bt:
            ok &= bn * bias_bytes <= preset.bt_bytes
        return ok

    while not fits(bm, bn, bk):
        if bn > FRACTAL_ROWS and (bn >= bm or bk <= c0):
            bn = int(align_up(bn // 2, FRACTAL_ROWS))
        elif bk > c0:
            bk = int(align_up(bk // 2, c0))
        elif bm > FRACTAL_ROWS:
            bm = int(align_up(bm // 2, FRACTAL_ROWS))
        else:
            break
    k_iter = ceil_div(problem.k, bk)
    a_blk = l1_bytes(problem.dtype, bm * bk)
    b_blk = l1_bytes(problem.dtype, bn * bk)
    room = preset.l1_bytes - (bn * bias_bytes if has_bt else 0)
    db = 2 if 2 * (a_blk + b_blk) <= room else 1
    step_k = max(min(k_iter, room // (db * (a_blk + b_blk))), 1)
    step_k = ceil_div(k_iter, ceil_div(k_iter, step_k))
    return {
        "usedCoreNum": used,
        "singleCoreM": sm,
        "singleCoreN": sn,
        "baseM": bm,
        "baseN": bn,
        "baseK": bk,
        "depthA1": step_k * db,
        "depthB1": step_k * db,
        "stepM": 1,
        "stepN": 1,
        "stepKa": step_k,
        "stepKb": step_k,
        "iterateOrder": 0,
        "dbL0A": 2,
        "dbL0B": 2,
        "dbL0C": 1,
    }


def cann950_fields(problem: Problem, preset: HardwarePreset) -> dict[str, int]:
    """CANN's pick on Ascend 950: base 256 x 256 x (128 bytes of K), one L0C buffer."""
    base_k = CANN_950_BASE_K_BYTES * 8 // bits(problem.dtype)
    split = _mn_split(problem, preset)
    return recommended_fields(problem, preset, (*CANN_950_BASE_MN, base_k), split)


def recommended_tiling(problem: Problem, preset: HardwarePreset) -> TCubeTiling:
    """The seed-002 recommended tiling, complete (every struct field)."""
    return complete_tiling(recommended_fields(problem, preset), problem, preset)


def user_tiling(
    data: dict[str, Any], problem: Problem, preset: HardwarePreset
) -> tuple[TCubeTiling, dict[str, Any]]:
    """Completes and validates the caller's baseline.

    Returns:
        The complete tiling and its legality report (``valid``, ``violations``, ``warnings``).

    Raises:
        InputError: A key is not a struct field, a value is not an int32, or a required field
            is missing (the field is named ``baseline.<name>``).
    """
    from simcore.errors import InputError

    try:
        tiling = complete_tiling(data, problem, preset)
    except InputError as exc:
        field = exc.field.replace("tiling", "baseline", 1)
        raise InputError(field, exc.rule, exc.message.replace("tiling", "baseline", 1),
                         exc.value, exc.limit) from exc  # fmt: skip
    return tiling, check_tiling(problem, tiling, preset).to_dict()
