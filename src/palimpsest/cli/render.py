"""How the CLI prints answers for a person: short tables and `name: value` lines.

Kept generic on purpose: the service's answers are dicts, and a new key should show up
here without anyone touching this module. `--json` bypasses all of it.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import click

from ..domain.views import command_for

Column = tuple[str, str]  # (header, key in the row)
TEXT: list[Column] = [("text", "text")]
OP: list[Column] = [("op", "op")]


def short(value: Any, width: int = 0) -> str:
    """One line for a table cell: times to the second, lists joined, long text cut."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        text = ", ".join(short(v) for v in value)
    elif isinstance(value, dict):
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    else:
        text = " ".join(str(value).split())
    if _looks_like_time(text):
        text = text[:19].replace("T", " ")
    if width and len(text) > width:
        text = text[: max(width - 1, 1)] + "…"
    return text


def counted(count: int, one: str, many: str) -> str:
    """`1 memory`, `2 memories`: a count with its noun in agreement."""
    return f"{count} {one if count == 1 else many}"


def _columns() -> int:
    return shutil.get_terminal_size((120, 24)).columns


def _looks_like_time(text: str) -> bool:
    return len(text) >= 20 and text[4] == "-" and text[10] == "T" and text.endswith("Z")


def table(rows: Sequence[dict[str, Any]], columns: Sequence[Column] | None = None) -> None:
    """Print rows as aligned columns; the last column takes what is left of the terminal."""
    if not rows:
        return
    if columns is None:
        columns = [(k, k) for k, v in rows[0].items() if not isinstance(v, dict)]
    cells = [[short(row.get(key)) for _, key in columns] for row in rows]
    widths = [
        max([len(header)] + [len(line[i]) for line in cells])
        for i, (header, _) in enumerate(columns)
    ]
    room = _columns() - sum(widths[:-1]) - 2 * len(widths)
    widths[-1] = max(min(widths[-1], room), 20)
    header = "  ".join(h.upper().ljust(w) for (h, _), w in zip(columns, widths, strict=True))
    click.echo(header.rstrip())
    indent = " " * (sum(widths[:-1]) + 2 * (len(widths) - 1))
    for line in cells:
        # The last column (a memory's text) is wrapped, never cut: its end may be the answer.
        last = textwrap.wrap(line[-1], widths[-1], break_on_hyphens=False) or [""]
        line[-1] = last[0]
        click.echo("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())
        for more in last[1:]:
            click.echo(indent + more)


def fields(body: dict[str, Any], indent: str = "") -> None:
    """Print a dict as `name: value` lines, leaving out empty values; nested lists as tables."""
    for name, value in body.items():
        if value is None or value is False or value == [] or value == {}:
            continue
        if isinstance(value, list) and all(isinstance(v, dict) for v in value):
            click.echo(f"{indent}{name}:")
            table(value)
            for row in value:  # what a table cannot hold, such as a dry run's diff
                nested = {k: v for k, v in row.items() if isinstance(v, dict) and v}
                if nested:
                    click.echo(f"{indent}{row.get('id', '')}:")
                    fields(nested, indent + "  ")
        elif isinstance(value, dict):
            click.echo(f"{indent}{name}:")
            fields(value, indent + "  ")
        elif isinstance(value, str) and "\n" in value:
            click.echo(f"{indent}{name}:")
            for line in value.splitlines():
                click.echo(f"{indent}  {line}")
        else:
            room = max(_columns() - len(indent) - 2, 20)
            lines = textwrap.wrap(f"{name}: {short(value)}", room, break_on_hyphens=False)
            click.echo(f"{indent}{lines[0]}")
            for more in lines[1:]:  # a long value wrapped, indented under its name
                click.echo(f"{indent}  {more}")


def forgotten(result: dict[str, Any]) -> None:
    """forget's answer. A dry run forgets nothing: it says what it would forget, without
    the `forgotten: yes` of each target, which would read as done."""
    if not result.get("dry_run"):
        fields(result)
        return
    click.echo("Dry run, nothing is forgotten. This would forget:")
    rest = {k: v for k, v in result.items() if k != "dry_run"}
    if "results" in rest:
        rest["results"] = [
            {k: v for k, v in t.items() if k != "forgotten"} for t in rest["results"]
        ]
    fields(rest)


def vectors_made(vectors: dict[str, Any]) -> str:
    """A reindex's (or a restore's) counts said plainly: `stale` is what lacked a vector of
    the model, `reindexed` what was embedded; most often the same count, said once."""
    if "note" in vectors:
        return str(vectors["note"])
    made, lacking, model = vectors["reindexed"], vectors["stale"], vectors["model"]
    if not lacking:
        return f"every version has its vector of {model} already"
    if made == lacking:
        return f"{counted(made, 'version', 'versions')} embedded anew with {model}"
    return f"{made} of {counted(lacking, 'version', 'versions')} embedded anew with {model}"


def with_vectors(result: dict[str, Any]) -> None:
    """An answer holding a reindex's counts (`vectors`), them in one line."""
    if "vectors" in result:
        result = {**result, "vectors": vectors_made(result["vectors"])}
    fields(result)


def hits(result: Mapping[str, Any]) -> None:
    rows = [{**hit, "flags": _flags(hit), "how": _how(hit)} for hit in result.get("hits", [])]
    if not rows:
        click.echo(result.get("note") or "No memories found.")
    table(
        rows,
        [("id", "id"), ("kind", "kind"), ("flags", "flags"), ("notebook", "notebook"),
         ("how", "matched"), *TEXT],
    )  # fmt: skip
    if result.get("rules"):
        click.echo("\nRules that apply here:")
        table(result["rules"], [("id", "id"), ("severity", "severity"), ("text", "text")])
    if result.get("left_out"):
        click.echo(f"\nPast the budget: {', '.join(result['left_out'])}")
    if result.get("pending"):
        click.echo("\nWritten here, not on the server yet (pending):")
        pending(result["pending"])
    if result.get("as_of"):
        click.echo(f"\n(as of {result['as_of']})")


def _how(hit: dict[str, Any]) -> str:
    """How a hit matched, briefly: `both 0.52` (its similarity), `words`, `key`..."""
    similarity = hit.get("similarity")
    return (
        f"{hit.get('matched', '')} {similarity:.2f}"
        if similarity is not None
        else hit.get("matched", "")
    )


def _flags(hit: dict[str, Any]) -> str:
    flags = [] if hit.get("status") == "active" else [str(hit.get("status"))]
    flags += ["below floor"] if hit.get("below_floor") else []
    flags += [name for name in ("possibly_stale", "expired") if hit.get(name)]
    flags += ["disputed"] if hit.get("disputed_with") else []
    flags += [f"pending {'+'.join(hit['pending'])}"] if hit.get("pending") else []
    if hit.get("verified_at"):
        flags.append("verified")
    return ",".join(flags)


def events(result: Mapping[str, Any]) -> None:
    if "events" not in result:  # a diff between two versions
        click.echo(f"{result['id']}: version {result['from']} -> {result['to']}")
        for name, change in result.get("changes", {}).items():
            if name != "text":
                click.echo(f"  {name}: {short(change.get('old'))} -> {short(change.get('new'))}")
        if result.get("text_diff"):
            click.echo(result["text_diff"])
        return
    rows = [{**e, "target": e.get("target_id"), "changed": _changed(e)} for e in result["events"]]
    if not rows:
        click.echo("No events.")
    columns = [("at", "at"), ("actor", "actor"), ("op", "op")]
    table(rows, [*columns, ("target", "target"), ("changed", "changed")])


def _changed(event: dict[str, Any]) -> str:
    """What an event changed, and why when it says (its note), on one line."""
    changes = event.get("changes") or {}
    if event.get("op") != "remember" and "text" in changes:
        text = changes["text"]
        old, new = changed_part(str(text.get("old") or ""), str(text.get("new") or ""))
        rest = [f for f in event.get("fields", []) if f != "text"]
        what = "; ".join([f"text: {old!r} -> {new!r}", *rest])
    else:
        what = ", ".join(event.get("fields") or [])
        if not what or event.get("target_type") != "memory":  # notebooks, links, settings
            what = _data_changes(event.get("data") or {}) or what
    note = " ".join(str(event.get("note") or "").split())  # one line per event
    return f"{what} ({note})" if note else what


def _data_changes(data: dict[str, Any]) -> str:
    """What a notebook or link event did, from its data: a link's ends, a field's two sides."""
    link = data.get("link")
    if isinstance(link, dict):
        return f"{link.get('source')} {link.get('type')} {link.get('target')}"
    said = []
    for name, value in data.items():
        if isinstance(value, list) and len(value) == 2:
            said.append(f"{name}: {short(_shown(value[0]), 30)} -> {short(_shown(value[1]), 30)}")
        elif value is not None:
            said.append(f"{name}: {short(_shown(value), 30)}")
    return "; ".join(said)


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    return "-" if value is None else repr(value) if isinstance(value, str) else str(value)


def inspected(result: dict[str, Any]) -> None:
    if "tombstone" in result:
        click.echo("Forgotten: only this tombstone remains.")
        fields(result["tombstone"], "  ")
    elif "notebook" in result:
        fields(result["notebook"])
        click.echo("memories:")
        table(
            result["memories"],
            [("id", "id"), ("kind", "kind"), ("status", "status"), ("v", "version"), *TEXT],
        )
    else:
        fields(result["memory"])
        click.echo("versions:")
        table(
            result["versions"],
            [("version", "version"), ("at", "at"), ("actor", "actor"), *OP],
        )
    if result.get("links"):
        click.echo("links:")
        table(
            result["links"],
            [("id", "id"), ("type", "type"), ("source", "source"), ("target", "target")],
        )
    if result.get("pending"):
        click.echo("written here, not on the server yet (pending):")
        pending(result["pending"])


def notebooks(result: dict[str, Any]) -> None:
    if not result["notebooks"]:
        click.echo("No notebooks yet; `palimpsest remember -n NAME ...` creates one.")
    columns = [("id", "id"), ("name", "name"), ("domain", "domain"), ("tags", "tags")]
    table(result["notebooks"], [*columns, ("summary", "summary")])


def scrub(result: dict[str, Any]) -> None:
    locked = result.get("locked_seconds") or {}
    if locked:
        tables = ", ".join(f"{name} {seconds} s" for name, seconds in locked.items())
        click.echo(f"Scrubbed (how long each part was locked: {tables}).")
    else:
        click.echo("Nothing waited to be erased.")
    if result.get("pending_scrubs"):
        click.echo(f"Still pending: {counted(len(result['pending_scrubs']), 'forget', 'forgets')}.")
    if result.get("warning"):
        click.echo(f"warning: {result['warning']}")


def doctor(result: dict[str, Any]) -> None:
    sections = (
        ("secrets", "Secrets stored before the gate (forget them)"),
        ("possibly_stale", "Possibly stale: verify or retire"),
        ("expired", "Expired but still active: retire or extend"),
        ("ownerless", "Ownerless: claim them"),
        ("failing_checks", "Rules whose checks fail in the project: fix the files"),
        ("stale_by_evidence", "Stale by evidence (files changed): verify, revise or retire"),
        ("noise", "Marked noise repeatedly: rewrite or retire"),
        ("rules_kept_as_notes", "Rules kept as notes (check too broad): narrow them"),
    )
    for key, title in sections:
        if key not in result:  # the project's findings, when no project is known
            continue
        rows = result.get(key) or []
        click.echo(f"{title}: {len(rows)}")
        for row in rows:
            where = row.get("id") or row.get("notebook")
            detail = command_for(row["fix"]) if "fix" in row else short(row.get("text", ""), 80)
            click.echo(f"  {where}  {detail}")
    if waiting := result.get("open_disputes"):
        click.echo(f"Open disputes, waiting for a ruling: {waiting['count']} (oldest first)")
        for row in waiting["oldest"]:
            click.echo(f"  {row['id']}  {command_for(row['fix'])}")
    if knocked := result.get("failed_authentications"):
        count, last = knocked["last_24_hours"], knocked["last_at"]
        click.echo(f"Failed authentications over HTTP in the last 24 hours: {count}")
        click.echo(f"  last at {last}: {knocked['fix']}")
    if stale := result.get("stale_vectors"):
        versions = counted(stale["count"], "version has", "versions have")
        click.echo(f"{versions} no vector of the current model, so recall")
        click.echo(f"cannot find them by meaning: run `{stale['fix']}`.")
    if sync := result.get("sync"):
        if sync.get("stopped"):
            click.echo(f"Sync with {sync['server']} stopped: {sync['stopped']}")
        if sync.get("not_taken"):
            click.echo(f"Writes the server did not take: {len(sync['not_taken'])}")
            pending(sync["not_taken"])
            click.echo(f"  {sync['fix']}")
    if result.get("scrub_pending"):
        waiting = len(result.get("pending_scrubs") or [])
        forgets = (
            counted(waiting, "forget still waits", "forgets still wait")
            if waiting
            else ("Forgets still wait")
        )
        click.echo(f"{forgets} for their bytes to be erased: ", nl=False)
        click.echo("run `palimpsest scrub` (SQLite: when no other process holds a read open).")


def changed_part(old: str, new: str, room: int = 40) -> tuple[str, str]:
    """The stretch where two texts differ, with a few words around it, each within `room`.

    Both texts cut to their start would hide a change made near the end of a long text.
    """
    old, new = short(old), short(new)
    start = _common_length(old, new)
    same_end = _common_length(old[start:][::-1], new[start:][::-1])
    begin = _word_start(old, start - CONTEXT)  # the same in both: it is in the common start

    def window(text: str) -> str:
        stop = _word_end(text, len(text) - same_end + CONTEXT)
        piece = ("…" if begin else "") + text[begin:stop] + ("…" if stop < len(text) else "")
        return short(piece, room)

    return window(old), window(new)


CONTEXT = 12  # characters of unchanged text shown on each side of a change


def _common_length(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _word_start(text: str, at: int) -> int:
    return 0 if at <= 0 else text.rfind(" ", 0, at) + 1


def _word_end(text: str, at: int) -> int:
    found = text.find(" ", at) if at < len(text) else -1
    return len(text) if found == -1 else found


# Suggestions on write, in the order a person should read them, with what heads each list.
SUGGESTIONS = {
    "possible_contradicts": "May contradict",
    "possible_duplicates": "May repeat",
    "suggested_connections": "May relate to",
    "applicable_rules": "Rules that apply",
}


def written(result: dict[str, Any]) -> None:
    """remember's and revise's answers: the fields, then each memory's suggestions briefly."""
    targets = result.get("results") or []
    rest = {k: v for k, v in result.items() if k not in SUGGESTIONS}
    if targets:
        rest["results"] = [{k: v for k, v in t.items() if k not in SUGGESTIONS} for t in targets]
    fields(rest)
    suggested(result)
    for target in targets:
        suggested(target, f" (for {target.get('id')})")


def suggested(body: dict[str, Any], about: str = "") -> None:
    for name, title in SUGGESTIONS.items():
        for index, row in enumerate(body.get(name) or []):
            if index == 0:
                click.echo(f"{title}{about}:")
            why = row.get("sign") or row.get("severity")
            click.echo(
                f"  {row.get('id')}  {short(row.get('text'), 70)}" + (f"  ({why})" if why else "")
            )


def pending(items: list[dict[str, Any]]) -> None:
    """Writes queued on a replica: what, on what, how they stand, and the server's word."""
    for item in items:
        what = item.get("id") or short(item.get("text", ""), 60)
        click.echo(f"  {item['queued']}  {item['state']:<8} {item['op']:<8} {what}")
        said = (item.get("answer") or {}).get("message")
        if said:
            click.echo(f"    {short(said, 120)}")
