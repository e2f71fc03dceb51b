"""The forms that change one memory (verify, revise, retire, revert, forget), each asking
for its reason, and forget's confirmation naming what it would erase.

What a form may change is the service's to decide: these only offer what a person may
try. A viewer is offered none; a change the service refuses comes back as its problem page.
Each change carries the version shown (`expected_version`), so one made meanwhile by
someone else is refused as a conflict, never overwritten.
"""

from __future__ import annotations

from typing import Any

from ...domain.model import KINDS
from ...service.answers import MemoryShown, VersionShown
from ..html import Markup, join, tag
from .common import Viewer, as_text, csrf_field, first_line, isolated, layout, memory_href

RETIRED_AS = (
    ("superseded", "Superseded: a newer truth exists"),
    ("retracted", "Retracted: it was never true"),
)


def actions(viewer: Viewer, shown: MemoryShown, versions: list[VersionShown]) -> Markup | str:
    """Each action in a disclosure of its own, so the page stays short until one is opened."""
    if not viewer.writes:
        return ""
    active = shown.get("status") == "active"
    forms = [
        _verify(viewer, shown) if active else "",
        _revise(viewer, shown),
        _retire(viewer, shown) if active else "",
        _revert(viewer, shown, versions),
        _forget(viewer, shown),
    ]
    return tag("section", tag("h2", "Actions", id="actions-h"), forms, aria_labelledby="actions-h")


def _form(viewer: Viewer, shown: MemoryShown, action: str, *fields: object) -> Markup:
    return tag(
        "form",
        csrf_field(viewer),
        fields,
        method="post",
        action=memory_href(shown["id"]) + "/" + action,
        class_="change",
        aria_label=action.capitalize() + " this memory",
    )


def _disclosure(summary: str, body: Markup) -> Markup:
    return tag("details", tag("summary", summary), body, class_="action-box")


def _expected(shown: MemoryShown, version: Any = None) -> Markup:
    """The version the person was shown: a change meanwhile makes theirs a conflict."""
    value = shown.get("version") if version is None else version
    return tag("input", type="hidden", name="expected_version", value=value)


def _reason(id_: str, label: str, name: str = "note", value: str | None = None) -> Markup:
    return join(
        [
            tag("label", label, for_=id_),
            tag("input", id=id_, name=name, type="text", required=True, value=value),
        ]
    )


def _verify(viewer: Viewer, shown: MemoryShown) -> Markup:
    return _form(
        viewer,
        shown,
        "verify",
        _expected(shown),
        _reason("verify-note", "Why it still holds (what you checked)"),
        tag("button", "Verify", type="submit"),
    )


def _revise(viewer: Viewer, shown: MemoryShown) -> Markup:
    kinds = [tag("option", k, value=k, selected=k == shown.get("kind")) for k in KINDS]
    form = _form(
        viewer,
        shown,
        "revise",
        _expected(shown),
        tag("label", "Text", for_="revise-text"),
        tag(
            "textarea",
            "\n",  # HTML drops a textarea's first line break: this one, not the text's own
            shown.get("text", ""),
            id="revise-text",
            name="text",
            rows="6",
            required=True,
        ),
        _field("revise-title", "Title", "title", shown.get("title")),
        tag("label", "Kind", for_="revise-kind"),
        tag("select", kinds, id="revise-kind", name="kind"),
        _field("revise-why", "Why it matters", "why", shown.get("why")),
        _field("revise-tags", "Tags, comma-separated", "tags", as_text(shown.get("tags") or [])),
        tag("p", "A field left empty is cleared.", class_="facts"),
        _reason("revise-note", "Why you change it"),
        tag("button", "Revise", type="submit"),
    )
    return _disclosure("Revise", form)


def _field(id_: str, label: str, name: str, value: Any) -> Markup:
    return join(
        [
            tag("label", label, for_=id_),
            tag("input", id=id_, name=name, type="text", value=value or ""),
        ]
    )


