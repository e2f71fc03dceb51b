"""The pages, as HTML: each a function of the service's answer (a dict), escaped by `html`.

No rules here: what a person may do is decided by the service; a page only leaves out the
forms a viewer could not use (the service refuses them anyway).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from ..domain.model import KINDS, STATUSES
from ..domain.views import command_for
from ..service.answers import (
    DisputeAnswer,
    DisputeShown,
    DuplicateGroup,
    DuplicateMember,
    DuplicatesAnswer,
    EventShown,
    Hit,
    InspectAnswer,
    LinkShown,
    MemoryLine,
    MemoryShown,
    Recalled,
)
from ..service.findings import DoctorAnswer, SecretFound
from ..service.served_answers import ServedAnswer, ServedEntry
from .html import Markup, join, tag


@dataclass(frozen=True)
class Viewer:
    """Who the page is for: shown in its header, and deciding which forms it offers."""

    actor: str
    role: str
    workspace: str
    csrf: str

    @property
    def writes(self) -> bool:
        return self.role != "viewer"


def layout(title: str, body: Markup, viewer: Viewer | None = None) -> Markup:
    head = tag(
        "head",
        tag("meta", charset="utf-8"),
        tag("meta", name="viewport", content="width=device-width, initial-scale=1"),
        tag("title", f"\u2068{title}\u2069 · Palimpsest"),  # isolated, as `isolated` does
        tag("link", rel="stylesheet", href="/static/site.css"),
        tag("script", src="/static/site.js", defer=True),
    )
    banner = tag(
        "header",
        tag("a", "Skip to the content", href="#main", class_="skip"),
        tag("a", "Palimpsest", href="/", class_="brand"),
        _site_nav(title) if viewer else "",
        _account(viewer) if viewer else "",
        class_="top",
    )
    main = tag("main", body, id="main", tabindex="-1")
    return Markup("<!doctype html>" + tag("html", head, tag("body", banner, main), lang="en"))


NAV = (
    ("Search", "/"),
    ("Sessions", "/sessions"),
    ("Review: duplicates", "/review/duplicates"),
    ("Review: disputes", "/review/disputes"),
    ("Review: stale", "/review/stale"),
    ("Review: doctor", "/review/doctor"),
)


def _site_nav(title: str) -> Markup:
    """The site's pages, as links (reached with Tab, named for a screen reader)."""
    items = [
        tag("li", tag("a", name, href=href, aria_current="page" if title == name else None))
        for name, href in NAV
    ]
    return tag("nav", tag("ul", items), aria_label="Site", class_="site")


def _account(viewer: Viewer) -> Markup:
    who = join([isolated(viewer.actor), f" · {viewer.role} · workspace ",
                isolated(viewer.workspace)])  # fmt: skip
    sign_out = tag(
        "form",
        csrf_field(viewer),
        tag("button", "Sign out", type="submit"),
        method="post",
        action="/sign-out",
    )
    return tag("nav", tag("span", who, class_="who"), sign_out, aria_label="Account")


def csrf_field(viewer: Viewer) -> Markup:
    return tag("input", type="hidden", name="csrf", value=viewer.csrf)


def sign_in(message: str | None = None, status: str = "info") -> Markup:
    notice = tag("p", message, class_=f"notice {status}", role="alert") if message else ""
    form = tag(
        "form",
        tag("label", "Your personal key", for_="key"),
        tag(
            "input",
            id="key",
            name="key",
            type="password",
            autocomplete="current-password",
            required=True,
            spellcheck="false",
        ),
        tag("button", "Sign in", type="submit"),
        method="post",
        action="/sign-in",
        class_="sign-in",
    )
    help_text = tag(
        "p",
        "A key is made by an owner of the workspace: ",
        tag("code", "palimpsest key create --user NAME"),
        ". On your own machine, ",
        tag("code", "palimpsest web"),
        " opens this page signed in.",
    )
    return layout("Sign in", join([tag("h1", "Sign in"), notice, form, help_text]))


def search(viewer: Viewer, filters: Mapping[str, str], answer: Recalled | None) -> Markup:
    parts = [tag("h1", "Search the memory"), _search_form(filters)]
    if answer is not None:
        parts.append(_hits(answer))
    return layout("Search", join(parts), viewer)


