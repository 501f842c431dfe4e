"""Legality of a TCubeTiling for a problem on a chip: every rule of seed 002, under stable ids.

Sources: seed 002 (``TCubeTiling结构体``) table 1 (field ranges, ND/NZ shape rules), table 2 (the
constraints every tiling must meet) and table 3 (the MDL template's extra constraints);
ascend-notes.md §1.8-1.9; and CANN's own tilings in ``cann_default_tilings.csv``, which every rule
was checked against (``tests/simcore/tiling/test_legality.py``). Where the seed and CANN's rows
disagree the rule's ``source`` says which one it follows and why.

Each rule has a stable id in :data:`RULES`; a :class:`Violation` names the rule, the struct
fields involved, the actual value and the limit. Rules whose inputs already failed a sanity rule
(a non-positive field, a double-buffer flag outside {1, 2}) are not evaluated, so one mistake
yields one violation instead of a cascade. Every product is computed with Python ints, so absurd
values (2**31 - 1) never overflow.

Shape fields (``M``, ``N``, ``Ka``, ``Kb``) must equal the problem's (``SHAPE_MISMATCH``); every
other rule uses the problem's m, n, k so that a wrong shape field cannot hide a second error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from simcore.hardware.dtypes import (
    ACCUMULATOR_BYTES,
    FRACTAL_ROWS,
    c0_elements,
    is_mx,
    mx_operand_align_bytes,
    nbytes,
)
from simcore.hardware.presets import HardwarePreset
from simcore.tiling import footprints
from simcore.tiling.problem import ARCH_3510, ND_MAX_STRIDE_ELEMENTS, Format, Problem, Template
from simcore.tiling.rules import RULES, Rule
from simcore.tiling.tcube import REQUIRED_FIELDS, TCubeTiling

__all__ = [
    "RULES",
    "LegalityReport",
    "Rule",
    "Violation",
    "check_tiling",
    "problem_violations",
]

#: A limit is one number, or the set of allowed values (for example ``[1, 2]``).
Limit = int | list[int]


@dataclass(frozen=True)
class Violation:
    """One broken rule (or warning): which rule, on which fields, the value and the limit."""

    id: str
    message: str
    formula: str
    value: int
    limit: Limit
    fields: list[str]

    def to_dict(self) -> dict[str, Any]:
        """Returns the violation as JSON-ready values."""
        limit = list(self.limit) if isinstance(self.limit, list) else self.limit
        return {
            "id": self.id,
            "message": self.message,
            "formula": self.formula,
            "value": self.value,
            "limit": limit,
            "fields": list(self.fields),
        }


@dataclass(frozen=True)
class LegalityReport:
    """The outcome of :func:`check_tiling`: errors (``violations``) and warnings."""

    violations: list[Violation]
    warnings: list[Violation]

    @property
    def valid(self) -> bool:
        """True when no rule is violated (warnings do not count)."""
        return not self.violations

    @property
    def violation_ids(self) -> list[str]:
        """The ids of the violations, in order."""
        return [v.id for v in self.violations]

    @property
    def warning_ids(self) -> list[str]:
        """The ids of the warnings, in order."""
        return [w.id for w in self.warnings]

    def to_dict(self) -> dict[str, Any]:
        """Returns ``{"valid": bool, "violations": [...], "warnings": [...]}``."""
        return {
            "valid": self.valid,
            "violations": [v.to_dict() for v in self.violations],
            "warnings": [w.to_dict() for w in self.warnings],
        }


class _Findings:
    """Collects violations and warnings, and which fields are unusable for further rules."""

    def __init__(self) -> None:
        self.violations: list[Violation] = []
        self.warnings: list[Violation] = []
        self.invalid: set[str] = set()

    def add(self, rule_id: str, message: str, value: int, limit: Limit, fields: list[str]) -> None:
        rule = RULES[rule_id]
        found = Violation(rule_id, message, rule.formula, value, limit, fields)
        (self.warnings if rule.severity == "warning" else self.violations).append(found)

    def usable(self, *fields: str) -> bool:
        """True when none of ``fields`` already failed a sanity rule."""
        return self.invalid.isdisjoint(fields)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _align16(x: int) -> int:
    return _ceil_div(x, FRACTAL_ROWS) * FRACTAL_ROWS


def problem_violations(problem: Problem, preset: HardwarePreset) -> list[Violation]:
    """Checks the rules that depend on the problem alone (seed 002 table 1).

    ND inputs: the contiguous dim of each ND matrix is at most 65535 elements (Ka for A not
    transposed, M for A transposed, N for B not transposed, Kb for B transposed). NZ inputs: the
    matrix is a whole number of fractals (16 rows, C0 = 32 B / sizeof columns).

    Args:
        problem: The Matmul problem.
        preset: The chip: on arch 3510 (Ascend 950) the ND range limits do not apply
            (ascend950.md).

    Returns:
        The violations, empty when the problem itself is fine. Dtype support is a separate check
        (:func:`simcore.tiling.problem.check_supported`).
    """
    found = _Findings()
    # The model sees a DN operand as the ND layout of its transpose (Problem.model_view).
    problem = problem.model_view()
    limit = ND_MAX_STRIDE_ELEMENTS
    m, n, k = problem.m, problem.n, problem.k
    # With MatmulConfig.intrinsicsCheck the kernel copies long ND rows one by one, so the stride
    # limit no longer applies (ascend-notes.md §1.9).
    nd_limited = not problem.intrinsics_check and preset.npu_arch != ARCH_3510
    if problem.format_a is Format.ND and nd_limited:
        if not problem.trans_a and k > limit:
            found.add(
                "ND_A_KA_RANGE",
                f"A is ND and not transposed, so its rows are Ka = {k} elements long, more than "
                f"the {limit} a GM->L1 copy can stride over (unless intrinsics_check is set)",
                k,
                limit,
                ["Ka"],
            )
        if problem.trans_a and m > limit:
            found.add(
                "ND_A_M_RANGE",
                f"A is ND and transposed, so its rows are M = {m} elements long, more than "
                f"the {limit} a GM->L1 copy can stride over (unless intrinsics_check is set)",
                m,
                limit,
                ["M"],
            )
    if problem.format_b is Format.ND and nd_limited:
        if not problem.trans_b and n > limit:
            found.add(
                "ND_B_N_RANGE",
                f"B is ND and not transposed, so its rows are N = {n} elements long, more than "
                f"the {limit} a GM->L1 copy can stride over (unless intrinsics_check is set)",
                n,
                limit,
                ["N"],
            )
        if problem.trans_b and k > limit:
            found.add(
                "ND_B_KB_RANGE",
                f"B is ND and transposed, so its rows are Kb = {k} elements long, more than "
                f"the {limit} a GM->L1 copy can stride over (unless intrinsics_check is set)",
                k,
                limit,
                ["Kb"],
            )
    c0 = c0_elements(problem.dtype)
    dt = problem.dtype.value
    if problem.format_a is Format.NZ:
        if m % FRACTAL_ROWS:
            found.add(
                "NZ_A_M_ALIGN",
                f"A is NZ, so M = {m} must be a multiple of {FRACTAL_ROWS}",
                m,
                FRACTAL_ROWS,
                ["M"],
            )
        if k % c0:
            found.add(
                "NZ_A_K_ALIGN",
                f"A is NZ, so Ka = {k} must be a multiple of C0 = {c0} ({dt})",
                k,
                c0,
                ["Ka"],
            )
    if problem.format_b is Format.NZ:
        if k % c0:
            found.add(
                "NZ_B_K_ALIGN",
                f"B is NZ, so Kb = {k} must be a multiple of C0 = {c0} ({dt})",
                k,
                c0,
                ["Kb"],
            )
        if n % FRACTAL_ROWS:
            found.add(
                "NZ_B_N_ALIGN",
                f"B is NZ, so N = {n} must be a multiple of {FRACTAL_ROWS}",
                n,
                FRACTAL_ROWS,
                ["N"],
            )
    return found.violations


def check_tiling(problem: Problem, tiling: TCubeTiling, preset: HardwarePreset) -> LegalityReport:
    """Checks a tiling against every rule of seed 002 (tables 1-3) for a problem on a chip.

    Includes :func:`problem_violations`. The MDL rules (table 3) apply only when
    ``problem.template`` is ``mdl``. Dtype support is not checked here
    (:func:`simcore.tiling.problem.check_supported` does that), so CANN's bf16/fp32 rows for
    Ascend310P3 can still be validated.

    Args:
        problem: The Matmul problem.
        tiling: The complete tiling (for example from
            :func:`simcore.tiling.footprints.complete_tiling`).
        preset: The chip whose buffers and cores bound the tiling.

    Returns:
        The report; ``valid`` is True when there is no violation. Never raises on absurd values.
    """
    found = _Findings()
    found.violations.extend(problem_violations(problem, preset))
    _check_fields(found, problem, tiling)
    _check_cores(found, problem, tiling, preset)
    _check_alignment(found, problem, tiling)
    _check_capacity(found, problem, tiling, preset)
    _check_depths(found, tiling)
    if problem.template is Template.MDL:
        _check_mdl(found, problem, tiling)
    if is_mx(problem.dtype):
        _check_mx_align(found, problem, tiling)
    _check_mx_type_para(found, problem, tiling)
    _check_derived(found, problem, tiling, preset)
    return LegalityReport(violations=found.violations, warnings=found.warnings)


def _check_fields(found: _Findings, problem: Problem, t: TCubeTiling) -> None:
    """Field sanity: positive counts, enumerated flags, shapes equal to the problem's."""
    for name in REQUIRED_FIELDS:
        value = int(getattr(t, name))
        if value < 1:
            found.invalid.add(name)
            found.add(
                "FIELD_POSITIVE",
                f"{name} = {value}, but it must be at least 1",
                value,
                1,
                [name],
            )
    if t.iterateOrder not in (0, 1):
        found.add(
            "ITERATE_ORDER_RANGE",
            f"iterateOrder = {t.iterateOrder}, but it must be 0 (M first) or 1 (N first)",
            t.iterateOrder,
            [0, 1],
            ["iterateOrder"],
        )
    for name in ("dbL0A", "dbL0B", "dbL0C"):
        value = int(getattr(t, name))
        if value not in (1, 2):
            found.invalid.add(name)
            found.add(
                "DB_L0_RANGE",
                f"{name} = {value}, but it must be 1 (single buffer) or 2 (double buffer)",
                value,
                [1, 2],
                [name],
            )
    if t.isBias != int(problem.bias):
        found.add(
            "IS_BIAS_MISMATCH",
            f"isBias = {t.isBias}, but the problem {'has' if problem.bias else 'has no'} bias "
            f"(isBias must be {int(problem.bias)})",
            t.isBias,
            int(problem.bias),
            ["isBias"],
        )
    for name, expected in (
        ("M", problem.m),
        ("N", problem.n),
        ("Ka", problem.k),
        ("Kb", problem.k),
    ):
        value = int(getattr(t, name))
        if value != expected:
            found.add(
                "SHAPE_MISMATCH",
                f"{name} = {value}, but the problem's is {expected}",
                value,
                expected,
                [name],
            )
    if t.singleCoreK != problem.k:
        if t.singleCoreK < 1:
            found.invalid.add("singleCoreK")
        found.add(
            "SINGLE_CORE_K",
            f"singleCoreK = {t.singleCoreK}, but K is never split across cores, so it must be "
            f"K = {problem.k}",
            t.singleCoreK,
            problem.k,
            ["singleCoreK"],
        )


