"""A memory's actions (issue 32) over plain HTTP against a real `serve --http`: what a
hand-made post gets. A missing reason, a bad version, another workspace's memory, a
viewer's post, a post without the page's token, a forget not confirmed: each refused (or
only shown) with its `error_class`, and the store left as it was. Markup in a reason is
shown as text."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from .site import IMAGE, SCRIPT, Site, form_token, get, running_site, session

ACTIONS = ("verify", "revise", "retire", "revert", "forget")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with running_site(tmp_path_factory.mktemp("web-actions")) as running:
        yield running


def post(site: Site, path: str, data: dict[str, str], cookie: str) -> httpx2.Response:
    headers = {"Cookie": cookie, "Origin": site.base}
    return httpx2.post(f"{site.base}{path}", data=data, headers=headers, timeout=30)


def anas(site: Site, text: str, versions: int = 1) -> str:
    """A memory the editor owns, with `versions` versions."""
    service = site.service()
    try:
        ana = service.with_actor("user:ana")
        memory_id: str = ana.remember(notebook="actions", kind="fact", text=text)["id"]
        for n in range(2, versions + 1):
            ana.revise(id=memory_id, append=f" (v{n})")
        return memory_id
    finally:
        service.close()


def stored(site: Site, memory_id: str, workspace: str | None = None) -> dict[str, Any]:
    service = site.service()
    try:
        reader = service.in_workspace(workspace) if workspace else service
        return dict(reader.inspect(id=memory_id))
    finally:
        service.close()


def editor(site: Site) -> tuple[str, str]:
    """The editor's cookie and form token."""
    cookie = session(site, site.editor_key)
    return cookie, form_token(get(site, "/", cookie).text)


def valid(action: str, token: str) -> dict[str, str]:
    """A form each action's route would take, its reason given."""
    return {
        "verify": {"csrf": token, "note": "checked", "expected_version": "2"},
        "revise": {"csrf": token, "note": "fixed", "expected_version": "2", "text": "Changed"},
        "retire": {"csrf": token, "note": "gone", "expected_version": "2", "status": "retracted"},
        "revert": {"csrf": token, "note": "back", "version": "1"},
        "forget": {"csrf": token, "because": "a mistake", "confirm": "erase"},
    }[action]


def accepted(site: Site, action: str) -> None:
    """The control: the editor's own form for `action`, on a memory of its own, is taken
    (so a refusal above is the rule's, not a route that is missing)."""
    memory_id = anas(site, f"Taken: {action}", versions=2)
    cookie, token = editor(site)
    answer = post(site, f"/memories/{memory_id}/{action}", valid(action, token), cookie)
    assert answer.status_code == 303, answer.text
    assert answer.headers["location"] == f"/memories/{memory_id}"


@pytest.mark.parametrize("action", ACTIONS)
def test_an_action_without_its_reason_is_refused_and_changes_nothing(
    site: Site, action: str
) -> None:
    memory_id = anas(site, f"Needs a reason to {action}", versions=2)
    cookie, token = editor(site)
    form = valid(action, token)
    for blank in ("", "   ", None):
        sent = {k: v for k, v in form.items() if k not in ("note", "because")}
        if blank is not None:
            sent["because" if action == "forget" else "note"] = blank
        answer = post(site, f"/memories/{memory_id}/{action}", sent, cookie)
        assert answer.status_code == 400, (action, blank, answer.text)
        assert "<code>validation</code>" in answer.text
        memory = stored(site, memory_id)["memory"]
        assert (memory["version"], memory["verified_at"]) == (2, None)


@pytest.mark.parametrize(
    ("action", "field", "value", "status"),
    [
        ("revert", "version", "abc", 400),
        ("revert", "version", "0", 400),
        ("revert", "version", "-1", 400),
        ("revert", "version", "9" * 40, 400),
        ("revert", "version", "", 400),
        ("revert", "version", "7", 404),  # no such version
        ("revise", "expected_version", "abc", 400),
        ("revise", "expected_version", "9" * 5000, 400),
        ("revise", "expected_version", "1", 409),  # moved on since
        ("revise", "kind", "bogus", 400),
        ("revise", "text", "", 400),  # a text cannot be cleared
        ("retire", "status", "bogus", 400),
        ("retire", "status", "active", 400),  # already active: nothing to reactivate
        ("retire", "superseded_by", "m_nope", 404),
    ],
)
def test_a_bad_value_is_refused_with_its_error_class_and_changes_nothing(
    site: Site, action: str, field: str, value: str, status: int
) -> None:
    memory_id = anas(site, f"Bad {field} {value[:10]}", versions=2)
    cookie, token = editor(site)
    form = valid(action, token) | {field: value}
    if field == "superseded_by":
        form["status"] = "superseded"
    answer = post(site, f"/memories/{memory_id}/{action}", form, cookie)
    assert answer.status_code == status, answer.text
    assert "Back to the page you came from" in answer.text  # a way back to the memory
    assert f'href="/memories/{memory_id}"' in answer.text
    assert stored(site, memory_id)["memory"]["version"] == 2