def _search_form(filters: Mapping[str, str]) -> Markup:
    def field(name: str, label: str, hint: str | None = None, kind: str = "text") -> Markup:
        described = f"{name}-hint" if hint else None
        return tag(
            "div",
            tag("label", label, for_=name),
            tag(
                "input",
                id=name,
                name=name,
                type=kind,
                value=filters.get(name, ""),
                aria_describedby=described,
            ),
            tag("small", hint, id=described) if hint else "",
            class_="field",
        )

    def choice(name: str, label: str, options: tuple[str, ...]) -> Markup:
        chosen = filters.get(name, "")
        items = [tag("option", "any", value="")]
        items += [tag("option", o, value=o, selected=o == chosen) for o in options]
        return tag(
            "div",
            tag("label", label, for_=name),
            tag("select", items, id=name, name=name),
            class_="field",
        )

    return tag(
        "form",
        tag(
            "div",
            tag("label", "Words or a question", for_="q"),
            tag("input", id="q", name="q", type="search", value=filters.get("q", "")),
            class_="field wide",
        ),
        field("notebook", "Notebook"),
        choice("kind", "Kind", KINDS),
        field("tags", "Tags", "all of these, separated by commas"),
        choice("status", "Status", STATUSES),
        field("as_of", "As of", "a date (midnight UTC) or a time: what was recorded then"),
        tag("button", "Search", type="submit"),
        method="get",
        action="/",
        role="search",
        class_="filters",
    )


def _hits(answer: Recalled) -> Markup:
    hits = answer.get("hits", [])
    as_of = answer.get("as_of")
    heading = f"{len(hits)} found" + (f", as recorded at {as_of}" if as_of else "")
    if not hits:
        return tag(
            "section",
            tag("h2", heading),
            tag("p", "No memory matches these words and filters."),
            aria_label="Results",
        )
    items = [tag("li", _hit(hit)) for hit in hits]
    return tag("section", tag("h2", heading), tag("ol", items, class_="hits"), aria_label="Results")


def _hit(hit: Hit) -> Markup:
    label = hit.get("title") or _first_line(hit.get("text", ""))
    facts: list[object] = [
        hit.get("kind"),
        join(["in ", isolated(hit.get("notebook"))]),
        hit.get("status"),
        f"version {hit.get('version')}",
    ]
    if hit.get("possibly_stale"):
        facts.append("possibly stale")
    shown = [f for f in facts if f]
    return join(
        [
            tag("a", label, href=memory_href(hit["id"]), class_="hit-title"),
            tag("p", [[" · ", f] if i else f for i, f in enumerate(shown)], class_="facts"),
            tag("p", hit.get("text", ""), class_="text"),
            tag("p", why_matched(hit), class_="why"),
        ]
    )


MATCHED = {
    "words": "its words",
    "meaning": "its meaning",
    "both": "its words and meaning",
    "context": "the memories around it",
    "filters": "the filters alone",
    "id": "its id",
    "key": "its key",
}


def why_matched(hit: Hit) -> str:
    """Recall's own account of a hit (`matched`, `words`, `similarity`), and its score."""
    matched = hit.get("matched")
    parts = [f"Matched by {MATCHED.get(matched, matched)}" if matched else "Listed"]
    words = hit.get("words") or []
    if words:
        parts.append("shares " + ", ".join(f"“{w}”" for w in words))
    if hit.get("similarity") is not None:
        parts.append(f"similarity {hit['similarity']}")
    if hit.get("score") is not None:
        parts.append(f"score {hit['score']}")
    return parts[0] + (": " + "; ".join(parts[1:]) if parts[1:] else "")


def isolated(value: object) -> Markup:
    """A value an agent wrote, set among the page's own words: in `<bdi>`, so that a
    direction override it leaves open (U+202E) turns nothing of the page around it."""
    return tag("bdi", value)


def memory_href(memory_id: str) -> str:
    return "/memories/" + quote(memory_id, safe="")


