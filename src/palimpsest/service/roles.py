"""Roles and the check every write passes (DESIGN section 6; the users and keys that hold
roles are in access.py).

    viewer   reads (recall, inspect, history, orient, check, guard, doctor)
    editor   writes too, and may override another's memory with a reason
    agent    a workspace key's role: an editor that never overrides
    owner    all of it, and the workspace's own business: settings, users, keys, domains
"""

from __future__ import annotations

from dataclasses import dataclass

from ..domain.errors import Forbidden
from ..domain.model import Memory

ROLES = ("viewer", "editor", "owner")  # what a user may be given
AGENT = "agent"
OWNER_OPS = frozenset({"merge_domains", "settings.change", "user.add", "user.remove",
                       "key.create", "key.revoke", "workspace.create", "workspace.rename",
                       "export", "import", "served.forget"})  # fmt: skip


@dataclass(frozen=True)
class Principal:
    """Who a call acts as: a key's holder with the role it holds now, or the local owner."""

    actor: str
    role: str  # viewer, editor, owner or agent
    key_id: str | None = None  # the key it came through: recorded on every event it writes
    workspace: str | None = None  # the key's workspace (None: the one the server was given)


def check_write(op: str, role: str) -> None:
    """Refuse a write the role may not make (forget's own-or-anyone's rule is forget's)."""
    if role == "viewer":
        raise Forbidden(
            "A viewer reads and does not write: ask an owner of the workspace for an editor's "
            "key (`palimpsest user add NAME --role editor`)."
        )
    if op in OWNER_OPS and role != "owner":
        raise Forbidden(f"Only an owner of the workspace may do this ({op}).")


def check_owner(op: str, role: str) -> None:
    """Refuse what only an owner may do, reads included (an export holds every actor)."""
    if role != "owner":
        raise Forbidden(f"Only an owner of the workspace may do this ({op}).")


def check_forget(role: str, actor: str, owner: str | None) -> None:
    """An owner forgets anything; an editor only the memories it owns (`owner` None: what
    no one owns alone, a notebook's field or the guard's kept commands)."""
    check_write("forget", role)
    if role != "owner" and owner != actor:
        raise Forbidden(
            "Only an owner of the workspace may forget this: an editor forgets only the "
            "memories it owns. To take a memory out of recall, retire it (revise `status`)."
        )


def check_revert(role: str, actor: str, memory: Memory) -> None:
    """A revert may change what a memory says, which another's memory changes only through
    a supersede: an editor or agent reverts what it owns or what no one owns."""
    if role != "owner" and memory.owner not in (None, actor):
        raise Forbidden(
            f"{memory.id} belongs to {memory.owner}: you may revert only your own or ownerless "
            "memories. To change what it says, revise it with `supersede` set."
        )
