"""The notebooks pages, against a real `serve --http`: over plain HTTP (what each page
holds, to whom, and what another workspace's notebook gets) and in Chromium (from the
navigation to a notebook, its rules and the commands the guard refused, no markup run)."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

from playwright.sync_api import Browser

from palimpsest.domain.projects import bind_project
from palimpsest.web.pages.common import memory_href, notebook_href

from .browser import Visit, accessible, needs_chromium, visit
from .site import (
    ASKED,
    DENIED,
    GUARD_SESSION,
    IMAGE,
    NOTEBOOK,
    OTHER_DENIED,
    RULE_LITERAL,
    RULE_TEXT,
    RULE_TITLE,
    SCRIPT,
    TAG,
    Site,
    get,
    running_site,
    session,
)

MARKUP = ("<script>", "<img", "<svg onload")  # what would run, were it not escaped (the
# page draws its own pictures as `<svg class="chart"`)


def escaped(value: str) -> str:
    """`value` as the page writes it (web/html.py escapes quotes too)."""
    return html.escape(value, quote=True)


def ran_nothing(page: str) -> None:
    """No markup an agent wrote is HTML here: the page's own script is `<script src=...>`."""
    for markup in MARKUP:
        assert markup not in page, markup


def test_the_list_names_each_notebook_with_its_counts_and_links_its_page(site: Site) -> None:
    page = get(site, "/notebooks", session(site, site.editor_key))
    assert page.status_code == 200
    text = page.text
    assert 'href="/notebooks" aria-current="page"' in text  # in the navigation
    assert f'href="{notebook_href(NOTEBOOK)}"' in text and "%2F" in notebook_href(NOTEBOOK)
    row = text[text.index(notebook_href(NOTEBOOK)) :].split("</tr>")[0]
    assert "<td>2 active</td><td>1</td>" in row  # the fact with markup, and the rule
    assert "secret-plans" not in text  # another workspace's
    ran_nothing(text)


def test_a_project_at_a_directory_the_server_reads_is_named_on_its_notebook(
    tmp_path: Path,
) -> None:
    shop = tmp_path / "shop<em>x"  # a folder's name is anyone's to choose
    shop.mkdir()
    bind_project(shop, NOTEBOOK)
    with running_site(tmp_path, check_dirs=str(shop)) as served:
        text = get(served, "/notebooks", session(served, served.editor_key)).text
    row = text[text.index(notebook_href(NOTEBOOK)) :].split("</tr>")[0]
    assert f"<code>{escaped(str(shop.resolve()))}</code>" in row
    assert "<em>" not in text


def test_a_notebooks_page_shows_its_rules_and_the_commands_refused_there(site: Site) -> None:
    page = get(site, notebook_href(NOTEBOOK), session(site, site.editor_key))
    assert page.status_code == 200
    text = page.text
    assert f'href="{memory_href(site.rule_id)}"' in text
    for shown in (RULE_TITLE, RULE_TEXT, RULE_LITERAL, DENIED, ASKED, GUARD_SESSION, TAG):
        assert escaped(shown) in text, shown
    assert "before command" in text and "irreversible" in text
    assert "refuses the commands its check names, here" in text
    guarded = text[text.index('id="guarded-h"') : text.index('id="activity-h"')]
    assert guarded.index(escaped(ASKED)) < guarded.index(escaped(DENIED))  # the newest first
    assert "git status" not in guarded  # allowed: not listed
    assert escaped(OTHER_DENIED) not in text
    today = datetime.now(UTC).date().isoformat()
    activity = text[text.index('id="activity-h"') :]
    assert f'<time datetime="{today}">' in activity and "remember " in activity
    ran_nothing(text)


def test_a_notebooks_summary_domain_and_tags_are_shown_never_run(site: Site) -> None:
    service = site.service()
    try:
        service.create_notebook(name="described", summary=f"Runbooks {SCRIPT}",
                                domain=f"infra {IMAGE}", tags=[TAG])  # fmt: skip
    finally:
        service.close()
    cookie = session(site, site.editor_key)
    for path in ("/notebooks", notebook_href("described")):
        text = get(site, path, cookie).text
        for shown in (SCRIPT, IMAGE):
            assert escaped(shown) in text, (path, shown)
        ran_nothing(text)
    assert escaped(TAG) in text  # its tags, on its own page


