"""Review queues that need a person: near-duplicates to merge, disputes to rule on."""

from __future__ import annotations

from ...service.answers import (
    DisputeAnswer,
    DisputeShown,
    DuplicateGroup,
    DuplicateMember,
    DuplicatesAnswer,
    MemoryLine,
)
from ..html import Markup, join, tag
from .common import Viewer, csrf_field, isolated, layout, memory_href, time


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
                        time(member.get("updated_at")),
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
        time(shown.get("opened_at")),
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
