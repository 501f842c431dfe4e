"""Legality rules: CANN's own tilings, one targeted mutation per rule, and hostile input."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simcore.errors import UnsupportedError
from simcore.hardware.dtypes import DType
from simcore.hardware.presets import HardwarePreset, custom_preset, load_preset
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.legality import RULES, LegalityReport, check_tiling, problem_violations
from simcore.tiling.problem import INT32_MAX, Problem, Template, check_supported
from simcore.tiling.tcube import REQUIRED_FIELDS
from tests.simcore.tiling.test_footprints import CannRow, cann_rows

#: CANN's tiling for Ascend910B2 fp16 4096^3 (ascend-notes §1.4): fills L0B, L0C and L1 exactly.
GOLDEN: dict[str, int] = {
    "usedCoreNum": 24,
    "singleCoreM": 1024,
    "singleCoreN": 768,
    "baseM": 128,
    "baseN": 256,
    "baseK": 64,
    "depthA1": 16,
    "depthB1": 8,
    "stepM": 1,
    "stepN": 1,
    "stepKa": 8,
    "stepKb": 4,
    "dbL0A": 2,
    "dbL0B": 2,
    "dbL0C": 1,
}
#: Rows of the ND rule seed 002 table 1 states (N <= 65535 for an ND B not transposed) that
#: CANN's tiling algorithm nevertheless returns: every N = 128256 row (an LLM vocabulary).
ND_B_N_ROWS = 36


def _check(
    mutation: dict[str, int] | None = None,
    preset: HardwarePreset | None = None,
    **problem_args: Any,
) -> LegalityReport:
    problem = Problem(**{"m": 4096, "n": 4096, "k": 4096, **problem_args})
    chip = preset or load_preset(problem.soc)
    tiling = complete_tiling({**GOLDEN, **(mutation or {})}, problem, chip)
    return check_tiling(problem, tiling, chip)


def _report(row: CannRow, template: str = "norm") -> LegalityReport:
    return check_tiling(row.problem(template), row.tiling(), load_preset(row.soc))


# --- CANN's own tilings --------------------------------------------------------------------------


def test_golden_tiling_is_legal_under_both_templates() -> None:
    for template in ("norm", "mdl"):
        report = _check(template=template)
        assert report.valid, report.to_dict()
        assert report.warnings == []


def test_every_cann_row_is_legal_under_norm_with_intrinsics_check() -> None:
    # CANN's tiling API does not check the kernel's config; a kernel running the N = 128256 rows
    # must enable MatmulConfig.intrinsicsCheck, which the problem states with intrinsics_check.
    for row in cann_rows():
        problem = row.problem("norm").model_copy(update={"intrinsics_check": True})
        report = check_tiling(problem, row.tiling(), load_preset(row.soc))
        assert report.valid, (row.label, report.violation_ids)


def test_without_intrinsics_check_only_the_nd_stride_rule_fails() -> None:
    failing: dict[str, list[str]] = {}
    for row in cann_rows():
        report = _report(row)
        if report.violations:
            failing[row.label] = report.violation_ids
    # The only rule CANN's rows break is the seed's ND range rule, on the N = 128256 rows.
    wide = {r.label for r in cann_rows() if int(r.meta["N"]) > 65535 and r.meta["trans_b"] == "0"}
    assert set(failing) == wide
    assert Counter(tuple(ids) for ids in failing.values()) == {("ND_B_N_RANGE",): ND_B_N_ROWS}


def test_nd_b_n_range_rows_are_exactly_the_wide_non_transposed_b() -> None:
    wide = [r for r in cann_rows() if int(r.meta["N"]) > 65535 and r.meta["trans_b"] == "0"]
    assert len(wide) == ND_B_N_ROWS
    for row in wide:
        (violation,) = _report(row).violations
        assert (violation.id, violation.value, violation.limit) == ("ND_B_N_RANGE", 128256, 65535)
        assert violation.fields == ["N"]


def test_310p_bf16_and_fp32_rows_are_checked_not_rejected() -> None:
    # check_tiling does not judge dtype support; the 310P3 bf16/fp32 rows are legal tilings.
    rows = [
        r for r in cann_rows() if r.soc == "Ascend310P3" and r.meta["dtype"] in ("bf16", "fp32")
    ]
    assert len(rows) == 160
    assert all(_report(r).valid for r in rows)


@pytest.mark.parametrize("soc", ["Ascend910A", "Ascend310P3"])
def test_check_supported_rejects_fp32_cube(soc: str) -> None:
    problem = Problem(soc=soc, m=64, n=64, k=64, dtype=DType.FP32)
    with pytest.raises(UnsupportedError) as info:
        check_supported(problem, load_preset(soc))
    assert info.value.field == "problem.dtype"
    assert "fp32" in info.value.message


def test_mdl_rejects_exactly_the_k_iteration_rows() -> None:
    rejected: Counter[tuple[str, ...]] = Counter()
    for row in cann_rows():
        norm, mdl = _report(row, "norm"), _report(row, "mdl")
        extra = [v for v in mdl.violation_ids if v not in norm.violation_ids]
        if extra:
            rejected[tuple(extra)] += 1
    # reference/README.md: 92 CANN rows break the MDL Ka/Kb iteration rule, and nothing else.
    assert rejected == {("MDL_K_ITER_MULTIPLE",): 92}


def test_idle_core_rows_warn_without_violation() -> None:
    warned = {}
    for row in cann_rows():
        report = _report(row)
        if report.warnings:
            warned[row.label] = (report.warning_ids, report.violation_ids)
    assert sorted(warned.values()) == [(["IDLE_CORES"], [])] * 2
    assert any("fp16->fp16 33x33x33" in label for label in warned)
    assert any("fp32->fp32 8x768x3072" in label for label in warned)


# --- one targeted mutation per rule --------------------------------------------------------------

# (rule id, tiling mutation, problem arguments, value, limit, fields)
TARGETED: list[tuple[str, dict[str, int], dict[str, Any], Any, Any, list[str]]] = [
    ("FIELD_POSITIVE", {"stepKa": 0}, {}, 0, 1, ["stepKa"]),
    ("ITERATE_ORDER_RANGE", {"iterateOrder": 2}, {}, 2, [0, 1], ["iterateOrder"]),
    ("DB_L0_RANGE", {"dbL0C": 3}, {}, 3, [1, 2], ["dbL0C"]),
    ("IS_BIAS_MISMATCH", {"isBias": 1}, {}, 1, 0, ["isBias"]),
    ("SHAPE_MISMATCH", {"M": 2048}, {}, 2048, 4096, ["M"]),
    ("SINGLE_CORE_K", {"singleCoreK": 2048}, {}, 2048, 4096, ["singleCoreK"]),
    (
        "SINGLE_CORE_M_RANGE",
        {"singleCoreM": 4112, "usedCoreNum": 6},
        {},
        4112,
        4096,
        ["singleCoreM"],
    ),
    (
        "SINGLE_CORE_N_RANGE",
        {"singleCoreN": 4100, "usedCoreNum": 4},
        {},
        4100,
        4096,
        ["singleCoreN"],
    ),
    (
        "CORE_COUNT",
        {"singleCoreM": 512, "singleCoreN": 512, "usedCoreNum": 64},
        {},
        64,
        24,
        ["usedCoreNum"],
    ),
    (
        "CORE_COVERAGE",
        {"usedCoreNum": 20},
        {},
        20,
        24,
        ["usedCoreNum", "singleCoreM", "singleCoreN"],
    ),
    ("BASE_M_ALIGN", {"baseM": 120}, {}, 120, 16, ["baseM"]),
    ("BASE_N_ALIGN", {"baseN": 248}, {}, 248, 16, ["baseN"]),
    ("BASE_K_ALIGN", {"baseK": 56}, {}, 56, 16, ["baseK"]),
    ("BASE_K_ALIGN", {"baseK": 48}, {"dtype": "int8"}, 48, 32, ["baseK"]),
    (
        "L0A_CAPACITY",
        {"baseM": 256, "baseN": 128, "baseK": 80, "stepKa": 4, "depthA1": 8},
        {},
        256 * 80 * 2 * 2,
        65536,
        ["baseM", "baseK", "dbL0A"],
    ),
    (
        "L0B_CAPACITY",
        {"baseK": 80, "stepKa": 4, "depthA1": 8},
        {},
        256 * 80 * 2 * 2,
        65536,
        ["baseN", "baseK", "dbL0B"],
    ),
    ("L0C_CAPACITY", {"dbL0C": 2}, {}, 128 * 256 * 4 * 2, 131072, ["baseM", "baseN", "dbL0C"]),
    (
        "BIAS_TABLE_CAPACITY",
        {"baseM": 112, "baseN": 272, "baseK": 32},
        {"bias": True},
        272 * 4,
        1024,
        ["baseN", "isBias"],
    ),
    ("DEPTH_A1_STEPS", {"depthA1": 12}, {}, 12, [8, 16], ["depthA1", "stepM", "stepKa"]),
    ("DEPTH_B1_STEPS", {"depthB1": 6}, {}, 6, [4, 8], ["depthB1", "stepN", "stepKb"]),
    (
        "L1_CAPACITY",
        {"stepKb": 5, "depthB1": 10},
        {},
        16 * 128 * 64 * 2 + 10 * 256 * 64 * 2,
        524288,
        ["depthA1", "depthB1", "baseM", "baseN", "baseK"],
    ),
    (
        "MDL_STEP_M",
        {"stepM": 2, "stepKa": 4},
        {"template": "mdl"},
        2,
        1,
        ["stepM", "stepKa", "baseK"],
    ),
    (
        "MDL_STEP_N",
        {"stepN": 2, "stepKb": 2},
        {"template": "mdl"},
        2,
        1,
        ["stepN", "stepKb", "baseK"],
    ),
    (
        "MDL_K_ITER_MULTIPLE",
        {"stepKb": 3, "depthB1": 6},
        {"template": "mdl"},
        8,  # ceil(4096 / (64 * 8))
        22,  # ceil(4096 / (64 * 3))
        ["singleCoreK", "baseK", "stepKa", "stepKb"],
    ),
    ("ND_A_KA_RANGE", {}, {"k": 70000}, 70000, 65535, ["Ka"]),
    (
        "NZ_A_SINGLE_CORE_M_ALIGN",
        {"singleCoreM": 1000, "singleCoreN": 1024, "usedCoreNum": 20},
        {"format_a": "NZ"},
        1000,
        16,
        ["singleCoreM"],
    ),
    (
        "NZ_B_SINGLE_CORE_N_ALIGN",
        {"singleCoreM": 1024, "singleCoreN": 1000, "usedCoreNum": 20},
        {"format_b": "NZ"},
        1000,
        16,
        ["singleCoreN"],
    ),
]


@pytest.mark.parametrize(
    ("rule_id", "mutation", "problem_args", "value", "limit", "fields"),
    TARGETED,
    ids=[f"{case[0]}-{i}" for i, case in enumerate(TARGETED)],
)
def test_one_mutation_breaks_exactly_one_rule(
    rule_id: str,
    mutation: dict[str, int],
    problem_args: dict[str, Any],
    value: Any,
    limit: Any,
    fields: list[str],
) -> None:
    report = _check(mutation, **problem_args)
    assert report.violation_ids == [rule_id]
    (violation,) = report.violations
    assert (violation.value, violation.limit, violation.fields) == (value, limit, fields)
    assert violation.formula == RULES[rule_id].formula
    assert all(f in violation.message for f in fields)
    assert report.warnings == []


def test_mdl_rules_do_not_apply_to_norm() -> None:
    for rule_id, mutation, problem_args, *_ in TARGETED:
        if rule_id.startswith("MDL_"):
            norm_args = {**problem_args, "template": "norm"}
            assert _check(mutation, **norm_args).valid


@pytest.mark.parametrize(
    ("rule_id", "problem_args", "value", "limit", "fields"),
    [
        ("ND_A_KA_RANGE", {"k": 65536}, 65536, 65535, ["Ka"]),
        ("ND_A_M_RANGE", {"m": 65536, "trans_a": True}, 65536, 65535, ["M"]),
        ("ND_B_N_RANGE", {"n": 65536}, 65536, 65535, ["N"]),
        ("ND_B_KB_RANGE", {"k": 65536, "trans_a": True, "trans_b": True}, 65536, 65535, ["Kb"]),
        ("NZ_A_M_ALIGN", {"m": 4088, "format_a": "NZ"}, 4088, 16, ["M"]),
        ("NZ_A_K_ALIGN", {"k": 4088, "format_a": "NZ"}, 4088, 16, ["Ka"]),
        ("NZ_B_K_ALIGN", {"k": 4080, "format_b": "NZ", "dtype": "int8"}, 4080, 32, ["Kb"]),
        ("NZ_B_N_ALIGN", {"n": 4088, "format_b": "NZ"}, 4088, 16, ["N"]),
    ],
)
def test_problem_rules(
    rule_id: str, problem_args: dict[str, Any], value: int, limit: int, fields: list[str]
) -> None:
    problem = Problem(**{"m": 4096, "n": 4096, "k": 4096, **problem_args})
    (violation,) = problem_violations(problem, load_preset("Ascend910B2"))
    assert (violation.id, violation.value, violation.limit, violation.fields) == (
        rule_id,
        value,
        limit,
        fields,
    )


def test_nd_range_allows_65535_and_ignores_the_other_axis() -> None:
    preset = load_preset("Ascend910B2")
    assert problem_violations(Problem(m=16, n=65535, k=65535), preset) == []
    # Transposed A has rows of M, so a long K is fine (and likewise for B).
    assert problem_violations(Problem(m=16, n=16, k=70000, trans_a=True), preset) == []
    assert problem_violations(Problem(m=70000, n=70000, k=16, trans_b=True), preset) == []


def test_nz_single_core_k_reported_with_single_core_k() -> None:
    report = _check({"singleCoreK": 4088}, format_a="NZ")
    assert report.violation_ids == ["SINGLE_CORE_K", "NZ_A_SINGLE_CORE_K_ALIGN"]
    report = _check({"singleCoreK": 4088}, format_b="NZ")
    assert report.violation_ids == ["SINGLE_CORE_K", "NZ_B_SINGLE_CORE_K_ALIGN"]


def test_idle_cores_is_a_warning() -> None:
    report = _check({"singleCoreN": 1024})
    assert report.valid
    (warning,) = report.warnings
    assert (warning.id, warning.value, warning.limit) == ("IDLE_CORES", 24, 16)


def test_dealt_split_on_every_core_is_legal_and_named() -> None:
    """aclnn MatMulV3's kernel: 128 x 256 base blocks as tiles, 32 x 16 dealt to 24 cores."""
    report = _check({"singleCoreM": 128, "singleCoreN": 256})
    assert report.valid
    (warning,) = report.warnings
    assert (warning.id, warning.value, warning.limit) == ("DEALT_SPLIT", 512, 24)
    assert "the slowest 22" in warning.message


