"""Who may do what: users with roles, keys for HTTP, and the check every write passes.

DESIGN section 6 and issue 12. A user is a name with a role (`viewer` reads, `editor`
writes and may override with a reason, `owner` may do all); a key acts as its holder:
a user, with that user's role as it is when the key is used, or an agent of the workspace
(`agent:NAME`), which has an editor's rights minus every override. A key's secret is
shown once, when it is made; the store keeps only its sha256 (a key is 192 random bits,
so a slow hash would add nothing but time to every request) and reads it on every
request, so a revocation holds at once in every server process. Every change is an
event that names the key by id, never by its secret.

Whoever opens the store itself (the SQLite file, the PostgreSQL URL: the CLI, stdio) acts
as its owner: keys guard HTTP, not the database.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

from ..domain.errors import NotFound, ValidationError
from ..domain.ids import new_id
from ..screening import gate
from ..store import AccessKey, StoreWriter, User
from .admin_answers import (
    KeyCreated,
    KeyRevoked,
    KeysAnswer,
    KeyShown,
    UserAdded,
    UserRemoved,
    UsersAnswer,
)
from .base import ServiceBase, parse_time_arg
from .roles import AGENT, ROLES, Principal

KEY_PREFIX = "palimpsest_"  # then the key's id, `_`, and 48 hex digits of secret
_KEY = re.compile(r"palimpsest_(k_[0-9a-z]{20})_([0-9a-f]{48})")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class AccessOps(ServiceBase):
    def add_user(self, *, name: str, role: str) -> UserAdded:
        """Add a user (or give one another role): `user:NAME` acts with that role."""
        name, role = check_name(name), _role(role)

        def body(tx: StoreWriter, now: str, op_id: str) -> UserAdded:
            before = {u.name: u for u in tx.users()}.get(name)
            user = User(name, role, before.added_at if before else now)
            tx.put_user(user)
            data = {"role": [before.role if before else None, role]}
            self._event(tx, "user.add", op_id, now, ("user", f"user:{name}"),
                        fields=("role",), data=data)  # fmt: skip
            return {"user": f"user:{name}", "role": role}

        return self._write("user.add", {"name": name, "role": role}, None, False, body)

    def remove_user(self, *, name: str) -> UserRemoved:
        """Take a user out of the workspace: their keys are revoked, and every memory they
        owned becomes ownerless (one event each, under one operation id), for anyone to
        `claim`. What they wrote stays, with their name as its author."""
        name = check_name(name)
        actor = f"user:{name}"

        def body(tx: StoreWriter, now: str, op_id: str) -> UserRemoved:
            if name not in {u.name for u in tx.users()}:
                raise NotFound(f"There is no user {actor} here (`palimpsest user list`).")
            tx.drop_user(name)
            self._event(tx, "user.remove", op_id, now, ("user", actor))
            revoked = []  # for good: a user added again by that name gets new keys
            for key in tx.access_keys():
                if key.holder == actor and key.revoked_at is None:
                    tx.revoke_access_key(key.id, now)
                    tx.end_key_web_sessions(key.id)  # signed out of the page, everywhere
                    self._event(tx, "key.revoke", op_id, now, ("key", key.id),
                                data={"holder": actor})  # fmt: skip
                    revoked.append(key.id)
            released = []
            for memory in tx.owned_by(actor):
                new = memory.replace(owner=None, version=memory.version + 1)
                self._memory_event(tx, "disown", op_id, now, memory, new,
                                   note=f"{actor} was removed from the workspace")  # fmt: skip
                released.append(memory.id)
            return {"user": actor, "removed": True, "revoked": revoked, "ownerless": released}

        return self._write("user.remove", {"name": name}, None, False, body)

    def list_users(self) -> UsersAnswer:
        with self.store.read(self.workspace) as tx:
            users = tx.users()
        return {"users": [{"user": f"user:{u.name}", "role": u.role, "added_at": u.added_at}
                          for u in users]}  # fmt: skip

    def create_key(
        self,
        *,
        user: str | None = None,
        agent: str | None = None,
        expires: str | None = None,
        note: str | None = None,
    ) -> KeyCreated:
        """A new key for a user (acting with their role) or for an agent of the workspace.
        Its secret is in this answer and nowhere else: it cannot be shown again."""
        if (user is None) == (agent is None):
            raise ValidationError("Give either `user` (a personal key) or `agent`.", field="user")
        holder = f"user:{check_name(user)}" if user is not None else f"agent:{check_name(agent)}"
        expires_at = parse_time_arg(expires, "expires")
        if note is not None and not (isinstance(note, str) and note.strip()):
            raise ValidationError("`note` is empty: say what the key is for, or leave it out.",
                                  field="note")  # fmt: skip
        if note is not None:
            gate.screen("note", note)
        key_id, secret = new_id("k"), secrets.token_hex(24)

        def body(tx: StoreWriter, now: str, op_id: str) -> KeyCreated:
            named = holder.removeprefix("user:")
            if user is not None and named not in {u.name for u in tx.users()}:
                raise NotFound(
                    f"There is no user {holder}: add them first (`palimpsest user add NAME "
                    "--role editor`)."
                )
            if expires_at is not None and expires_at <= now:
                raise ValidationError("`expires` must be in the future.", field="expires")
            key = AccessKey(key_id, holder, note, now, expires_at, None)
            tx.put_access_key(key, secret_hash(secret))
            data = {"holder": holder, "expires_at": expires_at}
            self._event(tx, "key.create", op_id, now, ("key", key_id), note=note, data=data)
            return {"key": f"{KEY_PREFIX}{key_id}_{secret}", **_key_view(key)}

        request = {"holder": holder, "expires": expires_at, "note": note, "id": key_id}
        return self._write("key.create", request, None, False, body)

    def list_keys(self) -> KeysAnswer:
        """Every key made here, without its secret (no one can read that back)."""
        with self.store.read(self.workspace) as tx:
            keys = tx.access_keys()
        return {"keys": [_key_view(key) for key in keys]}

    def revoke_key(self, *, id: str) -> KeyRevoked:
        """End a key now: the next request that carries it, to any server, is refused."""
        if not isinstance(id, str) or not re.fullmatch(r"k_[0-9a-z]{20}", id):
            raise ValidationError("A key id looks like k_ followed by 20 letters and digits "
                                  "(`palimpsest key list`).", field="id")  # fmt: skip

        def body(tx: StoreWriter, now: str, op_id: str) -> KeyRevoked:
            found = tx.access_key(id)
            if found is None:
                raise NotFound(f"There is no key {id} here (`palimpsest key list`).")
            key = found[0]
            if key.revoked_at is not None:
                return _revoked_view(key, key.revoked_at, unchanged=True)
            tx.revoke_access_key(id, now)
            tx.end_key_web_sessions(id)  # its web page sessions end with it, everywhere
            self._event(tx, "key.revoke", op_id, now, ("key", id), data={"holder": key.holder})
            return _revoked_view(key, now)

        return self._write("key.revoke", {"id": id}, None, False, body)

    def authenticate(self, key: str) -> Principal | None:
        """Who `key` acts as, and in which workspace (the key's own), or None: not a key of
        ours, unknown, revoked, expired, or held by a user no longer in its workspace."""
        match = _KEY.fullmatch(key) if isinstance(key, str) else None
        if match is None:
            return None
        return self._admitted(match[1], match[2])

    def admit_key(self, key_id: str) -> Principal | None:
        """Who the key of that id acts as now, by the same checks as `authenticate` but its
        secret's (a web session, which holds the key's id only, asks at every request)."""
        return self._admitted(key_id, None)

    def _admitted(self, key_id: str, secret: str | None) -> Principal | None:
        """The key's principal, or None; `secret` None: the caller proved it otherwise."""
        with self.store.read(self.workspace) as tx:
            workspace = tx.key_workspace(key_id)
        if workspace is None:
            return None
        with self.store.read(workspace) as tx:
            found = tx.access_key(key_id)
            roles = {f"user:{u.name}": u.role for u in tx.users()} if found else {}
        if found is None:
            return None
        if secret is not None and not hmac.compare_digest(found[1], secret_hash(secret)):
            return None
        stored, now = found[0], self.clock()
        if stored.revoked_at is not None or (stored.expires_at and stored.expires_at <= now):
            return None
        if stored.holder.startswith("agent:"):
            return Principal(stored.holder, AGENT, key_id, workspace)
        role = roles.get(stored.holder)
        return Principal(stored.holder, role, key_id, workspace) if role else None

    def key_workspace(self, key: str) -> str | None:
        """The workspace a key (right or not) names by its id, if that id is one of ours."""
        match = _KEY.fullmatch(key) if isinstance(key, str) else None
        if match is None:
            return None
        with self.store.read(self.workspace) as tx:
            return tx.key_workspace(match[1])

    def count_failed_auth(self, failures: dict[str, int]) -> None:
        """Add failed authentications (per workspace; '' for an unknown or missing key) to
        this hour's count, which doctor shows. Not an event: a log of who knocked."""
        at = self.clock()
        with self.store.write(self.workspace) as tx:
            for workspace, count in failures.items():
                tx.add_failed_auth(workspace, at[:13], count, at)

    def has_keys(self) -> bool:
        with self.store.read(self.workspace) as tx:
            return tx.has_access_keys()


def _revoked_view(key: AccessKey, at: str, *, unchanged: bool = False) -> KeyRevoked:
    view: KeyRevoked = {"id": key.id, "holder": key.holder, "note": key.note,
                        "created_at": key.created_at, "expires_at": key.expires_at,
                        "revoked_at": at}  # fmt: skip
    if unchanged:
        view["unchanged"] = True
    return view


def _key_view(key: AccessKey) -> KeyShown:
    return {"id": key.id, "holder": key.holder, "note": key.note, "created_at": key.created_at,
            "expires_at": key.expires_at, "revoked_at": key.revoked_at}  # fmt: skip


def check_name(name: object) -> str:
    """A user's, an agent's or a workspace's name, checked and stripped."""
    if not isinstance(name, str) or not _NAME.fullmatch(name.strip()):
        raise ValidationError(
            "A name is 1 to 64 letters, digits and . _ @ - (`ana`, `ci-bot`), starting with a "
            "letter or digit.",
            field="name",
        )
    return gate.screen("name", name.strip(), limit_name="key")


def _role(role: object) -> str:
    if not isinstance(role, str) or role.strip().lower() not in ROLES:
        raise ValidationError(f"`role` is one of {', '.join(ROLES)}.", field="role")
    return role.strip().lower()
