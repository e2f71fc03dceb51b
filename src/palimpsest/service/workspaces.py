"""A store's workspaces: create, list, rename, and the one a command means (issue 12).

Every memory, notebook, event, setting, user and key belongs to one workspace, and nothing
of one is visible from another (each store query is bound to its workspace). A workspace
has an id, which its rows carry and which never changes, and a name, which users type and
may change. The workspace existing stores had is `default`; a command that names none
means it, whatever it is called now. Only whoever opens the store itself (the CLI) creates
or renames one; over HTTP a request's key decides its workspace.
"""

from __future__ import annotations

import re
from typing import Self

from ..domain.errors import Conflict, NotFound, ValidationError
from ..domain.ids import new_id
from ..store import StoreReader, StoreWriter, Workspace
from .access import check_name
from .admin_answers import WorkspaceAnswer, WorkspacesAnswer
from .base import DEFAULT_WORKSPACE, ServiceBase
from .stores import named_workspace


class WorkspaceOps(ServiceBase):
    def workspaces(self) -> WorkspacesAnswer:
        """Every workspace of the store, oldest first (the default one even before its
        first write), marking the one this service acts in."""
        found = self._all_workspaces()
        if not any(w.id == DEFAULT_WORKSPACE for w in found):
            found.insert(0, Workspace(DEFAULT_WORKSPACE, DEFAULT_WORKSPACE, ""))
        return {"workspaces": [{"id": w.id, "name": w.name, "created_at": w.created_at or None,
                                "current": w.id == self.workspace} for w in found]}  # fmt: skip

    def in_workspace(self, ref: str | None) -> Self:
        """This service in the workspace named (or with the id) `ref`; None: the default."""
        return self.with_workspace(self.find_workspace(ref))

    def find_workspace(self, ref: str | None) -> str:
        """The id of the workspace `ref` names (by name first, then by id)."""
        if ref is None:
            return DEFAULT_WORKSPACE
        return self._named(ref, DEFAULT_WORKSPACE if ref == DEFAULT_WORKSPACE else None)

    def create_workspace(self, *, name: str) -> WorkspaceAnswer:
        """A new, empty workspace named `name`; its first event records who made it."""
        name = _workspace_name(name)
        created = self.with_workspace(new_id("w"))

        def body(tx: StoreWriter, now: str, op_id: str) -> WorkspaceAnswer:
            _refuse_taken(tx, name)  # in the write: two at once cannot both take it
            tx.name_workspace(name)
            created._event(tx, "workspace.create", op_id, now, ("workspace", tx.workspace),
                           data={"name": name})  # fmt: skip
            return {"workspace": {"id": tx.workspace, "name": name, "created_at": now}}

        return created._write("workspace.create", {"name": name}, None, False, body)

    def rename_workspace(self, *, name: str) -> WorkspaceAnswer:
        """Give this service's workspace a new name; its id, rows and keys stay."""
        name = _workspace_name(name, renaming=self.workspace)
        before = self._current_name()
        if name == before:
            return {"workspace": {"id": self.workspace, "name": name}, "unchanged": True}

        def body(tx: StoreWriter, now: str, op_id: str) -> WorkspaceAnswer:
            _refuse_taken(tx, name, self.workspace)
            tx.name_workspace(name)
            self._event(tx, "workspace.rename", op_id, now, ("workspace", tx.workspace),
                        data={"name": [before, name]})  # fmt: skip
            return {"workspace": {"id": tx.workspace, "name": name}, "renamed_from": before}

        return self._write("workspace.rename", {"name": name}, None, False, body)

    def _all_workspaces(self) -> list[Workspace]:
        with self.store.read(self.workspace) as tx:
            return tx.workspaces()

    def _named(self, ref: str, fallback: str | None) -> str:
        found = named_workspace(self.store, ref) or fallback
        if found is not None:
            return found
        raise NotFound(
            f"This store has no workspace {ref!r}: `palimpsest workspace list` names them, "
            f"`palimpsest workspace create {ref}` makes it."
        )

    def _current_name(self) -> str:
        return next((w.name for w in self._all_workspaces() if w.id == self.workspace),
                    self.workspace)  # fmt: skip


def _refuse_taken(tx: StoreReader, name: str, renaming: str | None = None) -> None:
    """A name is taken when another workspace has it, whatever its case, or has it as
    its id (`--workspace` reads a name first, so it would hide that workspace)."""
    for other in tx.workspaces():
        if other.id != renaming and name.casefold() in (other.name.casefold(), other.id):
            raise Conflict(f"A workspace is already named {name!r}: choose another name.",
                           field="name")  # fmt: skip


def _workspace_name(name: object, *, renaming: str | None = None) -> str:
    checked = check_name(name)
    # `default` always means the store's first workspace, so no other may take the name;
    # nor a name shaped like an id, which could be another store's workspace once copied.
    taken = checked.casefold() == DEFAULT_WORKSPACE and renaming != DEFAULT_WORKSPACE
    if taken or re.fullmatch(r"w_[0-9a-z]{20}", checked.casefold()):
        raise ValidationError(
            f"{checked!r} cannot name a workspace: `default` names the store's first, and "
            "w_ and 20 letters or digits is the shape of an id. Choose another name.",
            field="name",
        )
    return checked
