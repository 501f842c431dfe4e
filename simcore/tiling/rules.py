"""The catalogue of legality rules: every rule of seed 002 under a stable id.

:mod:`simcore.tiling.legality` evaluates them; this module only names and documents them (the
formula, the meaning, the source), for the checks and for the HTTP rule listing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Rule:
    """One legality rule: its stable id, severity, formula, meaning and source."""

    id: str
    severity: Severity
    formula: str
    description: str
    source: str

    def to_dict(self) -> dict[str, str]:
        """Returns the rule as JSON-ready values (for the docs and the HTTP rule listing)."""
        return {
            "id": self.id,
            "severity": self.severity,
            "formula": self.formula,
            "description": self.description,
            "source": self.source,
        }


_T1 = "seed 002 table 1"
_T2 = "seed 002 table 2"
_T3 = "seed 002 table 3 (MDL template only)"
_LE = "limits are '<=' although the seed writes '<': CANN fills them exactly (seeds/README.md)"

_RULE_LIST: tuple[Rule, ...] = (
    # --- the problem alone (seed 002 table 1, "大小约束" and "对齐约束") ---
    Rule(
        "ND_A_KA_RANGE",
        "error",
        "Ka <= 65535 (A in ND, not transposed)",
        "An ND A that is not transposed has rows of Ka elements, more than one GM->L1 copy "
        "handles unless the kernel is built with MatmulConfig.intrinsicsCheck (looped copies). "
        "None of the four ND range rules applies on arch 3510 (Ascend 950).",
        f"{_T1} (M, N, Ka, Kb); ascend-notes §1.9; hiascend GetNormalConfig doc (intrinsicsLimit); "
        "ascend950.md: the 65535 limits of the ND copies do not apply on 950",
    ),
    Rule(
        "ND_A_M_RANGE",
        "error",
        "M <= 65535 (A in ND, transposed)",
        "An ND A that is transposed has rows of M elements (16-bit GM->L1 stride).",
        f"{_T1} (M, N, Ka, Kb)",
    ),
    Rule(
        "ND_B_N_RANGE",
        "error",
        "N <= 65535 (B in ND, not transposed)",
        "An ND B that is not transposed has rows of N elements (16-bit GM->L1 stride). CANN's "
        "own tilings for N = 128256 break this rule; the kernel then needs intrinsicsCheck.",
        f"{_T1} (M, N, Ka, Kb), kept as the seed writes it although CANN's tiling algorithm does "
        "not enforce it: all 36 CSV rows with N = 128256 and B not transposed break it",
    ),
    Rule(
        "ND_B_KB_RANGE",
        "error",
        "Kb <= 65535 (B in ND, transposed)",
        "An ND B that is transposed has rows of Kb elements (16-bit GM->L1 stride).",
        f"{_T1} (M, N, Ka, Kb)",
    ),
    Rule(
        "NZ_A_M_ALIGN",
        "error",
        "M % 16 == 0 (A in NZ)",
        "An NZ A is stored in 16-row fractals, so M must be a whole number of them.",
        f"{_T1} (M, N, Ka, Kb)",
    ),
    Rule(
        "NZ_A_K_ALIGN",
        "error",
        "Ka % C0 == 0 (A in NZ), C0 = 32 B / sizeof(A)",
        "An NZ A is stored in fractals C0 elements wide along K.",
        f"{_T1} (M, N, Ka, Kb)",
    ),
    Rule(
        "NZ_B_K_ALIGN",
        "error",
        "Kb % C0 == 0 (B in NZ), C0 = 32 B / sizeof(B)",
        "An NZ B is stored in fractals C0 elements wide along K.",
        f"{_T1} (M, N, Ka, Kb)",
    ),
    Rule(
        "NZ_B_N_ALIGN",
        "error",
        "N % 16 == 0 (B in NZ)",
        "An NZ B is stored in 16-row fractals along N.",
        f"{_T1} (M, N, Ka, Kb)",
    ),
    # --- field sanity (seed 002 table 1 ranges) ---
    Rule(
        "FIELD_POSITIVE",
        "error",
        "field >= 1",
        "Core count, single-core shapes, base block, depths and steps are counts or sizes and "
        "must be at least 1.",
        f"{_T1} (usedCoreNum in [1, cores]; depth and step '取值大于0')",
    ),
    Rule(
        "ITERATE_ORDER_RANGE",
        "error",
        "iterateOrder in {0, 1}",
        "0 advances along M first, 1 along N first; there is no other order.",
        f"{_T1} (iterateOrder)",
    ),
    Rule(
        "DB_L0_RANGE",
        "error",
        "dbL0A, dbL0B, dbL0C in {1, 2}",
        "Double buffering of L0A, L0B and L0C is off (1) or on (2).",
        f"{_T1} (dbL0A, dbL0B, dbL0C)",
    ),
    Rule(
        "IS_BIAS_MISMATCH",
        "error",
        "isBias == problem.bias (0 or 1)",
        "isBias must say whether the problem has a bias.",
        f"{_T1} (isBias)",
    ),
    Rule(
        "SHAPE_MISMATCH",
        "error",
        "M == m, N == n, Ka == Kb == k",
        "The struct's original shape must be the problem's.",
        f"{_T1} (M, N, Ka, Kb)",
    ),
    Rule(
        "SINGLE_CORE_K",
        "error",
        "singleCoreK == Ka",
        "Multi-core Matmul never splits K, so each core's K is the whole K.",
        f"{_T1} (singleCoreK = K)",
    ),
    Rule(
        "SINGLE_CORE_M_RANGE",
        "error",
        "singleCoreM <= ceil(M / 16) * 16",
        "A core's M block cannot exceed M rounded up to whole 16-row fractals.",
        f"{_T1} writes singleCoreM <= M; CANN rounds per-core blocks up to 16-row fractals "
        "(ascend-notes §1.2 step 3) and 439 of its rows have singleCoreM > M (16 for M = 1, "
        "80 for M = 77) while none exceeds ceil(M / 16) * 16",
    ),
    Rule(
        "SINGLE_CORE_N_RANGE",
        "error",
        "singleCoreN <= ceil(N / 16) * 16",
        "A core's N block cannot exceed N rounded up to whole 16-column fractals.",
        f"{_T1} writes singleCoreN <= N; 25 CANN rows have singleCoreN > N, none above "
        "ceil(N / 16) * 16",
    ),
    # --- cores (seed 002 tables 1 and 2) ---
    Rule(
        "CORE_COUNT",
        "error",
        "usedCoreNum <= aiCoreCnt",
        "No more cores than the chip's cube cores.",
        f"{_T2} row 1",
    ),
    Rule(
        "CORE_COVERAGE",
        "error",
        "usedCoreNum >= ceil(M / singleCoreM) * ceil(N / singleCoreN) or usedCoreNum == aiCoreCnt",
        "Enough cores to cover every singleCoreM x singleCoreN block of C in one round; with "
        "more blocks than cores the blocks are dealt (DEALT_SPLIT), and a dealt split runs on "
        "every cube core (rounds while cores stay idle are refused).",
        f"{_T1} (usedCoreNum = (M / singleCoreM) * (N / singleCoreN)); the dealt form: "
        "hicann/ops-nn matmul_v3_base_tiling.cpp (usedCoreNum = min(blocks, aicNum))",
    ),
    Rule(
        "IDLE_CORES",
        "warning",
        "usedCoreNum == ceil(M / singleCoreM) * ceil(N / singleCoreN)",
        "Cores beyond the blocks of C get no work; legal, but launched for nothing.",
        f"{_T1}; a warning, not an error, because 2 of CANN's own rows do this "
        "(reference/README.md)",
    ),
    Rule(
        "DEALT_SPLIT",
        "warning",
        "ceil(M / singleCoreM) * ceil(N / singleCoreN) > usedCoreNum == aiCoreCnt",
        "More singleCoreM x singleCoreN tiles than cores: the tiles, numbered row-major over C "
        "(N inner), are dealt in rounds, core i takes tiles i, i + usedCoreNum, i + "
        "2 usedCoreNum, ... and runs them back to back (the slowest core takes "
        "ceil(tiles / usedCoreNum)). Legal; named so that a caller sees the kernel is not one "
        "tile per core.",
        "aclnn MatMulV3 (hicann/ops-nn mat_mul_base_block.h: base blocks dealt to the cores in "
        "rounds; matmul_v3_base_tiling.cpp SetBaseBlockTiling: singleCoreM / N = the base "
        "block); MatMulV3 rotates the last round's tail over its L2 tiles, not modelled",
    ),
    # --- fractal alignment of the base block (seed 002 table 2, last row) ---
    Rule(
        "BASE_M_ALIGN",
        "error",
        "baseM % 16 == 0",
        "The base block is a whole number of 16-row fractals along M.",
        f"{_T2} (NZ fractal alignment)",
    ),
    Rule(
        "BASE_N_ALIGN",
        "error",
        "baseN % 16 == 0",
        "The base block is a whole number of 16-column fractals along N.",
        f"{_T2} (NZ fractal alignment)",
    ),
    Rule(
        "BASE_K_ALIGN",
        "error",
        "baseK % C0 == 0, C0 = 32 B / sizeof(A)",
        "The base block is a whole number of C0-wide fractals along K (16 fp16/bf16, 8 fp32, "
        "32 int8, 64 int4).",
        f"{_T2}; ascend-notes §1.9 asks 16 unless A is not transposed and B is, but 8 CANN "
        "fp32 rows with neither transposed have baseK = 40, so the seed's C0 rule is kept",
    ),
    Rule(
        "NZ_A_SINGLE_CORE_M_ALIGN",
        "error",
        "singleCoreM % 16 == 0 (A in NZ)",
        "With an NZ A each core starts on a fractal boundary along M.",
        f"{_T1} (singleCoreM note)",
    ),
    Rule(
        "NZ_A_SINGLE_CORE_K_ALIGN",
        "error",
        "singleCoreK % C0 == 0 (A in NZ)",
        "With an NZ A each core's K is a whole number of fractals (checked when Ka itself is "
        "aligned; otherwise NZ_A_K_ALIGN already reports it).",
        f"{_T1} (singleCoreK note; its 'C0_size * fractal_num' is taken as C0)",
    ),
    Rule(
        "NZ_B_SINGLE_CORE_K_ALIGN",
        "error",
        "singleCoreK % C0 == 0 (B in NZ)",
        "With an NZ B each core's K is a whole number of fractals (checked when Kb itself is "
        "aligned).",
        f"{_T1} (singleCoreK note)",
    ),
    Rule(
        "NZ_B_SINGLE_CORE_N_ALIGN",
        "error",
        "singleCoreN % 16 == 0 (B in NZ)",
        "With an NZ B each core starts on a fractal boundary along N.",
        f"{_T1} (singleCoreN note)",
    ),
    # --- buffer capacities (seed 002 table 2) ---
    Rule(
        "L0A_CAPACITY",
        "error",
        "baseM * baseK * sizeof(A) * dbL0A <= L0A",
        "The A base blocks fit L0A.",
        f"{_T2}; {_LE}",
    ),
    Rule(
        "L0B_CAPACITY",
        "error",
        "baseN * baseK * sizeof(B) * dbL0B <= L0B",
        "The B base blocks fit L0B.",
        f"{_T2}; {_LE}",
    ),
    Rule(
        "L0C_CAPACITY",
        "error",
        "baseM * baseN * 4 * dbL0C <= L0C",
        "The fp32/int32 accumulator blocks fit L0C.",
        f"{_T2}; {_LE}",
    ),
    Rule(
        "C_UB_CAPACITY",
        "error",
        "baseM * baseN * sizeof(C) <= UB (C left in UB, arch 3510)",
        "FixPipe writes each output block L0C -> UB whole (the Matmul API's single-destination "
        "mode), so one block of C must fit a vector core's UB.",
        "ascend950.md Per core (UB 248 KiB, L0C to UB); asc-devkit matmul CopyCubeOut "
        "(IsSupportL0CToUB, SINGLE_DST_MODE)",
    ),
    Rule(
        "BIAS_TABLE_CAPACITY",
        "error",
        "baseN * sizeof(bias) <= BiasTable (with a bias, on chips with a BiasTable)",
        "The bias block fits the BiasTable (1 KiB on 910B/310B, so baseN <= 256 for fp32 bias).",
        f"{_T2}; {_LE}; ascend-notes §1.2 step 2",
    ),
    Rule(
        "DEPTH_A1_STEPS",
        "error",
        "depthA1 == stepM * stepKa * db, db in {1, 2}",
        "depthA1 counts the A base blocks in L1: stepM x stepKa, double-buffered or not.",
        f"{_T2}",
    ),
    Rule(
        "DEPTH_B1_STEPS",
        "error",
        "depthB1 == stepN * stepKb * db, db in {1, 2}",
        "depthB1 counts the B base blocks in L1: stepN x stepKb, double-buffered or not.",
        f"{_T2}",
    ),
    Rule(
        "L1_CAPACITY",
        "error",
        "depthA1 * baseM * baseK * sizeof(A) + depthB1 * baseN * baseK * sizeof(B) "
        "(+ baseN * sizeof(bias) on chips with a BiasTable) <= L1",
        "The A and B L1 buffers (and the bias staged for the BiasTable) fit L1.",
        f"{_T2}; bias term from ascend-notes §1.8 (CANN's shareL1Size includes it on 910B)",
    ),
    Rule(
        "UB_CAPACITY",
        "error",
        "shareUbSize <= UB (chips that stage through UB: 910A, 310P, 310B), shareUbSize = ND "
        "tail-pad buffer (baseM or baseK x 32 B) + baseM * baseN * sizeof(C) (+ 32 B) without "
        "FixPipe",
        "The UB workspace the Matmul always keeps fits the UB: the buffer that pads unaligned ND "
        "rows and, on chips without FixPipe, the C block staged between L0C and GM. The vector "
        "ND->NZ / NZ->ND path needs max(shareUbSize, 2 x transLength) more; the kernel takes it "
        "only when it fits (simcore.ub.path), so exceeding that is no error.",
        "ascend-notes §1.8 (shareUbSize; MatmulGetTmpBufSize max(shareUbSize, 2 x transLength); "
        "enVecND2NZ only when UB > 2 x transLength); the issue's UB >= max(shareUbSize, "
        "2 x transLength) would reject 783 of CANN's 857 Ascend310P3 rows, whose transLength "
        "counts whole stepM x stepKa chunks, while every row meets shareUbSize <= UB and its "
        "fp32 rows with baseM = baseN = 256 fill the 256 KiB UB exactly ('<=')",
    ),
    # --- MDL template (seed 002 table 3) ---
    Rule(
        "MDL_STEP_M",
        "error",
        "ceil(Ka / baseK) > stepKa  =>  stepM == 1",
        "When A's K is not fully resident in L1, A is loaded one base block at a time along M.",
        _T3,
    ),
    Rule(
        "MDL_STEP_N",
        "error",
        "ceil(Kb / baseK) > stepKb  =>  stepN == 1",
        "When B's K is not fully resident in L1, B is loaded one base block at a time along N.",
        _T3,
    ),
    Rule(
        "MDL_K_ITER_MULTIPLE",
        "error",
        "kaStepIter % kbStepIter == 0 or kbStepIter % kaStepIter == 0, "
        "kaStepIter = ceil(singleCoreK / (baseK * stepKa)), "
        "kbStepIter = ceil(singleCoreK / (baseK * stepKb))",
        "The MDL template's K loop needs the A and B L1 iteration counts to divide one another.",
        f"{_T3}; 92 CANN rows break it (they are Norm-template tilings)",
    ),
    # --- arch 3510 (Ascend 950): ascend950.md ---
    Rule(
        "MX_OPERAND_ALIGN",
        "error",
        "baseM * baseK * sizeof(A) % align == 0 and baseN * baseK * sizeof(B) % align == 0 (MX "
        "types), align = 512 B (fp4) or 1024 B (fp8)",
        "MmadMx reads its operands from 512 B (fp4) or 1024 B (fp8) aligned L0 addresses, so "
        "each L0A/L0B base block (whose double-buffered twin follows it) is a whole number of "
        "alignment units. For fp4 any fractal-aligned block qualifies (16 x 64 x 0.5 B = 512 B); "
        "for MX fp8 baseM x baseK (and baseN x baseK) must hold an even number of 16 x 32 "
        "fractals.",
        "ascend950.md Data types (MmadMx: fp4 operands 512 B-aligned, fp8 operands 1024 B-aligned)",
    ),
    Rule(
        "MX_TYPE_PARA",
        "error",
        "mxTypePara == 0 without MX; with MX each byte (scaleFactorA bits 0-7, scaleFactorB "
        "8-15, M 16-23, N 24-31) in [1, 127]",
        "mxTypePara packs how many K windows of scales one L1 load brings for A and B (and M / "
        "N); only MX matmuls load scales, and a factor of 0 would load none.",
        "ascend950.md (TCubeTiling's new mxTypePara); bit layout of CANN's MX grouped-matmul "
        "tilings (factor A << 0, B << 8, M << 16, N << 24, default 1 each: 0x01010101); the "
        "upper bound 127 is an assumption (the int8 range of one byte)",
    ),
    # --- derived sizes ---
    Rule(
        "DERIVED_SIZE_MISMATCH",
        "warning",
        "transLength, shareL1Size, shareL0CSize, shareUbSize == their derivation "
        "(simcore.tiling.footprints)",
        "A derived size field differs from what the other fields imply; CANN's values are "
        "authoritative for its own rows, so this is a warning.",
        "seed 002 table 1 (transLength); ascend-notes §1.8",
    ),
)

#: Every rule by id, in evaluation order. Read-only.
RULES: Mapping[str, Rule] = MappingProxyType({rule.id: rule for rule in _RULE_LIST})
