"""The web page in a real browser: Debian's Chromium, headless, driven by Playwright.

What a person relies on: signing in, searching, reading a memory whose every field an
agent wrote carries markup (none of it runs: each would raise `window.pwned`), a viewer
offered no action, a forged post from another site refused, a revoked key or a sign-out
ending the cookie at the next click, the security headers on every page, and no serious
accessibility violation (axe-core, bundled in axe-playwright-python: offline). Screenshots
of the main pages go to pytest's temporary directory.
"""

from __future__ import annotations

from pathlib import Path

import httpx2
from playwright.sync_api import (
    Browser,
    Page,
)

from palimpsest.web.guard import CSP

from .browser import Visit, accessible, needs_chromium, visit
from .site import (
    DISPUTE_REASON,
    DUPLICATES,
    IMAGE,
    NOTEBOOK,
    REASON,
    SCRIPT,
    SESSION,
    STALE,
    TAG,
    TITLE,
    Site,
)

pytestmark = needs_chromium


def test_a_person_signs_in_searches_and_reads_a_memory_where_no_markup_runs(
    browser: Browser, site: Site, screens: Path, visits: list[Visit]
) -> None:
    editor = visit(visits, browser, site)
    editor.page.goto("/")
    accessible(editor.page)
    editor.page.screenshot(path=screens / "sign-in.png", full_page=True)
    editor.sign_in(site.editor_key)

    page = editor.page
    page.get_by_label("Words or a question").fill("pool connections")
    page.get_by_label("Kind").select_option("fact")
    page.get_by_label("Tags").fill("pool")
    page.get_by_role("button", name="Search").click()
    results = page.get_by_role("region", name="Results")
    results.wait_for()
    assert "Matched by its words: shares “pool”, “connections”" in results.inner_text()
    assert page.get_by_role("link", name=TITLE).count() == 1  # the title, shown as text
    accessible(page)
    page.screenshot(path=screens / "search.png", full_page=True)

    page.get_by_role("link", name=TITLE).click()
    page.get_by_role("heading", name="History").wait_for()
    assert page.get_by_role("heading", level=1).inner_text() == TITLE
    shown = page.locator("main").inner_text()
    for markup in (SCRIPT, IMAGE, TAG, NOTEBOOK, REASON, "agent:<img src=x onerror="):
        assert markup in shown, markup  # shown as the agent wrote it...
    made_here = ".chart"  # the page's own pictures (pages/graphs.py), no agent's markup
    assert page.locator(f"main script, main img, main svg:not({made_here})").count() == 0
    assert editor.pwned() is None
    assert page.get_by_role("rowheader", name="text", exact=True).count() >= 1  # a change
    accessible(page)
    page.screenshot(path=screens / "memory.png", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})  # a phone
    page.screenshot(path=screens / "memory-phone.png", full_page=True)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, "the page scrolls sideways on a phone"

    # The editor's own memory: Verify, with what was checked, through the page's own form.
    page.goto(f"/memories/{site.anas_memory_id}")
    page.get_by_label("Why it still holds (what you checked)").fill("load test rerun")
    page.get_by_role("button", name="Verify").click()
    page.get_by_role("heading", name="History").wait_for()
    assert "verified at" in page.locator("dl.fields").inner_text()
    assert "load test rerun" in page.locator("ol.timeline").inner_text()


def test_a_viewers_page_has_no_edit_action(
    browser: Browser, site: Site, visits: list[Visit]
) -> None:
    viewer = visit(visits, browser, site)
    viewer.sign_in(site.viewer_key)
    for memory_id in (site.memory_id, site.anas_memory_id):
        viewer.page.goto(f"/memories/{memory_id}")
        viewer.page.get_by_role("heading", name="History").wait_for()
        assert viewer.page.get_by_role("button", name="Verify").count() == 0
        assert viewer.page.locator("form[action$='/verify']").count() == 0
        assert viewer.page.get_by_role("heading", name="Actions").count() == 0
    accessible(viewer.page)


