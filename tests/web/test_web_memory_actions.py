"""A memory's actions in a real browser (issue 32): revise, retire, revert and forget, each
with its reason, through the page's own forms, and what the store says afterwards.

What a person relies on: a revision shows as a new version with what changed, field by
field; a retirement takes the memory out of use; a revert brings an earlier text back;
forget first names what it would erase and erases only once confirmed; a change made
meanwhile by someone else is refused, never overwritten; a viewer is offered none of it;
the forms work with the keyboard alone and pass axe.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Locator, Page

from .browser import Visit, accessible, needs_chromium, visit
from .site import IMAGE, SCRIPT, Site

pytestmark = needs_chromium


def anas(site: Site, text: str, **fields: Any) -> str:
    """A memory the editor (ana) files and so owns: hers to change and to forget."""
    service = site.service()
    try:
        filed = service.with_actor("user:ana").remember(
            notebook="actions", kind="fact", text=text, **fields
        )
        memory_id: str = filed["id"]
        return memory_id
    finally:
        service.close()


def anas_revised(site: Site, first: str, then: str) -> str:
    """One of ana's memories with two versions: `first`, then `then`."""
    memory_id = anas(site, first)
    service = site.service()
    try:
        service.with_actor("user:ana").revise(id=memory_id, text=then)
    finally:
        service.close()
    return memory_id


def stored(site: Site, memory_id: str) -> dict[str, Any]:
    """What the store says of the memory now (its tombstone once forgotten)."""
    service = site.service()
    try:
        return dict(service.inspect(id=memory_id))
    finally:
        service.close()


def signed_in_editor(browser: Browser, site: Site, visits: list[Visit]) -> Visit:
    editor = visit(visits, browser, site)
    editor.sign_in(site.editor_key)
    return editor


def disclosure(page: Page, name: str) -> Locator:
    """An action's summary: opening it shows its form."""
    return page.locator("summary").get_by_text(name, exact=True)


def open_memory(page: Page, memory_id: str) -> None:
    page.goto(f"/memories/{memory_id}")
    page.get_by_role("heading", name="History").wait_for()