def _first_line(text: str, width: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "(no text)"
    return line if len(line) <= width else line[: width - 1] + "…"


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
    title = shown.get("title") or _first_line(shown.get("text", ""))
    parts = [
        tag("h1", title),
        tag("p", tag("code", shown["id"]), class_="facts"),
        tag(
            "section",
            tag("h2", "Text", id="text-h"),
            tag("p", shown.get("text", ""), class_="text"),
            aria_labelledby="text-h",
        ),
        _fields(shown),
        _actions(viewer, shown),
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
        rows += [tag("dt", name.replace("_", " ")), tag("dd", _value(value))]
    return tag(
        "section",
        tag("h2", "Fields", id="fields-h"),
        tag("dl", rows, class_="fields"),
        aria_labelledby="fields-h",
    )


def _value(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


def _actions(viewer: Viewer, shown: MemoryShown) -> Markup | str:
    """The forms that change this memory: none for a viewer."""
    if not viewer.writes or shown.get("status") != "active":
        return ""
    verify = tag(
        "form",
        csrf_field(viewer),
        tag("label", "Why it still holds (what you checked)", for_="verify-note"),
        tag("input", id="verify-note", name="note", type="text", required=True),
        tag("button", "Verify", type="submit"),
        method="post",
        action=memory_href(shown["id"]) + "/verify",
        class_="action",
    )
    return tag("section", tag("h2", "Actions", id="actions-h"), verify, aria_labelledby="actions-h")


def _header_row(*names: str) -> Markup:
    """A table's first row: a column header for each name."""
    return tag("tr", *(tag("th", name, scope="col") for name in names))


def _links(links: list[LinkShown], here: str) -> Markup:
    if not links:
        body: Markup = tag("p", "No links.")
    else:
        rows = [_header_row("Type", "From", "To")]
        for link in links:
            rows.append(
                tag(
                    "tr",
                    tag("td", link.get("type")),
                    _end(link.get("source"), here),
                    _end(link.get("target"), here),
                )
            )
        body = tag("table", tag("caption", "Links of this memory"), rows)
    return tag("section", tag("h2", "Links", id="links-h"), body, aria_labelledby="links-h")


def _end(ref: Any, here: str) -> Markup:
    if not isinstance(ref, str) or ref == here or not ref.startswith("m_"):
        return tag("td", "this memory" if ref == here else ref)
    return tag("td", tag("a", ref, href=memory_href(ref)))


def _timeline(events: list[EventShown]) -> Markup:
    """Each change: when, who, what, why, and every field's value before and after."""
    items = []
    for event in events:
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
        items.append(tag("li", heading, when, note, _changes(event.get("changes") or {})))
    body = tag("ol", items, class_="timeline") if items else tag("p", "No history.")
    return tag("section", tag("h2", "History", id="history-h"), body, aria_labelledby="history-h")


def _changes(changes: dict[str, Any]) -> Markup | str:
    if not changes:
        return ""
    rows = [_header_row("Field", "Before", "After")]
    for name, change in changes.items():
        old, new = change.get("old"), change.get("new")
        rows.append(
            tag(
                "tr",
                tag("th", name, scope="row"),
                tag("td", "" if old is None else _value(old), class_="old"),
                tag("td", "" if new is None else _value(new), class_="new"),
            )
        )
    return tag("table", tag("caption", "What changed"), rows, class_="changes")


def problem(viewer: Viewer | None, status: int, error: dict[str, Any]) -> Markup:
    """A refusal as a page: the service's `error_class` and its message."""
    body = join(
        [
            tag("h1", TITLES.get(status, "Refused")),
            tag("p", error.get("message", ""), class_="notice error", role="alert"),
            tag("p", "error_class: ", tag("code", error.get("error_class", "internal"))),
            tag("p", tag("a", "Back to search", href="/")),
        ]
    )
    return layout(TITLES.get(status, "Refused"), body, viewer)


TITLES = {
    400: "Not understood",
    401: "Sign in first",
    403: "Not allowed",
    404: "Not found",
    405: "Not allowed",
    409: "Changed meanwhile",
    429: "Too many requests",
    413: "Too large",
    503: "Busy",
    500: "Failed",
}


# -- sessions: what each was shown and what it wrote (service.served) -----------------


def session_href(session: str) -> str:
    return "/sessions/" + quote(session, safe="")


def sessions(viewer: Viewer, answer: ServedAnswer) -> Markup:
    listed = answer.get("sessions", [])
    kept = f"The record is kept {answer.get('keep_days')} days."
    whose = "" if viewer.role == "owner" else " Only the sessions served to you are listed."
    parts: list[object] = [tag("h1", "Sessions"), tag("p", kept + whose, class_="facts")]
    if not listed:
        parts.append(tag("p", "No session was recorded."))
    else:
        rows = [_header_row("Session", "Served to", "From", "Last", "Servings")]
        for found in listed:
            rows.append(
                tag(
                    "tr",
                    tag("td", tag("a", found["session"], href=session_href(found["session"]))),
                    tag("td", isolated(found.get("actor"))),
                    tag("td", _time(found.get("first_at"))),
                    tag("td", _time(found.get("last_at"))),
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
    items = [tag("li", _step(entry)) for entry in entries]
    parts.append(
        tag("ol", items, class_="timeline steps") if items else tag("p", "No step recorded.")
    )
    parts.append(tag("p", tag("a", "All sessions", href="/sessions")))
    return layout(f"Session {name}", join(parts), viewer)


STEPS = {
    "brief": "Shown the session's brief",
    "review": "Shown the session's review",
    "recall": "Recalled",
    "orient": "Oriented",
    "inspect": "Inspected",
    "wrote": "Wrote",
}


def _step(entry: ServedEntry) -> Markup:
    what = entry.get("what", "")
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
        return join([heading, _when(entry), body])
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
    return join([heading, _when(entry), asked, listing])


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
        rows += [tag("dt", name.replace("_", " ")), tag("dd", _value(value))]
    return tag("dl", rows, class_="fields asked") if rows else ""


def _when(entry: ServedEntry) -> Markup:
    return tag("p", _time(entry.get("at")), class_="facts")


def _time(at: str | None) -> Markup:
    return tag("time", at, datetime=at)


# -- review: groups of near-duplicates, merged into the one kept ------------------------


def duplicates(
    viewer: Viewer,
    notebooks: list[str],
    chosen: str,
    whole: bool,
    answer: DuplicatesAnswer | None,
) -> Markup:
    parts: list[object] = [
        tag("h1", "Review: duplicates"),
        tag(
            "p",
            "Active memories that say the same thing. Merging keeps the one you pick; "
            "the others retire as superseded by it, with your reason in their history.",
        ),
        _duplicates_form(notebooks, chosen),
    ]
    if answer is not None:
        parts.append(_groups(viewer, answer, chosen, whole))
    return layout("Review: duplicates", join(parts), viewer)


def _duplicates_form(notebooks: list[str], chosen: str) -> Markup:
    options = [tag("option", "choose a notebook", value="")]
    options += [tag("option", n, value=n, selected=n == chosen) for n in notebooks]
    by_notebook = tag(
        "form",
        tag(
            "div",
            tag("label", "Notebook", for_="dup-notebook"),
            tag("select", options, id="dup-notebook", name="notebook", required=True),
            class_="field",
        ),
        tag("button", "Find duplicates", type="submit"),
        method="get",
        action="/review/duplicates",
        class_="filters",
    )
    whole = tag(
        "p",
        "Or ",
        tag("a", "look through the whole workspace", href="/review/duplicates?all=1"),
        ": it takes seconds at 10,000 memories, so ask per notebook when you can.",
        class_="facts",
    )
    return join([by_notebook, whole])


def _groups(viewer: Viewer, answer: DuplicatesAnswer, chosen: str, whole: bool) -> Markup:
    groups = answer.get("groups", [])
    where = "the whole workspace" if whole else f"notebook {chosen}"
    counted = f"{len(groups)} group{'' if len(groups) == 1 else 's'}"
    facts = [f"{counted} in {where}; {answer.get('examined')} memories compared"]
    if not answer.get("by_meaning"):
        facts.append(" by their words only (no embedder: not by meaning)")
    if answer.get("more"):
        facts.append("; more groups were left out")
    parts: list[object] = [tag("p", "".join(facts), class_="facts")]
    parts += [tag("p", w, class_="notice", role="status") for w in answer.get("warnings", [])]
    for n, group in enumerate(groups, 1):
        parts.append(_group(viewer, n, group))
    if not groups:
        parts.append(tag("p", "No duplicates found."))
    return tag("section", parts, aria_label="Groups")


def _group(viewer: Viewer, n: int, group: DuplicateGroup) -> Markup:
    by = "the same text" if group.get("by") == "text" else f"their {group.get('by')}"
    heading = tag(
        "h2",
        f"Group {n}: {len(group['memories'])} memories alike by {by}",
        id=f"group-{n}-h",
    )
    why = [f"similarity {group.get('similarity')}"]
    if group.get("mixed"):
        why.append("they differ in " + ", ".join(group.get("mixed", [])) + ": check before merging")
    items = [tag("li", _member(member)) for member in group["memories"]]
    body: list[object] = [
        heading,
        tag("p", "; ".join(why), class_="facts"),
        tag("ul", items, class_="hits"),
    ]
    if viewer.writes:
        body.append(_merge_form(viewer, n, group))
    return tag("section", body, aria_labelledby=f"group-{n}-h", class_="group")


def _member(member: DuplicateMember) -> Markup:
    facts = [member.get("kind"), f"version {member.get('version')}"]
    return join(
        [
            tag("a", member["id"], href=memory_href(member["id"])),
            tag(
                "p",
                join(
                    [
                        " · ".join(str(f) for f in facts),
                        " · in ",
                        isolated(member["notebook"]),
                        " · written ",
                        _time(member.get("updated_at")),
                    ]
                ),
                class_="facts",
            ),
            tag("p", member.get("text", ""), class_="text"),
        ]
    )


def _merge_form(viewer: Viewer, n: int, group: DuplicateGroup) -> Markup:
    ids = [member["id"] for member in group["memories"]]
    radios = [
        tag(
            "div",
            tag(
                "input",
                type="radio",
                name="keep",
                value=memory_id,
                id=f"g{n}-keep-{i}",
                required=True,
            ),
            tag("label", "Keep ", tag("code", memory_id), for_=f"g{n}-keep-{i}"),
            class_="choice",
        )
        for i, memory_id in enumerate(ids)
    ]
    return tag(
        "form",
        csrf_field(viewer),
        tag("input", type="hidden", name="group", value=" ".join(ids)),
        tag("fieldset", tag("legend", "The memory to keep"), radios),
        tag("label", "Why they are the same (kept in each one's history)", for_=f"g{n}-because"),
        tag("input", id=f"g{n}-because", name="because", type="text", required=True),
        tag("button", "Merge", type="submit"),
        method="post",
        action="/review/duplicates/merge",
        class_="action merge",
        aria_label=f"Merge group {n}",
    )


# -- review: open disputes, ruled from the page -----------------------------------------


def disputes(viewer: Viewer, answer: DisputeAnswer) -> Markup:
    listed = answer.get("disputes", [])
    parts: list[object] = [
        tag("h1", "Review: disputes"),
        tag(
            "p",
            "Two memories that contradict, both still recalled and flagged. A ruling says "
            "which holds: the other retires as superseded by it, with a link.",
        ),
    ]
    if answer.get("more"):
        parts.append(tag("p", f"{answer['more']} more wait after these.", class_="facts"))
    parts += [_dispute(viewer, n, shown) for n, shown in enumerate(listed, 1)]
    if not listed:
        parts.append(tag("p", "No dispute is open."))
    return layout("Review: disputes", join(parts), viewer)


def _dispute(viewer: Viewer, n: int, shown: DisputeShown) -> Markup:
    heading = tag("h2", "Dispute ", tag("code", shown["id"]), id=f"dispute-{n}-h")
    opened = tag(
        "p",
        "Opened by ",
        isolated(shown.get("opened_by")),
        " at ",
        _time(shown.get("opened_at")),
        class_="facts",
    )
    reason = (
        tag("p", "Reason: ", tag("q", isolated(shown["reason"])), class_="note")
        if shown.get("reason")
        else ""
    )
    sides = [tag("li", _side(line)) for line in shown.get("memories", [])]
    body: list[object] = [heading, opened, reason, tag("ul", sides, class_="hits")]
    if viewer.writes and shown.get("status") == "open":
        body.append(_ruling_form(viewer, n, shown))
    return tag("section", body, aria_labelledby=f"dispute-{n}-h", class_="group")


def _side(line: MemoryLine) -> Markup:
    if line.get("forgotten"):
        return join([tag("code", line["id"]), tag("p", "forgotten", class_="facts")])
    facts = " · ".join(str(f) for f in (line.get("kind"), line.get("status")) if f)
    return join(
        [
            tag("a", line["id"], href=memory_href(line["id"])),
            tag("p", facts, class_="facts"),
            tag("p", line.get("text", ""), class_="text"),
        ]
    )


def _ruling_form(viewer: Viewer, n: int, shown: DisputeShown) -> Markup:
    sides = [line["id"] for line in shown.get("memories", []) if not line.get("forgotten")]
    radios = [
        tag(
            "div",
            tag(
                "input",
                type="radio",
                name="holds",
                value=memory_id,
                id=f"d{n}-holds-{i}",
                required=True,
            ),
            tag("label", tag("code", memory_id), " holds", for_=f"d{n}-holds-{i}"),
            class_="choice",
        )
        for i, memory_id in enumerate(sides)
    ]

    def text_field(name: str, label: str, hint: str | None = None, needed: bool = False) -> Markup:
        field_id = f"d{n}-{name}"
        return tag(
            "div",
            tag("label", label, for_=field_id),
            tag(
                "input",
                id=field_id,
                name=name,
                type="text",
                required=needed,
                aria_describedby=f"{field_id}-hint" if hint else None,
            ),
            tag("small", hint, id=f"{field_id}-hint") if hint else "",
            class_="field",
        )

    return tag(
        "form",
        csrf_field(viewer),
        tag("input", type="hidden", name="dispute", value=shown["id"]),
        tag("fieldset", tag("legend", "Which memory holds"), radios),
        text_field("reason", "Why it holds (the ruling's reason)", needed=True),
        text_field("evidence", "Evidence (optional)", "where this can be checked"),
        text_field(
            "because",
            "Why retire a rule (only when the other is a rule or orientation)",
            "retiring a rule or an orientation needs it, as any retirement of a rule does",
        ),
        tag("button", "Rule", type="submit"),
        method="post",
        action="/review/disputes/rule",
        class_="ruling",
        aria_label=f"Rule on dispute {n}",
    )


# -- review: memories possibly stale or stale by evidence, verified from the page -------


def stale(viewer: Viewer, answer: DoctorAnswer) -> Markup:
    """Doctor's two lists of memories that may no longer hold, each with why, and for an
    editor or owner a Verify form (revise status verified with a note, as the memory
    page's)."""
    aged = answer.get("possibly_stale", [])
    evidence = answer.get("stale_by_evidence", [])
    parts: list[object] = [
        tag("h1", "Review: stale"),
        tag(
            "p",
            "Memories that may no longer hold. Check each; if it still holds, verify it "
            "with what you checked; if not, open it to revise or retire it.",
        ),
        tag("h2", "Possibly stale", id="aged-h"),
        tag(
            "p",
            "Not verified within their kind's freshness window (",
            tag("code", "palimpsest settings"),
            " lists each kind's).",
            class_="facts",
        ),
        _stale_list(viewer, "aged", aged, None),
        tag("h2", "Stale by evidence", id="evidence-h"),
    ]
    if answer.get("project") is None:
        parts.append(
            tag(
                "p",
                "This server reads no project's files, so nothing is stale by evidence here: run ",
                tag("code", "palimpsest doctor"),
                " in the project's directory.",
                class_="facts",
            )
        )
    else:
        parts += [
            tag(
                "p",
                "Files of ",
                tag("code", answer["project"]),
                " changed since they were verified.",
                class_="facts",
            ),
            _stale_list(viewer, "evidence", evidence, [m["reasons"] for m in evidence]),
        ]
    return layout("Review: stale", join(parts), viewer)


def _stale_list(
    viewer: Viewer, prefix: str, lines: list[Any], reasons: list[list[str]] | None
) -> Markup:
    if not lines:
        return tag("p", "None.")
    items = []
    for n, line in enumerate(lines, 1):
        why = (
            tag("ul", [tag("li", r) for r in reasons[n - 1]], class_="why")
            if reasons is not None
            else tag(
                "p",
                f"Why: not verified within the freshness window of its kind, {line['kind']}.",
                class_="why",
            )
        )
        body: list[object] = [
            tag("a", line["id"], href=memory_href(line["id"])),
            tag("p", line["kind"], class_="facts"),
            tag("p", line["text"], class_="text"),
            why,
        ]
        if viewer.writes:
            body.append(_stale_verify(viewer, f"{prefix}-{n}", line["id"]))
        items.append(tag("li", body))
    return tag("ul", items, class_="hits")


def _stale_verify(viewer: Viewer, form_id: str, memory_id: str) -> Markup:
    return tag(
        "form",
        csrf_field(viewer),
        tag("input", type="hidden", name="id", value=memory_id),
        tag(
            "label",
            "Why ",
            tag("code", memory_id),
            " still holds (what you checked)",
            for_=f"{form_id}-note",
        ),
        tag("input", id=f"{form_id}-note", name="note", type="text", required=True),
        tag("button", "Verify", type="submit"),
        method="post",
        action="/review/stale/verify",
        class_="action",
        aria_label=f"Verify {memory_id}",
    )


# -- review: doctor's findings, by kind, each with what to do ---------------------------


def doctor(viewer: Viewer, answer: DoctorAnswer) -> Markup:
    """Doctor's findings grouped by kind. A fix the page has (verify, rule) links to its
    queue; any other is the command a person runs, shown as text. A secret's value is
    never in the answer: only where it is and its kinds."""
    parts: list[object] = [
        tag("h1", "Review: doctor"),
        tag(
            "p",
            "What the doctor found in this workspace that a person should look at, "
            "each with what to do.",
        ),
    ]
    secrets = answer.get("secrets", [])
    parts.append(_finding_section("secrets", "Secrets stored before the gate",
        "Stored before the gate refused them (their values are not shown). Forget each "
        "with the command given, then erase its bytes with palimpsest scrub.",
        [_secret(s) for s in secrets]))  # fmt: skip
    aged = answer.get("possibly_stale", [])
    evidence = answer.get("stale_by_evidence", [])
    stale_note = tag("p", tag("a", "Verify them in the stale queue", href="/review/stale"),
                     ", or open one to revise or retire it.")  # fmt: skip
    parts.append(_finding_section("possibly-stale", "Possibly stale",
        "Not verified within their kind's freshness window.",
        [_finding_line(line) for line in aged], stale_note if aged else None))  # fmt: skip
    if "stale_by_evidence" in answer:
        parts.append(_finding_section("evidence", "Stale by evidence",
            "Files of the project changed since they were verified.",
            [_finding_line(m, m["reasons"]) for m in evidence],
            stale_note if evidence else None))  # fmt: skip
    parts.append(_finding_section("expired", "Expired but still active",
        "Past their end date: open each to retire it or extend it.",
        [_finding_line(line) for line in answer.get("expired", [])]))  # fmt: skip
    parts.append(_finding_section("ownerless", "Ownerless",
        "No one owns them: open each and have someone claim it.",
        [_finding_line(line) for line in answer.get("ownerless", [])]))  # fmt: skip
    if "failing_checks" in answer:
        parts.append(_finding_section("failing", "Rules whose checks fail in the project",
            "Fix the files, or the rule.",
            [_finding_line(m, m["fails"]) for m in answer["failing_checks"]]))  # fmt: skip
    parts.append(_finding_section("noise", "Marked noise repeatedly",
        "Marked noise more often than helpful: rewrite or retire each.",
        [_finding_line(m, fix=m["fix"]) for m in answer.get("noise", [])]))  # fmt: skip
    parts.append(_finding_section("kept-as-notes", "Rules kept as notes",
        "Their forbidden check was too broad, so they refuse nothing: narrow the check.",
        [_finding_line(m, fix=m["fix"])
         for m in answer.get("rules_kept_as_notes", [])]))  # fmt: skip
    waiting = answer.get("open_disputes")
    oldest = waiting["oldest"] if waiting else []
    parts.append(_finding_section("disputes", "Open disputes",
        "Waiting for a ruling; the oldest few are listed.",
        [tag("li", tag("code", d["id"]), ": ", _memory_links(d["memories"]))
         for d in oldest],
        tag("p", f"{waiting['count']} open: ", tag("a", "rule on them in the disputes queue",
            href="/review/disputes"), ".") if waiting else None,
        waiting["count"] if waiting else 0))  # fmt: skip
    pending = answer.get("pending_scrubs", [])
    scrub = None
    if answer.get("scrub_pending") or pending:
        scrub = tag("p", "Run ", tag("code", "palimpsest scrub"), " on the store's machine "
                    "(SQLite: when no other process holds a read open).")  # fmt: skip
    parts.append(_finding_section("scrubs", "Pending scrubs",
        "Forgotten, but their bytes still wait in the store's files.",
        [tag("li", tag("code", p["id"]), " since ", _time(p.get("since")))
         for p in pending], scrub))  # fmt: skip
    if vectors := answer.get("stale_vectors"):
        parts.append(_finding_section("vectors", "Versions recall cannot find by meaning",
            f"{vectors['count']} without a vector of the current model.", [],
            _command(vectors["fix"])))  # fmt: skip
    if knocked := answer.get("failed_authentications"):
        parts.append(_finding_section("auth", "Failed authentications (last 24 hours)",
            f"{knocked['last_24_hours']}, the last at {knocked.get('last_at')}.", [],
            tag("p", knocked["fix"])))  # fmt: skip
    return layout("Review: doctor", join(parts), viewer)


def _finding_section(
    key: str,
    title: str,
    about: str,
    items: list[Markup],
    then: Markup | None = None,
    count: int | None = None,
) -> Markup:
    """A kind of finding: how many (`count`, else the items listed), and each."""
    counted = len(items) if count is None else count
    heading = tag("h2", f"{title}: {counted}", id=f"doctor-{key}-h")
    body: list[object] = [heading, tag("p", about, class_="facts")]
    if items:
        body.append(tag("ul", items, class_="hits"))
    if then is not None:
        body.append(then)
    return tag("section", body, aria_labelledby=f"doctor-{key}-h", class_="group")


def _finding_line(line: Any, details: list[str] | None = None, fix: Any = None) -> Markup:
    body: list[object] = [
        tag("a", line["id"], href=memory_href(line["id"])),
        tag("p", line.get("kind", ""), class_="facts"),
        tag("p", line.get("text", ""), class_="text"),
    ]
    if details:
        body.append(tag("ul", [tag("li", d) for d in details], class_="why"))
    if fix is not None:
        body.append(_command(fix))
    return tag("li", body)


def _secret(found: SecretFound) -> Markup:
    where: Markup
    if "notebook" in found:
        where = join(["Notebook ", tag("code", found["notebook"])])
    else:
        version = f" (version {found['version']})" if "version" in found else ""
        where = join([tag("a", found["id"], href=memory_href(found["id"])), version])
    fields = "; ".join(f"{name}: {', '.join(kinds)}" for name, kinds in found["fields"].items())
    return tag("li", tag("p", where), tag("p", "Found in ", fields, class_="facts"),
               _command(found["fix"]))  # fmt: skip


def _command(fix: Any) -> Markup:
    """A fix as the command a person types (a tool call as its CLI command), as text."""
    return tag("p", "Run: ", tag("code", command_for(fix)), class_="command")


def _memory_links(ids: list[str]) -> Markup:
    return join([tag("a", i, href=memory_href(i)) if n == 0 else join([" and ", tag("a", i,
                 href=memory_href(i))]) for n, i in enumerate(ids)])  # fmt: skip
