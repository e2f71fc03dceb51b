"""A replica's page in a real browser (docs/sync.md): the doctor page with writes the server
refused, one sent again with Retry, another given up with Drop and its reason, as its
local owner does it; the page passes axe and fits a phone; the server's words never run;
and a search shows what is not on the server yet."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Locator, Page

from .browser import Visit, accessible, needs_chromium
from .replica_site import QUEUED_TEXT, REFUSAL, Replica, running_replica

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def replica(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replica]:
    with running_replica(tmp_path_factory.mktemp("web-replica-browser")) as running:
        yield running


@pytest.fixture
def owner(browser: Browser, replica: Replica) -> Iterator[Page]:
    """The replica's local owner in a browser, signed in by `palimpsest web`'s link (the
    session it opened is given to this browser's context)."""
    visit = Visit(browser, replica)  # type: ignore[arg-type]  # it reads the address only
    name, value = replica.cookie.split("=", 1)
    visit.context.add_cookies([{"name": name, "value": value, "url": replica.base}])
    yield visit.page
    visit.close()  # every page shown had the headers; no dialog; nothing asked elsewhere


def not_taken(page: Page, queued: str) -> Locator:
    """The doctor page's entry of a write the server did not take."""
    section = page.get_by_role("region", name="Sync with the server")
    return section.get_by_role("listitem").filter(has=page.locator("code", has_text=queued))


def open_doctor(page: Page) -> None:
    page.goto("/review/doctor")
    page.get_by_role("heading", name="Review: doctor").wait_for()


def test_the_owner_retries_one_refused_write_and_drops_another_with_a_reason(
    replica: Replica, owner: Page, screens: Path
) -> None:
    retried = replica.refused("The pool is tuned by the on-call engineer")
    dropped = replica.refused("The pool never shrinks")
    open_doctor(owner)
    entry = not_taken(owner, retried)
    entry.get_by_role("button", name="Retry").wait_for()
    assert "refused by the server" in entry.inner_text()
    assert REFUSAL in entry.inner_text()  # the server's words, as text
    assert owner.evaluate("window.pwned") is None  # ...that never ran
    accessible(owner)
    owner.screenshot(path=screens / "replica-doctor.png", full_page=True)

    entry.get_by_role("button", name="Retry").click()
    owner.get_by_role("heading", name="Review: doctor").wait_for()
    assert not_taken(owner, retried).count() == 0
    queue: dict[str, Any] = replica.queue()
    again = queue[retried]["answer"]["because"].removeprefix("sent again as ")
    assert queue[retried]["state"] == "dropped" and queue[again]["state"] == "pending"

    form = not_taken(owner, dropped).get_by_role("form", name=f"Drop {dropped}")
    reason = form.get_by_label(f"Why give up {dropped}")
    assert form.evaluate("f => f.checkValidity()") is False  # no reason: the browser holds it
    reason.fill("the server is right: it never shrinks")
    reason.press("Enter")  # the keyboard alone
    owner.get_by_role("heading", name="Review: doctor").wait_for()
    assert not_taken(owner, dropped).count() == 0
    settled = replica.queue()[dropped]
    assert settled["state"] == "dropped"
    assert settled["answer"] == {"because": "the server is right: it never shrinks"}


def test_the_doctor_page_of_a_replica_fits_a_phone(
    replica: Replica, owner: Page, screens: Path
) -> None:
    queued = replica.refused("The pool is watched by the alerting rules " + "x" * 120)
    owner.set_viewport_size({"width": 390, "height": 844})
    open_doctor(owner)
    not_taken(owner, queued).get_by_role("button", name="Retry").wait_for()
    width = owner.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, width
    accessible(owner)
    owner.screenshot(path=screens / "replica-doctor-phone.png", full_page=True)


def test_a_search_shows_what_is_not_on_the_server_yet(replica: Replica, owner: Page) -> None:
    owner.goto("/")
    owner.get_by_label("Words or a question").fill("pool connections warms")
    owner.get_by_role("button", name="Search").click()
    waiting = owner.get_by_role("region", name="Not on the server yet")
    waiting.wait_for()
    assert QUEUED_TEXT in waiting.inner_text() and replica.remember_queued in waiting.inner_text()
    results = owner.get_by_role("region", name="Results")
    assert "A queued revise of this memory is not on the server yet" in results.inner_text()
    assert owner.evaluate("window.pwned") is None
    accessible(owner)
