"""Swagger UI and ReDoc in a real browser that can reach nothing but the server.

Every request the page makes to another origin is aborted (as on an air-gapped build host): the
pages must still draw the whole API from the scripts the server itself serves. Skipped when
/usr/bin/chromium is missing, except under CI (see ``tests/app/_browser.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from tests.app._browser import Page, Route, browser_page, screenshot
from tests.app._server import Server, running_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server(tmp_path_factory.mktemp("docs"), {"TILER_JOB_WORKERS": "0"}) as srv:
        yield srv


class _Offline:
    """Lets requests to the server through and aborts (and records) every other one."""

    def __init__(self, server: Server) -> None:
        self.origin = urlsplit(server.url).netloc
        self.blocked: list[str] = []

    def __call__(self, route: Route) -> None:
        url = route.request.url
        if urlsplit(url).netloc == self.origin or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()


@pytest.fixture
def offline_page(server: Server) -> Iterator[tuple[Page, _Offline]]:
    with browser_page() as page:
        offline = _Offline(server)
        page.context.route("**/*", offline)
        yield page, offline


def test_swagger_ui_lists_every_operation_without_internet(
    server: Server, offline_page: tuple[Page, _Offline]
) -> None:
    page, offline = offline_page
    document = page.request.get(f"{server.url}/v1/openapi.json").json()
    operations = {
        f"{method.upper()} {path}" for path, item in document["paths"].items() for method in item
    }
    page.goto(f"{server.url}/docs")
    page.wait_for_selector(".opblock", timeout=30_000)
    shown = {
        f"{block.locator('.opblock-summary-method').inner_text().strip()} "
        f"{block.locator('.opblock-summary-path').get_attribute('data-path')}"
        for block in page.locator(".opblock").all()
    }
    assert shown == operations
    assert len(operations) >= 14
    # Nothing the page needed came from outside: its script and style are the server's.
    assert not [url for url in offline.blocked if url.endswith((".js", ".css"))], offline.blocked

    # The tune operation: its examples carry no budget, its answer example invents no keys,
    # and each error status shows its own problem type.
    tune = page.locator(".opblock", has=page.locator("[data-path='/v1/tilings:tune']"))
    tune.locator(".opblock-summary").click()
    tune.locator(".responses-wrapper").wait_for()
    text = tune.inner_text()
    assert '"budget"' not in text.split("Responses")[0]
    assert "additionalProp" not in text
    for slug in ("malformed-json", "payload-too-large", "unsupported-media-type"):
        assert f"/problems/{slug}" in text
    screenshot(page, "docs-swagger-offline.png")


def test_redoc_renders_the_api_without_internet(
    server: Server, offline_page: tuple[Page, _Offline]
) -> None:
    page, offline = offline_page
    page.goto(f"{server.url}/redoc")
    # ReDoc draws each operation as a section headed by its summary.
    page.locator("h2", has_text="Tune a TCubeTiling (cached)").wait_for(timeout=30_000)
    assert page.locator("h2", has_text="Submit a batch tuning job").count() == 1
    assert not [url for url in offline.blocked if url.endswith((".js", ".css"))], offline.blocked
    screenshot(page, "docs-redoc-offline.png")
