"""The web page's sessions and review queues over plain HTTP against a real `serve --http`:
what each page shows, to whom, and what a forged or a viewer's action gets."""

from __future__ import annotations

from collections.abc import Iterator

import httpx2
import pytest

from palimpsest.service.findings import DoctorAnswer, SecretFound
from palimpsest.web.pages import doctor as doctor_page
from palimpsest.web.pages.common import Viewer

from .site import (
    DUPLICATED,
    DUPLICATES,
    OTHER_SESSION,
    SESSION,
    Site,
    form_token,
    get,
    running_site,
    session,
)


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
    assert "<img" not in text and "&lt;img src=x onerror=" in text  # the query, escaped


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


def served_sessions(site: Site) -> list[str]:
    service = site.service()
    try:
        return [s["session"] for s in service.served()["sessions"]]
    finally:
        service.close()


def test_an_owner_forgets_a_sessions_record_from_its_page_with_a_reason(site: Site) -> None:
    service = site.service()
    try:
        service.with_actor("user:ana").in_session("sess-forgotten").recall(query="pool")
        service.served_log.flush()
        service.add_user(name="olga", role="owner")
        owners_key = service.create_key(user="olga")["key"]
    finally:
        service.close()
    path = "/sessions/sess-forgotten"
    editor, owner = session(site, site.editor_key), session(site, owners_key)
    shown = get(site, path, editor).text  # ana's own session: she reads it...
    assert "Forget this session" not in shown  # ...but only an owner is offered to forget it
    forged = {"session": "sess-forgotten", "because": "tidy", "csrf": form_token(shown)}
    assert post(site, "/sessions/forget", forged, editor).status_code == 403
    page = get(site, path, owner).text
    assert "Forget this session&#x27;s record" in page
    token = form_token(page)
    unexplained = {"session": "sess-forgotten", "because": " ", "csrf": token}
    assert post(site, "/sessions/forget", unexplained, owner).status_code == 400
    theirs = {"session": OTHER_SESSION, "because": "not ours", "csrf": token}
    assert post(site, "/sessions/forget", theirs, owner).status_code == 404
    assert "sess-forgotten" in served_sessions(site)  # none of those changed anything
    answer = post(site, "/sessions/forget", {**unexplained, "because": "a test"}, owner)
    assert answer.status_code == 303 and answer.headers["location"] == "/sessions"
    assert "sess-forgotten" not in served_sessions(site)
    assert get(site, path, owner).status_code == 404


def status_of(site: Site, memory_id: str) -> tuple[str, str | None]:
    service = site.service()
    try:
        shown = service.inspect(id=memory_id)["memory"]
        return shown["status"], shown.get("superseded_by")
    finally:
        service.close()


def test_the_duplicates_queue_asks_for_a_notebook_first(site: Site) -> None:
    page = get(site, "/review/duplicates", session(site, site.editor_key)).text
    assert "Group 1" not in page and "takes seconds at 10,000 memories" in page
    assert f'<option value="{DUPLICATES}">' in page
    whole = get(site, "/review/duplicates?all=1", session(site, site.editor_key)).text
    assert "the whole workspace" in whole and site.duplicate_ids[0] in whole


def test_a_viewer_sees_the_groups_but_no_merge_and_a_forged_merge_is_refused(
    site: Site,
) -> None:
    keep, other = site.duplicate_ids
    viewer = session(site, site.viewer_key)
    page = get(site, f"/review/duplicates?notebook={DUPLICATES}", viewer).text
    assert f'href="/memories/{keep}"' in page and f'href="/memories/{other}"' in page
    assert DUPLICATED in page and "alike by their words" in page
    assert "/review/duplicates/merge" not in page and 'name="keep"' not in page
    data = {"keep": keep, "group": f"{keep} {other}", "because": "forged",
            "csrf": form_token(page)}  # fmt: skip
    refused = post(site, "/review/duplicates/merge", data, viewer)
    assert refused.status_code == 403 and "forbidden" in refused.text
    editor = session(site, site.editor_key)
    without_token = post(site, "/review/duplicates/merge", {**data, "csrf": "x"}, editor)
    assert without_token.status_code == 403
    elsewhere = {**data, "csrf": form_token(get(site, "/", editor).text)}
    assert post(site, "/review/duplicates/merge", elsewhere, editor,
                "https://evil.example").status_code == 403  # fmt: skip
    assert status_of(site, other) == ("active", None)


