"""The web page's sessions and review queues over plain HTTP against a real `serve --http`:
what each page shows, to whom, and what a forged or a viewer's action gets."""

from __future__ import annotations

from collections.abc import Iterator

import httpx2
import pytest

from .site import OTHER_SESSION, SESSION, Site, form_token, get, running_site, session


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with running_site(tmp_path_factory.mktemp("web-review")) as running:
        yield running


def post(site: Site, path: str, data: dict[str, str], cookie: str,
         origin: str | None = "same") -> httpx2.Response:  # fmt: skip
    headers = {"Cookie": cookie}
    if origin is not None:
        headers["Origin"] = site.base if origin == "same" else origin
    return httpx2.post(f"{site.base}{path}", data=data, headers=headers, timeout=30)


def test_the_navigation_names_the_pages(site: Site) -> None:
    page = get(site, "/sessions", session(site, site.editor_key)).text
    assert '<nav aria-label="Site"' in page
    assert 'href="/sessions" aria-current="page"' in page and 'href="/"' in page


def test_a_session_lists_what_it_was_shown_and_what_it_wrote_in_order(site: Site) -> None:
    cookie = session(site, site.editor_key)
    listed = get(site, "/sessions", cookie)
    assert listed.status_code == 200
    assert f'href="/sessions/{SESSION}"' in listed.text
    assert OTHER_SESSION not in listed.text  # another workspace's
    page = get(site, f"/sessions/{SESSION}", cookie)
    assert page.status_code == 200
    text = page.text
    assert "Recalled" in text and "<q><bdi>pool size</bdi></q>" in text  # the query as kept
    assert f'href="/memories/{site.anas_memory_id}"' in text and "score " in text
    assert text.index("Recalled") < text.index("Wrote")  # in order


def test_a_session_of_another_workspace_or_of_another_person_is_not_found(site: Site) -> None:
    editor = session(site, site.editor_key)
    theirs = get(site, f"/sessions/{OTHER_SESSION}", editor)
    assert theirs.status_code == 404 and "not_found" in theirs.text
    viewer = session(site, site.viewer_key)  # not an owner: only what was served to vic
    assert SESSION not in get(site, "/sessions", viewer).text
    answer = get(site, f"/sessions/{SESSION}", viewer)
    assert answer.status_code == 404 and "not_found" in answer.text
    assert site.anas_memory_id not in answer.text


def test_a_session_id_is_escaped_where_it_is_shown(site: Site) -> None:
    answer = get(site, "/sessions/%3Cscript%3Ex%3C%2Fscript%3E", session(site, site.editor_key))
    assert answer.status_code == 404 and "<script>x" not in answer.text


def test_posting_to_a_read_only_page_is_refused(site: Site) -> None:
    cookie = session(site, site.editor_key)
    token = form_token(get(site, "/sessions", cookie).text)
    answer = post(site, "/sessions", {"csrf": token}, cookie)
    assert answer.status_code == 404