def _check_cores(
    found: _Findings, problem: Problem, t: TCubeTiling, preset: HardwarePreset
) -> None:
    """Core count, single-core block bounds and coverage of C (seed 002 tables 1 and 2)."""
    cores = preset.cube_core_count
    if found.usable("usedCoreNum") and t.usedCoreNum > cores:
        found.add(
            "CORE_COUNT",
            f"usedCoreNum = {t.usedCoreNum}, more than the {cores} cube cores of {preset.soc}",
            t.usedCoreNum,
            cores,
            ["usedCoreNum"],
        )
    for name, dim_name, dim in (("singleCoreM", "M", problem.m), ("singleCoreN", "N", problem.n)):
        value = int(getattr(t, name))
        bound = _align16(dim)
        if found.usable(name) and value > bound:
            found.add(
                f"SINGLE_CORE_{dim_name}_RANGE",
                f"{name} = {value}, more than {dim_name} = {dim} rounded up to a multiple of "
                f"16 ({bound})",
                value,
                bound,
                [name],
            )
    if found.usable("usedCoreNum", "singleCoreM", "singleCoreN"):
        blocks_m = _ceil_div(problem.m, t.singleCoreM)
        blocks_n = _ceil_div(problem.n, t.singleCoreN)
        needed = blocks_m * blocks_n
        fields = ["usedCoreNum", "singleCoreM", "singleCoreN"]
        if needed > t.usedCoreNum == cores:
            # Tiles dealt to every core in rounds (aclnn MatMulV3's base blocks): legal.
            found.add(
                "DEALT_SPLIT",
                f"C splits into {blocks_m} x {blocks_n} = {needed} blocks of singleCoreM = "
                f"{t.singleCoreM} by singleCoreN = {t.singleCoreN}, more than the "
                f"{t.usedCoreNum} cores: core i takes blocks i, i + {t.usedCoreNum}, ... "
                f"(row-major, N inner), the slowest {_ceil_div(needed, t.usedCoreNum)}",
                needed,
                t.usedCoreNum,
                fields,
            )
        elif t.usedCoreNum < needed:
            found.add(
                "CORE_COVERAGE",
                f"usedCoreNum = {t.usedCoreNum} cores cannot cover the {blocks_m} x {blocks_n} = "
                f"{needed} blocks of singleCoreM = {t.singleCoreM} by singleCoreN = "
                f"{t.singleCoreN} that C ({problem.m} x {problem.n}) splits into, and a split "
                f"dealt in rounds must use all {cores} cores",
                t.usedCoreNum,
                needed,
                fields,
            )
        elif t.usedCoreNum > needed:
            found.add(
                "IDLE_CORES",
                f"usedCoreNum = {t.usedCoreNum}, but C splits into only {needed} blocks of "
                f"singleCoreM = {t.singleCoreM} by singleCoreN = {t.singleCoreN}; "
                f"{t.usedCoreNum - needed} cores stay idle",
                t.usedCoreNum,
                needed,
                fields,
            )


