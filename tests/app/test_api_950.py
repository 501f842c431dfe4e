"""Ascend 950 over HTTP: the presets are listed, fp8 / MX problems validate and export with
``mxTypePara``, older chips refuse the new dtypes by rule, and the dtype comparison answers."""

from __future__ import annotations

import struct
from collections.abc import Iterator

import pytest

from app.export import ExportFormat, export_tiling
from simcore.hardware.presets import load_preset
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.problem import parse_problem
from simcore.tiling.tcube import FIELD_ORDER
from tests.app._server import Server, running_server

SKUS = {
    "Ascend950PR_9599", "Ascend950PR_9589", "Ascend950PR_9579",
    "Ascend950DT_9591", "Ascend950DT_9581", "Ascend950DT_9571",
}  # fmt: skip
MX_PROBLEM = {"soc": "Ascend950PR", "m": 1024, "n": 1024, "k": 1024, "dtype": "mxfp4"}
MX_TILING = {
    "usedCoreNum": 16, "singleCoreM": 256, "singleCoreN": 256, "baseM": 256, "baseN": 256,
    "baseK": 128, "depthA1": 2, "depthB1": 2, "stepM": 1, "stepN": 1, "stepKa": 1, "stepKb": 1,
}  # fmt: skip


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    env = {"TILER_SEARCH_EXECUTOR": "thread", "TILER_DEFAULT_BUDGET": "0"}
    with running_server(tmp_path_factory.mktemp("a950"), env) as srv:
        yield srv


def test_hardware_lists_the_950_presets(server: Server) -> None:
    with server.client() as client:
        listing = {p["soc"]: p for p in client.get("/v1/hardware").json()}
        pr = client.get("/v1/hardware/Ascend950PR").json()
    assert SKUS | {"Ascend950PR", "Ascend950DT"} <= set(listing)
    # ascend950.md: 950PR_9589 has 32 cube cores at 1650 MHz; DT_9591 36 at 1800.
    assert (
        listing["Ascend950PR_9589"]["cube_core_count"],
        listing["Ascend950PR_9589"]["clock_mhz"],
    ) == (32, 1650.0)
    assert listing["Ascend950DT_9591"]["cube_core_count"] == 36
    assert "mxfp4_e2m1" in listing["Ascend950PR"]["dtypes"]
    assert "int4" not in listing["Ascend950PR"]["dtypes"]
    assert pr["values"]["l0c_bytes"] == 262144
    assert "Ascend950PR_9599" in pr["sources"]["soc"]


def test_mx_validate_and_older_chip_refusal(server: Server) -> None:
    with server.client() as client:
        ok = client.post("/v1/tilings:validate", json={"problem": MX_PROBLEM, "tiling": MX_TILING})
        old = client.post(
            "/v1/tilings:validate",
            json={"problem": {**MX_PROBLEM, "soc": "Ascend910B2"}, "tiling": MX_TILING},
        )
        int4 = client.post(
            "/v1/tilings:tune", json={"problem": {**MX_PROBLEM, "dtype": "int4"}, "budget": 0}
        )
    assert ok.json() == {"valid": True, "violations": [], "warnings": []}
    assert old.status_code == 422
    assert "DTYPE_NEEDS_ARCH_3510" in old.text
    assert int4.status_code == 422
    assert "INT4_REMOVED_ON_3510" in int4.text


def test_compare_dtypes_route(server: Server) -> None:
    body = {
        "problem": {"soc": "Ascend950PR", "m": 2048, "n": 2048, "k": 2048},
        "dtypes": ["bf16", "fp8_e4m3", "mxfp4"],
        "budget": 0,
    }
    with server.client() as client:
        answer = client.post("/v1/tilings:compare-dtypes", json=body)
        refused = client.post(
            "/v1/tilings:compare-dtypes",
            json={**body, "problem": {**body["problem"], "soc": "Ascend910B2"}},
        )
    assert answer.status_code == 200, answer.text
    rows = answer.json()["rows"]
    assert [r["dtype"] for r in rows] == ["bf16", "fp8_e4m3", "mxfp4_e2m1"]
    assert rows[0]["speedup_vs_reference"] == 1.0
    assert rows[2]["speedup_vs_reference"] > rows[1]["speedup_vs_reference"] > 1.0
    assert all(r["cann950"]["tiling"]["baseN"] == 256 and r["gain_vs_cann"] >= 1.0 for r in rows)
    assert refused.status_code == 422
    assert refused.headers["content-type"] == "application/problem+json"
    assert "compare_dtypes[1]" in refused.text


def test_exports_carry_mx_type_para() -> None:
    problem = parse_problem(MX_PROBLEM)
    tiling = complete_tiling(MX_TILING, problem, load_preset("Ascend950PR"))
    raw = export_tiling(tiling, ExportFormat.BIN)
    values = dict(zip(FIELD_ORDER, struct.unpack(f"<{len(FIELD_ORDER)}i", raw), strict=True))
    assert values["mxTypePara"] == 0x01010101 == 16843009
    cpp = export_tiling(tiling, ExportFormat.CPP).decode()
    assert "tiling.mxTypePara = 16843009;" in cpp
    assert "tiling.set_mxTypePara(16843009);" in cpp
    assert b'"mxTypePara":16843009' in export_tiling(tiling, ExportFormat.JSON)
