"""schemathesis against the OpenAPI document, over a real server: no 5xx, and every response
matches what the document says (status, content type, body schema, headers).

The document is built from the app itself; the requests go to a ``tiler serve`` process. The
number of examples is bounded per operation (``MAX_EXAMPLES``, fuzzing phase) plus each
operation's documented examples; the unbounded coverage phase is off. The server caps ``budget`` at
1 trial (``TILER_MAX_BUDGET``), so every tune that schemathesis sends with a larger budget is a
documented 422 and the ones it accepts stay short.

Excluded check, with the reason: ``positive_data_acceptance`` - a request can match the schema
and still be rejected with a documented 422, because the rules depend on the chip and on the
tiling (a dtype the SoC lacks, a tiling that overflows L0A, a budget above the server's limit);
the schema cannot express them. Every such 422 is still checked for its status, content type
and problem+json body.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import positive_data_acceptance

from app.main import create_app
from app.settings import Settings
from tests.app._server import Server, running_server

MAX_EXAMPLES = 25

# The coverage phase (boundary values of every field, not bounded by max_examples) sends
# thousands of requests; the examples phase (the documented examples) and the fuzzing phase
# (positive and negative data, MAX_EXAMPLES per operation) keep the run bounded.
CONFIG = SchemathesisConfig.from_dict({"phases": {"coverage": {"enabled": False}}})
schema = schemathesis.openapi.from_dict(create_app(Settings()).openapi(), config=CONFIG)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    env = {
        "TILER_SEARCH_EXECUTOR": "thread",
        "TILER_DEFAULT_BUDGET": "0",
        "TILER_MAX_BUDGET": "1",
    }
    with running_server(tmp_path_factory.mktemp("schema"), env) as srv:
        yield srv


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
