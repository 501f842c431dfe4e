"""The explorer on a 950 chip, over HTTP against a real server: DN inputs (issue 21).

The form offers DN (column-major, the Matmul API's COLUMN_MAJOR) for A and B; a 950 chip tunes
it as the API does, any other chip answers the named rule on the page.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from tests.app._server import running_server

ENV = {"TILER_DEFAULT_BUDGET": "4", "TILER_SEARCH_WORKERS": "1", "TILER_JOB_WORKERS": "0"}
DN_A = {
    "soc": "Ascend950PR_9589", "m": 512, "n": 768, "k": 1024, "dtype": "bf16", "format_a": "DN",
}  # fmt: skip


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_server(tmp_path_factory.mktemp("explore950"), ENV) as server:
        yield server.url


def _options(page: str, name: str) -> list[str]:
    select = re.search(rf"<select name='{name}'[^>]*>(.*?)</select>", page, re.S)
    assert select, page[:2000]
    return re.findall(r"<option value='([^']*)'", select.group(1))


def _chosen(page: str, name: str) -> str:
    select = re.search(rf"<select name='{name}'[^>]*>(.*?)</select>", page, re.S)
    assert select
    match = re.search(r"<option value='([^']*)' selected>", select.group(1))
    assert match, select.group(1)
    return match.group(1)


def test_the_form_offers_dn_for_a_and_b(url: str) -> None:
    page = httpx.get(f"{url}/explore", timeout=60)
    assert page.status_code == 200
    assert _options(page.text, "format_a") == ["ND", "NZ", "DN"]
    assert _options(page.text, "format_b") == ["ND", "NZ", "DN"]
    assert "DN" not in _options(page.text, "format_c")
    assert "Ascend 950 only" in page.text


def test_a_dn_input_on_950_tunes_as_the_api_does(url: str) -> None:
    page = httpx.get(f"{url}/explore", params=DN_A, timeout=300)
    assert page.status_code == 200, page.text[:2000]
    shown = re.search(r"id='time-us'>([^<]+)<", page.text)
    assert shown, page.text[:2000]
    # The page keeps the layout chosen, and its answer is the API's for the same problem.
    assert _chosen(page.text, "format_a") == "DN"
    assert _chosen(page.text, "soc") == "Ascend950PR_9589"
    with httpx.Client(base_url=url, timeout=300) as client:
        api = client.post("/v1/tilings:tune", json={"problem": DN_A})
    assert api.status_code == 200, api.text
    assert api.json()["cached"] is True
    assert f"{api.json()['estimate']['time_us']:.2f}" == shown.group(1)


def test_dn_on_a_910b_chip_names_the_rule_on_the_page(url: str) -> None:
    page = httpx.get(
        f"{url}/explore", params={**DN_A, "soc": "Ascend910B2", "format_a": "ND",
                                  "format_b": "DN"}, timeout=60,
    )  # fmt: skip
    assert page.status_code == 422
    assert "DN_NEEDS_ARCH_3510" in page.text and "problem.format_b" in page.text
    assert "Traceback" not in page.text
    assert _chosen(page.text, "format_b") == "DN"
