"""Headless Debian Chromium for the browser tests, driven by Playwright.

A module that imports this is skipped when /usr/bin/chromium is missing, except under CI (the
``CI`` environment variable), where ``.ci/run`` installs it and a missing browser is a failure.
Screenshots go to ``test-artifacts/`` at the repository root (ignored by git).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

if not CHROMIUM.exists():
    if os.environ.get("CI"):
        pytest.fail(
            f"{CHROMIUM} is missing: CI must install Debian's chromium (see .ci/run)",
            pytrace=False,
        )
    pytest.skip(
        f"{CHROMIUM} is missing; the README's test command installs it "
        "(`apt-get install -y --no-install-recommends chromium`)",
        allow_module_level=True,
    )

from playwright.sync_api import Page, Route, sync_playwright  # noqa: E402

__all__ = ["Page", "Route", "browser_page", "screenshot"]


@contextmanager
def browser_page() -> Iterator[Page]:
    """A page of a fresh headless Chromium (closed afterwards)."""
    with sync_playwright() as pw:
        # Root in CI containers: Chromium's sandbox needs user namespaces it may not get. The
        # background-networking flags keep it from calling home on a machine without internet.
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-background-networking", "--disable-component-update"],
        )
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        try:
            yield context.new_page()
        finally:
            context.close()
            browser.close()


def screenshot(page: Page, name: str) -> None:
    """Saves a full-page screenshot under ``test-artifacts/``."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)