def test_an_editors_merge_retires_the_others_as_superseded_by_the_one_kept(
    site: Site,
) -> None:
    keep, other = site.duplicate_ids
    editor = session(site, site.editor_key)
    page = get(site, f"/review/duplicates?notebook={DUPLICATES}", editor).text
    assert 'action="/review/duplicates/merge"' in page and f'value="{keep}"' in page
    token = form_token(page)
    group = f"{keep} {other}"
    unsaid = {"keep": keep, "group": group, "because": "", "csrf": token}
    no_reason = post(site, "/review/duplicates/merge", unsaid, editor)
    assert no_reason.status_code == 400 and "because" in no_reason.text
    done = post(site, "/review/duplicates/merge",
                {"keep": keep, "group": group, "because": "the same rule", "csrf": token},
                editor)  # fmt: skip
    assert done.status_code == 303 and done.headers["location"] == f"/memories/{keep}"
    assert status_of(site, other) == ("superseded", keep)
    assert status_of(site, keep)[0] == "active"
    after = get(site, f"/review/duplicates?notebook={DUPLICATES}", editor).text
    assert "No duplicates found." in after


def test_a_merge_naming_another_workspaces_memory_finds_nothing(site: Site) -> None:
    editor = session(site, site.editor_key)
    token = form_token(get(site, "/", editor).text)
    data = {"keep": site.anas_memory_id, "group": f"{site.anas_memory_id} {site.other_memory_id}",
            "because": "x", "csrf": token}  # fmt: skip
    answer = post(site, "/review/duplicates/merge", data, editor)
    assert answer.status_code == 404 and "Other team" not in answer.text
    service = site.service()
    try:
        assert service.inspect(id=site.anas_memory_id)["memory"]["status"] == "active"
    finally:
        service.close()


def test_a_viewer_sees_the_open_disputes_but_no_ruling_and_a_forged_ruling_is_refused(
    site: Site,
) -> None:
    first, second = site.disputed_ids
    viewer = session(site, site.viewer_key)
    page = get(site, "/review/disputes", viewer).text
    assert site.dispute_id in page
    assert f'href="/memories/{first}"' in page and f'href="/memories/{second}"' in page
    assert "<script>" not in page.split("<main", 1)[1]  # the reason, shown as text
    assert "&lt;script&gt;" in page
    assert "/review/disputes/rule" not in page and 'name="holds"' not in page
    data = {"dispute": site.dispute_id, "holds": first, "reason": "forged",
            "csrf": form_token(page)}  # fmt: skip
    refused = post(site, "/review/disputes/rule", data, viewer)
    assert refused.status_code == 403 and "forbidden" in refused.text
    assert status_of(site, second) == ("active", None)


def test_an_editor_rules_on_a_dispute_and_the_other_retires(site: Site) -> None:
    first, second = site.disputed_ids
    editor = session(site, site.editor_key)
    page = get(site, "/review/disputes", editor).text
    assert 'action="/review/disputes/rule"' in page and f'value="{site.dispute_id}"' in page
    token = form_token(page)
    forged = {"dispute": site.dispute_id, "holds": first, "reason": "x", "csrf": token}
    assert post(site, "/review/disputes/rule", forged, editor, None).status_code == 403
    unsaid = {**forged, "reason": ""}
    assert post(site, "/review/disputes/rule", unsaid, editor).status_code == 400
    data = {**forged, "reason": "measured today", "evidence": "the dashboard", "because": ""}
    done = post(site, "/review/disputes/rule", data, editor)
    assert done.status_code == 303 and done.headers["location"] == f"/memories/{first}"
    assert status_of(site, second) == ("superseded", first)
    assert site.dispute_id not in get(site, "/review/disputes", editor).text