def test_a_forged_post_from_another_site_is_refused(
    browser: Browser, site: Site, visits: list[Visit]
) -> None:
    editor = visit(visits, browser, site)
    editor.sign_in(site.editor_key)
    target = f"{site.base}/memories/{site.memory_id}/verify"
    attack = (
        f'<form id="f" method="post" action="{target}"><input name="note" value="forged">'
        '</form><script>document.getElementById("f").submit()</script>'
    )
    editor.page.route("http://evil.test/", lambda route: route.fulfill(
        body=attack, content_type="text/html"))  # fmt: skip
    with editor.page.expect_navigation(url=target) as landed:
        editor.page.goto("http://evil.test/")
    answer = landed.value
    assert answer is not None and answer.status in (401, 403)
    editor.documents.remove(answer)  # checked here: the evil page itself carries no headers
    editor.documents[:] = [r for r in editor.documents if r.url.startswith(site.base)]
    assert answer.headers.get("content-security-policy") == CSP
    service = site.service()
    try:
        assert service.inspect(id=site.memory_id)["memory"]["verified_at"] is None
    finally:
        service.close()


def test_a_revoked_keys_cookie_stops_working_at_the_next_click(
    browser: Browser, site: Site, visits: list[Visit]
) -> None:
    service = site.service()
    try:
        made = service.create_key(user="ana", note="a laptop")
        person = visit(visits, browser, site)
        person.sign_in(made["key"])
        person.page.get_by_label("Words or a question").fill("pool")
        person.page.get_by_role("button", name="Search").click()
        person.page.get_by_role("link", name=TITLE).wait_for()
        service.revoke_key(id=made["id"])
    finally:
        service.close()
    person.page.get_by_role("link", name=TITLE).click()
    person.page.get_by_role("heading", name="Sign in").wait_for()
    assert "session has ended" in person.page.get_by_role("alert").inner_text()
    assert site.memory_id not in person.page.content()


def test_signing_out_ends_the_cookie(
    browser: Browser, site: Site, screens: Path, visits: list[Visit]
) -> None:
    person = visit(visits, browser, site)
    person.sign_in(site.viewer_key)
    cookie = person.cookie()
    person.page.get_by_role("button", name="Sign out").click()
    person.page.get_by_role("heading", name="Sign in").wait_for()
    person.page.screenshot(path=screens / "signed-out.png")
    kept = httpx2.get(f"{site.base}/?q=pool", headers={"Cookie": cookie}, timeout=30)
    assert kept.status_code == 401 and site.memory_id not in kept.text
    person.page.goto(f"/memories/{site.memory_id}")
    assert person.page.get_by_role("heading", name="Sign in").count() == 1


# Where a word is drawn, from the left: the first text node under `selector` holding it.
LEFT_OF = """([selector, word]) => {
  const walk = document.createTreeWalker(document.querySelector(selector), NodeFilter.SHOW_TEXT);
  for (let node = walk.nextNode(); node; node = walk.nextNode()) {
    const at = node.textContent.indexOf(word);
    if (at < 0) continue;
    const range = document.createRange();
    range.setStart(node, at);
    range.setEnd(node, at + word.length);
    return range.getBoundingClientRect().left;
  }
  return null;
}"""


def test_a_bidi_override_an_agent_writes_turns_none_of_the_pages_own_words(
    browser: Browser, site: Site, visits: list[Visit]
) -> None:
    """A right-to-left override left open in a notebook's name (U+202E) would draw the
    rest of the line backwards: `· active · version 1` read `1 noisrev · evitca ·`, so
    an agent could make the page misstate a memory's status. Each value shown within
    the page's own words is isolated: the override stays inside it."""
    service = site.service()
    try:
        service.remember(notebook="quokkas\u202e", kind="fact", text="A quokka sleeps by day")
    finally:
        service.close()
    person = visit(visits, browser, site)
    person.sign_in(site.viewer_key)
    person.page.goto("/?q=quokka")
    facts = ".hits li:first-child .facts"
    person.page.locator(facts).wait_for()
    assert "active" in person.page.locator(facts).inner_text()
    active, version = (person.page.evaluate(LEFT_OF, [facts, w]) for w in ("active", "version"))
    assert active is not None and version is not None
    assert active < version, "the page's own words after the notebook's name run backwards"


def phone_fits(page: Page) -> None:
    """At a phone's width the page does not scroll sideways."""
    page.set_viewport_size({"width": 390, "height": 844})
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"{page.url} scrolls sideways on a phone"
    page.set_viewport_size({"width": 1280, "height": 720})


