"""An adversarial review of the page and the HTTP API, each finding as what a person
relies on, against a real `serve --http` (site.py's store: markup in every field)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx2
import pytest
from playwright.sync_api import Browser

from .browser import Visit, needs_chromium, visit
from .site import Site, running_site


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with running_site(tmp_path_factory.mktemp("adversarial")) as running:
        yield running


def api(site: Site, operation: str, body: dict[str, object], key: str) -> httpx2.Response:
    return httpx2.post(f"{site.base}/api/v1/{operation}", json=body, timeout=30,
                       headers={"Authorization": f"Bearer {key}"})  # fmt: skip


def test_the_apis_answers_holding_memory_text_are_never_stored_nor_sniffed(site: Site) -> None:
    """An answer of the API holds what agents wrote (markup among it) and is read with a
    person's key: no cache keeps it (a browser's, a proxy's), and no browser reads it as
    anything but JSON, as the page's own answers are kept (`no-store`, `nosniff`)."""
    answers = [
        api(site, "recall", {"query": "pool"}, site.editor_key),
        api(site, "inspect", {"id": site.memory_id}, site.editor_key),
        api(site, "inspect", {"id": site.other_memory_id}, site.editor_key),  # a refusal
        httpx2.get(
            f"{site.base}/api/v1/openapi.json",
            timeout=30,
            headers={"Authorization": f"Bearer {site.viewer_key}"},
        ),
    ]
    assert "<script>" in answers[1].text  # the memory's text, as an agent wrote it
    for answer in answers:
        assert answer.headers["content-type"] == "application/json", answer.request.url
        assert answer.headers.get("cache-control") == "no-store", answer.request.url
        assert answer.headers.get("x-content-type-options") == "nosniff", answer.request.url


# Session ids an agent may choose that a URL's path does not carry as they are: a browser
# resolves `.` and `..` (quoted or not) as steps of the path, and drops tabs and line breaks.
AWKWARD_SESSIONS = ["..", ".", "sess\tTAB", "sess\nLINE"]


@needs_chromium
def test_every_session_listed_opens_whatever_id_its_agent_chose(
    browser: Browser, site: Site, visits: list[Visit]
) -> None:
    """An agent names its own session: whatever id it chose, a person who follows its link
    in the list reads what it was shown (else an agent could keep its steps off the page)."""
    service = site.service()
    try:
        for name in AWKWARD_SESSIONS:
            service.with_actor("user:ana").in_session(name).recall(query=f"pool {name!r}")
    finally:
        service.close()
    editor = visit(visits, browser, site)
    editor.sign_in(site.editor_key)
    page = editor.page
    page.goto("/sessions")
    links = page.locator("table a").evaluate_all(
        "links => links.map(a => [a.textContent, a.href])"  # the href as the browser reads it
    )
    followed = {text: href for text, href in links if text in AWKWARD_SESSIONS}
    assert sorted(followed) == sorted(AWKWARD_SESSIONS)
    unread = []
    for name, href in followed.items():
        page.goto(href)
        heading = page.get_by_role("heading", level=1).text_content()
        if heading != f"Session {name}" or repr(name) not in page.locator("main").inner_text():
            unread.append((name, href, heading))
    assert unread == []
