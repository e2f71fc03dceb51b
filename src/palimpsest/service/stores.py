"""Opening a store for the service, and copying a workspace between two stores.

Adapters name a store by the string a user typed (a SQLite path or a postgresql:// URL)
and never touch the store layer themselves. The copy is lossless: notebooks, every memory
version (tombstones included), every event with its actor, time and reason, links and
idempotency answers. It reads one snapshot of the source and writes the target in one
transaction, so it lands whole or not at all.
"""

from __future__ import annotations

from typing import Any

from ..domain.errors import Conflict, NotFound, ValidationError
from ..screening.gate import check_actor
from ..store import Store, default_db_path, open_store, shown, sqlite_path

store_label = shown  # a store's name safe to print: a URL loses its password
default_store_path = default_db_path  # the SQLite file in a data directory


def open_store_for(location: str, actor: str, *, create: bool = True) -> Store:
    """The store at `location`, opened (and migrated); the actor is checked first, so a
    refused actor never creates a database file."""
    check_actor(actor)
    if not location.strip():
        raise ValidationError(
            "The store's name is empty: give `db` a SQLite file path or a postgresql:// URL, "
            "or leave it out for the default store.",
            field="db",
        )
    path = sqlite_path(location)
    if not create and path is not None and not path.exists():
        raise NotFound(
            f"No store exists at {path}: nothing was remembered there yet. Check `db`; "
            "a write (remember) creates the store.",
            field="db",
        )
    return open_store(location)


def copy_workspace(source: Store, target: Store, workspace: str) -> dict[str, Any]:
    """Copy `workspace` (its id) from `source` into `target`, where it must not exist yet;
    it keeps its name there."""
    with source.read(workspace) as reading, target.write(workspace) as writing:
        if not writing.is_empty():
            raise Conflict(
                f"Workspace {workspace!r} already holds memories, notebooks or settings in the "
                "target store; copy into an empty store (or workspace) so that nothing there is "
                "mixed or overwritten."
            )
        name = next((w.name for w in reading.workspaces() if w.id == workspace), workspace)
        if any(w.name == name and w.id != workspace for w in writing.workspaces()):
            raise Conflict(f"The target store has another workspace named {name!r}: rename "
                           "one of them first (`palimpsest workspace rename`).")  # fmt: skip
        writing.name_workspace(name)
        counts = writing.load(reading.dump())
    target.scrub(workspace)
    return {"workspace": workspace, "name": name, "copied": counts}


def named_workspace(store: Store, ref: str) -> str | None:
    """The id of the workspace `ref` names in `store`: by name first, then by id."""
    with store.read(ref) as tx:
        found = tx.workspaces()
    for match in ([w for w in found if w.name == ref], [w for w in found if w.id == ref]):
        if match:
            return match[0].id
    return None


def copy_between(source_url: str, target_url: str, workspace: str) -> dict[str, Any]:
    """Copy `workspace` between the stores two URLs name; a missing source creates nothing.

    The source and its workspace are checked before the target is opened, so a mistake in
    `--from` or `--workspace` never leaves a new, empty target file behind.
    """
    path = sqlite_path(source_url)
    if path is not None and not path.is_file():
        raise NotFound("No store exists at the path given in `from`: check it.", field="from")
    source = open_store(source_url)
    try:
        # `workspace` itself when none has it: the emptiness check below refuses it
        workspace = named_workspace(source, workspace) or workspace
        with source.read(workspace) as reading:
            if reading.is_empty():
                raise NotFound(
                    "The store copied from holds no such `workspace`: check its name.",
                    field="workspace",
                )
        target = open_store(target_url)
        try:
            return copy_workspace(source, target, workspace)
        finally:
            target.close()
    finally:
        source.close()
