"""How the service shows model objects in its answers (the shapes of answers.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..domain.model import (
    FRESHNESS_DAYS,
    Bindings,
    Check,
    Event,
    Link,
    Memory,
    MemoryVersion,
    Notebook,
    Tombstone,
)
from ..domain.views import lean
from .answers import (
    BindingsShown,
    CheckShown,
    EventShown,
    Hit,
    LinkShown,
    MemoryLine,
    MemoryShown,
    NotebookShown,
    Rule,
    TombstoneShown,
    VersionShown,
)


def memory_view(
    memory: Memory,
    notebooks: dict[str, Notebook],
    at: str,
    freshness: Mapping[str, int | None] = FRESHNESS_DAYS,
) -> MemoryShown:
    notebook = notebooks.get(memory.notebook_id)
    body: MemoryShown = {
        "id": memory.id,
        "notebook_id": memory.notebook_id,
        "kind": memory.kind,
        "text": memory.text,
        "version": memory.version,
        "recorded_at": memory.recorded_at,
        "author": memory.author,
        "owner": memory.owner,
        "status": memory.status,
        "title": memory.title,
        "why": memory.why,
        "tags": list(memory.tags),
        "key": memory.key,
        "occurred_at": memory.occurred_at,
        "expires_at": memory.expires_at,
        "status_note": memory.status_note,
        "superseded_by": memory.superseded_by,
        "verified_at": memory.verified_at,
        "source": memory.source,
        "anchors": [{"path": a.path, "hash": a.hash} for a in memory.anchors],
        "severity": memory.severity,
        "falsifier": memory.falsifier,
        "check": check_view(memory.check) if memory.check else None,
        "bindings": bindings_view(memory.bindings) if memory.bindings else None,
        "scope": memory.scope,
        "notebook": notebook.name if notebook else memory.notebook_id,
        "expired": memory.expired(at),
        "possibly_stale": memory.possibly_stale(at, freshness),
    }
    reasons = _age_reasons(memory, at, freshness)
    if reasons:
        body["stale_reasons"] = reasons
    return body


def bindings_view(bindings: Bindings) -> BindingsShown:
    return {
        "always": bindings.always,
        "moments": list(bindings.moments),
        "targets": list(bindings.targets),
    }


def check_view(check: Check) -> CheckShown:
    body: CheckShown = {"kind": check.kind}
    if check.path is not None:
        body["path"] = check.path
    if check.literal is not None:
        body["literal"] = check.literal
    if check.literals:
        body["literals"] = list(check.literals)
    return body


def hit_view(
    memory: Memory,
    score: float,
    notebooks: dict[str, Notebook],
    at: str,
    freshness: Mapping[str, int | None],
    matched: str,
) -> Hit:
    """A memory as recall found it; `matched`: how (fusion.py's values)."""
    notebook = notebooks.get(memory.notebook_id)
    hit: Hit = {
        "id": memory.id,
        "kind": memory.kind,
        "notebook": notebook.name if notebook else memory.notebook_id,
        "title": memory.title,
        "text": memory.text,
        "why": memory.why,  # after the text: the reason for a decision is what an agent
        # needs next, and asking for it would cost an inspect per hit
        "tags": list(memory.tags),
        "key": memory.key,
        "score": round(score, 4),
        "status": memory.status,
        "version": memory.version,
        "recorded_at": memory.recorded_at,
        "occurred_at": memory.occurred_at,
        "verified_at": memory.verified_at,
        "matched": matched,
    }
    # The flags, each present only when it holds (an answer is paid for by the character),
    # with the reasons it is possibly stale.
    if memory.possibly_stale(at, freshness):
        hit["possibly_stale"] = True
    if memory.expired(at):
        hit["expired"] = True
    reasons = _age_reasons(memory, at, freshness)
    if reasons:
        hit["stale_reasons"] = reasons
    return hit


def _age_reasons(memory: Memory, at: str, freshness: Mapping[str, int | None]) -> list[str]:
    """Why a memory is stale by age (empty when it is not)."""
    if not memory.possibly_stale(at, freshness):
        return []
    days = freshness.get(memory.kind)
    return [f"not verified within the {days} days a {memory.kind} stays fresh"]


def mark_stale(views: list[Hit] | list[MemoryShown], evidence: Mapping[str, list[str]]) -> None:
    """Flag possibly stale the views of memories whose evidence fails, each saying why
    (`evidence`: memory id -> reasons, from the project's files)."""
    for view in views:
        reasons = evidence.get(view["id"])
        if reasons:
            view["possibly_stale"] = True
            view["stale_reasons"] = [*view.get("stale_reasons", []), *reasons]


def mark_disputed(views: list[Hit] | list[MemoryShown], disputed: Mapping[str, list[str]]) -> None:
    """Give each view of a memory in an open dispute `disputed_with`: the other memories of
    its disputes (absent when there are none), so that each names the other."""
    for view in views:
        if view["id"] in disputed:
            view["disputed_with"] = disputed[view["id"]]


def rule_view(memory: Memory) -> Rule:
    return {
        "id": memory.id,
        "kind": memory.kind,
        "text": memory.text,
        "severity": memory.severity,
        "scope": memory.scope or "notebook",
        "check": check_view(memory.check) if memory.check else None,
    }


def version_views(versions: list[MemoryVersion]) -> list[VersionShown]:
    """Each version as what changed: the fields whose values differ from the last version
    before it that can still be read, with this version's values (version 1: every field
    it was filed with), and `cleared`, the fields it emptied. Folding `changed` in order,
    dropping what is `cleared`, rebuilds any readable version (its empty fields absent);
    the current one is shown whole beside them (inspect's `memory`), so no text is
    repeated where it did not change. A forgotten version is only `scrubbed`.

    An emptied field is named in `cleared` rather than given an empty value in `changed`:
    an agent reads answers lean (nothing empty in them), where an empty value would be
    left out and the field would seem not to have changed."""
    views: list[VersionShown] = []
    before: dict[str, Any] = {}
    for version in versions:
        body: VersionShown = {
            "version": version.version,
            "at": version.at,
            "actor": version.actor,
            "op": version.op,
        }
        if version.memory is None:
            body["scrubbed"] = True
        else:
            content = lean(version.memory.to_dict())
            for name in ("id", "workspace", "version"):
                content.pop(name)
            body["changed"] = {
                k: v for k, v in content.items() if k not in before or before[k] != v
            }
            cleared = sorted(k for k in before if k not in content)
            if cleared:
                body["cleared"] = cleared
            before = content
        views.append(body)
    return views


def event_view(event: Event, changes: dict[str, Any] | None = None) -> EventShown:
    body: EventShown = {
        "op_id": event.op_id,
        "at": event.at,
        "actor": event.actor,
        "op": event.op,
        "target_type": event.target_type,
        "target_id": event.target_id,
        "notebook_id": event.notebook_id,
        "version": event.version,
        "fields": list(event.fields),
        "note": event.note,
        "data": event.data,
    }
    if event.key_id:  # the HTTP key the actor came through
        body = {"key_id": event.key_id, **body}
    if changes is not None:
        body["changes"] = changes
    return body


def tombstone_view(tombstone: Tombstone) -> TombstoneShown:
    return {
        "id": tombstone.id,
        "forgotten": True,
        "forgotten_at": tombstone.forgotten_at,
        "actor": tombstone.actor,
        "reason": tombstone.reason,
    }


def link_view(link: Link) -> LinkShown:
    return {
        "id": link.id,
        "source": link.source_id,
        "target": link.target_id,
        "type": link.type,
        "created_at": link.created_at,
        "actor": link.actor,
    }


def notebook_view(notebook: Notebook) -> NotebookShown:
    return {
        "id": notebook.id,
        "name": notebook.name,
        "summary": notebook.summary,
        "domain": notebook.domain,
        "tags": list(notebook.tags),
        "created_at": notebook.created_at,
    }


def notebook_line(memory: Memory) -> MemoryLine:
    return {
        "id": memory.id,
        "kind": memory.kind,
        "status": memory.status,
        "version": memory.version,
        "key": memory.key,
        "title": memory.title,
        "text": memory.text,
    }
