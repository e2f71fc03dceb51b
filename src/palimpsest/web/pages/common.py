"""What every page shares: the layout, who it is for, sign-in, refusals, small pieces."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from ...domain.views import command_for
from ..html import Markup, join, tag


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
        tag("title", f"\u2068{title.translate(ISOLATES)}\u2069 · Palimpsest"),  # as `isolated`
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


# An agent's own isolate marks (LRI, RLI, FSI, PDI) would close the isolate around its value
# (a `<bdi>`, or the FSI ... PDI of a title), and a direction it leaves open would turn the
# page's own words after it: a value set among them is shown without them.
ISOLATES = dict.fromkeys(range(0x2066, 0x206A))

NAV = (
    ("Search", "/"),
    ("Notebooks", "/notebooks"),
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


def isolated(value: object) -> Markup:
    """A value an agent wrote, set among the page's own words: in `<bdi>`, so that a
    direction override it leaves open (U+202E) turns nothing of the page around it. Its
    own isolate marks are dropped: a browser lets its PDI close the `<bdi>` (ISOLATES)."""
    if isinstance(value, str) and not isinstance(value, Markup):
        value = value.translate(ISOLATES)
    return tag("bdi", value)


def memory_href(memory_id: str) -> str:
    return "/memories/" + quote(memory_id, safe="")


def notebook_href(name: str, notebook_id: str | None = None, days: int | None = None) -> str:
    """A notebook's page: its name whole in the path (a `/`, `?` or `#` in it quoted). By
    its id where the name would not reach it: a browser resolves `.` and `..` (quoted or
    not) as steps of the path itself."""
    ref = notebook_id if notebook_id is not None and name in (".", "..") else name
    href = "/notebooks/" + quote(ref, safe="")
    return href if days is None else f"{href}?days={days}"


def first_line(text: str, width: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "(no text)"
    return line if len(line) <= width else line[: width - 1] + "…"


def as_text(value: Any) -> str:
    """A field's value as one line of text (a list joined, a mapping as JSON)."""
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


def header_row(*names: str) -> Markup:
    """A table's first row: a column header for each name."""
    return tag("tr", *(tag("th", name, scope="col") for name in names))


def problem(
    viewer: Viewer | None, status: int, error: dict[str, Any], back: str | None = None
) -> Markup:
    """A refusal as a page: the service's `error_class` and its message; `back`, the page
    the refused form was on (a memory's), read again as it is now."""
    body = join(
        [
            tag("h1", TITLES.get(status, "Refused")),
            tag("p", error.get("message", ""), class_="notice error", role="alert"),
            tag("p", "error_class: ", tag("code", error.get("error_class", "internal"))),
            tag("p", tag("a", "Back to the page you came from, as it is now", href=back))
            if back
            else "",
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


def session_href(session: str) -> str:
    """A session's page: its id whole in the path, as its agent chose it. By a query where
    the path would not reach it: a browser resolves `.` and `..` as steps of the path."""
    if session in (".", ".."):
        return "/sessions?id=" + quote(session, safe="")
    return "/sessions/" + quote(session, safe="")


def time(at: str | None) -> Markup:
    return tag("time", at, datetime=at)


def command(fix: Any) -> Markup:
    """A fix as the command a person types (a tool call as its CLI command), as text."""
    return tag("p", "Run: ", tag("code", command_for(fix)), class_="command")


def memory_links(ids: list[str]) -> Markup:
    return join([tag("a", i, href=memory_href(i)) if n == 0 else join([" and ", tag("a", i,
                 href=memory_href(i))]) for n, i in enumerate(ids)])  # fmt: skip