def _check_alignment(found: _Findings, problem: Problem, t: TCubeTiling) -> None:
    """Fractal alignment of the base block and, for NZ inputs, of the single-core block."""
    c0 = c0_elements(problem.dtype)
    dt = problem.dtype.value
    for name, rule_id in (("baseM", "BASE_M_ALIGN"), ("baseN", "BASE_N_ALIGN")):
        value = int(getattr(t, name))
        if found.usable(name) and value % FRACTAL_ROWS:
            found.add(
                rule_id,
                f"{name} = {value} is not a multiple of {FRACTAL_ROWS} (one fractal)",
                value,
                FRACTAL_ROWS,
                [name],
            )
    if found.usable("baseK") and t.baseK % c0:
        found.add(
            "BASE_K_ALIGN",
            f"baseK = {t.baseK} is not a multiple of C0 = {c0} ({dt})",
            t.baseK,
            c0,
            ["baseK"],
        )
    # NZ single-core blocks (seed 002 table 1). singleCoreK is checked only when K itself is
    # aligned: otherwise NZ_*_K_ALIGN already reported the root cause.
    k_aligned = problem.k % c0 == 0
    checks: list[tuple[str, str, str, int]] = []
    if problem.format_a is Format.NZ:
        checks.append(("A", "NZ_A_SINGLE_CORE_M_ALIGN", "singleCoreM", FRACTAL_ROWS))
        if k_aligned:
            checks.append(("A", "NZ_A_SINGLE_CORE_K_ALIGN", "singleCoreK", c0))
    if problem.format_b is Format.NZ:
        if k_aligned:
            checks.append(("B", "NZ_B_SINGLE_CORE_K_ALIGN", "singleCoreK", c0))
        checks.append(("B", "NZ_B_SINGLE_CORE_N_ALIGN", "singleCoreN", FRACTAL_ROWS))
    for operand, rule_id, name, align in checks:
        value = int(getattr(t, name))
        if found.usable(name) and value % align:
            found.add(
                rule_id,
                f"{operand} is NZ, so {name} = {value} must be a multiple of {align}",
                value,
                align,
                [name],
            )