def test_another_workspaces_dispute_is_neither_listed_nor_ruled(site: Site) -> None:
    editor = session(site, site.editor_key)
    page = get(site, "/review/disputes", editor).text
    assert site.other_dispute_id not in page and "Launch" not in page
    data = {"dispute": site.other_dispute_id, "holds": site.anas_memory_id, "reason": "x",
            "csrf": form_token(page)}  # fmt: skip
    answer = post(site, "/review/disputes/rule", data, editor)
    assert answer.status_code == 404 and "not_found" in answer.text


def test_a_viewer_sees_the_stale_memories_but_no_verify_and_a_forged_verify_is_refused(
    site: Site,
) -> None:
    first, second = site.stale_ids
    viewer = session(site, site.viewer_key)
    page = get(site, "/review/stale", viewer)
    assert page.status_code == 200
    text = page.text
    assert f'href="/memories/{first}"' in text and f'href="/memories/{second}"' in text
    assert "Why: not verified within the freshness window of its kind, assumption." in text
    assert 'href="/review/stale" aria-current="page"' in text
    assert "/review/stale/verify" not in text and 'name="note"' not in text
    data = {"id": second, "note": "forged", "csrf": form_token(text)}
    refused = post(site, "/review/stale/verify", data, viewer)
    assert refused.status_code == 403 and "forbidden" in refused.text
    assert second in get(site, "/review/stale", viewer).text  # still waiting


def test_an_editor_verifies_a_stale_memory_and_it_leaves_the_list(site: Site) -> None:
    second = site.stale_ids[1]
    editor = session(site, site.editor_key)
    page = get(site, "/review/stale", editor).text
    assert 'action="/review/stale/verify"' in page and f'value="{second}"' in page
    token = form_token(page)
    data = {"id": second, "note": "two cores on the CI runner", "csrf": token}
    assert post(site, "/review/stale/verify", data, editor, None).status_code == 403
    assert post(site, "/review/stale/verify", {**data, "csrf": "x"}, editor).status_code == 403
    unexplained = post(site, "/review/stale/verify", {**data, "note": " "}, editor)
    assert unexplained.status_code == 400 and "validation" in unexplained.text
    assert f'href="/memories/{second}"' in get(site, "/review/stale", editor).text  # unchanged
    done = post(site, "/review/stale/verify", data, editor)
    assert done.status_code == 303 and done.headers["location"] == "/review/stale"
    after = get(site, "/review/stale", editor).text
    assert f'href="/memories/{second}"' not in after
    assert f'href="/memories/{site.stale_ids[0]}"' in after
    service = site.service()
    try:
        shown = service.inspect(id=second)["memory"]
        assert shown["status"] == "active" and shown.get("verified_at")
    finally:
        service.close()


def test_another_workspaces_findings_are_never_shown_nor_verified(site: Site) -> None:
    editor = session(site, site.editor_key)
    for path in ("/review/stale", "/review/doctor"):
        page = get(site, path, editor).text
        assert site.other_stale_id not in page and "Other team" not in page
        assert site.other_dispute_id not in page
    data = {"id": site.other_stale_id, "note": "x", "csrf": form_token(page)}
    answer = post(site, "/review/stale/verify", data, editor)
    assert answer.status_code == 404 and "Other team" not in answer.text


def test_markup_in_a_stale_memorys_text_is_shown_as_text(site: Site) -> None:
    viewer = session(site, site.viewer_key)
    for path in ("/review/stale", "/review/doctor"):
        main = get(site, path, viewer).text.split("<main", 1)[1]
        assert "<script>" not in main and "The cache expires after an hour &lt;script&gt;" in main