def test_a_person_follows_a_session_from_what_it_was_shown_to_what_it_filed(
    browser: Browser, site: Site, screens: Path, visits: list[Visit]
) -> None:
    editor = visit(visits, browser, site)
    editor.sign_in(site.editor_key)
    page = editor.page
    page.get_by_role("navigation", name="Site").get_by_role("link", name="Sessions").click()
    page.get_by_role("heading", name="Sessions", level=1).wait_for()
    accessible(page)
    phone_fits(page)
    page.get_by_role("link", name=SESSION).click()
    page.get_by_role("heading", name="Recalled").first.wait_for()
    steps = page.locator("ol.steps").inner_text()
    assert steps.index("Recalled") < steps.index("Wrote")
    assert IMAGE in steps and editor.pwned() is None  # a query holding markup runs nothing
    accessible(page)
    phone_fits(page)
    page.screenshot(path=screens / "session.png", full_page=True)
    page.get_by_role("link", name=site.anas_memory_id).first.click()
    page.get_by_role("heading", name="History").wait_for()


def test_an_editor_merges_a_group_of_duplicates_and_lands_on_the_kept_memory(
    browser: Browser, site: Site, screens: Path, visits: list[Visit]
) -> None:
    keep, other = site.duplicate_ids
    editor = visit(visits, browser, site)
    editor.sign_in(site.editor_key)
    page = editor.page
    nav = page.get_by_role("navigation", name="Site")
    nav.get_by_role("link", name="Review: duplicates").click()
    page.get_by_role("heading", name="Review: duplicates").wait_for()
    accessible(page)
    page.get_by_label("Notebook").select_option(DUPLICATES)
    page.get_by_role("button", name="Find duplicates").click()
    group = page.get_by_role("form", name="Merge group 1")
    group.wait_for()
    accessible(page)
    phone_fits(page)
    page.screenshot(path=screens / "duplicates.png", full_page=True)
    group.get_by_label(f"Keep {keep}").check()
    group.get_by_label("Why they are the same").fill("one rule, said twice")
    group.get_by_role("button", name="Merge").click()
    page.get_by_role("heading", name="History").wait_for()
    assert page.url.endswith(f"/memories/{keep}")
    assert_superseded(site, other, by=keep)


def test_an_editor_rules_on_a_dispute_where_its_reason_runs_nothing(
    browser: Browser, site: Site, screens: Path, visits: list[Visit]
) -> None:
    holds, loses = site.disputed_ids
    editor = visit(visits, browser, site)
    editor.sign_in(site.editor_key)
    page = editor.page
    nav = page.get_by_role("navigation", name="Site")
    nav.get_by_role("link", name="Review: disputes").click()
    form = page.get_by_role("form", name="Rule on dispute 1")
    form.wait_for()
    assert DISPUTE_REASON in page.locator("main").inner_text()  # shown, not run
    assert editor.pwned() is None
    accessible(page)
    phone_fits(page)
    page.screenshot(path=screens / "disputes.png", full_page=True)
    form.get_by_label(f"{holds} holds").check()
    form.get_by_label("Why it holds").fill("measured today")
    form.get_by_role("button", name="Rule").click()
    page.get_by_role("heading", name="History").wait_for()
    assert page.url.endswith(f"/memories/{holds}")
    assert_superseded(site, loses, by=holds)


def test_an_editor_verifies_a_stale_memory_from_the_queue_with_the_keyboard(
    browser: Browser, site: Site, screens: Path, visits: list[Visit]
) -> None:
    checked = site.stale_ids[0]
    editor = visit(visits, browser, site)
    editor.sign_in(site.editor_key)
    page = editor.page
    nav = page.get_by_role("navigation", name="Site")
    nav.get_by_role("link", name="Review: stale").focus()
    page.keyboard.press("Enter")
    page.get_by_role("heading", name="Review: stale").wait_for()
    assert STALE in page.locator("main").inner_text() and editor.pwned() is None
    accessible(page)
    phone_fits(page)
    page.screenshot(path=screens / "stale.png", full_page=True)
    form = page.get_by_role("form", name=f"Verify {checked}")
    form.get_by_label(f"Why {checked} still holds").fill("checked the cache settings")
    form.get_by_role("button", name="Verify").click()
    page.get_by_role("heading", name="Review: stale").wait_for()
    assert page.get_by_role("link", name=checked).count() == 0  # it left the list
    nav.get_by_role("link", name="Review: doctor").click()
    page.get_by_role("heading", name="Review: doctor").wait_for()
    accessible(page)
    phone_fits(page)
    page.screenshot(path=screens / "doctor.png", full_page=True)


def assert_superseded(site: Site, retired: str, *, by: str) -> None:
    """What the store says after the page's action: `retired` is superseded by `by`."""
    service = site.service()
    try:
        memory = service.inspect(id=retired)["memory"]
        assert (memory["status"], memory["superseded_by"]) == ("superseded", by)
    finally:
        service.close()
