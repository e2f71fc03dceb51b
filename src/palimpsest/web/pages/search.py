"""The search page: recall's filters, and each hit with why it matched."""

from __future__ import annotations

from collections.abc import Mapping

from ...domain.model import KINDS, STATUSES
from ...service.answers import (
    Hit,
    Recalled,
)
from ..html import Markup, join, tag
from .common import Viewer, first_line, isolated, layout, memory_href
from .replica import hit_pending, queued_remembers


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
    # On a replica: remembered here, matching, not filed on the server yet.
    pending = queued_remembers(answer["pending"]) if answer.get("pending") else ""
    if not hits:
        found = tag(
            "section",
            tag("h2", heading),
            tag("p", "No memory matches these words and filters."),
            aria_label="Results",
        )
        return join([found, pending])
    items = [tag("li", _hit(hit)) for hit in hits]
    found = tag(
        "section", tag("h2", heading), tag("ol", items, class_="hits"), aria_label="Results"
    )
    return join([found, pending])


def _hit(hit: Hit) -> Markup:
    label = hit.get("title") or first_line(hit.get("text", ""))
    facts: list[object] = [
        hit.get("kind"),
        join(["in ", isolated(hit.get("notebook"))]),
        hit.get("status"),
        f"version {hit.get('version')}",
    ]
    if hit.get("possibly_stale"):
        facts.append("possibly stale")
    waiting = hit.get("pending") or []  # on a replica: queued writes that change it
    if waiting:
        facts.append("changes pending")
    shown = [f for f in facts if f]
    return join(
        [
            tag("a", label, href=memory_href(hit["id"]), class_="hit-title"),
            tag("p", [[" · ", f] if i else f for i, f in enumerate(shown)], class_="facts"),
            hit_pending(waiting) if waiting else "",
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
