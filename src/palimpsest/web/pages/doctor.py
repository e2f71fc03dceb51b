"""Review queues from doctor: memories possibly stale, and doctor's findings."""

from __future__ import annotations

from typing import Any

from ...service.findings import DoctorAnswer, SecretFound
from ..html import Markup, join, tag
from .common import (
    Viewer,
    command,
    csrf_field,
    layout,
    memory_href,
    memory_links,
    time,
)
from .replica import sync_section


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
    if sync := answer.get("sync"):  # a replica's: first, as what sync did not do is news
        parts.append(sync_section(viewer, sync))
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
        [tag("li", tag("code", d["id"]), ": ", memory_links(d["memories"]))
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
        [tag("li", tag("code", p["id"]), " since ", time(p.get("since")))
         for p in pending], scrub))  # fmt: skip
    if vectors := answer.get("stale_vectors"):
        parts.append(_finding_section("vectors", "Versions recall cannot find by meaning",
            f"{vectors['count']} without a vector of the current model.", [],
            command(vectors["fix"])))  # fmt: skip
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
        body.append(command(fix))
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
               command(found["fix"]))  # fmt: skip
