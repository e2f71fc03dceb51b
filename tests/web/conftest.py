"""Fixtures of the page's tests in a browser (browser.py): a module's tests share one site
and one browser; each test's browser contexts are checked and closed when it ends."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright

from .browser import CHROMIUM, Visit
from .site import Site, running_site


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with running_site(tmp_path_factory.mktemp("web-browser")) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    # As root Chromium runs only without its sandbox; Playwright never downloads a browser.
    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=args)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def screens(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("screenshots")


@pytest.fixture
def visits(browser: Browser, site: Site) -> Iterator[list[Visit]]:
    made: list[Visit] = []
    yield made
    for visit in made:
        visit.close()
