"""The harness of the browser tests: Debian's Chromium, headless, driven by Playwright.

Each test module of the page in a browser uses its fixtures (conftest.py): `site` (a real
`serve --http` over site.py's store), `browser`, `screens` (where screenshots go) and
`visits`; `visit` opens one person's browser context, which checks every page it was shown
(security headers, no dialog, no request elsewhere) when the test ends, and `accessible`
runs axe-core on the page as it is.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import (
    Browser,
    BrowserContext,
    Page,
    Request,
    Response,
)

from palimpsest.web.guard import CSP

from .site import Site

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SERIOUS = {"serious", "critical"}
needs_chromium = pytest.mark.skipif(
    not os.path.exists(CHROMIUM), reason="needs Chromium: scripts/test installs it as root"
)


class Visit:
    """A browser context (one person's cookies) that checks every page it is shown."""

    def __init__(self, browser: Browser, site: Site, **options: Any):
        self.site = site
        self.context: BrowserContext = browser.new_context(base_url=site.base, **options)
        self.page: Page = self.context.new_page()
        self.dialogs: list[str] = []
        self.documents: list[Response] = []
        self.elsewhere: list[str] = []  # requests to any origin but the site's: none
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("response", self._seen)
        self.page.on("request", self._asked)

    def _asked(self, request: Request) -> None:
        if not request.url.startswith((self.site.base + "/", "http://evil.test/")):
            self.elsewhere.append(request.url)

    def _seen(self, response: Response) -> None:
        if response.request.resource_type == "document":
            self.documents.append(response)

    def sign_in(self, key: str) -> None:
        self.page.goto("/")
        self.page.get_by_label("Your personal key").fill(key)
        self.page.get_by_role("button", name="Sign in").click()
        self.page.get_by_role("heading", name="Search the memory").wait_for()

    def cookie(self) -> str:
        [cookie] = [c for c in self.context.cookies() if c["name"] == "palimpsest_session"]
        return f"{cookie['name']}={cookie['value']}"

    def pwned(self) -> Any:
        return self.page.evaluate("window.pwned")

    def close(self) -> None:
        for response in self.documents:  # every page shown carried the headers
            headers = response.headers
            assert headers.get("content-security-policy") == CSP, response.url
            assert headers.get("x-content-type-options") == "nosniff", response.url
            assert headers.get("referrer-policy") == "no-referrer", response.url
        assert self.dialogs == []
        assert self.elsewhere == []  # the page works with no internet
        self.context.close()


def visit(visits: list[Visit], browser: Browser, site: Site, **options: Any) -> Visit:
    made = Visit(browser, site, **options)
    visits.append(made)
    return made


def accessible(page: Page) -> None:
    """axe-core finds nothing serious or critical on the page as it is now."""
    results = Axe().run(page)
    serious = [v for v in results.response["violations"] if v["impact"] in SERIOUS]
    assert serious == [], results.generate_report()