def _retire(viewer: Viewer, shown: MemoryShown) -> Markup:
    choices = [
        tag(
            "label",
            tag(
                "input",
                type="radio",
                name="status",
                value=value,
                required=True,
                checked=value == "superseded",
            ),
            " ",
            label,
            class_="choice",
        )
        for value, label in RETIRED_AS
    ]
    form = _form(
        viewer,
        shown,
        "retire",
        _expected(shown),
        tag("fieldset", tag("legend", "Retire as"), choices),
        _field("retire-by", "Replaced by (a memory's id, when superseded)", "superseded_by", None),
        _reason("retire-note", "Why you retire it"),
        tag("button", "Retire", type="submit"),
    )
    return _disclosure("Retire", form)


def _revert(viewer: Viewer, shown: MemoryShown, versions: list[VersionShown]) -> Markup | str:
    now = shown.get("version") or 0
    earlier = [v for v in versions if v["version"] < now and not v.get("scrubbed")]
    if not earlier:
        return ""
    options = [
        tag(
            "option",
            f"Version {v['version']}: {v['op']} by {v['actor']}, {v['at']}",
            value=v["version"],
        )
        for v in reversed(earlier)
    ]
    form = _form(
        viewer,
        shown,
        "revert",
        tag("label", "Back to", for_="revert-version"),
        tag("select", options, id="revert-version", name="version"),
        _reason("revert-note", "Why you revert it"),
        tag("button", "Revert", type="submit"),
    )
    return _disclosure("Revert to an earlier version", form)


def _forget(viewer: Viewer, shown: MemoryShown) -> Markup:
    form = _form(
        viewer,
        shown,
        "forget",
        _expected(shown),
        tag(
            "p",
            "Forget erases this memory's text from every version, for good; only a "
            "tombstone stays. To take it out of recall, retire it instead. The next step "
            "names what would be erased and changes nothing yet.",
            class_="facts",
        ),
        _reason("forget-because", "Why it must not stay on disk", name="because"),
        tag("button", "Review what forget erases", type="submit"),
    )
    return _disclosure("Forget", form)


def forget_confirmation(
    viewer: Viewer, shown: MemoryShown, would: dict[str, Any], because: str, expected: Any
) -> Markup:
    """What a forget would erase, as its dry run said, and the form that erases it, for
    the version the dry run was checked against (`expected`, when the form gave one)."""
    title = shown.get("title") or first_line(shown.get("text", ""))
    erase = would.get("would_erase") or {}
    versions = int(erase.get("versions") or shown["version"])
    named = join(["Memory ", tag("code", shown["id"]), ", “", isolated(title), "”"])
    facts = [
        tag("li", named),
        tag(
            "li",
            f"The text of its {_versions(versions)}, and their fields: ",
            as_text(erase.get("fields") or []),
        ),
    ]
    for withdrawn in would.get("disputes_withdrawn") or []:
        facts.append(
            tag(
                "li",
                "Its open dispute ",
                tag("code", withdrawn.get("dispute")),
                " with ",
                tag("code", withdrawn.get("id")),
                ", withdrawn",
            )
        )
    form = _form(
        viewer,
        shown,
        "forget",
        _expected(shown, expected),
        _reason("forget-because", "Why it must not stay on disk", name="because", value=because),
        tag(
            "label",
            tag("input", type="checkbox", name="confirm", value="erase", required=True),
            " Erase ",
            tag("code", shown["id"]),
            f" and the text of its {_versions(versions)} for good",
            class_="choice",
        ),
        tag("button", "Forget for good", type="submit"),
    )
    body = join(
        [
            tag("h1", "Forget ", isolated(title), "?"),
            tag(
                "p",
                "Nothing is erased yet. Forget would erase, irreversibly:",
                class_="notice error",
                role="alert",
            ),
            tag("ul", facts),
            tag("p", "A tombstone stays: the id, when, who, and your reason."),
            form,
            tag("p", tag("a", "Back, erasing nothing", href=memory_href(shown["id"]))),
        ]
    )
    return layout("Forget " + title, body, viewer)


def _versions(count: int) -> str:
    return f"{count} version" if count == 1 else f"{count} versions"
