"""Requests over HTTP: good ones answer as the CLI does, bad ones are problem+json naming why.

One ``tiler serve`` process (SQLite in a temporary directory) serves the module; the OpenAPI
document is checked in-process.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from app.api.examples import TUNE_EXAMPLES
from app.main import create_app
from app.schemas import TuneBody
from app.settings import Settings
from app.tuning import prepare_tune
from simcore.evaluate import evaluate, parse_request
from tests.app._server import REPO, Server, running_server

GEMM = {"soc": "Ascend910B2", "m": 256, "n": 256, "k": 256, "dtype": "fp16"}
GOOD_TILING = {
    "usedCoreNum": 24, "singleCoreM": 1024, "singleCoreN": 768, "baseM": 128, "baseN": 256,
    "baseK": 64, "depthA1": 16, "depthB1": 8, "stepM": 1, "stepN": 1, "stepKa": 8, "stepKb": 4,
}  # fmt: skip
BIG = {"soc": "Ascend910B2", "m": 4096, "n": 4096, "k": 4096, "dtype": "fp16"}
INT32_MAX = 2**31 - 1
TOKEN = "s3cret"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("errors")
    env = {
        "TILER_SEARCH_EXECUTOR": "thread",
        "TILER_DEFAULT_BUDGET": "0",
        "TILER_MAX_BUDGET": "50",
        "TILER_MAX_BODY_BYTES": "4096",
        # Server.client() sends it; test_api_token_... checks what happens without it.
        "TILER_API_TOKEN": TOKEN,
    }
    with running_server(tmp, env) as srv:
        yield srv


@dataclass(frozen=True)
class Case:
    """One bad request and what the answer must say."""

    id: str
    path: str
    body: Any
    status: int
    type: str
    names: tuple[str, ...]  # strings the problem must contain (field, rule or violation id)
    raw: bytes | None = None
    content_type: str = "application/json"  # of a raw body ("": none)
    absent: tuple[str, ...] = ()  # strings the problem must not contain


def tune(problem: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"problem": problem, "budget": 0, **extra}


CASES = [
    Case("m_zero", "/v1/tilings:tune", tune({**GEMM, "m": 0}), 422, "validation-error",
         ("problem.m", "greater_than_equal")),
    Case("n_negative", "/v1/tilings:tune", tune({**GEMM, "n": -5}), 422, "validation-error",
         ("problem.n",)),
    Case("k_beyond_int32", "/v1/tilings:tune", tune({**GEMM, "k": 2**40}), 422,
         "validation-error", ("problem.k", "less_than_equal")),
    Case("every_dim_bad_at_once", "/v1/tilings:tune",
         tune({**GEMM, "m": 0, "n": -1, "k": 2**33}), 422, "validation-error",
         ("problem.m", "problem.n", "problem.k")),
    Case("huge_but_int32_exceeds_device_memory", "/v1/tilings:tune",
         tune({**GEMM, "m": INT32_MAX, "n": INT32_MAX, "k": 1024, "trans_b": True}), 422,
         "unsupported-problem", ("exceeds_device_memory",)),
    Case("k_over_65535_nd_a_not_transposed", "/v1/tilings:tune", tune({**GEMM, "k": 70000}),
         422, "infeasible-problem", ("ND_A_KA_RANGE",)),
    Case("nz_a_misaligned_m", "/v1/tilings:tune", tune({**GEMM, "m": 100, "format_a": "NZ"}),
         422, "infeasible-problem", ("NZ_A_M_ALIGN",)),
    Case("unknown_dtype", "/v1/tilings:tune", tune({**GEMM, "dtype": "fp8"}), 422,
         "validation-error", ("problem.dtype",)),
    Case("dtype_not_on_chip", "/v1/tilings:tune",
         tune({**GEMM, "soc": "Ascend910A", "dtype": "bf16"}), 422, "unsupported-problem",
         ("problem.dtype", "Ascend910A")),
    Case("unknown_soc", "/v1/tilings:tune", tune({**GEMM, "soc": "Ascend999"}), 422,
         "unknown-soc", ("Ascend999", "problem.soc")),
    Case("unknown_template", "/v1/tilings:tune", tune({**GEMM, "template": "fast"}), 422,
         "validation-error", ("problem.template",)),
    Case("extra_top_level_field", "/v1/tilings:tune", tune(GEMM, colour="red"), 422,
         "validation-error", ("colour", "unknown_field")),
    Case("extra_problem_field", "/v1/tilings:tune", tune({**GEMM, "batch": 4}), 422,
         "validation-error", ("problem.batch", "unknown_field")),
    Case("string_for_int", "/v1/tilings:tune", tune({**GEMM, "m": "4096"}), 422,
         "validation-error", ("problem.m",)),
    Case("budget_over_server_limit", "/v1/tilings:tune", {"problem": GEMM, "budget": 51}, 422,
         "validation-error", ("budget", "max_budget")),
    Case("unknown_sampler", "/v1/tilings:tune", tune(GEMM, sampler="anneal"), 422,
         "validation-error", ("sampler",)),
    Case("pin_not_a_struct_field", "/v1/tilings:tune", tune(GEMM, fixed={"baseQ": 16}), 422,
         "validation-error", ("fixed.baseQ",)),
    Case("malformed_json", "/v1/tilings:tune", None, 400, "malformed-json", ("body",),
         raw=b'{"problem": {"m": 1,'),
    Case("body_not_an_object", "/v1/tilings:tune", [1, 2, 3], 422, "validation-error", ()),
    Case("json_sent_as_text_plain", "/v1/tilings:tune", None, 415, "unsupported-media-type",
         ("content-type", "application/json", "text/plain"),
         raw=json.dumps(tune(GEMM)).encode(), content_type="text/plain",
         absent=("valid dictionary",)),
    Case("json_without_content_type", "/v1/tilings:validate", None, 415,
         "unsupported-media-type", ("application/json", "no Content-Type"),
         raw=json.dumps({"problem": BIG, "tiling": GOOD_TILING}).encode(), content_type=""),
    Case("job_sent_as_form", "/v1/tuning-jobs", None, 415, "unsupported-media-type",
         ("application/json", "application/x-www-form-urlencoded"),
         raw=b"problems=1", content_type="application/x-www-form-urlencoded"),
    Case("dtype_int32_is_no_input_dtype", "/v1/tilings:tune", tune({**GEMM, "dtype": "int32"}),
         422, "validation-error",
         ('"field": "problem.dtype"', "fp16, bf16, fp32, hf32, int8, int4"),
         absent=("<DType", '"field": "problem",')),
    Case("out_dtype_not_from_dtype", "/v1/tilings:tune",
         tune({**GEMM, "out_dtype": "int8"}), 422, "validation-error",
         ('"field": "problem.out_dtype"', '"limit": ["fp16", "bf16", "fp32"]'),
         absent=("<DType",)),
    Case("bias_dtype_not_with_dtype", "/v1/tilings:tune",
         tune({**GEMM, "bias": True, "bias_dtype": "int32"}), 422, "validation-error",
         ('"field": "problem.bias_dtype"',), absent=("<DType",)),
    Case("illegal_tiling_to_evaluate", "/v1/tilings:evaluate",
         {"problem": BIG, "tiling": {**GOOD_TILING, "baseM": 512}}, 422, "illegal-tiling",
         ("L0A_CAPACITY", "L0C_CAPACITY")),
    Case("tiling_missing_required_fields", "/v1/tilings:evaluate",
         {"problem": BIG, "tiling": {"baseM": 128}}, 422, "validation-error",
         ("tiling.usedCoreNum", "tiling.stepKb")),
    Case("tiling_unknown_field", "/v1/tilings:validate",
         {"problem": BIG, "tiling": {**GOOD_TILING, "baseQ": 1}}, 422, "validation-error",
         ("tiling.baseQ",)),
    Case("tiling_non_integer", "/v1/tilings:validate",
         {"problem": BIG, "tiling": {**GOOD_TILING, "baseK": 64.5}}, 422, "validation-error",
         ("tiling.baseK",)),
    Case("payload_too_large", "/v1/tilings:tune", tune({**GEMM}, pad="x" * 5000), 413,
         "payload-too-large", ("4096",)),
    Case("ub_unknown_soc", "/v1/ub:analyze",
         {"soc": "Ascend999", "op": "add", "dst": 0, "src0": 0, "src1": 256}, 422,
         "unknown-soc", ('"field": "soc"',)),
    Case("ub_unaligned_address", "/v1/ub:analyze",
         {"op": "add", "dst": 3, "src0": 0, "src1": 256}, 422, "validation-error",
         ("dst", "ub_alignment")),
]  # fmt: skip


def _send(server: Server, case: Case) -> httpx.Response:
    with server.client() as client:
        if case.raw is not None:
            headers = {"content-type": case.content_type} if case.content_type else {}
            return client.post(case.path, content=case.raw, headers=headers)
        return client.post(case.path, json=case.body)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_a_problem_naming_the_cause(server: Server, case: Case) -> None:
    response = _send(server, case)
    assert response.status_code == case.status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["type"] == f"/problems/{case.type}"
    assert problem["status"] == case.status
    assert problem["title"]
    assert problem["detail"]
    text = json.dumps(problem)
    for name in case.names:
        assert name in text, f"{name!r} not named in {text}"
    for name in case.absent:
        assert name not in text, f"{name!r} in {text}"


def test_validation_lists_every_bad_field_with_value_and_limit(server: Server) -> None:
    response = _send(server, CASES[3])
    errors = {e["field"]: e for e in response.json()["errors"]}
    assert set(errors) == {"problem.m", "problem.n", "problem.k"}
    assert errors["problem.m"]["value"] == 0
    assert errors["problem.m"]["limit"] == "ge 1"
    assert errors["problem.k"]["limit"] == f"le {INT32_MAX}"


def test_illegal_tiling_names_each_violation_with_value_and_limit(server: Server) -> None:
    case = next(c for c in CASES if c.id == "illegal_tiling_to_evaluate")
    violations = {v["id"]: v for v in _send(server, case).json()["violations"]}
    # baseM 512 x baseK 64 x fp16 x dbL0A 2 = 128 KiB in a 64 KiB L0A.
    assert violations["L0A_CAPACITY"]["value"] == 512 * 64 * 2 * 2
    assert violations["L0A_CAPACITY"]["limit"] == 64 * 1024
    assert violations["L0A_CAPACITY"]["fields"] == ["baseM", "baseK", "dbL0A"]


def test_unknown_ids_routes_and_methods(server: Server) -> None:
    with server.client() as client:
        missing = client.get("/v1/tilings/" + "0" * 24)
        bad_id = client.get("/v1/tilings/not-an-id")
        soc = client.get("/v1/hardware/Ascend999")
        route = client.get("/v2/nothing")
        method = client.delete("/v1/hardware")
        cursor = client.get("/v1/tilings", params={"cursor": "bm90IGEgY3Vyc29y"})
    assert (missing.status_code, missing.json()["type"]) == (404, "/problems/not-found")
    assert (bad_id.status_code, bad_id.json()["type"]) == (422, "/problems/validation-error")
    assert (soc.status_code, soc.json()["type"]) == (404, "/problems/unknown-soc")
    assert "Ascend910B2" in soc.json()["known"]
    assert (route.status_code, route.json()["type"]) == (404, "/problems/not-found")
    assert (method.status_code, method.json()["type"]) == (405, "/problems/method-not-allowed")
    assert (cursor.status_code, cursor.json()["errors"][0]["field"]) == (422, "cursor")
    for response in (missing, bad_id, soc, route, method, cursor):
        assert response.headers["content-type"] == "application/problem+json"


def test_problem_types_are_documented(server: Server) -> None:
    with server.client() as client:
        page = client.get("/problems/illegal-tiling")
        unknown = client.get("/problems/nothing-like-this")
    assert page.status_code == 200
    assert "Illegal tiling" in page.text
    assert unknown.status_code == 404


def test_api_token_is_required_on_non_get_routes_only(server: Server) -> None:
    body = {"problem": BIG, "tiling": GOOD_TILING}
    with httpx.Client(base_url=server.url, timeout=60) as client:
        anonymous = client.post("/v1/tilings:validate", json=body)
        wrong = client.post(
            "/v1/tilings:validate", json=body, headers={"authorization": "Bearer guess"}
        )
        right = client.post(
            "/v1/tilings:validate", json=body, headers={"authorization": f"Bearer {TOKEN}"}
        )
        read = client.get("/v1/hardware")
    assert anonymous.status_code == 401
    assert anonymous.headers["content-type"] == "application/problem+json"
    assert anonymous.json()["type"] == "/problems/unauthorized"
    assert anonymous.headers["www-authenticate"].startswith("Bearer")
    assert wrong.status_code == 401
    assert right.status_code == 200
    assert right.json()["valid"] is True
    assert read.status_code == 200


def test_validate_and_evaluate_answer_as_the_cli_does(server: Server) -> None:
    body = {"problem": BIG, "tiling": GOOD_TILING}
    with server.client() as client:
        validated = client.post("/v1/tilings:validate", json=body)
        evaluated = client.post("/v1/tilings:evaluate", json=body)
        illegal = client.post(
            "/v1/tilings:validate", json={**body, "tiling": {**GOOD_TILING, "baseM": 512}}
        )
    assert validated.json() == {"valid": True, "violations": [], "warnings": []}
    # The same prediction `tiler evaluate` prints (simcore.evaluate), plus the explanation.
    expected = evaluate(*parse_request(body))
    answer = evaluated.json()
    assert answer["estimate"] == expected["estimate"]
    assert answer["valid"] is True
    assert answer["explanation"]
    # validate reports an illegal tiling (200, valid false); only evaluate refuses it (422).
    assert illegal.status_code == 200
    assert illegal.json()["valid"] is False
    assert {v["id"] for v in illegal.json()["violations"]} >= {"L0A_CAPACITY"}


def test_evaluate_names_the_models_caveats_for_the_problem(server: Server) -> None:
    # A 16384-element row pitch on 910B: catlass pads it ("meta conflicts"), the model does not.
    problem = {**BIG, "n": 16384, "k": 16384}
    tiling = {**GOOD_TILING, "singleCoreN": 2736}
    with server.client() as client:
        body = {"problem": problem, "tiling": tiling}
        conflicted = client.post("/v1/tilings:evaluate", json=body)
        plain = client.post("/v1/tilings:evaluate", json={"problem": BIG, "tiling": GOOD_TILING})
    assert conflicted.status_code == 200, conflicted.text
    caveats = conflicted.json()["explanation"]["caveats"]
    assert caveats[0]["id"] == "meta_conflict_stride"
    assert "A (inner axis 16384, outer 4096)" in caveats[0]["message"]
    ids = [c["id"] for c in plain.json()["explanation"]["caveats"]]
    assert "meta_conflict_stride" not in ids


def test_hardware_and_ub_analyze(server: Server) -> None:
    with server.client() as client:
        listing = client.get("/v1/hardware").json()
        one = client.get("/v1/hardware/Ascend910B2").json()
        conflict = client.post(
            "/v1/ub:analyze",
            json={"op": "add", "dtype": "fp16", "dst": 0, "src0": 0, "src1": 256, "repeat": 4},
        ).json()
        apart = client.post(
            "/v1/ub:analyze",
            json={"op": "add", "dtype": "fp16", "dst": 0, "src0": "0x8000", "src1": "0x10000"},
        ).json()
    socs = {p["soc"]: p for p in listing}
    assert "Ascend310P3" in socs
    assert socs["Ascend910B2"]["digest"] == one["digest"]
    assert one["values"]["cube_core_count"] == 24
    assert one["sources"]
    assert conflict["conflicts"]
    assert conflict["cycles"] > apart["cycles"]
    assert apart["instruction"]["src0"] == 0x8000


def test_openapi_document_has_tags_summaries_examples_and_no_health_routes() -> None:
    schema = create_app(Settings()).openapi()
    assert {t["name"] for t in schema["tags"]} >= {"tilings", "hardware"}
    paths = schema["paths"]
    for path in ("/healthz", "/readyz", "/metrics"):
        assert path not in paths
    for path, item in paths.items():
        for method, operation in item.items():
            assert operation.get("tags"), f"{method} {path} has no tag"
            assert operation.get("summary"), f"{method} {path} has no summary"
            for status, response in operation["responses"].items():
                if status.startswith(("4", "5")):
                    assert list(response["content"]) == ["application/problem+json"]
    tune_op = paths["/v1/tilings:tune"]["post"]
    examples = tune_op["requestBody"]["content"]["application/json"]["examples"]
    summaries = " | ".join(e["summary"] for e in examples.values())
    for wanted in ("910B2 fp16 4096^3", "M = 1", "bf16 with transposed B", "310P3 int8"):
        assert wanted in summaries
    # Every example is a request the service accepts (parsed as the route parses it).
    for example in TUNE_EXAMPLES.values():
        body = TuneBody.model_validate(example["value"])
        prepare_tune(body.tuner_request(None), body.problem)


def test_each_error_status_has_its_own_example_and_the_limits_are_the_servers(
    server: Server,
) -> None:
    with server.client() as client:
        schema = client.get("/v1/openapi.json").json()
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            for status, response in operation["responses"].items():
                if status.startswith("4"):
                    example = response["content"]["application/problem+json"]["example"]
                    assert example["status"] == int(status), f"{method} {path} {status}"
    tune_op = schema["paths"]["/v1/tilings:tune"]["post"]
    for example in tune_op["requestBody"]["content"]["application/json"]["examples"].values():
        assert "budget" not in example["value"]
    # This server's limits (TILER_MAX_BUDGET=50, the default TILER_JOB_MAX_PROBLEMS), as its
    # 422s say them.
    components = schema["components"]["schemas"]

    def maximum(name: str, prop: str, key: str) -> int:
        branches = components[name]["properties"][prop].get("anyOf")
        return next(b[key] for b in branches or [components[name]["properties"][prop]] if key in b)

    assert maximum("TuneBody", "budget", "maximum") == 50
    assert maximum("JobBody", "budget", "maximum") == 50
    assert maximum("JobBody", "problems", "maxItems") == Settings().job_max_problems


def test_readme_first_command_starts_the_server_and_names_the_docs() -> None:
    readme = (REPO / "README.md").read_text()
    first = next(line for line in readme.splitlines() if line.startswith(("uv ", "python3 ")))
    assert "tiler serve" in first


def test_serve_prints_where_the_docs_are(server: Server) -> None:
    assert f"Swagger UI at {server.url}/docs" in server.log.read_text()
    with server.client() as client:
        docs = client.get("/docs")
    assert docs.status_code == 200
    assert "/v1/openapi.json" in docs.text


def test_a_chunked_body_over_the_limit_is_413_and_one_under_it_is_served(server: Server) -> None:
    # A generator body has no Content-Length: httpx sends it chunked.
    def chunks(body: bytes) -> Iterator[bytes]:
        for i in range(0, len(body), 1000):
            yield body[i : i + 1000]

    big = json.dumps(tune(GEMM, pad="x" * 5000)).encode()
    small = json.dumps({"problem": BIG, "tiling": GOOD_TILING}).encode()
    headers = {"content-type": "application/json"}
    with server.client() as client:
        too_large = client.post("/v1/tilings:tune", content=chunks(big), headers=headers)
        fits = client.post("/v1/tilings:validate", content=chunks(small), headers=headers)
    assert too_large.status_code == 413
    assert too_large.json()["type"] == "/problems/payload-too-large"
    assert fits.status_code == 200
    assert fits.json()["valid"] is True
