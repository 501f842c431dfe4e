"""The three exports of a TCubeTiling carry every struct field, in declaration order."""

from __future__ import annotations

import json
import re
import struct

from app.export import ExportFormat, export_tiling
from simcore.hardware.presets import load_preset
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import parse_problem
from simcore.tiling.tcube import FIELD_ORDER, TCubeTiling

PROBLEM = parse_problem({"soc": "Ascend910B2", "m": 4096, "n": 4096, "k": 4096, "dtype": "fp16"})
TILING = complete_tiling(
    {"usedCoreNum": 24, "singleCoreM": 1024, "singleCoreN": 768, "baseM": 128, "baseN": 256,
     "baseK": 64, "depthA1": 16, "depthB1": 8, "stepM": 1, "stepN": 1, "stepKa": 8,
     "stepKb": 4, "dbL0C": 2},
    PROBLEM,
    load_preset("Ascend910B2"),
)  # fmt: skip


def test_the_struct_has_fifty_fields_in_the_documented_order() -> None:
    # The order is the binary layout a kernel reads: a change here breaks every exported .bin.
    assert len(FIELD_ORDER) == 50
    assert FIELD_ORDER[:16] == (
        "usedCoreNum", "M", "N", "Ka", "Kb", "singleCoreM", "singleCoreN", "singleCoreK",
        "baseM", "baseN", "baseK", "depthA1", "depthB1", "stepM", "stepN", "isBias",
    )  # fmt: skip
    assert FIELD_ORDER[26:33] == (
        "stepKa", "stepKb", "depthAL1CacheUB", "depthBL1CacheUB", "dbL0A", "dbL0B", "dbL0C"
    )  # fmt: skip
    assert FIELD_ORDER[-2:] == ("BatchNum", "mxTypePara")


def test_json_lists_every_field_in_struct_order() -> None:
    data = json.loads(export_tiling(TILING, ExportFormat.JSON))
    assert list(data) == list(FIELD_ORDER)
    assert data["baseM"] == 128
    assert data["dbL0C"] == 2
    assert data["Ka"] == 4096


def test_bin_is_little_endian_int32_in_struct_order() -> None:
    raw = export_tiling(TILING, ExportFormat.BIN)
    assert len(raw) == 4 * len(FIELD_ORDER)
    values = struct.unpack(f"<{len(FIELD_ORDER)}i", raw)
    assert dict(zip(FIELD_ORDER, values, strict=True)) == TILING.to_dict()
    # Spot-check the byte layout itself: baseM is field 8, at bytes 32..35, little-endian.
    assert raw[32:36] == (128).to_bytes(4, "little")
    assert TCubeTiling.from_bytes(raw) == TILING


def test_cpp_sets_every_field_through_setters_and_members() -> None:
    code = export_tiling(TILING, ExportFormat.CPP, comment="910B2 fp16 4096^3").decode()
    setters = re.findall(r"tiling\.set_(\w+)\((-?\d+)\);", code)
    members = re.findall(r"tiling\.(\w+) = (-?\d+);", code)
    expected = [(name, str(TILING.to_dict()[name])) for name in FIELD_ORDER]
    assert setters == expected
    assert members == expected
    assert "optiling::TCubeTiling &tiling" in code
    assert "#ifdef __CCE_AICORE__" in code
    assert "// 910B2 fp16 4096^3" in code
    # Balanced braces: the header is at least syntactically plausible C++.
    assert code.count("{") == code.count("}") == 2
