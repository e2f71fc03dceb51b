"""The guided tour `palimpsest demo` prints: remember, revise, recall and history."""

from __future__ import annotations

from typing import Any

import click

from ..domain.errors import Conflict
from ..service import Service
from . import render

DEMO_MEMORIES = [
    ("decision", "We use PostgreSQL 15 for the main database", "pgvector needs 15 or later"),
    ("fact", "The API listens on port 8080 behind nginx", None),
    ("pattern", "Database migrations are plain SQL files, numbered, never edited", None),
]


def run_demo(
    service: Service, notebook: str, database: str, command: str, *, quiet: bool
) -> dict[str, Any]:
    """Walk through the core operations on `service`; print each step unless `quiet`."""

    def say(text: str) -> None:
        if not quiet:
            click.echo(text)

    if any(nb["name"] == notebook for nb in service.notebooks()["notebooks"]):
        raise Conflict(
            "The tour's notebook already exists in this store: running it again would file its "
            "memories twice. Pass another `notebook`, or leave out --db for a store of its own.",
            field="notebook",
        )
    say(f"Database: {database}\n\n1. remember: filing three memories in notebook {notebook!r}")
    filed = []
    for kind, text, why in DEMO_MEMORIES:
        result = service.remember(notebook=notebook, kind=kind, text=text, why=why)
        filed.append(result)
        say(f"   {result['id']}  {kind:<9} {text}")
    first = filed[0]["id"]
    say("\n2. revise: the database was upgraded; the old version stays in the history")
    revised = service.revise(id=first, replace_from="PostgreSQL 15", replace_to="PostgreSQL 16")
    for line in revised["results"]:
        say(f"   {line['id']} is now version {line['version']}")
    for miss in revised["unmatched"]:
        say(f"   {miss['target']} unchanged: {miss['reason']}")
    say('\n3. recall "database"')
    found = service.recall(query="database", notebook=notebook)
    if not quiet:
        render.hits(found)
    say(f"\n4. history of {first}")
    events = service.history(id=first)
    if not quiet:
        render.events(events)
    say(f"\nNext: {command} inspect {first}")
    return {"remembered": filed, "revised": revised, "recalled": found, "history": events}