@pytest.mark.parametrize("action", ACTIONS)
def test_another_workspaces_memory_is_not_found_and_left_as_it_was(site: Site, action: str) -> None:
    cookie, token = editor(site)
    before = stored(site, site.other_memory_id, "other")["memory"]
    answer = post(site, f"/memories/{site.other_memory_id}/{action}", valid(action, token), cookie)
    assert answer.status_code == 404 and "<code>not_found</code>" in answer.text
    assert "Other team" not in answer.text
    assert stored(site, site.other_memory_id, "other")["memory"] == before
    accepted(site, action)


def test_a_memory_of_another_workspace_named_as_the_successor_is_not_found(site: Site) -> None:
    memory_id = anas(site, "Retired for another workspace's", versions=2)
    cookie, token = editor(site)
    form = valid("retire", token) | {"status": "superseded", "superseded_by": site.other_memory_id}
    answer = post(site, f"/memories/{memory_id}/retire", form, cookie)
    assert answer.status_code == 404 and "Other team" not in answer.text
    assert stored(site, memory_id)["memory"]["status"] == "active"
    successor = anas(site, "The successor, in this workspace")
    form["superseded_by"] = successor
    assert post(site, f"/memories/{memory_id}/retire", form, cookie).status_code == 303
    assert stored(site, memory_id)["memory"]["superseded_by"] == successor


@pytest.mark.parametrize("action", ACTIONS)
def test_a_viewers_post_is_refused_and_changes_nothing(site: Site, action: str) -> None:
    memory_id = anas(site, f"A viewer may not {action}", versions=2)
    cookie = session(site, site.viewer_key)
    page = get(site, f"/memories/{memory_id}", cookie).text
    assert f"/{action}" not in page  # no form offered
    token = form_token(page)  # the sign-out form's: the session's one token
    answer = post(site, f"/memories/{memory_id}/{action}", valid(action, token), cookie)
    assert answer.status_code == 403 and "<code>forbidden</code>" in answer.text
    memory = stored(site, memory_id)["memory"]
    assert (memory["version"], memory["verified_at"]) == (2, None)
    assert f"/{action}" in get(site, f"/memories/{memory_id}", editor(site)[0]).text
    accepted(site, action)


@pytest.mark.parametrize("action", ACTIONS)
def test_a_post_without_the_pages_token_is_refused(site: Site, action: str) -> None:
    memory_id = anas(site, f"A forged {action}", versions=2)
    cookie, _ = editor(site)
    _, other_token = editor(site)  # another session's
    for token in ("", other_token):
        answer = post(site, f"/memories/{memory_id}/{action}", valid(action, token), cookie)
        assert answer.status_code == 403
    assert stored(site, memory_id)["memory"]["version"] == 2
    accepted(site, action)


def test_forget_unconfirmed_only_shows_what_it_would_erase(site: Site) -> None:
    memory_id = anas(site, "Forget me only when I say so", versions=3)
    cookie, token = editor(site)
    for confirm in (None, "", "yes", "on"):
        form = {"csrf": token, "because": "a mistake"}
        if confirm is not None:
            form["confirm"] = confirm
        answer = post(site, f"/memories/{memory_id}/forget", form, cookie)
        assert answer.status_code == 200
        assert memory_id in answer.text and "The text of its 3 versions" in answer.text
        assert 'value="a mistake"' in answer.text  # the reason, carried to the next step
        assert stored(site, memory_id)["memory"]["version"] == 3
    done = post(site, f"/memories/{memory_id}/forget", valid("forget", token), cookie)
    assert done.status_code == 303 and done.headers["location"] == f"/memories/{memory_id}"
    gone = get(site, f"/memories/{memory_id}", cookie)
    assert gone.status_code == 404 and "was forgotten" in gone.text
    assert "Forget me" not in gone.text
    assert "memory" not in stored(site, memory_id)