def _check_capacity(
    found: _Findings, problem: Problem, t: TCubeTiling, preset: HardwarePreset
) -> None:
    """L0A, L0B, L0C, BiasTable and L1 capacities (seed 002 table 2, limits '<=')."""
    dt = problem.dtype.value
    if found.usable("baseM", "baseK", "dbL0A"):
        used = nbytes(problem.dtype, t.baseM * t.baseK) * t.dbL0A
        if used > preset.l0a_bytes:
            found.add(
                "L0A_CAPACITY",
                f"baseM * baseK * dbL0A = {t.baseM} * {t.baseK} * {t.dbL0A} {dt} elements take "
                f"{used} bytes, more than L0A's {preset.l0a_bytes}",
                used,
                preset.l0a_bytes,
                ["baseM", "baseK", "dbL0A"],
            )
    if found.usable("baseN", "baseK", "dbL0B"):
        used = nbytes(problem.dtype, t.baseN * t.baseK) * t.dbL0B
        if used > preset.l0b_bytes:
            found.add(
                "L0B_CAPACITY",
                f"baseN * baseK * dbL0B = {t.baseN} * {t.baseK} * {t.dbL0B} {dt} elements take "
                f"{used} bytes, more than L0B's {preset.l0b_bytes}",
                used,
                preset.l0b_bytes,
                ["baseN", "baseK", "dbL0B"],
            )
    if found.usable("baseM", "baseN", "dbL0C"):
        used = t.baseM * t.baseN * ACCUMULATOR_BYTES * t.dbL0C
        if used > preset.l0c_bytes:
            found.add(
                "L0C_CAPACITY",
                f"baseM * baseN * dbL0C = {t.baseM} * {t.baseN} * {t.dbL0C} accumulators of "
                f"{ACCUMULATOR_BYTES} bytes take {used} bytes, more than L0C's {preset.l0c_bytes}",
                used,
                preset.l0c_bytes,
                ["baseM", "baseN", "dbL0C"],
            )
    if problem.c_position == "UB" and found.usable("baseM", "baseN"):
        used = nbytes(problem.c_dtype, t.baseM * t.baseN)
        if used > preset.ub_bytes:
            found.add(
                "C_UB_CAPACITY",
                f"C is left in UB: one baseM x baseN = {t.baseM} x {t.baseN} "
                f"{problem.c_dtype.value} block takes {used} bytes, more than "
                f"{preset.soc}'s {preset.ub_bytes} bytes of UB",
                used,
                preset.ub_bytes,
                ["baseM", "baseN"],
            )
    # Chips without a BiasTable (bt_bytes = 0: 910A, 310P) add the bias elsewhere.
    if problem.bias and preset.bt_bytes > 0 and found.usable("baseN"):
        used = nbytes(problem.bias_type, t.baseN)
        if used > preset.bt_bytes:
            found.add(
                "BIAS_TABLE_CAPACITY",
                f"isBias = {t.isBias}: baseN = {t.baseN} {problem.bias_type.value} bias values "
                f"take {used} bytes, more than the BiasTable's {preset.bt_bytes}",
                used,
                preset.bt_bytes,
                ["baseN", "isBias"],
            )
    if found.usable("depthA1", "depthB1", "baseM", "baseN", "baseK"):
        used = footprints.share_l1_size(problem, t, preset)
        if used > preset.l1_bytes:
            a = footprints.a_l1_bytes(problem, t)
            b = footprints.b_l1_bytes(problem, t)
            bias = footprints.bias_l1_bytes(problem, t, preset)
            bias_text = f" + {bias} (bias)" if bias else ""
            found.add(
                "L1_CAPACITY",
                f"L1 holds depthA1 = {t.depthA1} A blocks of baseM x baseK = {t.baseM} x "
                f"{t.baseK} and depthB1 = {t.depthB1} B blocks of baseN x baseK = {t.baseN} x "
                f"{t.baseK} ({dt}): {a} + {b}{bias_text} = {used} bytes, more than L1's "
                f"{preset.l1_bytes}",
                used,
                preset.l1_bytes,
                ["depthA1", "depthB1", "baseM", "baseN", "baseK"],
            )
    if footprints.computes_ub_sizes(preset) and found.usable(
        "baseM", "baseN", "baseK", "singleCoreM", "singleCoreN"
    ):
        used = footprints.share_ub_size(problem, t, preset)
        if used > preset.ub_bytes:
            pad = footprints.nd_tail_pad_bytes(problem, t)
            parts = [f"{pad} for the ND tail pad"] if pad else []
            if used > pad:
                parts.append(
                    f"{used - pad} for the baseM x baseN = {t.baseM} x {t.baseN} "
                    f"{problem.c_dtype.value} C block staged between L0C and GM"
                )
            found.add(
                "UB_CAPACITY",
                f"shareUbSize = {used} bytes ({' + '.join(parts)}) is more than "
                f"{preset.soc}'s {preset.ub_bytes} bytes of UB",
                used,
                preset.ub_bytes,
                ["baseM", "baseN", "baseK"],
            )