def test_the_doctor_page_groups_the_findings_and_links_the_queues(site: Site) -> None:
    page = get(site, "/review/doctor", session(site, site.viewer_key)).text
    assert 'href="/review/doctor" aria-current="page"' in page
    assert "Possibly stale: " in page and 'href="/review/stale"' in page
    assert f'href="/memories/{site.stale_ids[0]}"' in page
    service = site.service()
    try:  # however many the tests before ruled on: the count is doctor's, as the store says
        still_open = service.doctor().get("open_disputes", {}).get("count", 0)
    finally:
        service.close()
    assert f"Open disputes: {still_open}" in page
    assert "Secrets stored before the gate: 0" in page and "Pending scrubs: 0" in page
    assert "<form" not in page.split("<main", 1)[1]  # nothing here changes anything


def test_the_doctor_page_says_a_persons_command_escaped_and_never_a_secret() -> None:
    """Secrets and pending scrubs are a person's commands; doctor gives where a secret is
    and its kinds, never its value (findings.SecretFound has no field for it)."""
    assert "value" not in SecretFound.__annotations__
    viewer = Viewer("user:ana", "editor", "default", "token")
    memory = "m_<b>1</b>"
    answer: DoctorAnswer = {
        "secrets": [
            {"id": memory, "version": 2, "fields": {"text": ["aws_access_key"]},
             "fix": {"tool": "forget", "arguments": {"id": memory, "version": 2,
                                                     "because": "a secret got in"}}},
            {"notebook": "nb_<i>x</i>", "fields": {"summary": ["github_token"]},
             "fix": {"tool": "forget", "arguments": {"notebook": "nb_<i>x</i>",
                                                     "field": "summary", "because": "x"}}},
        ],
        "possibly_stale": [], "expired": [],
        "ownerless": [{"id": "m_2", "kind": "fact", "text": "<img src=x onerror=alert(1)>"}],
        "noise": [], "rules_kept_as_notes": [], "scrub_pending": True,
        "pending_scrubs": [{"id": "m_<u>3</u>", "since": "2026-01-01", "fix": "palimpsest scrub"}],
        "project": None,
        "open_disputes": {"count": 7, "oldest": [
            {"id": "dp_1", "memories": ["m_a", "m_b"], "opened_at": "2026-01-01",
             "fix": {"tool": "dispute", "arguments": {"action": "rule", "dispute": "dp_1"}}}]},
    }  # fmt: skip
    page = doctor_page.doctor(viewer, answer)
    main = page.split("<main", 1)[1]
    assert "<b>" not in main and "<i>" not in main and "<u>" not in main and "<img" not in main
    assert "&lt;img src=x onerror=alert(1)&gt;" in main
    assert "palimpsest forget &#x27;m_&lt;b&gt;1&lt;/b&gt;&#x27; --version 2" in main or (
        "palimpsest forget &#39;m_&lt;b&gt;1&lt;/b&gt;&#39; --version 2" in main
    )
    assert "text: aws_access_key" in main and "Ownerless: 1" in main
    assert "<code>palimpsest scrub</code>" in main and "Pending scrubs: 1" in main
    assert "Open disputes: 7" in main and 'href="/review/disputes"' in main
    assert 'href="/memories/m_a"' in main and "<form" not in main


def test_a_server_has_no_queue_so_its_doctor_page_offers_no_retry_and_a_post_finds_nothing(
    site: Site,
) -> None:
    """Only a replica queues writes (its own page: test_web_replica.py); on a server no
    one, a viewer nor an editor, is offered Retry or Drop; one posted finds nothing (a
    viewer's is refused first: settling a queue is a write)."""
    for key, status, said in ((site.viewer_key, 403, "forbidden"),
                              (site.editor_key, 404, "not_found")):  # fmt: skip
        cookie = session(site, key)
        text = get(site, "/review/doctor", cookie).text
        assert "Sync with the server" not in text and "/review/doctor/" not in text
        token = form_token(get(site, "/review/stale", cookie).text)
        for action in ("retry", "drop"):
            data = {"queued": "q_01m93rf94cnzcqg7nnyp", "because": "tidy", "csrf": token}
            refused = post(site, f"/review/doctor/{action}", data, cookie)
            assert refused.status_code == status and said in refused.text