def test_an_editor_may_not_forget_a_memory_another_owns(site: Site) -> None:
    cookie, token = editor(site)
    before = stored(site, site.memory_id)["memory"]
    for form in ({"csrf": token, "because": "not mine"}, valid("forget", token)):
        answer = post(site, f"/memories/{site.memory_id}/forget", form, cookie)
        assert answer.status_code == 403 and "<code>forbidden</code>" in answer.text
    assert stored(site, site.memory_id)["memory"] == before


def test_markup_in_a_reason_is_shown_as_text_on_the_history(site: Site) -> None:
    memory_id = anas(site, "A reason with markup", versions=2)
    cookie, token = editor(site)
    reason = f"measured {SCRIPT} {IMAGE}"
    form = valid("revise", token) | {"note": reason, "title": f"T {IMAGE}"}
    assert post(site, f"/memories/{memory_id}/revise", form, cookie).status_code == 303
    page = get(site, f"/memories/{memory_id}", cookie).text
    assert "<script>window.pwned" not in page and "<img src=x" not in page
    assert "&lt;script&gt;window.pwned" in page and "&lt;img src=x onerror=" in page
    forget = post(site, f"/memories/{memory_id}/forget",
                  {"csrf": token, "because": reason}, cookie)  # fmt: skip
    assert forget.status_code == 200
    assert "<script>window.pwned" not in forget.text and "<img src=x" not in forget.text


def test_an_action_that_is_not_one_is_not_found(site: Site) -> None:
    memory_id = anas(site, "No such action", versions=2)
    cookie, token = editor(site)
    for path in ("delete", "revise/again", "Revise"):
        answer = post(site, f"/memories/{memory_id}/{path}", valid("revise", token), cookie)
        assert answer.status_code == 404
    assert get(site, f"/memories/{memory_id}/forget", cookie).status_code == 404  # a GET
    assert stored(site, memory_id)["memory"]["version"] == 2
    accepted(site, "revise")


def test_a_long_text_in_any_script_is_revised_through_the_form(site: Site) -> None:
    """A memory's text may hold 8,000 characters; in Japanese each is sent as 9 bytes
    (UTF-8, percent-encoded): the revise form must still fit what the page takes."""
    memory_id = anas(site, "A text about to grow", versions=2)
    cookie, token = editor(site)
    text = "記憶は変わるが失われない。" * 615  # 7,995 characters, 71,955 bytes encoded
    form = valid("revise", token) | {"text": text, "why": "理由" * 1000, "note": "長い" * 1000}
    answer = post(site, f"/memories/{memory_id}/revise", form, cookie)
    assert answer.status_code == 303, answer.text
    assert stored(site, memory_id)["memory"]["text"] == text
    # Bounded still: past what any form of the page holds, and a sign-in (read before
    # anyone is known) far sooner.
    too_long = valid("revise", token) | {"text": "記" * 25_000}
    assert post(site, f"/memories/{memory_id}/revise", too_long, cookie).status_code == 413
    assert stored(site, memory_id)["memory"]["text"] == text
    signing_in = httpx2.post(f"{site.base}/sign-in", data={"key": "k" * 20_000},
                             headers={"Origin": site.base}, timeout=30)  # fmt: skip
    assert signing_in.status_code == 413


def test_forget_confirmed_after_a_change_meanwhile_is_a_conflict_and_erases_nothing(
    site: Site,
) -> None:
    """The confirmation names two versions; a third written before it is ticked is not
    what the person agreed to erase."""
    memory_id = anas(site, "Forget what I was shown", versions=2)
    cookie, token = editor(site)
    page = get(site, f"/memories/{memory_id}", cookie).text
    assert 'name="expected_version" value="2"' in page
    step = {"csrf": token, "because": "a mistake", "expected_version": "2"}
    shown = post(site, f"/memories/{memory_id}/forget", step, cookie)
    assert shown.status_code == 200 and "The text of its 2 versions" in shown.text
    assert 'name="expected_version" value="2"' in shown.text  # carried to the confirmation
    service = site.service()
    try:
        service.with_actor("user:ana").revise(id=memory_id, append=" (and more)")
    finally:
        service.close()
    answer = post(site, f"/memories/{memory_id}/forget", step | {"confirm": "erase"}, cookie)
    assert answer.status_code == 409 and "<code>conflict</code>" in answer.text
    assert f'href="/memories/{memory_id}"' in answer.text  # back to it, as it is now
    assert stored(site, memory_id)["memory"]["version"] == 3