def _check_depths(found: _Findings, t: TCubeTiling) -> None:
    """depthA1 = stepM * stepKa * db and depthB1 = stepN * stepKb * db, db in {1, 2}."""
    for depth_name, step_names, rule_id in (
        ("depthA1", ("stepM", "stepKa"), "DEPTH_A1_STEPS"),
        ("depthB1", ("stepN", "stepKb"), "DEPTH_B1_STEPS"),
    ):
        if not found.usable(depth_name, *step_names):
            continue
        depth = int(getattr(t, depth_name))
        s0, s1 = (int(getattr(t, s)) for s in step_names)
        steps = s0 * s1
        if depth not in (steps, 2 * steps):
            found.add(
                rule_id,
                f"{depth_name} = {depth}, but {step_names[0]} * {step_names[1]} = {s0} * {s1} = "
                f"{steps}, so it must be {steps} (single buffer) or {2 * steps} (double buffer)",
                depth,
                [steps, 2 * steps],
                [depth_name, *step_names],
            )


def _check_mdl(found: _Findings, problem: Problem, t: TCubeTiling) -> None:
    """The MDL template's extra rules (seed 002 table 3)."""
    k = problem.k
    for rule_id, step_k, step_mn, operand, k_name in (
        ("MDL_STEP_M", "stepKa", "stepM", "A", "Ka"),
        ("MDL_STEP_N", "stepKb", "stepN", "B", "Kb"),
    ):
        if not found.usable("baseK", step_k, step_mn):
            continue
        k_blocks = _ceil_div(k, t.baseK)
        step_k_value, step_mn_value = int(getattr(t, step_k)), int(getattr(t, step_mn))
        if k_blocks > step_k_value and step_mn_value != 1:
            found.add(
                rule_id,
                f"{operand}'s K is not fully resident in L1 (ceil({k_name} / baseK) = "
                f"ceil({k} / {t.baseK}) = {k_blocks} > {step_k} = {step_k_value}), so the MDL "
                f"template needs {step_mn} = 1, not {step_mn_value}",
                step_mn_value,
                1,
                [step_mn, step_k, "baseK"],
            )
    if found.usable("singleCoreK", "baseK", "stepKa", "stepKb"):
        ka_iter = _ceil_div(t.singleCoreK, t.baseK * t.stepKa)
        kb_iter = _ceil_div(t.singleCoreK, t.baseK * t.stepKb)
        if ka_iter % kb_iter and kb_iter % ka_iter:
            found.add(
                "MDL_K_ITER_MULTIPLE",
                f"kaStepIter = ceil(singleCoreK / (baseK * stepKa)) = ceil({t.singleCoreK} / "
                f"({t.baseK} * {t.stepKa})) = {ka_iter} and kbStepIter = ceil(singleCoreK / "
                f"(baseK * stepKb)) = ceil({t.singleCoreK} / ({t.baseK} * {t.stepKb})) = "
                f"{kb_iter}; the MDL template needs one to be a multiple of the other",
                ka_iter,
                kb_iter,
                ["singleCoreK", "baseK", "stepKa", "stepKb"],
            )