def test_an_editor_revises_with_a_reason_and_sees_the_new_version_and_what_changed(
    browser: Browser, site: Site, screens: Path, visits: list[Visit]
) -> None:
    memory_id = anas(site, "The pool holds 20 connections", title="Pool", tags=["db"])
    page = signed_in_editor(browser, site, visits).page
    open_memory(page, memory_id)
    disclosure(page, "Revise").click()
    form = page.get_by_role("form", name="Revise this memory")
    assert form.get_by_label("Text").input_value() == "The pool holds 20 connections"
    accessible(page)
    page.screenshot(path=screens / "memory-revise.png", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})  # a phone
    page.screenshot(path=screens / "memory-revise-phone.png", full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, "scrolls sideways"
    page.set_viewport_size({"width": 1280, "height": 720})
    form.get_by_label("Text").fill("The pool holds 40 connections\nsince the load test")
    form.get_by_label("Title").fill("Pool size")
    form.get_by_label("Tags, comma-separated").fill("db, pool")
    form.get_by_label("Why you change it").fill("measured on prod")
    form.get_by_role("button", name="Revise").click()

    page.get_by_role("heading", name="Pool size", level=1).wait_for()
    latest = page.locator("ol.timeline > li").last
    assert "Version 2: revise" in latest.inner_text()
    assert "measured on prod" in latest.inner_text()
    for field, old, new in (
        ("text", "The pool holds 20 connections", "The pool holds 40 connections"),
        ("title", "Pool", "Pool size"),
        ("tags", "db", "db, pool"),
    ):
        row = latest.get_by_role("row").filter(has=page.get_by_role("rowheader", name=field))
        assert old in row.locator("td.old").inner_text(), field
        assert new in row.locator("td.new").inner_text(), field
    memory = stored(site, memory_id)["memory"]
    assert memory["text"] == "The pool holds 40 connections\nsince the load test"  # LF kept
    assert (memory["version"], memory["title"], memory["tags"]) == (2, "Pool size", ["db", "pool"])


def test_an_editor_retires_a_memory_as_superseded_by_another(
    browser: Browser, site: Site, visits: list[Visit]
) -> None:
    old = anas(site, "Backups run at midnight")
    new = anas(site, "Backups run at two in the morning")
    page = signed_in_editor(browser, site, visits).page
    open_memory(page, old)
    disclosure(page, "Retire").click()
    form = page.get_by_role("form", name="Retire this memory")
    form.get_by_label("Superseded: a newer truth exists").check()
    form.get_by_label("Replaced by (a memory's id, when superseded)").fill(new)
    form.get_by_label("Why you retire it").fill("the schedule moved")
    form.get_by_role("button", name="Retire").click()

    page.get_by_role("link", name=new).first.wait_for()  # the successor, linked
    assert "superseded" in page.locator("dl.fields").inner_text()
    assert page.get_by_role("button", name="Verify").count() == 0  # retired: not verified
    assert "the schedule moved" in page.locator("ol.timeline > li").last.inner_text()
    memory = stored(site, old)["memory"]
    assert (memory["status"], memory["superseded_by"]) == ("superseded", new)


def test_an_editor_reverts_to_the_first_version_and_its_text_is_back(
    browser: Browser, site: Site, visits: list[Visit]
) -> None:
    memory_id = anas_revised(site, "Deploys need one approval", "Deploys need no approval")
    page = signed_in_editor(browser, site, visits).page
    open_memory(page, memory_id)
    disclosure(page, "Revert to an earlier version").click()
    form = page.get_by_role("form", name="Revert this memory")
    form.get_by_label("Back to").select_option("1")
    form.get_by_label("Why you revert it").fill("approval is still required")
    form.get_by_role("button", name="Revert").click()

    page.locator("ol.timeline > li", has_text="Version 3: revert").wait_for()
    assert page.locator("p.text").inner_text() == "Deploys need one approval"
    memory = stored(site, memory_id)["memory"]
    assert (memory["text"], memory["version"]) == ("Deploys need one approval", 3)


def test_forget_names_what_it_erases_and_erases_only_once_confirmed(
    browser: Browser, site: Site, screens: Path, visits: list[Visit]
) -> None:
    text = "The staging password hint is quokka-umbrella"
    memory_id = anas(site, text, title="Staging hint")
    service = site.service()
    try:
        service.with_actor("user:ana").revise(id=memory_id, append=" (old)")
    finally:
        service.close()
    page = signed_in_editor(browser, site, visits).page
    open_memory(page, memory_id)
    disclosure(page, "Forget").click()
    form = page.get_by_role("form", name="Forget this memory")
    form.get_by_label("Why it must not stay on disk").fill("a credential hint, pasted by mistake")
    form.get_by_role("button", name="Review what forget erases").click()

    page.get_by_role("heading", name="Forget Staging hint?").wait_for()
    erased = page.locator("main ul").inner_text()
    assert memory_id in erased and "Staging hint" in erased
    assert "The text of its 2 versions" in erased
    assert stored(site, memory_id)["memory"]["version"] == 2  # nothing erased yet
    accessible(page)
    page.screenshot(path=screens / "memory-forget.png", full_page=True)
    page.get_by_role("checkbox").check()
    page.get_by_role("button", name="Forget for good").click()

    page.get_by_role("alert").wait_for()
    assert page.url.endswith(f"/memories/{memory_id}")
    assert "was forgotten" in page.get_by_role("alert").inner_text()
    tombstone = stored(site, memory_id)
    assert "memory" not in tombstone
    assert tombstone["tombstone"]["reason"] == "a credential hint, pasted by mistake"
    service = site.service()
    try:
        assert service.recall(query="quokka-umbrella", include_retired=True)["hits"] == []
        assert "quokka-umbrella" not in str(service.history(id=memory_id))
    finally:
        service.close()


def test_a_change_made_meanwhile_is_refused_not_overwritten(
    browser: Browser, site: Site, visits: list[Visit]
) -> None:
    memory_id = anas(site, "The queue holds 100 jobs")
    page = signed_in_editor(browser, site, visits).page
    open_memory(page, memory_id)  # version 1, as the form will say
    service = site.service()
    try:
        service.with_actor("user:ana").revise(id=memory_id, text="The queue holds 500 jobs")
    finally:
        service.close()
    disclosure(page, "Revise").click()
    form = page.get_by_role("form", name="Revise this memory")
    form.get_by_label("Text").fill("The queue holds 200 jobs")
    form.get_by_label("Why you change it").fill("resized")
    with page.expect_navigation() as landed:
        form.get_by_role("button", name="Revise").click()

    answer = landed.value
    assert answer is not None and answer.status == 409
    assert page.get_by_role("heading", name="Changed meanwhile").count() == 1
    accessible(page)
    page.get_by_role("link", name="Back to the page you came from, as it is now").click()
    page.get_by_role("heading", name="History").wait_for()
    assert page.locator("p.text").inner_text() == "The queue holds 500 jobs"
    assert stored(site, memory_id)["memory"]["text"] == "The queue holds 500 jobs"


def test_a_viewer_is_offered_no_action(browser: Browser, site: Site, visits: list[Visit]) -> None:
    memory_id = anas(site, "Viewers read this")
    service = site.service()
    try:
        service.with_actor("user:ana").revise(id=memory_id, text="Viewers only read this")
    finally:
        service.close()
    names = ("Revise", "Retire", "Revert to an earlier version", "Forget")
    viewer = visit(visits, browser, site)
    viewer.sign_in(site.viewer_key)
    open_memory(viewer.page, memory_id)
    assert viewer.page.locator("main form").count() == 0
    for name in names:
        assert disclosure(viewer.page, name).count() == 0, name
    accessible(viewer.page)
    page = signed_in_editor(browser, site, visits).page  # the control: an editor is offered all
    open_memory(page, memory_id)
    for name in names:
        assert disclosure(page, name).count() == 1, name


def test_an_editor_reverts_with_the_keyboard_alone(
    browser: Browser, site: Site, visits: list[Visit]
) -> None:
    memory_id = anas_revised(site, "Logs are kept 30 days", "Logs are kept 90 days")
    page = signed_in_editor(browser, site, visits).page
    open_memory(page, memory_id)
    summary = disclosure(page, "Revert to an earlier version")
    for _ in range(60):  # Tab along the page until the disclosure has the focus
        if summary.evaluate("element => element === document.activeElement"):
            break
        page.keyboard.press("Tab")
    else:
        raise AssertionError("Tab never reaches the revert form")
    page.keyboard.press("Enter")  # opens it
    page.keyboard.press("Tab")  # the version: the latest earlier one is chosen
    assert page.get_by_label("Back to").evaluate("e => e === document.activeElement")
    page.keyboard.press("Tab")
    page.keyboard.type("ninety was a typo")
    page.keyboard.press("Enter")  # submits the form

    page.locator("ol.timeline > li", has_text="Version 3: revert").wait_for()
    assert stored(site, memory_id)["memory"]["text"] == "Logs are kept 30 days"


def test_markup_in_a_reason_and_a_title_runs_nothing_on_the_forms_and_the_history(
    browser: Browser, site: Site, visits: list[Visit]
) -> None:
    memory_id = anas(site, f"Cache warms at boot {SCRIPT}", title=f"Cache {IMAGE}")
    editor = signed_in_editor(browser, site, visits)
    page = editor.page
    open_memory(page, memory_id)
    disclosure(page, "Revise").click()
    form = page.get_by_role("form", name="Revise this memory")
    assert form.get_by_label("Text").input_value() == f"Cache warms at boot {SCRIPT}"
    assert form.get_by_label("Title").input_value() == f"Cache {IMAGE}"
    form.get_by_label("Text").fill("Cache warms at boot")
    form.get_by_label("Why you change it").fill(f"dropped the markup {IMAGE}")
    form.get_by_role("button", name="Revise").click()
    page.locator("ol.timeline > li", has_text="Version 2: revise").wait_for()
    assert f"dropped the markup {IMAGE}" in page.locator("ol.timeline").inner_text()
    disclosure(page, "Forget").click()
    page.get_by_label("Why it must not stay on disk").fill(f"test {SCRIPT}")
    page.get_by_role("button", name="Review what forget erases").click()
    page.get_by_role("button", name="Forget for good").wait_for()
    assert page.get_by_label("Why it must not stay on disk").input_value() == f"test {SCRIPT}"
    assert page.locator("main script, main img").count() == 0
    assert editor.pwned() is None


def test_revising_the_title_alone_keeps_the_text_as_it_was(
    browser: Browser, site: Site, visits: list[Visit]
) -> None:
    """The text goes through the textarea and back untouched: its leading line break (which
    HTML drops from a textarea's first line), its indentation and its last line break."""
    text = "\n  - drain the queue\n  - then restart\n"
    memory_id = anas(site, text, title="Restart")
    page = signed_in_editor(browser, site, visits).page
    open_memory(page, memory_id)
    disclosure(page, "Revise").click()
    form = page.get_by_role("form", name="Revise this memory")
    form.get_by_label("Title").fill("Restart, in order")
    form.get_by_label("Why you change it").fill("a clearer title")
    form.get_by_role("button", name="Revise").click()

    page.get_by_role("heading", name="Restart, in order", level=1).wait_for()
    memory = stored(site, memory_id)["memory"]
    assert (memory["text"], memory["version"]) == (text, 2)
    service = site.service()
    try:
        [event] = [e for e in service.history(id=memory_id)["events"] if e["version"] == 2]
        assert set(event["changes"]) == {"title"}
    finally:
        service.close()
