"""The page of a replica (docs/sync.md) over HTTP: it says what is not on the server yet,
and the doctor page lists the writes the server did not take, with its refusal, and the
forms that send one again or give it up with why.

What a person relies on: a memory a queued write changes is never shown as if the change
had landed; a write the server refused is listed with the server's words (shown, never
run) until a person acts; Retry checks it anew and queues it again; Drop needs a reason
and keeps the write as dropped; a form from another page or without the session's token
changes nothing, nor does an id that waits for nothing here.
"""

from __future__ import annotations

import html
from collections.abc import Iterator

import pytest

from palimpsest.web.pages.common import Viewer
from palimpsest.web.pages.replica import sync_section

from .replica_site import MEMORY, QUEUED_TEXT, REFUSAL, Replica, running_replica
from .site import IMAGE, SCRIPT, form_token


@pytest.fixture(scope="module")
def replica(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replica]:
    with running_replica(tmp_path_factory.mktemp("web-replica")) as running:
        yield running


def test_a_search_marks_a_hit_a_queued_revise_changes_and_lists_queued_remembers(
    replica: Replica,
) -> None:
    page = replica.get("/?q=pool+connections+warms").text
    found = page.split('aria-label="Results"', 1)[1].split("</section>", 1)[0]
    assert MEMORY in found and "changes pending" in found
    assert "A queued revise of this memory is not on the server yet" in found
    pending = page.split('id="pending-h"', 1)[1]
    assert pending.startswith(">Not on the server yet: 1</h2>")
    assert html.escape(QUEUED_TEXT) in pending and replica.remember_queued in pending
    assert IMAGE not in page  # the queued text is shown, never run


def test_a_memory_page_says_what_waits_for_the_server(replica: Replica) -> None:
    page = replica.get(f"/memories/{replica.memory_id}").text
    waiting = page.split('id="pending-h"', 1)[1].split("</section>", 1)[0]
    assert "Waiting for the server" in waiting and "not on the server yet" in waiting
    assert "revise" in waiting and replica.revise_queued in waiting
    assert page.index(MEMORY) < page.index('id="pending-h"')  # the text as the server has it


def test_the_doctor_page_lists_a_refused_write_with_the_servers_words_escaped(
    replica: Replica,
) -> None:
    queued = replica.refused("The pool drains at midnight")
    page = replica.get("/review/doctor").text
    assert "Sync with the server" in page and "http://127.0.0.1:9" in page
    item = page.split(f"<code>{queued}</code>", 1)[1].split("</li>", 1)[0]
    assert "refused by the server" in item and "The pool drains at midnight" in item
    assert html.escape(REFUSAL) in item and "forbidden" in item
    assert SCRIPT not in page and IMAGE not in page
    assert 'action="/review/doctor/retry"' in item and 'action="/review/doctor/drop"' in item
    assert 'name="because"' in item and "required" in item


def test_the_doctor_page_says_why_sync_stopped(replica: Replica) -> None:
    why = f"The server refused the key: revoked {SCRIPT}"  # as a round keeps it
    service = replica.service()
    try:
        service.note_refusal(why)
        page = replica.get("/review/doctor").text
    finally:
        service.note_refusal(None)
        service.close()
    stopped = page.split("Sync stopped: ", 1)[1].split("</p>", 1)[0]
    assert html.escape(why) in stopped and SCRIPT not in page


def test_retry_checks_the_write_anew_and_queues_it_again(replica: Replica) -> None:
    queued = replica.refused("The pool is sized by the load test")
    token = form_token(replica.get("/review/doctor").text)
    sent = replica.post("/review/doctor/retry", {"csrf": token, "queued": queued})
    assert sent.status_code == 303 and sent.headers["location"] == "/review/doctor"
    queue = replica.queue()
    assert queue[queued]["state"] == "dropped"
    again = queue[queued]["answer"]["because"].removeprefix("sent again as ")
    assert queue[again]["state"] == "pending"
    assert queue[again]["text"] == "The pool is sized by the load test"
    page = replica.get("/review/doctor").text
    assert f"<code>{queued}</code>" not in page  # settled: no longer listed as not taken