def test_dealt_split_with_idle_cores_is_refused() -> None:
    """Rounds while cores stay idle are no kernel CANN runs: CORE_COVERAGE names it."""
    report = _check({"singleCoreM": 128, "singleCoreN": 256, "usedCoreNum": 20})
    assert report.violation_ids == ["CORE_COVERAGE"]
    assert (report.violations[0].value, report.violations[0].limit) == (20, 512)
    assert report.warnings == []


def test_derived_size_mismatch_is_a_warning() -> None:
    report = _check({"shareL1Size": 0, "transLength": 5})
    assert report.valid
    assert [(w.id, w.fields, w.value, w.limit) for w in report.warnings] == [
        ("DERIVED_SIZE_MISMATCH", ["transLength"], 5, 0),
        ("DERIVED_SIZE_MISMATCH", ["shareL1Size"], 0, 524288),
    ]


@pytest.mark.parametrize(
    ("field", "soc_field"),
    [("baseN", "l0b_bytes"), ("baseM", "l0c_bytes"), ("depthA1", "l1_bytes")],
)
def test_capacity_limits_are_inclusive(field: str, soc_field: str) -> None:
    # The golden tiling fills L0B, L0C and L1 exactly: legal at the limit, illegal one byte below.
    full = load_preset("Ascend910B2")
    assert _check(preset=full).valid
    smaller = custom_preset({"base": "Ascend910B2", soc_field: getattr(full, soc_field) - 1})
    (violation,) = _check(preset=smaller).violations
    assert field in violation.fields
    assert (violation.value, violation.limit) == (
        getattr(full, soc_field),
        getattr(full, soc_field) - 1,
    )


