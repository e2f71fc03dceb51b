"""What a replica's pages say of its writes that are not on the server yet (docs/sync.md):
a hit or a memory a queued write changes, the queued remembers a search matches, and on
the doctor page the writes the server did not take, each with the server's refusal and,
for an editor or owner, the forms that send it again or give it up with why.

All of it is read from the service's answers (recall's, inspect's, doctor's `pending` and
`sync`); nothing here decides what waits or who may act on it.
"""

from __future__ import annotations

from typing import Any

from ..html import Markup, join, tag
from .common import Viewer, csrf_field, isolated, memory_href, time

NOT_ON_SERVER = "not on the server yet"
WHERE = {  # a queued write's state, as a person reads it
    "pending": "waits to be sent: not on the server yet",
    "accepted": "taken by the server: shown here after the next sync",
    "refused": "refused by the server",
    "conflict": "not taken: the memory changed on the server since",
}


def hit_pending(ops: list[str]) -> Markup:
    """A hit a queued write changes: the page shows it as the server last sent it."""
    return tag("p", f"A queued {_ops(ops)} of this memory is {NOT_ON_SERVER}: what you see "
               "is the memory as the server last sent it.", class_="notice")  # fmt: skip


def queued_remembers(items: list[dict[str, Any]]) -> Markup:
    """Recall's `pending`: memories remembered here that match, not filed there yet."""
    lines = [tag("li", tag("p", item.get("text", ""), class_="text"),
                 tag("p", join(["in ", isolated(item.get("notebook")), " · ",
                                WHERE.get(item.get("state", ""), item.get("state")), " · ",
                                tag("code", item.get("queued"))]), class_="facts"))
             for item in items]  # fmt: skip
    return tag(
        "section",
        tag("h2", f"Not on the server yet: {len(items)}", id="pending-h"),
        tag(
            "p",
            "Remembered on this replica and matching; they get an id once the server "
            "has filed them and a sync brings them back.",
            class_="facts",
        ),
        tag("ul", lines, class_="hits"),
        aria_labelledby="pending-h",
    )


def memory_pending(items: list[dict[str, Any]]) -> Markup | str:
    """Inspect's `pending`: the writes queued here that change this memory."""
    if not items:
        return ""
    lines = [tag("li", tag("strong", item.get("op")), " by ", tag("bdi", item.get("actor")),
                 ", queued ", time(item.get("queued_at")), ": ",
                 WHERE.get(item.get("state", ""), item.get("state")), " (",
                 tag("code", item.get("queued")), ")")
             for item in items]  # fmt: skip
    return tag(
        "section",
        tag("h2", "Waiting for the server", id="pending-h"),
        tag(
            "p",
            f"Changes made on this replica, {NOT_ON_SERVER}: the page shows the memory "
            "as the server last sent it.",
            class_="notice",
        ),
        tag("ul", lines),
        aria_labelledby="pending-h",
        class_="group",
    )


def sync_section(viewer: Viewer, sync: dict[str, Any]) -> Markup:
    """Doctor's `sync`: why sync stopped, and each write the server did not take."""
    not_taken = sync.get("not_taken", [])
    body: list[object] = [
        tag("h2", f"Sync with the server: {len(not_taken)} not taken", id="doctor-sync-h"),
        tag("p", "This store is a replica of ", tag("code", sync.get("server")),
            f"; {sync.get('waiting', 0)} queued writes wait to be sent.", class_="facts"),
    ]  # fmt: skip
    if sync.get("stopped"):
        body.append(tag("p", "Sync stopped: ", isolated(sync["stopped"]), class_="notice error"))
    if not_taken:
        items = [_not_taken(viewer, n, item) for n, item in enumerate(not_taken, 1)]
        body.append(tag("ul", items, class_="hits"))
    if sync.get("fix"):
        body.append(tag("p", "From the command line: ", tag("code", sync["fix"]), class_="facts"))
    return tag("section", body, aria_labelledby="doctor-sync-h", class_="group")


def _not_taken(viewer: Viewer, n: int, item: dict[str, Any]) -> Markup:
    answer = item.get("answer") or {}
    what: list[object] = [tag("strong", item.get("op")), " ",
                          tag("code", item.get("queued")), ", queued ",
                          time(item.get("queued_at")), " by ", tag("bdi", item.get("actor")),
                          ": ", WHERE.get(item.get("state", ""), item.get("state"))]  # fmt: skip
    body: list[object] = [tag("p", what)]
    if item.get("id"):
        body.append(tag("p", "Memory ", tag("a", item["id"], href=memory_href(item["id"]))))
    if item.get("text"):
        body.append(tag("p", item["text"], class_="text"))
    if answer:
        body.append(tag("p", "The server said (", answer.get("error_class"), "): ",
                        tag("q", isolated(answer.get("message"))), class_="why"))  # fmt: skip
    if viewer.writes:
        body += [_retry(viewer, item["queued"]), _drop(viewer, f"queued-{n}", item["queued"])]
    return tag("li", body)


def _retry(viewer: Viewer, queued: str) -> Markup:
    return tag(
        "form",
        csrf_field(viewer),
        tag("input", type="hidden", name="queued", value=queued),
        tag("button", "Retry", type="submit"),
        method="post",
        action="/review/doctor/retry",
        class_="action",
        aria_label=f"Retry {queued}: check it anew and queue it again",
    )


def _drop(viewer: Viewer, form_id: str, queued: str) -> Markup:
    return tag(
        "form",
        csrf_field(viewer),
        tag("input", type="hidden", name="queued", value=queued),
        tag("label", "Why give up ", tag("code", queued), for_=f"{form_id}-because"),
        tag("input", id=f"{form_id}-because", name="because", type="text", required=True),
        tag("button", "Drop", type="submit"),
        method="post",
        action="/review/doctor/drop",
        class_="action",
        aria_label=f"Drop {queued}",
    )


def _ops(ops: list[str]) -> str:
    return " and ".join(dict.fromkeys(ops))