def test_a_revise_in_conflict_is_listed_and_retried_on_the_version_now_current(
    replica: Replica,
) -> None:
    service = replica.service()
    try:
        queued = service.revise_with_reason(id=replica.memory_id, title="Pool", note="named")
        refusal = {"error_class": "conflict", "message": "version 1 is no longer current"}
        service.settle(queued["queued"], "conflict", refusal)
    finally:
        service.close()
    page = replica.get("/review/doctor").text
    item = page.split(f"<code>{queued['queued']}</code>", 1)[1].split("</li>", 1)[0]
    assert "the memory changed on the server since" in item and "no longer current" in item
    assert f'href="/memories/{replica.memory_id}"' in item
    sent = replica.post("/review/doctor/retry", {"csrf": form_token(page),
                                                 "queued": queued["queued"]})  # fmt: skip
    assert sent.status_code == 303
    assert replica.queue()[queued["queued"]]["state"] == "dropped"


def test_drop_needs_a_reason_and_keeps_the_write_as_dropped(replica: Replica) -> None:
    queued = replica.refused("The pool restarts on Sundays")
    token = form_token(replica.get("/review/doctor").text)
    unsaid = replica.post("/review/doctor/drop", {"csrf": token, "queued": queued,
                                                  "because": "  "})  # fmt: skip
    assert unsaid.status_code == 400 and "because" in unsaid.text
    assert replica.queue()[queued]["state"] == "refused"
    dropped = replica.post("/review/doctor/drop", {"csrf": token, "queued": queued,
                                                   "because": "the server is right"})  # fmt: skip
    assert dropped.status_code == 303
    assert replica.queue()[queued]["answer"] == {"because": "the server is right"}
    assert replica.queue()[queued]["state"] == "dropped"


def test_an_id_that_waits_for_nothing_here_is_not_found_and_changes_nothing(
    replica: Replica,
) -> None:
    token = form_token(replica.get("/review/doctor").text)
    before = replica.queue()
    for queued in ("q_nothing", "<script>x</script>", ""):
        retried = replica.post("/review/doctor/retry", {"csrf": token, "queued": queued})
        dropped = replica.post("/review/doctor/drop", {"csrf": token, "queued": queued,
                                                       "because": "tidy"})  # fmt: skip
        assert retried.status_code == dropped.status_code == 404
        assert "<script>x</script>" not in retried.text + dropped.text
    # A write still waiting to be sent was not refused: there is nothing to send again.
    waiting = replica.post("/review/doctor/retry", {"csrf": token, "queued": replica.revise_queued})
    assert waiting.status_code == 404
    assert replica.queue() == before


def test_a_forged_retry_or_drop_changes_nothing(replica: Replica) -> None:
    queued = replica.refused("The pool is shared with the batch jobs")
    token = form_token(replica.get("/review/doctor").text)
    forged = [
        replica.post("/review/doctor/drop", {"queued": queued, "because": "x"}),  # no token
        replica.post("/review/doctor/drop", {"csrf": "0" * 43, "queued": queued, "because": "x"}),
        replica.post("/review/doctor/retry", {"csrf": token, "queued": queued},
                     Origin="http://evil.test"),  # another site's page
        replica.post("/review/doctor/retry", {"csrf": token, "queued": queued},
                     **{"Sec-Fetch-Site": "cross-site"}),
    ]  # fmt: skip
    assert [answer.status_code for answer in forged] == [403, 403, 403, 403]
    assert replica.queue()[queued]["state"] == "refused"


def test_a_viewer_is_offered_no_retry_nor_drop() -> None:
    """A replica holds no keys, so only its local owner signs in to its page; were a
    viewer shown doctor's `sync`, the page would offer no form (a viewer's post is the
    service's to refuse)."""
    sync = {"server": "https://example.org", "waiting": 0, "fix": "palimpsest sync --retry",
            "not_taken": [{"queued": "q_1", "op": "remember", "state": "refused",
                           "text": "t", "answer": {"message": REFUSAL}}]}  # fmt: skip
    shown = sync_section(Viewer("user:vic", "viewer", "default", "token"), sync)
    assert "q_1" in shown and html.escape(REFUSAL) in shown
    assert "<form" not in shown and "token" not in shown
    editor = sync_section(Viewer("user:ana", "editor", "default", "token"), sync)
    assert editor.count("<form") == 2