def _check_mx_align(found: _Findings, problem: Problem, t: TCubeTiling) -> None:
    """MX operands sit at 512 B (fp4) / 1024 B (fp8) aligned L0 addresses (ascend950.md)."""
    align = mx_operand_align_bytes(problem.dtype)
    for operand, rows_name, dtype in (
        ("A", "baseM", problem.dtype),
        ("B", "baseN", problem.b_dtype),
    ):
        if not found.usable(rows_name, "baseK"):
            continue
        rows = int(getattr(t, rows_name))
        size = nbytes(dtype, rows * t.baseK)
        if size % align:
            found.add(
                "MX_OPERAND_ALIGN",
                f"the {operand} base block {rows_name} x baseK = {rows} x {t.baseK} "
                f"{dtype.value} takes {size} bytes, not a multiple of the {align} B alignment "
                "MmadMx needs for its operands",
                size,
                align,
                [rows_name, "baseK"],
            )


def _check_mx_type_para(found: _Findings, problem: Problem, t: TCubeTiling) -> None:
    """mxTypePara: 0 without MX; with MX four byte-wide scale factors, each in [1, 127]."""
    value = int(t.mxTypePara)
    if not is_mx(problem.dtype):
        if value != 0:
            found.add(
                "MX_TYPE_PARA",
                f"mxTypePara = {value}, but {problem.dtype.value} loads no MX scales, so it "
                "must be 0",
                value,
                0,
                ["mxTypePara"],
            )
        return
    factors = [(value >> shift) & 0xFF for shift in (0, 8, 16, 24)]
    if value < 0 or any(not 1 <= f <= 127 for f in factors):
        found.add(
            "MX_TYPE_PARA",
            f"mxTypePara = {value:#010x} packs scale factors A, B, M, N = {factors}; each must "
            "be in [1, 127] for an MX matmul (0x01010101 loads one K window of scales per "
            "L1 load)",
            value,
            [1, 127],
            ["mxTypePara"],
        )


def _check_derived(
    found: _Findings, problem: Problem, t: TCubeTiling, preset: HardwarePreset
) -> None:
    """Warns when a derived size field differs from its derivation (ascend-notes §1.8)."""
    # Derivations from unusable fields are meaningless; the violation already says why.
    if found.invalid:
        return
    for name, derived in footprints.derived_sizes(problem, t, preset).items():
        expected = footprints.saturate_int32(derived)
        given = int(getattr(t, name))
        if given != expected:
            found.add(
                "DERIVED_SIZE_MISMATCH",
                f"{name} = {given}, but the other fields imply {expected}",
                given,
                expected,
                [name],
            )
