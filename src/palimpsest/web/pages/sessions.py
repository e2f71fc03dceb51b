"""Sessions: what each was shown and what it wrote (service.served)."""

from __future__ import annotations

from typing import Any

from ...service.served_answers import ServedAnswer, ServedEntry
from ..html import Markup, join, tag
from .common import (
    Viewer,
    as_text,
    csrf_field,
    header_row,
    isolated,
    layout,
    memory_href,
    session_href,
    time,
)


def sessions(viewer: Viewer, answer: ServedAnswer) -> Markup:
    listed = answer.get("sessions", [])
    kept = f"The record is kept {answer.get('keep_days')} days."
    whose = "" if viewer.role == "owner" else " Only the sessions served to you are listed."
    parts: list[object] = [tag("h1", "Sessions"), tag("p", kept + whose, class_="facts")]
    if not listed:
        parts.append(tag("p", "No session was recorded."))
    else:
        rows = [header_row("Session", "Served to", "From", "Last", "Servings")]
        for found in listed:
            rows.append(
                tag(
                    "tr",
                    tag("td", tag("a", found["session"], href=session_href(found["session"]))),
                    tag("td", isolated(found.get("actor"))),
                    tag("td", time(found.get("first_at"))),
                    tag("td", time(found.get("last_at"))),
                    tag("td", found.get("servings")),
                )
            )
        caption = tag("caption", "The sessions recorded, the latest first")
        parts.append(tag("div", tag("table", caption, rows), class_="scroll"))
    return layout("Sessions", join(parts), viewer)


def served_session(viewer: Viewer, answer: ServedAnswer) -> Markup:
    name = answer.get("session", "")
    entries = answer.get("entries", [])
    parts: list[object] = [
        tag("h1", "Session ", isolated(name)),
        tag(
            "p",
            "Served to ",
            isolated(answer.get("actor")),
            f" · {len(entries)} steps",
            class_="facts",
        ),
    ]
    items = [tag("li", _step(entry, answer.get("actor"))) for entry in entries]
    parts.append(
        tag("ol", items, class_="timeline steps") if items else tag("p", "No step recorded.")
    )
    parts.append(tag("p", tag("a", "All sessions", href="/sessions")))
    if viewer.role == "owner":  # the service refuses anyone else's post too
        parts.append(_forget_form(viewer, name))
    return layout(f"Session {name}", join(parts), viewer)


def _forget_form(viewer: Viewer, session: str) -> Markup:
    """Erase this session's record for good (`forget_served`): one event says why."""
    form = tag(
        "form",
        csrf_field(viewer),
        tag("input", type="hidden", name="session", value=session),
        tag("label", "Why this record must not stay on disk", for_="forget-because"),
        tag("input", id="forget-because", name="because", type="text", required=True),
        tag("button", "Forget this session's record", type="submit"),
        method="post",
        action="/sessions/forget",
        class_="change",
    )
    note = tag(
        "p",
        "What the session was shown and the ids it wrote are erased; the memories it wrote "
        "stay, with their history.",
        class_="facts",
    )
    return tag("section", tag("h2", "Forget", id="forget-h"), note, form,
               aria_labelledby="forget-h")  # fmt: skip


STEPS = {
    "brief": "Shown the session's brief",
    "review": "Shown the session's review",
    "recall": "Recalled",
    "orient": "Oriented",
    "inspect": "Inspected",
    "wrote": "Wrote",
}


def _step(entry: ServedEntry, session_actor: str | None) -> Markup:
    what = entry.get("what", "")
    when = _when(entry, session_actor)
    event = entry.get("event")
    if event is not None:  # a write of its actor in its span
        target = event.get("target_id", "")
        heading = tag("h2", "Wrote: ", event.get("op"), class_="step")
        linked = tag("a", target, href=memory_href(target)) if target.startswith("m_") else target
        version = event.get("version")
        body: list[object] = [
            tag("p", linked, f" version {version}" if version else "", class_="facts")
        ]
        if event.get("note"):
            body.append(tag("p", "Reason: ", tag("q", isolated(event["note"])), class_="note"))
        return join([heading, when, body])
    request = entry.get("request") or {}
    heading = tag("h2", STEPS.get(what, what), class_="step")
    asked = _asked(request)
    shown = entry.get("shown") or []
    lines = [
        tag(
            "li",
            tag("a", line["id"], href=memory_href(line["id"])),
            f" · version {line['version']}" if line.get("version") is not None else "",
            f" · score {line['score']}" if line.get("score") is not None else "",
        )
        for line in shown
    ]
    label = "Wrote" if what == "wrote" else "Shown"
    listing = (
        join([tag("p", f"{label} {len(lines)}:", class_="facts"), tag("ul", lines, class_="shown")])
        if lines
        else tag("p", "Nothing shown.", class_="facts")
    )
    return join([heading, when, asked, listing])


def _asked(request: dict[str, Any]) -> Markup | str:
    """The request as kept: its query redacted (or only its length and hash), its filters."""
    if not request:
        return ""
    rows = []
    if "query" in request:
        rows += [tag("dt", "query"), tag("dd", tag("q", isolated(request["query"])))]
    elif "query_sha256" in request:
        kept = f"{request.get('query_chars')} characters, kept only as sha256 "
        rows += [tag("dt", "query"),
                 tag("dd", kept, tag("code", request["query_sha256"]))]  # fmt: skip
    for name, value in request.items():
        if name in ("query", "query_sha256", "query_chars") or value in (None, [], ""):
            continue
        rows += [tag("dt", name.replace("_", " ")), tag("dd", as_text(value))]
    return tag("dl", rows, class_="fields asked") if rows else ""


def _when(entry: ServedEntry, session_actor: str | None) -> Markup:
    """When; and whose, for a step of another actor than the session's: another's agent
    may send the same session id, and its steps are not the session's actor's."""
    actor = entry.get("actor")  # none on an event of the session actor's span
    whose = [" · by ", isolated(actor)] if actor and actor != session_actor else []
    return tag("p", time(entry.get("at")), whose, class_="facts")