def test_bias_table_not_checked_on_chips_without_one() -> None:
    # Ascend310P3 has no BiasTable (bt_bytes = 0): a wide baseN with bias is not a BT violation.
    report = _check(
        {"baseM": 112, "baseN": 272, "baseK": 32, "usedCoreNum": 8, "singleCoreM": 2048,
         "singleCoreN": 1024},
        soc="Ascend310P3",
        bias=True,
    )  # fmt: skip
    assert "BIAS_TABLE_CAPACITY" not in report.violation_ids
    assert report.valid


def test_every_rule_has_a_targeted_test() -> None:
    covered = {case[0] for case in TARGETED} | {
        "ND_A_M_RANGE",
        "ND_B_N_RANGE",
        "ND_B_KB_RANGE",
        "NZ_A_M_ALIGN",
        "NZ_A_K_ALIGN",
        "NZ_B_K_ALIGN",
        "NZ_B_N_ALIGN",
        "NZ_A_SINGLE_CORE_K_ALIGN",
        "NZ_B_SINGLE_CORE_K_ALIGN",
        "IDLE_CORES",
        "DEALT_SPLIT",
        "DERIVED_SIZE_MISMATCH",
        "UB_CAPACITY",  # tests/simcore/ub/test_path.py
        "MX_OPERAND_ALIGN",  # tests/simcore/tiling/test_legality_950.py
        "MX_TYPE_PARA",  # tests/simcore/tiling/test_legality_950.py
        "C_UB_CAPACITY",  # tests/simcore/pipeline/test_l0c_to_ub.py
    }
    assert covered == set(RULES)


