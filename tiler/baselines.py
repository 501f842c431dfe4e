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
* ``aclnn_matmul_v3`` (910B family, fp16 / bf16, ND operands without transposes or bias, more
  128 x 256 tiles than cube cores, K of at least one full K step): the kernel aclnn's MatMulV3
  runs there, a **dealt split** (:func:`matmul_v3_fields`). Its form (a tile of one base block,
  dealt to every core) is in the searched space (docs/search.md), but it is priced and listed
  only, never an answer candidate: the search must find it or better on its own.
* ``user``: the caller's tiling (for example what CANN gave them), completed with the struct's
  defaults and validated; an illegal one is reported with its violations, never tuned against.
"""

from __future__ import annotations

from typing import Any

from simcore.hardware.dtypes import (
    ACCUMULATOR_BYTES,
    FRACTAL_ROWS,
    DType,
    bits,
    c0_elements,
    l1_bytes,
)
from simcore.hardware.presets import HardwarePreset
from simcore.pipeline.costs import align_up, ceil_div
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.legality import check_tiling
from simcore.tiling.problem import Format, Problem
from simcore.tiling.tcube import TCubeTiling

#: Seed 002's recommended base block.
RECOMMENDED_BASE: tuple[int, int, int] = (128, 256, 64)
#: CANN's base block on arch 3510: 256 x 256, and baseK of 128 bytes' worth of elements.
CANN_950_BASE_MN: tuple[int, int] = (256, 256)
CANN_950_BASE_K_BYTES = 128
#: aclnn MatMulV3's base block on the 910B family (hicann/ops-nn
#: ``matmul/mat_mul_v3/op_host/op_tiling/matmul_v3_base_tiling.cpp`` ``SetBaseBlockTiling``):
#: baseM x baseN with neither operand transposed and a 128 KiB L0C ...
MATMUL_V3_BASE_MN: tuple[int, int] = (128, 256)
#: ... and baseK of 128 bytes' worth of elements (64 for fp16 / bf16).
MATMUL_V3_BASE_K_BYTES = 128
#: The chips the base block above is sourced for (the torch.mm rows of 910B2 measured with it).
MATMUL_V3_SOC_PREFIX = "Ascend910B"
#: The dtypes whose torch.mm rows run it (fp32 takes other base blocks: not probed,
#: docs/calibration.md).
MATMUL_V3_DTYPES: tuple[DType, ...] = (DType.FP16, DType.BF16)
#: ``CalL1Tiling``: each operand's depth takes half of L1 plus these bytes (reserved there for
#: rpc), in whole base blocks; the K step is half the depth (double buffered).
MATMUL_V3_L1_EXTRA_BYTES = 256


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


def matmul_v3_split(fields: dict[str, int], cores: int) -> dict[str, int]:
    """MatMulV3's core split on a tiling's base block: dealt base blocks on every core.

    hicann/ops-nn ``matmul_v3_base_tiling.cpp`` ``SetBaseBlockTiling``: base blocks on all
    cores with singleCoreM / N = the base block; ``op_kernel/mat_mul_base_block.h`` deals the
    blocks to the cores in rounds (the legality rule DEALT_SPLIT). stepM = stepN = 1,
    iterateOrder 0, L0A / L0B double buffered; the K streaming (base K, depths, K steps) and
    dbL0C are the given fields'.
    """
    return {
        **fields, "usedCoreNum": cores, "singleCoreM": fields["baseM"],
        "singleCoreN": fields["baseN"], "stepM": 1, "stepN": 1, "iterateOrder": 0,
        "dbL0A": 2, "dbL0B": 2,
    }  # fmt: skip


def matmul_v3_fields(problem: Problem, preset: HardwarePreset) -> dict[str, int] | None:
    """The dealt kernel aclnn's MatMulV3 runs for ``problem``, or None outside its sources.

    Within the scope the sources support: a 910B-family chip (128 KiB L0C), fp16 / bf16 inputs,
    A and B in ND without transposes (``SetBaseBlockTiling`` then keeps 128 x 256) and without
    bias (its L1 reserve for the BiasTable is not sized here), M and N at least one base block,
    more base blocks than cube cores (a dealt split), and K at least one full K step.

    The tiling: 128 x 256 x (128 bytes of K) base blocks as the tiles (:func:`matmul_v3_split`),
    ``CalL1Tiling``'s depths (half of L1 plus 256 bytes each, in base blocks: 16 and 8 for fp16,
    halving A's if both overflow L1) with K steps of half the depth, the larger a multiple of
    the smaller (its ``UpdateL1TilingStepK`` alignment changes nothing for a 128-byte baseK:
    the steps are powers of two), dbL0C 1. For the 910B2
    torch.mm rows this is the board's kernel (the K streaming of ``cann_default_tilings.csv``;
    the 4096 call, 437 us, is shorter than the MACs of GetTiling's heavy core, 436.9 us with no
    launch, so the board ran this kernel: scripts/probe_torch_mm.py). MatMulV3 also splits M
    and N into L2 tiles (``DoL2CacheTiling``); the tune prices the request's
    ``Problem.l2_rounds`` as given.
    """
    dtype = DType(problem.dtype)
    in_scope = (
        preset.soc.startswith(MATMUL_V3_SOC_PREFIX)
        and dtype in MATMUL_V3_DTYPES
        and problem.format_a is Format.ND
        and problem.format_b is Format.ND
        and not (problem.trans_a or problem.trans_b or problem.bias)
    )
    base_m, base_n = MATMUL_V3_BASE_MN
    if not in_scope or problem.m < base_m or problem.n < base_n:
        return None
    cores = preset.cube_core_count
    if ceil_div(problem.m, base_m) * ceil_div(problem.n, base_n) <= cores:
        return None
    elem_bytes = bits(dtype) // 8
    base_k = MATMUL_V3_BASE_K_BYTES // elem_bytes
    half_l1 = (preset.l1_bytes + MATMUL_V3_L1_EXTRA_BYTES) // 2
    depth_a = half_l1 // (base_m * base_k * elem_bytes)
    depth_b = half_l1 // (base_n * base_k * elem_bytes)
    l1_total = preset.l1_bytes + MATMUL_V3_L1_EXTRA_BYTES
    if (depth_a * base_m + depth_b * base_n) * base_k * elem_bytes > l1_total:
        depth_a //= 2  # baseM <= baseN: A's depth gives way
    step_ka, step_kb = depth_a // 2, depth_b // 2
    if min(step_ka, step_kb) < 1 or ceil_div(problem.k, base_k) < max(step_ka, step_kb):
        return None
    # The larger K step a multiple of the smaller; each depth two K steps (double buffered).
    if step_ka >= step_kb:
        step_ka = step_ka // step_kb * step_kb
    else:
        step_kb = step_kb // step_ka * step_ka
    depth_a, depth_b = 2 * step_ka, 2 * step_kb
    fields = {
        "baseM": base_m, "baseN": base_n, "baseK": base_k, "depthA1": depth_a,
        "depthB1": depth_b, "stepKa": step_ka, "stepKb": step_kb, "dbL0C": 1,
    }  # fmt: skip
    return matmul_v3_split(fields, cores)


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