def test_a_notebook_is_reached_from_the_list_whatever_its_name(site: Site) -> None:
    """Any character an agent may write: `.` and `..` (which a browser resolves as steps
    of the path, `%2E%2E` too) are linked by their id; the rest by their name, quoted."""
    names = [".", "..", "two\nlines", "%2F", "q?x#y", "tab\there"]
    service = site.service()
    try:
        made = {name: service.create_notebook(name=name)["notebook"]["id"] for name in names}
    finally:
        service.close()
    cookie = session(site, site.editor_key)
    listed = get(site, "/notebooks", cookie).text
    for name, notebook_id in made.items():
        [href] = re.findall(f'<a href="([^"]+)">{re.escape(escaped(name))}</a>', listed)
        assert href == (f"/notebooks/{notebook_id}" if name in (".", "..") else
                        "/notebooks/" + quote(name, safe=""))  # fmt: skip
        page = get(site, html.unescape(href), cookie)
        assert page.status_code == 200, name
        assert f"Notebook <bdi>{escaped(name)}</bdi>" in page.text, name
        assert f'href="{href}?days=90"' in page.text


def test_another_workspaces_notebook_is_not_found_as_an_unknown_one_is(site: Site) -> None:
    cookie = session(site, site.editor_key)
    service = site.service()
    try:
        theirs = service.in_workspace("other").notebooks()["notebooks"]
    finally:
        service.close()
    assert get(site, notebook_href(NOTEBOOK), cookie).status_code == 200  # this one's
    refs = ["secret-plans", theirs[0]["id"], "no-such-notebook", NOTEBOOK + "x"]
    for ref in refs:
        answer = get(site, "/notebooks/" + quote(ref, safe=""), cookie)
        assert answer.status_code == 404, ref
        assert "not_found" in answer.text
        assert "Theirs" not in answer.text and "force-push to the other" not in answer.text


def test_the_span_of_activity_is_chosen_and_a_wrong_one_refused_by_the_service(
    site: Site,
) -> None:
    cookie = session(site, site.editor_key)
    longer = get(site, notebook_href(NOTEBOOK, days=90), cookie)
    assert longer.status_code == 200 and "the last 90 days" in longer.text
    for days in ("0", "367", "ten", "9" * 5000):
        answer = get(site, f"{notebook_href(NOTEBOOK)}?days={days}", cookie)
        assert answer.status_code == 400, days
        assert "validation" in answer.text


def test_a_viewer_reads_the_notebooks_and_is_offered_no_form(site: Site) -> None:
    cookie = session(site, site.viewer_key)
    for path in ("/notebooks", notebook_href(NOTEBOOK)):
        answer = get(site, path, cookie)
        assert answer.status_code == 200, path
        assert answer.text.count("<form") == 1  # signing out, only
    assert escaped(DENIED) in get(site, notebook_href(NOTEBOOK), cookie).text


@needs_chromium
def test_a_person_goes_from_the_navigation_to_a_notebook_and_its_rule(
    browser: Browser, site: Site, screens: Path, visits: list[Visit]
) -> None:
    editor = visit(visits, browser, site)
    editor.sign_in(site.editor_key)
    page = editor.page
    page.get_by_role("navigation", name="Site").get_by_role("link", name="Notebooks").click()
    page.get_by_role("heading", name="Notebooks", exact=True).wait_for()
    accessible(page)
    page.screenshot(path=screens / "notebooks.png", full_page=True)

    page.get_by_role("link", name=NOTEBOOK, exact=True).click()
    page.get_by_role("heading", name="Commands the guard denied or asked about").wait_for()
    assert page.get_by_role("heading", level=1).inner_text() == f"Notebook {NOTEBOOK}"
    main = page.locator("main")
    shown = main.inner_text()
    for markup in (RULE_TITLE, RULE_TEXT, DENIED, ASKED, GUARD_SESSION, SCRIPT, IMAGE):
        assert markup in shown, markup  # shown as the agent wrote it...
    assert page.locator("main script, main img, main svg:not(.chart)").count() == 0  # ...none ran
    chart = page.get_by_role("img", name=re.compile("^Activity from "))
    assert chart.count() == 1  # the activity drawn, above the table that says it in words
    assert editor.pwned() is None
    table = page.get_by_role("table", name="Commands refused or asked about in this notebook")
    assert table.get_by_role("row").count() == 3  # its header, the denied, the asked
    accessible(page)
    page.screenshot(path=screens / "notebook.png", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})  # a phone
    page.screenshot(path=screens / "notebook-phone.png", full_page=True)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, "the page scrolls sideways on a phone"

    page.get_by_role("link", name=RULE_TITLE).click()
    page.get_by_role("heading", name="History").wait_for()
    assert page.get_by_role("heading", level=1).inner_text() == RULE_TITLE
    assert editor.pwned() is None