def test_rules_registry_is_listable() -> None:
    listed = [rule.to_dict() for rule in RULES.values()]
    assert all(r["formula"] and r["description"] and r["source"] for r in listed)
    assert {r["severity"] for r in listed} == {"error", "warning"}
    assert [r["id"] for r in listed if r["severity"] == "warning"] == [
        "IDLE_CORES",
        "DEALT_SPLIT",
        "DERIVED_SIZE_MISMATCH",
    ]


# --- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize("template", ["norm", "mdl"])
@pytest.mark.parametrize("bad", [0, -5])
@pytest.mark.parametrize("field", REQUIRED_FIELDS)
def test_non_positive_field_is_named_not_raised(field: str, bad: int, template: str) -> None:
    report = _check({field: bad}, template=template)
    assert report.violation_ids == ["FIELD_POSITIVE"]
    assert report.violations[0].fields == [field]
    assert report.violations[0].value == bad
    assert field in report.violations[0].message
    assert report.warnings == []


def test_bad_field_does_not_also_warn_about_derived_sizes() -> None:
    # The caller's shareL1Size was right before baseM went bad; the one mistake is baseM.
    report = _check({"baseM": 0, "shareL1Size": 524288})
    assert report.violation_ids == ["FIELD_POSITIVE"]
    assert report.warnings == []


