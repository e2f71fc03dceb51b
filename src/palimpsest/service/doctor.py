"""What needs a person's attention: secrets that got in before the gate, stale, expired
and ownerless memories, and scrubbing a forget left pending."""

from __future__ import annotations

from typing import Any

from ..model import Memory
from ..secrets import find_secrets, redact
from .base import ServiceBase

# The stored strings of a memory that the gate screens, by field name.
_SCREENED = ("text", "title", "why", "source", "falsifier", "key", "status_note")


def secret_kinds(memory: Memory) -> dict[str, list[str]]:
    """Each field of `memory` holding a secret, with the kinds found there."""
    found: dict[str, list[str]] = {}
    values = [(name, getattr(memory, name)) for name in _SCREENED]
    values += [("tags", " ".join(memory.tags))]
    if memory.check is not None:
        values += [("check", " ".join([memory.check.literal or "", *memory.check.literals]))]
    for name, value in values:
        if value:
            kinds = sorted({f.kind for f in find_secrets(value)})
            if kinds:
                found[name] = kinds
    return found


class DoctorOps(ServiceBase):
    def doctor(self) -> dict[str, Any]:
        """Scan the store and list what a person should look at, with the fix for each."""
        scrubbed = self.store.scrub()
        with self.store.read(self.workspace) as tx:
            at = self.clock()
            current = {m.id: m for m in tx.memories_at(None)}
            secrets = []
            for memory in tx.all_versions():
                fields = secret_kinds(memory)
                if not fields:
                    continue
                latest = current.get(memory.id)
                whole = latest is not None and latest.version == memory.version
                secrets.append({
                    "id": memory.id,
                    "version": memory.version,
                    "fields": fields,
                    "fix": f"palimpsest forget {memory.id} --because 'a secret got in'"
                    if whole
                    else f"palimpsest forget {memory.id} --version {memory.version} "
                    "--because 'a secret got in'",
                })  # fmt: skip
            for notebook in tx.list_notebooks():
                kinds = sorted({f.kind for f in find_secrets(notebook.summary or "")})
                if kinds:
                    secrets.append({
                        "notebook": notebook.id,
                        "fields": {"summary": kinds},
                        "fix": f"palimpsest notebook edit {notebook.id} --clear summary",
                    })  # fmt: skip
            active = [m for m in current.values() if m.status == "active"]
        return {
            "secrets": secrets,
            "possibly_stale": [_line(m) for m in active if m.possibly_stale(at)],
            "expired": [_line(m) for m in active if m.expired(at)],
            "ownerless": [_line(m) for m in active if m.owner is None],
            "scrub_pending": not scrubbed,
        }


def _line(memory: Memory) -> dict[str, Any]:
    # A report must not spread a secret it has not flagged yet: redact on the way out.
    return {"id": memory.id, "kind": memory.kind, "text": redact(memory.text)[0][:120]}
