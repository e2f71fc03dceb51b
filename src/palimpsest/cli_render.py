"""How the CLI prints answers for a person: short tables and `name: value` lines.

Kept generic on purpose: the service's answers are dicts, and a new key should show up
here without anyone touching this module. `--json` bypasses all of it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from typing import Any

import click

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
    room = shutil.get_terminal_size((120, 24)).columns - sum(widths[:-1]) - 2 * len(widths)
    widths[-1] = max(min(widths[-1], room), 20)
    header = "  ".join(h.upper().ljust(w) for (h, _), w in zip(columns, widths, strict=True))
    click.echo(header.rstrip())
    for line in cells:
        line[-1] = short(line[-1], widths[-1])
        click.echo("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())


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
            click.echo(f"{indent}{name}: {short(value)}")


def hits(result: dict[str, Any]) -> None:
    rows = [{**hit, "flags": _flags(hit)} for hit in result.get("hits", [])]
    if not rows:
        click.echo("No memories found.")
    table(
        rows,
        [("id", "id"), ("kind", "kind"), ("flags", "flags"), ("notebook", "notebook"), *TEXT],
    )
    if result.get("rules"):
        click.echo("\nRules that apply here:")
        table(result["rules"], [("id", "id"), ("severity", "severity"), ("text", "text")])
    if result.get("as_of"):
        click.echo(f"\n(as of {result['as_of']})")


def _flags(hit: dict[str, Any]) -> str:
    flags = [] if hit.get("status") == "active" else [str(hit.get("status"))]
    flags += [name for name in ("possibly_stale", "expired") if hit.get(name)]
    if hit.get("verified_at"):
        flags.append("verified")
    return ",".join(flags)


def events(result: dict[str, Any]) -> None:
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
    columns = [("seq", "seq"), ("at", "at"), ("actor", "actor"), ("op", "op")]
    table(rows, [*columns, ("target", "target"), ("changed", "changed")])


def _changed(event: dict[str, Any]) -> str:
    changes = event.get("changes") or {}
    if event.get("op") != "remember" and "text" in changes:
        text = changes["text"]
        rest = [f for f in event.get("fields", []) if f != "text"]
        shown = f"text: {short(text.get('old'), 30)!r} -> {short(text.get('new'), 30)!r}"
        return "; ".join([shown, *rest])
    names = ", ".join(event.get("fields") or [])
    note = event.get("note")
    return f"{names} ({note})" if note else names


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
            [("version", "version"), ("seq", "seq"), ("at", "at"), ("actor", "actor"), *OP],
        )
    if result.get("links"):
        click.echo("links:")
        table(
            result["links"],
            [("id", "id"), ("type", "type"), ("source", "source"), ("target", "target")],
        )


def notebooks(result: dict[str, Any]) -> None:
    if not result["notebooks"]:
        click.echo("No notebooks yet; `palimpsest remember -n NAME ...` creates one.")
    columns = [("id", "id"), ("name", "name"), ("domain", "domain"), ("tags", "tags")]
    table(result["notebooks"], [*columns, ("summary", "summary")])


def doctor(result: dict[str, Any]) -> None:
    sections = (
        ("secrets", "Secrets stored before the gate (forget them)"),
        ("possibly_stale", "Possibly stale: verify or retire"),
        ("expired", "Expired but still active: retire or extend"),
        ("ownerless", "Ownerless: claim them"),
    )
    for key, title in sections:
        rows = result.get(key) or []
        click.echo(f"{title}: {len(rows)}")
        for row in rows:
            where = row.get("id") or row.get("notebook")
            detail = row.get("fix") or short(row.get("text", ""), 80)
            click.echo(f"  {where}  {detail}")
    if result.get("scrub_pending"):
        waiting = len(result.get("pending_scrubs") or []) or "A"
        click.echo(f"{waiting} forget(s) still wait for their bytes to be erased: ", nl=False)
        click.echo("run `palimpsest scrub` (SQLite: when no other process holds a read open).")