def test_several_bad_fields_are_all_named() -> None:
    report = _check({"baseM": 0, "stepKb": -1, "dbL0A": 0})
    assert [(v.id, v.fields) for v in report.violations] == [
        ("FIELD_POSITIVE", ["baseM"]),
        ("FIELD_POSITIVE", ["stepKb"]),
        ("DB_L0_RANGE", ["dbL0A"]),
    ]


def test_huge_values_are_reported_exactly() -> None:
    huge = {name: INT32_MAX for name in REQUIRED_FIELDS}
    report = _check(huge, template="mdl")
    by_id = {v.id: v for v in report.violations}
    # Python ints: the L0A product is exact, far beyond int32 and int64 where it matters.
    assert by_id["L0A_CAPACITY"].value == INT32_MAX * INT32_MAX * 2 * 2
    assert {"CORE_COUNT", "L0B_CAPACITY", "L0C_CAPACITY", "L1_CAPACITY"} <= set(by_id)
    json.dumps(report.to_dict())


def test_report_to_dict_shape() -> None:
    report = _check({"baseK": 56, "singleCoreN": 1024})
    data = json.loads(json.dumps(report.to_dict()))
    assert data["valid"] is False
    assert data["violations"] == [
        {
            "id": "BASE_K_ALIGN",
            "message": data["violations"][0]["message"],
            "formula": "baseK % C0 == 0, C0 = 32 B / sizeof(A)",
            "value": 56,
            "limit": 16,
            "fields": ["baseK"],
        }
    ]
    assert [w["id"] for w in data["warnings"]] == ["IDLE_CORES"]


_INT32 = st.integers(min_value=-(2**31), max_value=INT32_MAX)
_SMALL = st.integers(min_value=-4, max_value=600)


@settings(max_examples=300, deadline=None)
@given(
    st.fixed_dictionaries(
        {name: st.one_of(_SMALL, _INT32) for name in REQUIRED_FIELDS},
        optional={
            "dbL0A": _SMALL,
            "dbL0B": _SMALL,
            "dbL0C": _SMALL,
            "iterateOrder": _SMALL,
            "singleCoreK": _INT32,
        },
    ),
    st.sampled_from(["norm", "mdl"]),
    st.sampled_from(["Ascend910B2", "Ascend310P3"]),
)
def test_any_int32_tiling_gets_a_report(fields: dict[str, int], template: str, soc: str) -> None:
    problem = Problem(soc=soc, m=1000, n=77, k=4097, template=Template(template))
    preset = load_preset(soc)
    report = check_tiling(problem, complete_tiling(fields, problem, preset), preset)
    assert report.valid == (report.violations == [])
    json.dumps(report.to_dict())
    assert all(v.id in RULES for v in report.violations + report.warnings)
