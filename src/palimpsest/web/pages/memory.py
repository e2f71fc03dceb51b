"""A memory's page: its fields, links, the forms that change it, and its history."""

from __future__ import annotations

from typing import Any

from ...service.answers import (
    EventShown,
    InspectAnswer,
    LinkShown,
    MemoryShown,
    VersionShown,
)
from ..html import Markup, join, tag
from .common import (
    Viewer,
    as_text,
    first_line,
    header_row,
    isolated,
    layout,
    memory_href,
)
from .graphs import history_anchor, links_graph, version_timeline
from .memory_forms import actions
from .replica import memory_pending

FIELDS = (
    "kind",
    "notebook",
    "status",
    "status_note",
    "version",
    "author",
    "owner",
    "tags",
    "key",
    "why",
    "source",
    "occurred_at",
    "recorded_at",
    "expires_at",
    "verified_at",
    "superseded_by",
    "severity",
    "falsifier",
    "scope",
    "possibly_stale",
    "expired",
)


def memory(viewer: Viewer, inspected: InspectAnswer, events: list[EventShown]) -> Markup:
    shown = inspected["memory"]
    title = shown.get("title") or first_line(shown.get("text", ""))
    parts = [
        tag("h1", title),
        tag("p", tag("code", shown["id"]), class_="facts"),
        tag(
            "section",
            tag("h2", "Text", id="text-h"),
            tag("p", shown.get("text", ""), class_="text"),
            aria_labelledby="text-h",
        ),
        memory_pending(inspected.get("pending", [])),  # on a replica: queued, not sent
        _fields(shown),
        _actions(viewer, shown, inspected.get("versions", [])),
        _links(inspected.get("links", []), shown["id"]),
        _timeline(events),
    ]
    return layout(title, join(parts), viewer)


def _fields(shown: MemoryShown) -> Markup:
    rows = []
    for name in FIELDS:
        value = shown.get(name)
        if value in (None, [], False, ""):
            continue
        rows += [tag("dt", name.replace("_", " ")), tag("dd", as_text(value))]
    return tag(
        "section",
        tag("h2", "Fields", id="fields-h"),
        tag("dl", rows, class_="fields"),
        aria_labelledby="fields-h",
    )


def _actions(viewer: Viewer, shown: MemoryShown, versions: list[VersionShown]) -> Markup | str:
    """The forms that change this memory (memory_forms.py): none for a viewer."""
    return actions(viewer, shown, versions)


def _links(links: list[LinkShown], here: str) -> Markup:
    if not links:
        body: Markup = tag("p", "No links.")
    else:
        rows = [header_row("Type", "From", "To")]
        for link in links:
            rows.append(
                tag(
                    "tr",
                    tag("td", link.get("type")),
                    _end(link.get("source"), here),
                    _end(link.get("target"), here),
                )
            )
        body = join([links_graph(here, links),
                     tag("table", tag("caption", "Links of this memory"), rows)])  # fmt: skip
    return tag("section", tag("h2", "Links", id="links-h"), body, aria_labelledby="links-h")


def _end(ref: Any, here: str) -> Markup:
    if not isinstance(ref, str) or ref == here or not ref.startswith("m_"):
        return tag("td", "this memory" if ref == here else ref)
    return tag("td", tag("a", ref, href=memory_href(ref)))


def _timeline(events: list[EventShown]) -> Markup:
    """Each change: when, who, what, why, and every field's value before and after."""
    items = []
    for position, event in enumerate(events, start=1):
        version = event.get("version")
        heading = tag(
            "h3",
            f"{'Version ' + str(version) + ': ' if version else ''}{event.get('op')}",
            " by ",
            tag("bdi", event.get("actor"), class_="actor"),
        )
        when = tag("p", tag("time", event.get("at"), datetime=event.get("at")), class_="facts")
        note = (
            tag("p", "Reason: ", tag("q", isolated(event["note"])), class_="note")
            if event.get("note")
            else ""
        )
        items.append(
            tag(
                "li",
                heading,
                when,
                note,
                _changes(event.get("changes") or {}),
                id=history_anchor(position),
            )
        )  # what the chart's marks link to
    body = (join([version_timeline(events), tag("ol", items, class_="timeline")])
            if items else tag("p", "No history."))  # fmt: skip
    return tag("section", tag("h2", "History", id="history-h"), body, aria_labelledby="history-h")


def _changes(changes: dict[str, Any]) -> Markup | str:
    if not changes:
        return ""
    rows = [header_row("Field", "Before", "After")]
    for name, change in changes.items():
        old, new = change.get("old"), change.get("new")
        rows.append(
            tag(
                "tr",
                tag("th", name, scope="row"),
                tag("td", "" if old is None else as_text(old), class_="old"),
                tag("td", "" if new is None else as_text(new), class_="new"),
            )
        )
    return tag("table", tag("caption", "What changed"), rows, class_="changes")
