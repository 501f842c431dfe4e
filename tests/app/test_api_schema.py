"""schemathesis against the OpenAPI document, over a real server: no 5xx, and every response
matches what the document says (status, content type, body schema, headers).

The document is built from the app with the server's settings; the requests go to a ``tiler
serve`` process. The number of examples is bounded per operation (``MAX_EXAMPLES``, fuzzing
phase) plus each operation's documented examples; the unbounded coverage phase is off. The server
caps ``budget`` at 1 trial (``TILER_MAX_BUDGET``) and a job at 20 shapes
(``TILER_JOB_MAX_PROBLEMS``), and the document says so: schemathesis never sends a budget or a
job the schema allows and the server refuses, and the tunes it sends stay short.

The stateful phase chains operations through the links schemathesis infers from the document (a
submitted or listed job's id into ``GET /v1/tuning-jobs/{id}``, its results and its event
stream), with bounded scenarios (``STATEFUL_EXAMPLES`` of at most six steps).

Excluded check, with the reason: ``positive_data_acceptance`` - a request can match the schema
and still be rejected with a documented 422, because the rules depend on the chip and on the
tiling (a dtype the SoC lacks, a tiling that overflows L0A, a budget above the server's limit);
the schema cannot express them. Every such 422 is still checked for its status, content type
and problem+json body.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import positive_data_acceptance

from app.main import create_app
from app.settings import Settings
from tests.app._server import Server, running_server

MAX_EXAMPLES = 25
STATEFUL_EXAMPLES = 15
#: The server's settings, in the environment of the server and in the document's app.
SERVER_ENV = {
    "TILER_SEARCH_EXECUTOR": "thread",
    "TILER_DEFAULT_BUDGET": "0",
    "TILER_MAX_BUDGET": "1",
    "TILER_JOB_MAX_PROBLEMS": "20",
}

# The coverage phase (boundary values of every field, not bounded by max_examples) sends
# thousands of requests; the examples phase (the documented examples) and the fuzzing phase
# (positive and negative data, MAX_EXAMPLES per operation) keep the run bounded.
CONFIG = SchemathesisConfig.from_dict({"phases": {"coverage": {"enabled": False}}})
SETTINGS = Settings(default_budget=0, max_budget=1, job_max_problems=20)
schema = schemathesis.openapi.from_dict(create_app(SETTINGS).openapi(), config=CONFIG)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server(tmp_path_factory.mktemp("schema"), SERVER_ENV) as srv:
        yield srv


def test_the_document_is_the_servers(server: Server) -> None:
    served = httpx.get(f"{server.url}/v1/openapi.json", timeout=60).json()
    assert served == schema.raw_schema
    events = served["paths"]["/v1/tuning-jobs/{id}/events"]["get"]["responses"]["200"]
    assert list(events["content"]) == ["text/event-stream"]


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_api_conforms_to_its_schema(case: schemathesis.Case, server: Server) -> None:
    case.call_and_validate(
        base_url=server.url, excluded_checks=[positive_data_acceptance], timeout=120
    )


def test_api_conforms_to_its_schema_statefully(server: Server) -> None:
    machine = schema.as_state_machine()

    class Workflow(machine):  # type: ignore[valid-type,misc]
        def get_call_kwargs(self, case: schemathesis.Case) -> dict[str, Any]:
            return {"base_url": server.url, "timeout": 120}

        def validate_response(
            self,
            response: Any,
            case: schemathesis.Case,
            additional_checks: Any = None,
            **kwargs: Any,
        ) -> None:
            case.validate_response(
                response, excluded_checks=[positive_data_acceptance], transport_kwargs=kwargs
            )

    Workflow.run(
        settings=settings(
            max_examples=STATEFUL_EXAMPLES,
            stateful_step_count=6,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
    )
