"""The explorer in a real browser: headless Debian Chromium against a real `tiler serve`.

Skipped when /usr/bin/chromium is missing, except under CI (see ``tests/app/_browser.py``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from simcore.evaluate import evaluate, parse_request
from tests.app._browser import Page, browser_page, screenshot
from tests.app._server import running_server


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # The product as users start it (`tiler serve`, SQLite in a fresh data directory).
    with running_server(tmp_path_factory.mktemp("explore"), {}, "explore") as server:
        yield server.url


@pytest.fixture(scope="module")
def page() -> Iterator[Page]:
    with browser_page() as page:
        yield page


def test_tune_a_problem_then_tweak_a_field(base_url: str, page: Page) -> None:
    page.goto(f"{base_url}/explore")
    page.select_option("#f-soc", "Ascend910B2")
    page.fill("#f-m", "1024")
    page.fill("#f-n", "2048")
    page.fill("#f-k", "512")
    page.select_option("#f-dtype", "bf16")
    page.click("#tune-button")
    page.wait_for_selector("#result")

    # The answer: a predicted time, a tiling field, the explanation and both pictures.
    time_us = float(page.inner_text("#time-us"))
    assert 0 < time_us < 1e6
    base_m = int(page.input_value("#t-baseM"))
    assert base_m > 0 and base_m % 16 == 0
    assert page.inner_text("#explanation").strip()
    assert page.locator("#timeline-section svg.timeline g.lane").count() >= 4
    assert page.locator("#timeline-section rect.bar").count() > 0
    assert page.locator("#roofline-section svg.roofline g.point[data-role=tuned]").count() == 1
    # The form remembers the problem.
    assert page.input_value("#f-m") == "1024"
    screenshot(page, "explore-tuned.png")

    # The time shown is the model's own prediction of the tiling shown.
    tiling = {
        name: int(page.input_value(f"#t-{name}"))
        for name in ("usedCoreNum", "singleCoreM", "singleCoreN", "baseM", "baseN", "baseK",
                     "depthA1", "depthB1", "stepM", "stepN", "stepKa", "stepKb",
                     "iterateOrder", "dbL0A", "dbL0B", "dbL0C")
    }  # fmt: skip
    problem = {"soc": "Ascend910B2", "m": 1024, "n": 2048, "k": 512, "dtype": "bf16"}
    tuned = evaluate(*parse_request({"problem": problem, "tiling": tiling}))
    assert time_us == pytest.approx(tuned["estimate"]["time_us"], abs=0.006)

    # Tweak one field: one L0C buffer instead of two (less L0C, so still legal), or two
    # instead of one when the tuned tiling had one.
    new_db = 1 if tiling["dbL0C"] == 2 else 2
    page.fill("#t-dbL0C", str(new_db))
    page.click("#evaluate-button")
    page.wait_for_selector("#result[data-view=evaluate]")
    assert page.input_value("#t-dbL0C") == str(new_db)
    tweaked = evaluate(*parse_request({"problem": problem, "tiling": {**tiling, "dbL0C": new_db}}))
    assert tweaked["valid"], tweaked["violations"]
    shown = float(page.inner_text("#time-us"))
    assert shown == pytest.approx(tweaked["estimate"]["time_us"], abs=0.006)
    # The page compares with the tuned tiling it came from, and redraws both pictures.
    assert f"tuned: {time_us:.2f} us" in page.inner_text("#versus")
    assert page.locator("#timeline-section rect.bar").count() > 0
    assert page.locator("#roofline-section g.point[data-role=tiling]").count() == 1
    assert page.locator("#roofline-section g.point[data-role=tuned]").count() == 1
    screenshot(page, "explore-tweaked.png")

    # An illegal tweak is explained on the page (and answered 422), not a traceback.
    page.fill("#t-baseM", "4096")
    with page.expect_response(lambda r: r.url.endswith("/explore/evaluate")) as info:
        page.click("#evaluate-button")
    assert info.value.status == 422
    page.wait_for_selector("#violations")
    assert "L0A_CAPACITY" in page.inner_text("#violations")
    assert "Traceback" not in page.content()
    screenshot(page, "explore-illegal.png")


def test_bad_problem_input_is_a_clear_message(base_url: str, page: Page) -> None:
    response = page.goto(f"{base_url}/explore?soc=Ascend910A&m=64&n=64&k=64&dtype=bf16")
    assert response is not None and response.status == 422
    message = page.inner_text("#error")
    assert "bf16" in message and "problem.dtype" in message
    assert "Traceback" not in page.content()


def test_a_dn_input_tunes_on_950_and_is_refused_by_name_on_910b(base_url: str, page: Page) -> None:
    page.goto(f"{base_url}/explore")
    page.select_option("#f-soc", "Ascend950PR_9589")
    for key, value in (("m", "256"), ("n", "512"), ("k", "1024")):
        page.fill(f"#f-{key}", value)
    page.select_option("#f-dtype", "bf16")
    page.select_option("#f-format_b", "DN")
    page.click("#tune-button")
    page.wait_for_selector("#result")
    assert float(page.inner_text("#time-us")) > 0
    assert page.input_value("#f-format_b") == "DN"
    screenshot(page, "explore-950-dn.png")

    # The same problem on a 910B: the page names the rule and the field, not a traceback.
    page.select_option("#f-soc", "Ascend910B2")
    with page.expect_response(lambda r: "/explore?" in r.url) as info:
        page.click("#tune-button")
    assert info.value.status == 422
    message = page.inner_text("#error")
    assert "DN_NEEDS_ARCH_3510" in message and "problem.format_b" in message
