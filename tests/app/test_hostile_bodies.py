"""Any byte sequence as a request body gets a 4xx problem+json from a real server, never a 5xx.

Property-based over raw bodies (any bytes) and over odd JSON a client or an attacker can send:
bare ``NaN`` / ``Infinity`` / ``-Infinity`` (Python's parser accepts them), numbers beyond any
float, lone surrogates (``"\\ud800"``), deep nesting. The value of a bad field is echoed in the
problem, so each of these once made the encoder fail with a 500.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.app._server import Server, running_server

ROUTES = ("/v1/tilings:tune", "/v1/tilings:evaluate", "/v1/tilings:validate", "/v1/tuning-jobs")
#: JSON text JSON forbids but Python's parser takes, numbers beyond a float, lone surrogates.
ODD_TOKENS = (
    "NaN", "Infinity", "-Infinity", "1e999", "-1e999", "9" * 400, '"\\ud800"', '"\\udfff x"',
    '"a\\u0000b"', "[" * 50 + "]" * 50, "{}", "[]", "null", "true", "1.5", "-0",
)  # fmt: skip
FIELDS = ("m", "n", "k", "soc", "dtype", "trans_a", "format_a", "bias")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    env = {
        "TILER_SEARCH_EXECUTOR": "thread",
        "TILER_DEFAULT_BUDGET": "0",
        "TILER_MAX_BUDGET": "0",
        "TILER_JOB_WORKERS": "0",
    }
    with running_server(tmp_path_factory.mktemp("hostile"), env) as srv:
        yield srv


@pytest.fixture(scope="module")
def client(server: Server) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


def _check_problem(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code < 500, response.text
    assert response.status_code >= 400, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = json.loads(response.content.decode("utf-8"))
    assert body["status"] == response.status_code
    return body


def _post(client: httpx.Client, path: str, raw: bytes) -> httpx.Response:
    return client.post(path, content=raw, headers={"content-type": "application/json"})


@pytest.mark.parametrize(
    ("field", "token"),
    [
        ("m", "NaN"), ("n", "Infinity"), ("k", "-Infinity"), ("m", "1e999"),
        ("soc", '"\\ud800"'), ("dtype", '"\\udfff"'),
    ],
)  # fmt: skip
def test_non_finite_numbers_and_lone_surrogates_name_the_field(
    client: httpx.Client, field: str, token: str
) -> None:
    problem = {"m": "1", "n": "1", "k": "1", "soc": '"Ascend910B2"'}
    problem[field] = token
    text = "{" + ",".join(f'"{k}":{v}' for k, v in problem.items()) + "}"
    for path, raw in (
        ("/v1/tilings:tune", f'{{"problem":{text},"budget":0}}'),
        ("/v1/tuning-jobs", f'{{"problems":[{text}],"budget":0}}'),
    ):
        body = _check_problem(_post(client, path, raw.encode()))
        assert body["status"] == 422
        fields = [e["field"] for e in body.get("errors", [])]
        assert any(f.endswith(field) for f in fields), body


@given(route=st.sampled_from(ROUTES), raw=st.binary(max_size=512))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_bytes_get_a_4xx_problem(client: httpx.Client, route: str, raw: bytes) -> None:
    _check_problem(_post(client, route, raw))


def _odd_value() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(ODD_TOKENS),
        st.integers().map(str),
        st.floats(allow_nan=True, allow_infinity=True).map(
            lambda x: (
                "NaN"
                if x != x
                else (
                    "Infinity"
                    if x == float("inf")
                    else "-Infinity"
                    if x == float("-inf")
                    else repr(x)
                )
            )
        ),
        st.text(max_size=8).map(lambda t: json.dumps(t)),
    )


@given(
    route=st.sampled_from(ROUTES),
    values=st.dictionaries(st.sampled_from(FIELDS), _odd_value(), min_size=1),
    depth=st.integers(min_value=0, max_value=3000),
)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_odd_json_gets_a_4xx_problem(
    client: httpx.Client, route: str, values: dict[str, str], depth: int
) -> None:
    problem = "{" + ",".join(f'"{k}":{v}' for k, v in values.items()) + "}"
    # Nested once in a field the schema does not expect, as deep as the draw says.
    nested = "[" * depth + "]" * depth
    key = "problems" if route == "/v1/tuning-jobs" else "problem"
    wrapped = f"[{problem}]" if key == "problems" else problem
    raw = f'{{"{key}":{wrapped},"budget":0,"x":{nested or "0"}}}'
    _check_problem(_post(client, route, raw.encode()))
